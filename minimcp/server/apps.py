"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865), server side: a tool that
comes with an interactive view, which the host renders in a sandboxed iframe.

Two registrations make an app (``@server.ui_resource`` and ``@server.ui_tool`` are sugar over
:func:`add_ui_resource` and :func:`add_ui_tool`)::

    @server.ui_resource("ui://counter/view.html", prefers_border=True)
    def counter_view() -> str:
        return HTML                      # the view: one HTML document, scripts inline

    @server.ui_tool("ui://counter/view.html")
    def show_counter() -> dict:          # the model calls it; the host shows the view with its result
        return {"count": count}

    @server.ui_tool("ui://counter/view.html", visibility=["app"])
    def increment(by: int = 1) -> dict:  # only the view calls it (through the host)
        ...

What goes on the wire (ext-apps specification/2026-01-26/apps.mdx, "SEP-1865"):

- the view is a resource with a ``ui://`` URI and the MIME type ``text/html;profile=mcp-app``;
  its ``_meta.ui`` (``csp``, ``permissions``, ``domain``, ``prefersBorder``) is on both its
  ``resources/list`` entry and its ``resources/read`` content item ("UI Resource Format",
  "Metadata Location" in the draft: hosts prefer the content item);
- a tool names its view in ``_meta.ui.resourceUri`` (and the deprecated flat
  ``_meta["ui/resourceUri"]``, which hosts older than the nested key still read), and who may
  call it in ``_meta.ui.visibility`` (``["model", "app"]`` when left out) ("Resource Discovery");
- the server declares the extension in its capabilities, in both eras:
  ``capabilities.extensions["io.modelcontextprotocol/ui"]`` in ``initialize`` and in
  ``server/discover`` ("Client<>Server Capability Negotiation", SEP-1724).

A client that did not declare the extension (with the ``text/html;profile=mcp-app`` MIME type)
renders no view: a tool with a view is an ordinary tool to it ("If host does not support MCP
Apps, tool behaves as standard tool"), so the tool must return meaningful ``content`` anyway
("Graceful Degradation"). A tool only the view may call (``visibility=["app"]``) is left out of
such a client's ``tools/list``, and its ``tools/call`` is refused: the spec asks hosts to keep
those tools from their model ("Visibility": "Host MUST NOT include tools in the agent's tool
list when their visibility does not include "model""), which a host that does not know the
extension cannot do, and servers to check the client's capabilities before offering UI tools
("Server Behavior": "Servers SHOULD check client capabilities"). The first app-only tool has
``tools/list`` leave them out before the list is paged (:func:`list_tools_for_client`; in
2026-07-28 the list is then ``cacheScope: "private"``, as it depends on the caller) and adds a
middleware that refuses their calls (:func:`hide_app_only_tools`).

Hiding them is a courtesy to a host that would hand them to its model, not access control (the
view calls them through any host that renders it). So when the server cannot know what the
client declared, it hides nothing: a sessionless app's POST (``wsgi_app(sessions=False)``) in a
handshake-era version comes on a connection that never ran ``initialize`` (its client's went
to another), and gets every tool; a 2026-07-28 request declares its capabilities itself, on
any app. :func:`supports_apps` is then False (:func:`renders_views` says None).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Callable, Dict, Optional, Sequence

    from .connection import ServerConnection
    from .resources import ServerResource
    from .server import Server
    from .tools import ServerTool

from ..engine.inflight import RequestContext
from ..errors import RPCError
from ..protocol.apps import (
    CSP_FIELDS,
    EXTENSION,
    LEGACY_RESOURCE_URI,
    MIME_TYPE,
    MIME_TYPES,
    PERMISSIONS,
    RESOURCE_URI,
    SCHEME,
    UI,
    VISIBILITIES,
    VISIBILITY,
    extension_settings,
    is_origin,
    tool_view,
)
from ..protocol.jsonrpc import INVALID_PARAMS
from ..protocol.stateless import CAPABILITIES_KEY, VERSION_KEY
from ..protocol.versions import PROTOCOL_VERSION
from .connection import paginate
from .content import resource_contents
from .coroutines import finish
from .schema import is_context, type_hints


class Apps:
    """What a server's MCP Apps declare (``server.apps``, made by the first registration).

    Example::

        add_ui_resource(server, view, "ui://counter/view.html")
        apps_of(server).settings()   # {"mimeTypes": ["text/html;profile=mcp-app"]}
    """

    EXTENSION = EXTENSION

    def __init__(self) -> None:
        #: Set once a tool only a view calls is registered: ``tools/list`` then leaves such tools
        #: out for a client that renders no view (:func:`list_tools_for_client`), and
        #: :func:`hide_app_only_tools` is among the server's middleware.
        self.hides_app_only_tools: bool = False

    def settings(self) -> Dict[str, Any]:
        """The extension's settings in the server's capabilities: the view types it serves (the
        client's settings name the types it renders: apps.mdx "Extension Settings")."""
        return extension_settings()

    def list_tools(self, connection: ServerConnection, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """Answer ``tools/list`` (the method table's answer asks here first): the server's own
        answer, or, once a tool only a view calls is registered, :func:`list_tools_for_client`'s."""
        if self.hides_app_only_tools:
            return list_tools_for_client(connection, params, ctx)
        return connection.list_tools(params, ctx)


def apps_of(server: Server) -> Apps:
    """The server's :class:`Apps` (``server.apps``), made on first use: the server declares the
    extension from then on."""
    apps: Optional[Apps] = server.__dict__.get("apps")
    if apps is None:
        apps = server.__dict__.setdefault("apps", Apps())
    return apps


# -- views ------------------------------------------------------------------------------------


def ui_meta(csp: Optional[Dict[str, Sequence[str]]] = None, permissions: Sequence[str] = (),
            domain: Optional[str] = None, prefers_border: Optional[bool] = None) -> Dict[str, Any]:
    """A view's ``_meta.ui`` (apps.mdx ``UIResourceMeta``), each part checked.

    Args:
        csp: the origins the view may reach, by the spec's names: ``connectDomains`` (fetch,
            XHR, WebSocket), ``resourceDomains`` (scripts, styles, images, fonts, media),
            ``frameDomains`` (nested iframes), ``baseUriDomains``. Left out: none at all. Each
            origin is ``scheme://host`` or ``scheme://host:port`` (``https``, ``http``, ``wss``,
            ``ws``); ``https://*.example.com`` allows the subdomains of ``example.com``.
        permissions: browser features the view asks for: ``camera``, ``microphone``,
            ``geolocation``, ``clipboardWrite``. A host may refuse them.
        domain: a dedicated origin for the view, in the format its host documents.
        prefers_border: ``True``: the host draws a border and background; ``False``: it does not.

    Raises:
        ValueError: a CSP field or permission the spec does not define, a CSP value that is
            not a list of strings, or an entry that is not an origin (a path, a space, a ``;``,
            a CSP keyword such as ``*`` or ``'unsafe-eval'``: a host copies each entry into its
            CSP header, where it would allow more than an origin).
    """
    ui: Dict[str, Any] = {}
    if csp:
        unknown = sorted(set(csp) - set(CSP_FIELDS))
        if unknown:
            raise ValueError(f"csp has no field {unknown[0]!r}; the fields are {', '.join(CSP_FIELDS)}")
        for key, origins in csp.items():
            if isinstance(origins, str) or not all(isinstance(origin, str) for origin in origins):
                raise ValueError(f'csp["{key}"] must be a list of origins (strings), not {origins!r}')
            for origin in origins:
                if not is_origin(origin):
                    raise ValueError(f'csp["{key}"]: {origin!r} is not an origin; give scheme://host or '
                                     f'scheme://host:port (https, http, wss or ws), one per entry, '
                                     f'"https://*.example.com" for the subdomains of example.com')
        ui["csp"] = {key: list(origins) for key, origins in csp.items()}
    if permissions:
        unknown = [permissions] if isinstance(permissions, str) else sorted(set(permissions) - set(PERMISSIONS))
        if unknown:
            raise ValueError(f"unknown permission {unknown[0]!r} (give a list of names); "
                             f"the permissions are {', '.join(PERMISSIONS)}")
        ui["permissions"] = {name: {} for name in permissions}  # (apps.mdx: each an empty object)
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = bool(prefers_border)
    return ui


def add_ui_resource(server: Server, fn: Callable[..., Any], uri: str, *,
                    csp: Optional[Dict[str, Sequence[str]]] = None, permissions: Sequence[str] = (),
                    domain: Optional[str] = None, prefers_border: Optional[bool] = None,
                    **options: Any) -> ServerResource:
    """Register ``fn`` as the view at ``uri``: it returns the HTML (``str``, or ``bytes``, sent
    as a base64 blob), served as ``text/html;profile=mcp-app`` with its ``_meta.ui``.

    ``fn`` takes no arguments, or only ``ctx`` (a :class:`~minimcp.Context`); it may be an
    ``async def``. ``csp``, ``permissions``, ``domain`` and ``prefers_border`` are those of
    :func:`ui_meta`; ``options`` are those of :meth:`~minimcp.Server.add_resource` (``name``:
    the function's name by default, ``title``, ``description``: its docstring by default,
    ``meta``, ``ttl_ms``, ``cache_scope``, ``scopes`` ...), but not ``mime_type``.

    Raises:
        ValueError: ``uri`` is not a ``ui://`` URI, or is a template; a bad ``csp`` or
            ``permissions``; ``meta`` with a ``"ui"`` key (the keywords make it).
        TypeError: ``mime_type`` was given, or ``fn`` takes arguments other than ``ctx``.
    """
    if not uri.startswith(SCHEME) or "{" in uri:
        raise ValueError(f"a view's URI is a fixed ui:// URI (ui://counter/view.html), not {uri!r}")
    if "mime_type" in options:
        raise TypeError(f"a view is always served as {MIME_TYPE}: leave mime_type out")
    meta = dict(options.pop("meta", None) or {})
    if UI in meta:
        raise ValueError("meta['ui'] is made from csp=, permissions=, domain= and prefers_border=: pass those")
    ui = ui_meta(csp, permissions, domain, prefers_border)
    if ui:
        meta[UI] = ui
    context = _context_parameter(fn)
    if options.get("description") is None and fn.__doc__:
        options["description"] = fn.__doc__.strip().split("\n\n")[0].strip()
    if options.get("name") is None:
        options["name"] = fn.__name__
    resource = server.add_resource(  # (a lambda has no hints to resolve; its "ctx" gets the Context)
        lambda ctx: [view_contents(uri, finish(fn(**{context: ctx}) if context else fn(), ctx), ui)],
        uri, mime_type=MIME_TYPE, meta=meta or None, **options)
    apps_of(server)
    return resource


def view_contents(uri: str, html: Any, ui: Dict[str, Any]) -> Dict[str, Any]:
    """A view's ``resources/read`` content item: the HTML as text (or a base64 blob, for bytes),
    its MIME type, and its ``_meta.ui`` (apps.mdx: ``mimeType`` "MUST be text/html;profile=mcp-app").

    Raises:
        TypeError: ``html`` is neither ``str`` nor ``bytes``.
    """
    if not isinstance(html, (str, bytes, bytearray)):
        raise TypeError(f"the view {uri} must return its HTML as str (or bytes), not {type(html).__name__}")
    item = resource_contents(uri, html, MIME_TYPE)
    if ui:
        item["_meta"] = {UI: ui}
    return item


def _context_parameter(fn: Callable[..., Any]) -> Optional[str]:
    """The parameter of ``fn`` that gets the request's context (named ``ctx``, or hinted
    ``Context``), or None when it takes none; a view has no other arguments (a fixed URI binds none).

    Raises:
        TypeError: ``fn`` takes something else.
    """
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if not params:
        return None
    hints = type_hints(fn, include_extras=False)
    context = [p for p in params if p == "ctx" or is_context(hints.get(p), (RequestContext,))]
    if len(params) == 1 and context:
        return context[0]
    raise TypeError(f"{fn.__qualname__} serves a view: it takes no arguments, or only ctx (it takes {list(params)})")


# -- tools ------------------------------------------------------------------------------------


def add_ui_tool(server: Server, fn: Callable[..., Any], resource_uri: str, *,
                visibility: Optional[Sequence[str]] = None, **options: Any) -> ServerTool:
    """Register ``fn`` as a tool whose results the view at ``resource_uri`` shows.

    The tool's ``_meta.ui`` gets ``resourceUri`` (and ``visibility`` when given);
    ``options`` are those of :meth:`~minimcp.Server.add_tool` (``meta`` is merged).

    Args:
        visibility: who may call it: ``["model", "app"]`` (what a host assumes when it is left
            out), ``["model"]`` (the host keeps the view from calling it), or ``["app"]``: only
            the view calls it, and a client that did not declare the extension neither sees nor
            calls it (see the module docstring).

    Raises:
        ValueError: ``resource_uri`` is not a ``ui://`` URI; ``visibility`` is empty or names
            something other than ``"model"`` and ``"app"``; ``meta`` has a ``"ui"`` key.
    """
    if not resource_uri.startswith(SCHEME):
        raise ValueError(f"a tool's view is a ui:// URI (ui://counter/view.html), not {resource_uri!r}")
    ui: Dict[str, Any] = {RESOURCE_URI: resource_uri}
    if visibility is not None:
        if isinstance(visibility, str) or not visibility or not set(visibility) <= set(VISIBILITIES):
            raise ValueError(f'visibility is a list of "model" and/or "app", not {visibility!r}')
        ui[VISIBILITY] = [who for who in VISIBILITIES if who in visibility]
    meta = dict(options.pop("meta", None) or {})
    if UI in meta:
        raise ValueError("meta['ui'] is made from resource_uri and visibility=: pass those")
    meta[UI] = ui
    meta[LEGACY_RESOURCE_URI] = resource_uri  # (apps.mdx "Resource Discovery": deprecated, still read)
    tool = server.add_tool(fn, meta=meta, **options)  # (first: a tool refused leaves nothing behind)
    apps = apps_of(server)
    if not is_for_model(meta) and not apps.hides_app_only_tools:
        server.add_middleware(hide_app_only_tools)
        apps.hides_app_only_tools = True
    return tool


def is_for_model(meta: Any) -> bool:
    """Whether a tool with this ``_meta`` is the model's to see and call: its ``ui.visibility``
    includes ``"model"``, or it has none (apps.mdx "Visibility": the default is both)."""
    return "model" in tool_view(meta)[1]


# -- who may see what ---------------------------------------------------------------------------


def supports_apps(ctx: Any) -> bool:
    """Whether the client of this request renders views: it declared the extension with
    ``text/html;profile=mcp-app`` among its ``mimeTypes`` (apps.mdx "Extension Settings").

    A tool may use it to return more text for a client that shows no view::

        if not supports_apps(ctx):
            return f"count: {count}"

    False also when the server cannot know: a sessionless app's POST (``wsgi_app(sessions=False)``)
    in a handshake-era version comes on a connection that ran no ``initialize``, so what its client
    declared there is gone. The tool then says it all in text, which a client without views
    needs and one with a view loses nothing by (apps.mdx "Graceful Degradation": "Tools MUST
    return meaningful content array even when UI is available").
    """
    return renders_views(ctx) is True


def renders_views(ctx: Any) -> Optional[bool]:
    """What the client of this request declared about views: True (the extension, with
    ``text/html;profile=mcp-app``), False (not), or None when it is not known: no 2026-07-28
    ``_meta`` on the request, and a connection that ran no ``initialize`` (a sessionless app's
    POST: its client's ``initialize`` went to another).

    The capabilities are the request's own ``_meta`` (2026-07-28; read from the params, as a
    middleware runs before the request's ``_meta`` is parsed), else the connection's, from
    ``initialize``.
    """
    meta = ctx.params.get("_meta")
    if type(meta) is dict and VERSION_KEY in meta:
        capabilities = meta.get(CAPABILITIES_KEY)
    else:
        connection = ctx.session.owner
        if not connection.initialized:
            return None
        capabilities = connection.client_capabilities
    extensions = capabilities.get("extensions") if type(capabilities) is dict else None
    settings = extensions.get(EXTENSION) if type(extensions) is dict else None
    mime_types = settings.get(MIME_TYPES) if type(settings) is dict else None
    return type(mime_types) is list and MIME_TYPE in mime_types


def hide_app_only_tools(request: Any, call_next: Callable[[Any], Any]) -> Any:
    """Server middleware: refuse a ``tools/call`` of a tool only a view may call (``visibility:
    ["app"]``) from a client that did not declare the extension (-32602, saying why). Added by
    :func:`add_ui_tool`, which also has the server's ``tools/list`` leave those tools out for
    such a client (:func:`list_tools_for_client`). Every other request, a client that declared the
    extension, and one whose declaration the server cannot know (:func:`renders_views` None: the
    tool is the view's to call, and hiding it is a courtesy to a host, no access control) pass
    unchanged.
    """
    if request.outgoing or request.method != "tools/call" or renders_views(request) is not False:
        return call_next(request)
    name = request.params.get("name")
    tool = request.session.owner.server.get_tool(name) if isinstance(name, str) else None
    if tool is not None and not is_for_model(tool.definition.get("_meta")):
        raise RPCError(INVALID_PARAMS, f"Unknown tool: {name!r} (only an MCP App's view calls it: a client "
                                       f"that declares the {EXTENSION} extension, with {MIME_TYPE})")
    return call_next(request)


def list_tools_for_client(connection: ServerConnection, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``tools/list`` on a server with tools only a view calls (what
    :meth:`Apps.list_tools` runs).

    For a client that did not declare the extension, those tools are left out before the list
    is paged, so every page is full and the last says so (spec server/utilities/pagination).
    In 2026-07-28 the result is ``cacheScope: "private"``: the list depends on what the client
    declared, so no cache shared between clients may keep it (spec 2026-07-28 caching).

    Raises:
        RPCError: -32602 for a cursor that is not a string or was not made here.
    """
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise RPCError(INVALID_PARAMS, f'Invalid params: "cursor" must be a string, not {cursor!r}')
    server = connection.server
    tools = server.tools()
    if renders_views(ctx) is False:
        tools = [tool for tool in tools if is_for_model(tool.definition.get("_meta"))]
    version = ctx.protocol_version or PROTOCOL_VERSION
    page, next_cursor = paginate([tool.definition_for(version) for tool in tools], cursor, server.page_size)
    result: Dict[str, Any] = {"tools": page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    if ctx.meta is not None:  # (the stateless era: serve() adds the server's ttlMs beside it)
        result["cacheScope"] = "private"
    return result
