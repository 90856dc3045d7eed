"""The server: register Python functions as tools, resources and prompts, and serve them.

:class:`Server` is the registry (what the server offers, the same for every
client). Each connection gets a :class:`~minimcp.server.connection.ServerConnection`
(what that client negotiated), which owns a :class:`~minimcp.engine.session.Session`
(the threads) and answers the MCP methods of :mod:`minimcp.server.methods`.

Every protocol version is served at once; what a client's version does not
know is left out of what it is sent (the rules, one line per feature, are
:data:`minimcp.protocol.versions.FEATURES`). One error differs by version: an
unknown resource URI is ``-32002`` in the handshake versions, ``-32602`` from 2026-07-28 on.
"""

from __future__ import annotations

import threading
from collections import ChainMap

from ..logs import tracing
from ..protocol.versions import PROTOCOL_VERSION, knows
from .audience import Audience
from .connection import ServerConnection
from .context import Context
from .logbridge import LogBridge
from .methods import HANDLERS
from .state import StateSigner
from .tools import ServerTool

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover - loaded when a resource, prompt or completer is registered
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar, Union, overload

    from ..engine.middleware import Middleware
    from .backend import Backend
    from .completion import Completers
    from .prompts import ServerPrompt
    from .resources import ServerResource
    F = TypeVar("F", bound=Callable[..., Any])  # a decorated function: returned as it came, so its type is kept

__all__ = ["Server", "Context"]


class Server:
    """An MCP server: decorate functions to offer them, then ``run()``.

    Example::

        server = Server("weather", version="1.0.0")

        @server.tool()
        def get_weather(city: str) -> str:
            '''Get the current weather for a city.'''
            return f"{city}: sunny"

        server.run()   # stdio

    Args:
        name: the server's name, sent as ``serverInfo.name``.
        version: sent as ``serverInfo.version``.
        instructions: how to use this server, for the client's model.
        title: a display name (``serverInfo.title``).
        page_size: items per page of list results (``None``: one page).
        log_level: the level sent to clients before they call
            ``logging/setLevel`` (``None``, the default: nothing until they ask).
        log_bridge: forward ``logging`` records made inside handlers to the
            client (as ``notifications/message``, at the client's level).
        max_workers: the most requests handled at once per connection.
        timeout: seconds the server waits for the client to answer its requests.
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``): each once, with
            its direction, peer and the time since the line above; ``MINIMCP_TRACE=pretty``
            indents, ``=both`` adds the other side, ``=full`` leaves nothing out.
        cache_ttl_ms, cache_scope: the cache hints sent with 2026-07-28 list
            and discover results (0: re-fetch on next use). A resource read
            gets ``cache_ttl_ms`` too, but its resource's own scope (see
            :meth:`add_resource`: ``"private"`` unless told otherwise).
        state_secret: the key that signs 2026-07-28 ``requestState``; give all
            workers of a deployment the same one (default: random per process).
        middleware: functions that wrap every request the server answers or sends, over
            every transport (see :meth:`add_middleware`).
        mask_tool_errors: send the model a generic ``isError`` text with a reference
            (``Error in tool 'x': internal error (ref 3f9a2c1d); see the server's log``) for a
            tool's unexpected exception, not the exception's own text; the log gets the
            traceback and the same reference. A :class:`~minimcp.ToolError` keeps its text. Turn
            it on when the clients are not yours (a public or multi-tenant HTTP server) and the
            tools touch files, databases or other hosts whose errors name them (CWE-209); off,
            the default, the model reads what went wrong and can try again.
        backend: what the workers of a deployment share (task records, task control, list
            changes and resource updates): ``RedisBackend("redis://host:6379/0")`` for several
            workers, with the same ``state_secret`` on each; default: this process alone.

    Errors: an unexpected exception in a resource, prompt or completion function (or in
    minimcp's own handling of any request) is always kept from the client, which gets
    ``-32603 Internal error (ref 3f9a2c1d): see the server's log``; the server's log has it
    with its traceback under the same reference (logger ``minimcp.server.methods``). Raise
    :class:`~minimcp.RPCError` to send the client a code and message of your choice (a
    ``LookupError`` in a resource function is "Resource not found": -32002, -32602 from 2026-07-28).
    """

    def __init__(self, name: str, version: str = "0.1.0", *, instructions: Optional[str] = None,
                 title: Optional[str] = None, page_size: Optional[int] = None, log_level: Optional[str] = None,
                 log_bridge: bool = True, max_workers: int = 16, timeout: float = 60.0,
                 trace: Optional[bool] = None, cache_ttl_ms: int = 0, cache_scope: str = "public",
                 state_secret: Optional[bytes] = None, middleware: Iterable[Middleware] = (),
                 mask_tool_errors: bool = False, backend: Optional[Backend] = None) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.page_size = page_size
        self.log_level = log_level
        self.log_bridge: LogBridge = LogBridge(enabled=log_bridge)
        self.max_workers = max_workers
        self.timeout = timeout
        self.trace: bool = tracing() if trace is None else trace
        self.cache_ttl_ms: int = cache_ttl_ms
        self.cache_scope: str = cache_scope
        self.state_signer: StateSigner = StateSigner(state_secret)
        #: What the workers of a deployment share: task records and control, the notification bus
        #: (a :class:`~minimcp.server.redis_backend.RedisBackend`); None: this process alone.
        self.backend: Optional[Backend] = backend
        self._audience = Audience(self.backend)
        #: The open 2026-07-28 subscriptions/listen requests, of every connection.
        self.subscriptions: Set[Any] = self._audience.subscriptions
        self.on_roots_changed: Optional[Callable[[ServerConnection], None]] = None  # (connection): roots changed
        self._tools: Dict[str, ServerTool] = {}
        self._resources: Dict[str, ServerResource] = {}
        self._templates: Dict[str, ServerResource] = {}
        self._prompts: Dict[str, ServerPrompt] = {}
        self._completers: Optional[Completers] = None  # made when the first completer is registered
        self._lock = threading.Lock()
        #: What every request passes through, the first outermost (every connection shares the list).
        self.middleware: List[Middleware] = list(middleware)
        #: Give the model a generic text and a reference for a tool's unexpected exception (see above).
        self.mask_tool_errors: bool = mask_tool_errors

    def __repr__(self) -> str:
        return (f"<Server {self.name!r} {self.version} tools={len(self._tools)} "
                f"resources={len(self._resources) + len(self._templates)} prompts={len(self._prompts)}>")

    # -- tools --------------------------------------------------------------------------

    if TYPE_CHECKING:  # bare (@server.tool) or called (@server.tool(...)): either way, fn keeps its type
        @overload
        def tool(self, fn: F, **options: Any) -> F: ...
        @overload
        def tool(self, fn: None = None, **options: Any) -> Callable[[F], F]: ...

    def tool(self, fn: Optional[F] = None, **options: Any) -> Union[F, Callable[[F], F]]:
        """Register a function as a tool; works bare (``@server.tool``) or called.

        The function is returned unchanged (its type too, for a type checker), so it can
        still be called and tested directly. ``options`` are those of :meth:`add_tool`.
        """
        if fn is None:
            return lambda func: self.tool(func, **options)
        self.add_tool(fn, **options)
        return fn

    def add_tool(self, fn: Callable[..., Any], *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[Dict[str, Any]] = None,
                 icons: Optional[List[Dict[str, Any]]] = None, meta: Optional[Dict[str, Any]] = None, scopes: Sequence[str] = (),
                 input_schema: Optional[Dict[str, Any]] = None, output_schema: Optional[Dict[str, Any]] = None,
                 task: Optional[str] = None) -> ServerTool:
        """Register ``fn`` as a tool.

        Args:
            fn: the function: its signature gives ``inputSchema``, its return annotation
                ``outputSchema``, its docstring the description; ``name`` defaults to its name.
            title: a display name.
            description: overrides the docstring.
            annotations: hints such as ``{"readOnlyHint": True}``.
            icons: ``[{"src": "https://...", "mimeType": "image/png"}]``.
            meta: the tool's ``_meta``.
            input_schema, output_schema: hand-written schemas instead of the derived ones.
            scopes: OAuth scopes a caller's token needs, checked before ``fn`` runs (server/auth/protection.py).
            task: ``"optional"`` / ``"required"``: it may / must run as a task (``server.tasks``).

        Returns:
            The registered tool (connected clients get ``notifications/tools/list_changed``).

        Raises:
            TypeError: a parameter's type hint has no JSON Schema.
        """
        tool = ServerTool(fn, name=name, title=title, description=description, annotations=annotations,
                          icons=icons, meta=meta, input_schema=input_schema, output_schema=output_schema, task=task)
        tool.scopes = tuple(scopes)
        with self._lock:
            self._tools[tool.name] = tool
        self._audience.changed("notifications/tools/list_changed")
        return tool

    def remove_tool(self, name: str) -> None:
        """Unregister a tool (``KeyError`` if there is none); connected clients are told the list changed."""
        with self._lock:
            del self._tools[name]
        self._audience.changed("notifications/tools/list_changed")

    def tools(self) -> List[ServerTool]:
        """The registered tools, in registration order."""
        with self._lock:
            return list(self._tools.values())

    def get_tool(self, name: object) -> Optional[ServerTool]:
        """The tool called ``name``, or ``None`` (also for a name off the wire that is no string)."""
        return self._tools.get(name) if isinstance(name, str) else None

    # -- resources ----------------------------------------------------------------------

    def resource(self, uri: str, *, complete: Optional[Dict[str, Callable[..., Any]]] = None,
                 **options: Any) -> Callable[[F], F]:
        """Register a function as a resource (fixed URI) or a resource template (``{var}`` in it).

        Example::

            @server.resource("users://{user_id}/profile", mime_type="application/json")
            def profile(user_id: int) -> dict:
                return {"id": user_id}

        ``complete`` maps a template variable to a completer (see
        :meth:`completion`); ``options`` are those of :meth:`add_resource`.
        """
        def register(func: F) -> F:
            self.add_resource(func, uri, **options)
            for argument, completer in (complete or {}).items():
                self.add_completer(completer, resource=uri, argument=argument)
            return func

        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, *, name: Optional[str] = None, title: Optional[str] = None,
                     description: Optional[str] = None, mime_type: Optional[str] = None,
                     icons: Optional[List[Dict[str, Any]]] = None, annotations: Optional[Dict[str, Any]] = None,
                     size: Optional[int] = None, meta: Optional[Dict[str, Any]] = None, ttl_ms: Optional[int] = None,
                     cache_scope: str = "private", scopes: Sequence[str] = ()) -> ServerResource:
        """Register ``fn`` to answer ``resources/read`` for ``uri`` (a URI or an RFC 6570 template).

        ``fn`` returns ``str`` (text), ``bytes`` (a blob), or JSON-able data;
        raising ``LookupError`` means "no such resource" (``-32002``, or
        ``-32602`` for a 2026-07-28 request).
        ``ttl_ms`` / ``cache_scope`` are the cache hints of its 2026-07-28
        reads (default: the server's ``cache_ttl_ms``, and scope ``"private"``
        whatever the server's scope, since a read is often one user's data;
        pass ``cache_scope="public"`` for contents the same for everyone). ``scopes``: as in add_tool.
        Registering while clients are connected sends them
        ``notifications/resources/list_changed``.

        Raises:
            TypeError: a template variable has no matching parameter.
        """
        from .resources import ServerResource  # late: servers without resources skip it

        resource = ServerResource(fn, uri, name=name, title=title, description=description, mime_type=mime_type,
                                  icons=icons, annotations=annotations, size=size, meta=meta, ttl_ms=ttl_ms,
                                  cache_scope=cache_scope)
        resource.scopes = tuple(scopes)
        with self._lock:
            (self._templates if resource.is_template else self._resources)[uri] = resource
        self._audience.changed("notifications/resources/list_changed")
        return resource

    def remove_resource(self, uri: str) -> None:
        """Unregister a resource or template by its URI (``KeyError`` if there is none)."""
        with self._lock:
            if self._resources.pop(uri, None) is None:
                del self._templates[uri]
        self._audience.changed("notifications/resources/list_changed")

    def resources(self) -> List[ServerResource]:
        """The fixed-URI resources, in registration order."""
        with self._lock:
            return list(self._resources.values())

    def resource_templates(self) -> List[ServerResource]:
        """The resource templates, in registration order."""
        with self._lock:
            return list(self._templates.values())

    def find_resource(self, uri: str) -> Optional[Tuple[ServerResource, Dict[str, str]]]:
        """The resource that answers ``uri`` and the variables it binds, or ``None``."""
        fixed = self._resources.get(uri)
        if fixed is not None:
            return fixed, {}
        for template in self.resource_templates():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed (``notifications/resources/updated``)."""
        self._audience.updated(uri)

    # -- MCP Apps (the io.modelcontextprotocol/ui extension: server/apps.py) --------------------

    def ui_resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Register a function as an MCP App's view: it returns the HTML the host renders.

        Example::

            @server.ui_resource("ui://counter/view.html", prefers_border=True)
            def counter_view() -> str:
                return Path("counter.html").read_text()

        ``options`` are those of :func:`minimcp.server.apps.add_ui_resource`: ``csp``,
        ``permissions``, ``domain``, ``prefers_border``, and those of :meth:`add_resource`.
        """
        from .apps import add_ui_resource  # late: a server without apps never loads it

        def register(func: F) -> F:
            add_ui_resource(self, func, uri, **options)
            return func

        return register

    def ui_tool(self, resource_uri: str, **options: Any) -> Callable[[F], F]:
        """Register a function as a tool whose results the view at ``resource_uri`` shows.

        Example::

            @server.ui_tool("ui://counter/view.html", visibility=["app"])   # only the view calls it
            def increment(by: int = 1) -> dict:
                ...

        ``options`` are those of :func:`minimcp.server.apps.add_ui_tool` (``visibility``) and
        those of :meth:`add_tool`.
        """
        from .apps import add_ui_tool  # late: a server without apps never loads it

        def register(func: F) -> F:
            add_ui_tool(self, func, resource_uri, **options)
            return func

        return register

    # -- prompts --------------------------------------------------------------------------

    if TYPE_CHECKING:  # as for tool()
        @overload
        def prompt(self, fn: F, *, complete: Optional[Dict[str, Callable[..., Any]]] = None, **options: Any) -> F: ...
        @overload
        def prompt(self, fn: None = None, *, complete: Optional[Dict[str, Callable[..., Any]]] = None,
                   **options: Any) -> Callable[[F], F]: ...

    def prompt(self, fn: Optional[F] = None, *, complete: Optional[Dict[str, Callable[..., Any]]] = None,
               **options: Any) -> Union[F, Callable[[F], F]]:
        """Register a function as a prompt; works bare (``@server.prompt``) or called.

        ``complete`` maps an argument name to a completer (see :meth:`completion`);
        ``options`` are those of :meth:`add_prompt`.
        """
        if fn is None:
            return lambda func: self.prompt(func, complete=complete, **options)
        prompt = self.add_prompt(fn, **options)
        for argument, completer in (complete or {}).items():
            self.add_completer(completer, prompt=prompt.name, argument=argument)
        return fn

    def add_prompt(self, fn: Callable[..., Any], *, name: Optional[str] = None, title: Optional[str] = None,
                   description: Optional[str] = None, icons: Optional[List[Dict[str, Any]]] = None,
                   meta: Optional[Dict[str, Any]] = None, scopes: Sequence[str] = ()) -> ServerPrompt:
        """Register ``fn`` as a prompt; its parameters are the prompt's arguments.

        ``fn`` returns a string (one user message) or a list of messages
        (strings, content helpers, :class:`minimcp.Message`, or role/content dicts). ``scopes``: as in add_tool.
        """
        from .prompts import ServerPrompt  # late: servers without prompts skip it

        prompt = ServerPrompt(fn, name=name, title=title, description=description, icons=icons, meta=meta)
        prompt.scopes = tuple(scopes)
        with self._lock:
            self._prompts[prompt.name] = prompt
        self._audience.changed("notifications/prompts/list_changed")
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt (``KeyError`` if there is none)."""
        with self._lock:
            del self._prompts[name]
        self._audience.changed("notifications/prompts/list_changed")

    def prompts(self) -> List[ServerPrompt]:
        """The registered prompts, in registration order."""
        with self._lock:
            return list(self._prompts.values())

    def get_prompt(self, name: str) -> Optional[ServerPrompt]:
        """The prompt called ``name``, or ``None``."""
        return self._prompts.get(name)

    # -- completion -------------------------------------------------------------------------

    def completion(self, *, prompt: Optional[str] = None, resource: Optional[str] = None,
                   argument: str) -> Callable[[F], F]:
        """Register a completer for one prompt argument or resource-template variable.

        Example::

            @server.completion(prompt="forecast", argument="city")
            def cities(value: str, context: dict) -> list:
                return [c for c in CITIES if c.startswith(value)]

        The completer gets the partial ``value`` and (if it takes a second
        parameter) the arguments already chosen (``context.arguments``). It
        returns a list of strings (at most 100 are sent, with ``total`` and
        ``hasMore``) or a ready ``{"values": ..., "total": ..., "hasMore": ...}`` dict.
        """
        def register(func: F) -> F:
            self.add_completer(func, prompt=prompt, resource=resource, argument=argument)
            return func

        return register

    def add_completer(self, fn: Callable[..., Any], *, prompt: Optional[str] = None, resource: Optional[str] = None,
                      argument: str) -> None:
        """Register ``fn`` as the completer of ``argument`` of a prompt or a resource template.

        Raises:
            TypeError: both or neither of ``prompt`` and ``resource`` were given.
        """
        self._completer_registry().add(fn, prompt, resource, argument)

    def find_completer(self, ref: Dict[str, Any], argument: str) -> Optional[Callable[..., Any]]:
        """The completer for a ``completion/complete`` reference and argument.

        Raises:
            RPCError: ``-32602`` when the reference names no prompt or resource.
        """
        return self._completer_registry().find(ref, argument, self._prompts,
                                               ChainMap(self._resources, self._templates))

    def _completer_registry(self) -> Completers:
        if self._completers is None:
            from .completion import Completers  # late: most servers register no completer

            self._completers = Completers()
        return self._completers

    # -- the handshake -------------------------------------------------------------------------

    def capabilities(self, version: str = PROTOCOL_VERSION) -> Dict[str, Any]:
        """The capabilities this server declares to a client of ``version``.

        Each feature is declared when something is registered for it; a
        server with nothing yet still declares ``tools`` (to add them later).
        """
        caps: Dict[str, Any] = {"logging": {}}
        if self._prompts:
            caps["prompts"] = {"listChanged": True}
        if self._resources or self._templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self._tools or not (self._prompts or self._resources or self._templates):
            caps["tools"] = {"listChanged": True}
        if self._completers and knows(version, "completions"):
            caps["completions"] = {}
        apps = self.__dict__.get("apps")  # MCP Apps: declared in every version (server/apps.py, SEP-1724)
        if apps is not None:
            caps["extensions"] = {apps.EXTENSION: apps.settings()}
        return caps

    def initialize_result(self, version: str) -> Dict[str, Any]:
        """The ``initialize`` result for a client that negotiated ``version``."""
        info: Dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title and knows(version, "server_title"):
            info["title"] = self.title
        result: Dict[str, Any] = {"protocolVersion": version, "capabilities": self.capabilities(version),
                                  "serverInfo": info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    # -- serving ----------------------------------------------------------------------------------

    def connections(self) -> List[ServerConnection]:
        """The connections being served now."""
        return self._audience.connections()

    def register(self, connection: ServerConnection) -> ServerConnection:
        """Track a connection, so list changes and resource updates reach it (``open_connection``
        does it for every connection it opens with ``track=True``)."""
        return self._audience.add(connection)

    def add_middleware(self, middleware: Middleware) -> Middleware:
        """Wrap every request this server answers or sends in ``middleware(request, call_next)``,
        over every transport (stdio, either HTTP era, HTTP+SSE, WebSocket, in memory); also a
        decorator. Added last, it runs innermost (closest to the handler). For timing, tracing,
        metrics, rate limits or an audit log, written once::

            @server.add_middleware
            def timing(request, call_next):
                started = time.perf_counter()
                try:
                    return call_next(request)
                finally:
                    log.info("%s: %.1f ms", request.method, (time.perf_counter() - started) * 1000)

        ``request`` is the :class:`~minimcp.Context` of a request the server answers
        (``request.outgoing`` is False), or a
        :class:`~minimcp.engine.middleware.OutgoingRequest` the server sends (a handler's
        ``ctx.sample()``, say: ``outgoing`` is True). ``call_next(request)`` returns the result, or
        raises the error (``RPCError`` keeps its code). See ``minimcp/engine/middleware.py``.
        """
        self.middleware.append(middleware)
        return middleware

    def open_connection(self, transport: Any, *, principal: Any = None, workers: Any = None,
                        track: bool = True, close_on_eof: bool = False) -> ServerConnection:
        """The one place a client connection to this server is made (``serve()`` and the HTTP
        app call it); nothing is read yet.

        Args:
            transport: the server end of the connection.
            principal: who the client authenticated as (the HTTP ``auth`` hook's answer).
            workers: a :class:`~minimcp.engine.threads.WorkerPool` to share (HTTP: one for all
                sessions); None gives the connection its own.
            track: register it, so list changes and resource updates reach it (False for
                a connection that lives for one HTTP request).
            close_on_eof: close the connection when the client ends the stream
                (a connection served in the background).
        """
        connection = ServerConnection(self, transport, HANDLERS, trace=self.trace, workers=workers,
                                      principal=principal, close_on_eof=close_on_eof)
        return self.register(connection) if track else connection

    def serve(self, transport: Any, *, background: bool = True, principal: Any = None) -> ServerConnection:
        """Serve one connection over ``transport``.

        With ``background=True`` the session reads on its own thread and
        closes itself when the client goes away; otherwise this call reads on
        the calling thread until the stream ends.
        """
        connection = self.open_connection(transport, principal=principal, close_on_eof=background)
        if background:
            connection.session.start()
        else:
            connection.session.serve_forever()
        return connection

    def wsgi_app(self, path: str = "/mcp", *, session_id_prefix: str = "", **options: Any) -> Any:
        """A WSGI application serving this server over Streamable HTTP at ``path``.

        Run it with ``server.run("http")``, or under gunicorn::

            app = server.wsgi_app(sessions=False)   # gunicorn -k gthread -w 4 'module:app'

        ``session_id_prefix="w1."`` starts every ``Mcp-Session-Id`` it mints, so that a proxy
        in front of several workers can send a session's requests to its worker by the id
        (``examples/deploy/nginx-sticky.conf``); at most 32 visible ASCII characters, else ``ValueError``.
        ``options`` are those of :class:`minimcp.server.http.app.MCPApp` (``sessions``, ``json_response``,
        ``allowed_hosts``, ``allowed_origins``, ``auth`` (a hook, or an OAuth
        :class:`~minimcp.server.auth.protection.ProtectedResource`), ``max_body``, ``event_store``, ``sse_path`` ...).
        """
        from .http.app import MCPApp  # late: a stdio server never loads the HTTP code

        return MCPApp(self, path, session_id_prefix=session_id_prefix, **options)

    def run(self, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8000,
            websocket_path: Optional[str] = None, session_id_prefix: str = "", **options: Any) -> None:
        """Serve until stopped: ``"stdio"`` (the default), ``"http"`` or ``"websocket"``.

        On stdio, the process's stdout carries the protocol and nothing else: while serving, ``print()``
        goes to stderr. Returns (so the process exits 0) when stdin closes, on SIGTERM, or on Ctrl-C.
        On the main thread, what exists when it starts is left out of garbage collection (``gc.freeze()``).
        ``"http"`` serves :meth:`wsgi_app` (``options`` go to it, ``auth=`` too, but the built-in
        server's ``max_connections``, default 256) at ``http://host:port/mcp`` until Ctrl-C or
        SIGTERM, then stops gracefully, and says where on stderr (``serving MCP at
        http://127.0.0.1:8000/mcp``; not with ``quiet=True``). It binds 127.0.0.1 unless told
        otherwise; a public host needs ``allowed_hosts=[...]`` too. ``websocket_path="/ws"``
        also serves WebSocket there (not an MCP standard transport); ``"websocket"`` only that.
        ``max_message=``: the largest message read, in bytes, on any transport (stdio: 64 MiB by
        default; WebSocket: the app's ``max_body``, else 4 MiB; over HTTP it is ``max_body`` too
        unless that is given); 0 or less raises ``ValueError``. ``session_id_prefix=``: as
        :meth:`wsgi_app`'s, over ``"http"`` only.
        """
        from .running import run  # late: signals and sockets are the running process's business

        if session_id_prefix:
            options["session_id_prefix"] = session_id_prefix
        run(self, transport, host, port, websocket_path, options)
