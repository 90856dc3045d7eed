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
from ..logs import get_logger
from ..protocol.apps import CSP_FIELDS, EXTENSION, MIME_TYPE, PERMISSIONS, UI, is_origin
from .results import Tool

if TYPE_CHECKING:
    from logging import Logger

    from .client import Client  # (client.py imports this module late, in read_app(): no cycle)

log: "Logger" = get_logger(__name__)


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

    A host copies ``csp`` into its iframe's Content-Security-Policy and ``permissions`` into its
    ``allow`` attribute (apps.mdx "CSP Construction from Metadata"), so both hold only what the
    spec defines: in ``csp`` its four fields, each a list of origins (``scheme://host[:port]``,
    ``https``, ``http``, ``wss`` or ``ws``, the host maybe ``*.example.com``), and in
    ``permissions`` its four names. Anything else the server sent (a ``;`` that would start a
    directive of its own, a ``*`` or ``'unsafe-eval'``) is dropped, with a warning in the log;
    ``ui`` holds the same checked values, ``raw`` what was sent.

    Attributes:
        uri: the view's ``ui://`` URI.
        html: the HTML document (a blob is decoded as UTF-8).
        ui: its ``_meta.ui``: from the content item, else from its ``resources/list`` entry
            (``csp`` and ``permissions`` as checked).
        csp: ``ui.csp`` (``connectDomains``, ``resourceDomains``, ``frameDomains``,
            ``baseUriDomains``: the origins in each), ``{}`` when it asks for no origin.
        permissions: the names in ``ui.permissions`` (``camera``, ``microphone``,
            ``geolocation``, ``clipboardWrite``).
        domain: ``ui.domain``, the dedicated origin it asks for, or None.
        prefers_border: ``ui.prefersBorder``, or None (the host decides).
        raw: the content item as the server sent it.
    """

    __slots__ = ("uri", "html", "ui", "csp", "permissions", "domain", "prefers_border", "raw")

    def __init__(self, uri: str, html: str, ui: Dict[str, Any], raw: Dict[str, Any]) -> None:
        self.uri: str = uri
        self.html: str = html
        self.csp: Dict[str, List[str]] = _checked_csp(uri, ui.get("csp"))
        self.permissions: List[str] = _checked_permissions(uri, ui.get("permissions"))
        checked = dict(ui)
        if "csp" in ui:
            checked["csp"] = self.csp
        if "permissions" in ui:
            checked["permissions"] = {name: {} for name in self.permissions}
        self.ui: Dict[str, Any] = checked
        domain, border = ui.get("domain"), ui.get("prefersBorder")
        self.domain: Optional[str] = domain if isinstance(domain, str) else None
        self.prefers_border: Optional[bool] = border if type(border) is bool else None
        self.raw: Dict[str, Any] = raw

    def __repr__(self) -> str:
        return f"AppView(uri={self.uri!r}, {len(self.html)} characters, ui={self.ui!r})"


def _checked_csp(uri: str, csp: Any) -> Dict[str, List[str]]:
    """The fields of a view's ``ui.csp`` the spec defines, each with the entries that are
    origins; what is left out is logged as a warning (``uri``: the view's, for the log)."""
    if csp is None:
        return {}
    if type(csp) is not dict:
        log.warning("view %s: ui.csp is not an object (%.200r): it asks for no origin", uri, csp)
        return {}
    checked: Dict[str, List[str]] = {}
    for key, origins in csp.items():
        if key not in CSP_FIELDS or type(origins) is not list:
            log.warning("view %s: ui.csp[%r] dropped (%.200r): the fields are lists of origins in %s",
                        uri, key, origins, ", ".join(CSP_FIELDS))
            continue
        kept = [origin for origin in origins if is_origin(origin)]
        if len(kept) < len(origins):
            log.warning("view %s: ui.csp[%r] entries that are no origin (scheme://host[:port]) dropped: %.200r",
                        uri, key, [origin for origin in origins if not is_origin(origin)])
        checked[key] = kept
    return checked


def _checked_permissions(uri: str, permissions: Any) -> List[str]:
    """The names in a view's ``ui.permissions`` the spec defines, sorted; the others are logged
    as a warning (``uri``: the view's, for the log)."""
    if permissions is None:
        return []
    if type(permissions) is not dict:
        log.warning("view %s: ui.permissions is not an object (%.200r): it asks for none", uri, permissions)
        return []
    unknown = sorted(str(name) for name in permissions if name not in PERMISSIONS)
    if unknown:
        log.warning("view %s: ui.permissions dropped %.200r: the permissions are %s",
                    uri, unknown, ", ".join(PERMISSIONS))
    return sorted(name for name in permissions if name in PERMISSIONS)


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
