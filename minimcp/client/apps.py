"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865), client side: which tools
come with a view, who may call them, and the view itself.

A host that renders views declares the extension (``Client(apps=True)``, or
``connect(..., apps=True)``), finds a tool's view in ``tool.ui_resource_uri`` (its
``_meta.ui.resourceUri``), reads it with ``resources/read``, and renders the HTML in a
sandboxed iframe with the CSP its ``_meta.ui`` asks for (ext-apps
specification/2026-01-26/apps.mdx)::

    from minimcp.client.apps import for_model, read_app

    with minimcp.connect(target, apps=True) as client:
        tools = client.list_tools()
        model_tools = for_model(tools)          # what the model may see: not the views' own tools
        for tool in tools:
            if tool.ui_resource_uri:
                view = read_app(client, tool.ui_resource_uri)  # view.html, view.csp, view.prefers_border ...

A client that does not declare the extension still reads tools and views, but a server may
leave out of its ``tools/list`` the tools only a view calls (minimcp's does).
"""

import base64
import binascii
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple

from ..errors import ProtocolError
from ..protocol.apps import EXTENSION, MIME_TYPE, UI
from .results import Tool

if TYPE_CHECKING:
    from .client import Client  # (client.py imports this module late, in read_app(): no cycle)


def server_has_apps(client: "Client") -> bool:
    """Whether the server declared the extension (``capabilities.extensions``, either era)."""
    extensions = client.server_capabilities.get("extensions")
    return type(extensions) is dict and EXTENSION in extensions


def ui_resource_uri(tool: Tool) -> Optional[str]:
    """The ``ui://`` URI of the tool's view, or None for a tool without one: its
    :attr:`~minimcp.client.results.Tool.ui_resource_uri`, as a function (for ``map``, ``sorted`` ...)."""
    return tool.ui_resource_uri


def visibility(tool: Tool) -> Tuple[str, ...]:
    """Who may call the tool: ``"model"`` (the agent), ``"app"`` (its view), or both, which is
    what a tool that says nothing means (apps.mdx "Visibility"): its
    :attr:`~minimcp.client.results.Tool.visibility`, as a function."""
    return tool.visibility


def for_model(tools: Iterable[Tool]) -> List[Tool]:
    """The tools a host may give its model: all but those only a view may call (apps.mdx
    "Visibility": "Host MUST NOT include tools in the agent's tool list when their visibility
    does not include "model"")."""
    return [tool for tool in tools if "model" in tool.visibility]


class AppView:
    """A view read from the server: the HTML a host renders, and how (its ``_meta.ui``).

    Example::

        view = client.read_app("ui://counter/view.html")   # or read_app(client, ...)
        open("view.html", "w").write(view.html)
        print(view.csp.get("connectDomains", []), view.prefers_border)

    Attributes:
        uri: the view's ``ui://`` URI.
        html: the HTML document (a blob is decoded as UTF-8).
        ui: its ``_meta.ui``: from the content item, else from its ``resources/list`` entry.
        csp: ``ui.csp`` (``connectDomains``, ``resourceDomains``, ``frameDomains``,
            ``baseUriDomains``), ``{}`` when it asks for no origin.
        permissions: the names in ``ui.permissions`` (``camera``, ``clipboardWrite`` ...).
        domain: ``ui.domain``, the dedicated origin it asks for, or None.
        prefers_border: ``ui.prefersBorder``, or None (the host decides).
        raw: the content item as the server sent it.
    """

    __slots__ = ("uri", "html", "ui", "csp", "permissions", "domain", "prefers_border", "raw")

    def __init__(self, uri: str, html: str, ui: Dict[str, Any], raw: Dict[str, Any]) -> None:
        self.uri: str = uri
        self.html: str = html
        self.ui: Dict[str, Any] = ui
        csp = ui.get("csp")
        self.csp: Dict[str, List[str]] = csp if type(csp) is dict else {}
        permissions = ui.get("permissions")
        self.permissions: List[str] = sorted(permissions) if type(permissions) is dict else []
        domain, border = ui.get("domain"), ui.get("prefersBorder")
        self.domain: Optional[str] = domain if isinstance(domain, str) else None
        self.prefers_border: Optional[bool] = border if type(border) is bool else None
        self.raw: Dict[str, Any] = raw

    def __repr__(self) -> str:
        return f"AppView(uri={self.uri!r}, {len(self.html)} characters, ui={self.ui!r})"


def read_app(client: "Client", uri: str, *, timeout: Optional[float] = None) -> AppView:
    """Read the view at ``uri`` (``resources/read``) and check it is one.

    Its ``_meta.ui`` comes from the content item; when that has none, from the view's entry in
    ``resources/list`` (apps.mdx, draft "Metadata Location": hosts check both, the content item first).

    Raises:
        ProtocolError: the server sent no content for ``uri``, or not as
            ``text/html;profile=mcp-app`` (apps.mdx: the ``mimeType`` "MUST be" that), or a
            blob that is not base64 UTF-8.
        RPCError: the server has no such resource.
    """
    result = client.read_resource(uri, timeout=timeout)
    item = next((entry for entry in result.contents if entry.get("uri") == uri), None)
    if item is None:
        raise ProtocolError(f"the server's answer to resources/read {uri} has no content for {uri}")
    mime = item.get("mimeType")
    if mime != MIME_TYPE:
        raise ProtocolError(f"the server sent {uri} as {mime!r}, not {MIME_TYPE!r}: hosts render no other view")
    html = item.get("text")
    if not isinstance(html, str):
        try:
            html = base64.b64decode(item.get("blob") or "", validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ProtocolError(f"the server's view {uri} is a blob that is not base64 UTF-8 ({exc})") from None
    meta = item.get("_meta")
    ui = meta.get(UI) if type(meta) is dict else None
    if type(ui) is not dict:
        listed = next((r for r in client.list_resources(timeout=timeout) if r.uri == uri), None)
        listed_meta = listed.raw.get("_meta") if listed is not None else None
        ui = listed_meta.get(UI) if type(listed_meta) is dict else None
    return AppView(uri, html, ui if type(ui) is dict else {}, item)
