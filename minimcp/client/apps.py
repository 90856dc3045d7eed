"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865), client side: which tools
come with a view, who may call them, and the view itself.

A host that renders views declares the extension, finds a tool's view in its
``_meta.ui.resourceUri``, reads it with ``resources/read``, and renders the HTML in a
sandboxed iframe with the CSP its ``_meta.ui`` asks for (ext-apps
specification/2026-01-26/apps.mdx)::

    from minimcp.client.apps import declare_apps, for_model, read_app, ui_resource_uri

    with minimcp.connect(target, middleware=[declare_apps]) as client:
        tools = client.list_tools()
        model_tools = for_model(tools)          # what the model may see: not the views' own tools
        for tool in tools:
            uri = ui_resource_uri(tool)
            if uri:
                view = read_app(client, uri)    # view.html, view.csp, view.prefers_border ...

A client that does not declare the extension still reads tools and views, but a server may
leave out of its ``tools/list`` the tools only a view calls (minimcp's does).
"""

import base64
import binascii
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..errors import ProtocolError
from ..protocol.stateless import CAPABILITIES_KEY
from .results import Tool

if TYPE_CHECKING:
    from .client import Client  # (client.py may import this module: no cycle at run time)

#: The extension's identifier (apps.mdx "Extension Identifier").
EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of a view (apps.mdx "UI Resource Format").
MIME_TYPE = "text/html;profile=mcp-app"
#: The deprecated flat key of a tool's view, which servers older than ``_meta.ui`` send.
LEGACY_RESOURCE_URI = "ui/resourceUri"
#: What a host declares (apps.mdx "Client (Host) Capabilities": ``mimeTypes`` is required).
CAPABILITY: Dict[str, Any] = {EXTENSION: {"mimeTypes": [MIME_TYPE]}}


def declare_apps(request: Any, call_next: Callable[[Any], Any]) -> Any:
    """Client middleware: declare the extension (:data:`CAPABILITY`) in the capabilities the
    client sends: ``initialize``'s, and each 2026-07-28 request's ``_meta``. Declare it only
    where views are rendered: a server may then count on the view and say less in text.

    Example::

        client = minimcp.connect(target, middleware=[declare_apps])
    """
    if request.outgoing:
        params = request.params
        if request.method == "initialize":
            params["capabilities"] = _with_apps(params.get("capabilities"))
        else:
            meta = params.get("_meta")
            if type(meta) is dict and CAPABILITIES_KEY in meta:
                params["_meta"] = dict(meta, **{CAPABILITIES_KEY: _with_apps(meta[CAPABILITIES_KEY])})
    return call_next(request)


def _with_apps(capabilities: Any) -> Dict[str, Any]:
    """A copy of ``capabilities`` that declares the extension too (the caller's dicts untouched)."""
    declared = dict(capabilities) if type(capabilities) is dict else {}
    extensions = declared.get("extensions")
    declared["extensions"] = dict(extensions if type(extensions) is dict else {}, **CAPABILITY)
    return declared


def server_has_apps(client: "Client") -> bool:
    """Whether the server declared the extension (``capabilities.extensions``, either era)."""
    extensions = client.server_capabilities.get("extensions")
    return type(extensions) is dict and EXTENSION in extensions


def _tool_ui(tool: Tool) -> Dict[str, Any]:
    meta = tool.raw.get("_meta")
    ui = meta.get("ui") if type(meta) is dict else None
    return ui if type(ui) is dict else {}


def ui_resource_uri(tool: Tool) -> Optional[str]:
    """The ``ui://`` URI of the tool's view (``_meta.ui.resourceUri``, else the deprecated
    ``_meta["ui/resourceUri"]``), or None for a tool without one."""
    uri = _tool_ui(tool).get("resourceUri")
    if uri is None:
        meta = tool.raw.get("_meta")
        uri = meta.get(LEGACY_RESOURCE_URI) if type(meta) is dict else None
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def visibility(tool: Tool) -> Tuple[str, ...]:
    """Who may call the tool: ``"model"`` (the agent), ``"app"`` (its view), or both, which is
    what a tool that says nothing means (apps.mdx "Visibility")."""
    said = _tool_ui(tool).get("visibility")
    if type(said) is not list:
        return ("model", "app")
    return tuple(who for who in said if who in ("model", "app"))


def for_model(tools: Iterable[Tool]) -> List[Tool]:
    """The tools a host may give its model: all but those only a view may call (apps.mdx
    "Visibility": "Host MUST NOT include tools in the agent's tool list when their visibility
    does not include "model"")."""
    return [tool for tool in tools if "model" in visibility(tool)]


class AppView:
    """A view read from the server: the HTML a host renders, and how (its ``_meta.ui``).

    Example::

        view = read_app(client, "ui://counter/view.html")
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
    ui = meta.get("ui") if type(meta) is dict else None
    if type(ui) is not dict:
        listed = next((r for r in client.list_resources(timeout=timeout) if r.uri == uri), None)
        listed_meta = listed.raw.get("_meta") if listed is not None else None
        ui = listed_meta.get("ui") if type(listed_meta) is dict else None
    return AppView(uri, html, ui if type(ui) is dict else {}, item)
