"""The server: register Python functions as MCP tools and serve them.

:class:`Server` is the registry (what the server offers); each connection
gets a :class:`ServerConnection` (what that client negotiated) that owns a
:class:`~minimcp.session.Session` (the threads). The request handlers are
the ``ServerConnection`` methods named in ``ServerConnection.handlers()``: one
line per MCP method, so the table of what this server answers is in one place.

Protocol versions: the handshake versions 2024-11-05 … 2025-11-25 are
served. Fields a client's negotiated version does not know are left out of
what it is sent (tool ``title``/``outputSchema``/``icons``, a result's
``structuredContent``): see :func:`tool_for_version`.
"""

import base64
import logging
import os
import signal
import threading
from typing import Any, Callable, Dict, List, Optional

from . import jsonrpc
from .content import error_result, tool_result
from .errors import RPCError, ToolError
from .jsonrpc import INVALID_PARAMS, INVALID_REQUEST
from .schema import FunctionSchema
from .session import RequestContext, Session
from .types import LEGACY_VERSIONS, PROTOCOL_VERSION

log = logging.getLogger(__name__)

MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

#: The first protocol version that knows each tool field (spec schema.ts of each version).
_TOOL_FIELD_SINCE = {"annotations": "2025-03-26", "title": "2025-06-18", "outputSchema": "2025-06-18",
                     "_meta": "2025-06-18", "icons": "2025-11-25", "execution": "2025-11-25"}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


class Context(RequestContext):
    """What a tool gets when it declares a ``ctx`` parameter.

    Example::

        @server.tool()
        def slow_count(n: int, ctx: Context) -> str:
            for i in range(n):
                if ctx.cancelled.is_set():
                    return "stopped early"
                ctx.report_progress(i + 1, total=n)
            return "done"

    Besides ``request_id``, ``cancelled`` and ``report_progress()`` (from
    :class:`~minimcp.session.RequestContext`), it tells what the client
    negotiated.
    """

    __slots__ = ()

    @property
    def connection(self) -> "ServerConnection":
        """The client connection this request came in on."""
        return self.session.owner

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version negotiated with this client."""
        return self.session.owner.protocol_version

    @property
    def client_capabilities(self) -> dict:
        """The capabilities the client declared (``{}`` if none)."""
        return self.session.owner.client_capabilities

    @property
    def client_info(self) -> dict:
        """The client's ``clientInfo`` (name, version), self-reported."""
        return self.session.owner.client_info


class ServerTool:
    """A registered tool: the function, its definition, and how to call it."""

    def __init__(self, fn: Callable, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[dict] = None,
                 icons: Optional[List[dict]] = None, meta: Optional[dict] = None) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.schema = FunctionSchema(fn, context_types=(RequestContext,))
        definition: Dict[str, Any] = {"name": self.name}
        if title:
            definition["title"] = title
        description = description if description is not None else self.schema.description
        if description:
            definition["description"] = description
        definition["inputSchema"] = self.schema.input_schema
        if self.schema.output_schema is not None:
            definition["outputSchema"] = self.schema.output_schema
        if annotations:
            definition["annotations"] = annotations
        if icons:
            definition["icons"] = icons
        if meta:
            definition["_meta"] = meta
        self.definition = definition

    def call(self, arguments: dict, ctx: Context) -> dict:
        """Validate, call the function, and build the ``CallToolResult``.

        Bad arguments and exceptions in the function become ``isError``
        results (spec 2025-11-25 server/tools "Error Handling"), so the
        model can read what went wrong and try again.
        """
        problem = self.schema.validate(arguments)
        if problem:
            return error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        kwargs = self.schema.bind(arguments)
        if self.schema.context_param:
            kwargs = dict(kwargs)
            kwargs[self.schema.context_param] = ctx
        try:
            value = self.fn(**kwargs)
        except ToolError as exc:
            return error_result(str(exc))
        except RPCError:
            raise
        except Exception as exc:
            log.exception("tool %r failed", self.name)
            return error_result(f"Error in tool {self.name!r}: {type(exc).__name__}: {exc}")
        try:
            return tool_result(value, self.schema.output_schema, self.schema.wrap_output)
        except (TypeError, ValueError) as exc:
            log.error("tool %r returned a value that cannot be sent: %s", self.name, exc)
            return error_result(f"Error in tool {self.name!r}: {exc}")

    def __repr__(self) -> str:
        return f"<ServerTool {self.name!r} -> {getattr(self.fn, '__qualname__', self.fn)!r}>"


def tool_for_version(definition: dict, version: str) -> dict:
    """Leave out the tool fields ``version`` does not know (versions compare as dates)."""
    if version >= "2025-11-25":
        return definition
    return {k: v for k, v in definition.items() if _TOOL_FIELD_SINCE.get(k, "") <= version}


def paginate(items: list, cursor: Optional[str], page_size: Optional[int]) -> tuple:
    """Return one page of ``items`` and the ``nextCursor`` (``None`` at the end).

    Cursors are opaque to clients (spec server/utilities/pagination); here
    they are the base64 of the next offset. A bad one is ``-32602``.
    """
    start = 0
    if cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii"))
            if not 0 <= start <= len(items):
                raise ValueError(start)
        except (ValueError, TypeError, AttributeError, UnicodeError):
            raise RPCError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
    if page_size is None:
        return items[start:], None
    end = start + page_size
    next_cursor = base64.urlsafe_b64encode(str(end).encode("ascii")).decode("ascii") if end < len(items) else None
    return items[start:end], next_cursor


class ServerConnection:
    """One client's connection to a :class:`Server`: what it negotiated, and its session."""

    def __init__(self, server: "Server", transport: Any, trace: bool) -> None:
        self.server = server
        self.protocol_version: Optional[str] = None
        self.client_capabilities: dict = {}
        self.client_info: dict = {}
        self.session = Session(transport, self.handlers(), owner=self, context_class=Context,
                               max_workers=server.max_workers, timeout=server.timeout, trace=trace,
                               name=f"server {server.name}")
        self.session.inline_methods = {"initialize"}

    def handlers(self) -> Dict[str, Callable]:
        """The MCP methods this connection answers (``ping`` is the session's own)."""
        return {
            "initialize": self.initialize,
            "tools/list": self._ready(self.list_tools),
            "tools/call": self._ready(self.call_tool),
        }

    def _ready(self, handler: Callable) -> Callable:
        """Guard a handler: legacy requests need the handshake first (spec basic/lifecycle)."""

        def guarded(params: dict, ctx: Context) -> Any:
            if self.protocol_version is None:
                meta = params.get("_meta")
                requested = meta.get(MODERN_VERSION_KEY) if type(meta) is dict else None
                if requested is not None:
                    raise RPCError(jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                                   f"Unsupported protocol version: {requested}",
                                   {"supported": list(LEGACY_VERSIONS), "requested": requested})
                raise RPCError(INVALID_REQUEST, "Invalid Request: the session is not initialized; "
                                                "send initialize first")
            return handler(params, ctx)

        return guarded

    def initialize(self, params: dict, ctx: Context) -> dict:
        """Negotiate the protocol version (spec basic/lifecycle "Initialization")."""
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RPCError(INVALID_PARAMS, 'initialize needs "protocolVersion" (a string)')
        if self.protocol_version is not None:
            raise RPCError(INVALID_REQUEST, "Invalid Request: already initialized")
        # Agree to the client's version if we speak it; else offer our newest.
        version = requested if requested in LEGACY_VERSIONS else PROTOCOL_VERSION
        self.client_capabilities = params.get("capabilities") or {}
        self.client_info = params.get("clientInfo") or {}
        self.session.allow_batches = version == "2025-03-26"
        self.protocol_version = version
        log.debug("client %s initialized with %s", self.client_info.get("name"), version)
        return self.server.initialize_result(version)

    def list_tools(self, params: dict, ctx: Context) -> dict:
        """Answer ``tools/list``, one page at a time."""
        version = self.protocol_version or PROTOCOL_VERSION
        tools = [tool_for_version(t.definition, version) for t in self.server.tools()]
        page, next_cursor = paginate(tools, params.get("cursor"), self.server.page_size)
        result: Dict[str, Any] = {"tools": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    def call_tool(self, params: dict, ctx: Context) -> dict:
        """Answer ``tools/call``: unknown tools are protocol errors, tool failures are results."""
        name = params.get("name")
        if not isinstance(name, str):
            raise RPCError(INVALID_PARAMS, 'tools/call needs "name" (a string)')
        tool = self.server.get_tool(name)
        if tool is None:
            raise RPCError(INVALID_PARAMS, f"Unknown tool: {name!r}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise RPCError(INVALID_PARAMS, 'tools/call "arguments" must be an object')
        result = tool.call(arguments, ctx)
        if "structuredContent" in result and (self.protocol_version or PROTOCOL_VERSION) < "2025-06-18":
            result = {k: v for k, v in result.items() if k != "structuredContent"}
        return result

    def notify_if_ready(self, method: str, params: Optional[dict] = None) -> None:
        """Send a notification if the handshake is done and the connection is open."""
        if self.protocol_version is not None and not self.session.closed:
            try:
                self.session.notify(method, params)
            except Exception as exc:
                log.debug("could not send %s: %s", method, exc)

    def __repr__(self) -> str:
        return f"<ServerConnection {self.client_info.get('name')!r} version={self.protocol_version}>"


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
        max_workers: the most requests handled at once per connection.
        timeout: seconds the server waits for the client to answer its requests.
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``).
    """

    def __init__(self, name: str, version: str = "0.1.0", *, instructions: Optional[str] = None,
                 title: Optional[str] = None, page_size: Optional[int] = None, max_workers: int = 16,
                 timeout: float = 60.0, trace: Optional[bool] = None) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.page_size = page_size
        self.max_workers = max_workers
        self.timeout = timeout
        self.trace = _env_flag("MINIMCP_TRACE") if trace is None else trace
        self._tools: Dict[str, ServerTool] = {}
        self._lock = threading.Lock()
        self._connections: List[ServerConnection] = []

    def __repr__(self) -> str:
        return f"<Server {self.name!r} {self.version} tools={len(self._tools)}>"

    # -- registration -------------------------------------------------------------

    def tool(self, fn: Optional[Callable] = None, *, name: Optional[str] = None, title: Optional[str] = None,
             description: Optional[str] = None, annotations: Optional[dict] = None,
             icons: Optional[List[dict]] = None, meta: Optional[dict] = None) -> Any:
        """Register a function as a tool; works bare (``@server.tool``) or called.

        The function is returned unchanged, so it can still be called and
        tested directly. See :meth:`add_tool` for the arguments.
        """
        def register(func: Callable) -> Callable:
            self.add_tool(func, name=name, title=title, description=description,
                          annotations=annotations, icons=icons, meta=meta)
            return func

        return register(fn) if fn is not None else register

    def add_tool(self, fn: Callable, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[dict] = None,
                 icons: Optional[List[dict]] = None, meta: Optional[dict] = None) -> ServerTool:
        """Register ``fn`` as a tool.

        Args:
            fn: the function. Its signature becomes ``inputSchema``, its
                return annotation ``outputSchema``, its docstring the description.
            name: the tool's name (default: the function's name).
            title: a display name.
            description: overrides the docstring.
            annotations: hints such as ``{"readOnlyHint": True}``.
            icons: ``[{"src": "https://...", "mimeType": "image/png"}]``.
            meta: the tool's ``_meta``.

        Returns:
            The registered tool. Registering while clients are connected
            sends them ``notifications/tools/list_changed``.

        Raises:
            TypeError: a parameter's type hint has no JSON Schema.
        """
        tool = ServerTool(fn, name=name, title=title, description=description,
                          annotations=annotations, icons=icons, meta=meta)
        with self._lock:
            self._tools[tool.name] = tool
        self._tools_changed()
        return tool

    def remove_tool(self, name: str) -> None:
        """Unregister a tool; connected clients are told the list changed.

        Raises:
            KeyError: there is no such tool.
        """
        with self._lock:
            del self._tools[name]
        self._tools_changed()

    def tools(self) -> List[ServerTool]:
        """The registered tools, in registration order."""
        with self._lock:
            return list(self._tools.values())

    def get_tool(self, name: str) -> Optional[ServerTool]:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def _tools_changed(self) -> None:
        for connection in self.connections():
            connection.notify_if_ready("notifications/tools/list_changed")

    # -- the handshake -------------------------------------------------------------

    def capabilities(self) -> dict:
        """The capabilities this server declares in ``initialize``."""
        return {"tools": {"listChanged": True}}

    def initialize_result(self, version: str) -> dict:
        """The ``initialize`` result for a client that negotiated ``version``."""
        info: Dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title and version >= "2025-06-18":
            info["title"] = self.title
        result: Dict[str, Any] = {"protocolVersion": version, "capabilities": self.capabilities(),
                                  "serverInfo": info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    # -- serving ---------------------------------------------------------------------

    def connections(self) -> List[ServerConnection]:
        """The connections being served now."""
        with self._lock:
            return [c for c in self._connections if not c.session.closed]

    def serve(self, transport: Any, *, background: bool = True) -> ServerConnection:
        """Serve one connection over ``transport``.

        With ``background=True`` the session reads on its own thread and
        closes itself when the client goes away; otherwise this call reads on
        the calling thread until the stream ends.
        """
        connection = ServerConnection(self, transport, self.trace)
        with self._lock:
            self._connections = [c for c in self._connections if not c.session.closed]
            self._connections.append(connection)
        if background:
            connection.session.close_on_eof = True
            connection.session.start()
        else:
            connection.session.serve_forever()
        return connection

    def run(self, transport: str = "stdio") -> None:
        """Serve until the client goes away; ``"stdio"`` is the only transport yet.

        On stdio, the process's stdout carries the protocol and nothing
        else: while serving, ``print()`` goes to stderr. Returns (so the
        process exits 0) when stdin closes, on SIGTERM, or on Ctrl-C.
        """
        if transport != "stdio":
            raise ValueError(f"unknown transport {transport!r}; this version serves 'stdio'")
        from .transports.stdio import StdioTransport, watch_parent

        stdio = StdioTransport.for_current_process()
        connection = ServerConnection(self, stdio, self.trace)
        with self._lock:
            self._connections.append(connection)
        in_main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _raise_interrupt) if in_main else None
        stop_watching = watch_parent(lambda: os.kill(os.getpid(), signal.SIGTERM)) if in_main else None
        try:
            connection.session.serve_forever()
        except KeyboardInterrupt:
            log.info("interrupted; shutting down")
            connection.session.close()
        finally:
            if stop_watching is not None:
                stop_watching()
            if in_main:
                signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
