"""One client's connection to a server: the MCP method table, and the handler's ``ctx``.

:class:`ServerConnection` holds what one client negotiated (protocol
version, capabilities, log level, subscriptions) and answers its requests;
``ServerConnection.handlers()`` is the table of every MCP method a minimcp
server answers. :class:`Context` is what a tool, resource or prompt
function gets when it declares a ``ctx`` parameter: progress, cancellation,
logging to the client, and requests to the client (sampling, elicitation,
roots) that block only the handler's own worker thread.
"""

import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from ..logs import get_logger
from ..protocol import jsonrpc
from . import stateless as modern
from ..errors import CapabilityError, RPCError
from ..protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from ..protocol.stateless import VERSION_KEY, InputRequired, RequestMeta
from ..session import RequestContext, Session
from ..protocol.versions import LEGACY_VERSIONS, PROTOCOL_VERSION, knows

if TYPE_CHECKING:  # pragma: no cover
    from .server import Server

log = get_logger(__name__)

#: RFC 5424 severities, least severe first (spec server/utilities/logging).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}


class Context(RequestContext):
    """What a tool, resource or prompt function gets when it declares a ``ctx`` parameter.

    Example::

        @server.tool()
        def summarise(path: str, ctx: Context) -> str:
            ctx.log("info", f"reading {path}")
            text = open(path).read()
            reply = ctx.sample(f"Summarise:\\n{text}", max_tokens=200)
            return reply["content"]["text"]

    Besides ``request_id``, ``cancelled`` and ``report_progress()`` (see
    :class:`~minimcp.session.RequestContext`), it tells what the client
    negotiated and can ask the client for things. Those requests block this
    handler's worker thread only, never the connection.
    """

    __slots__ = ("modern", "answers", "_asked", "_asks", "_batching")

    def __init__(self, session: Session, request: Any) -> None:
        super().__init__(session, request)
        #: The request's 2026-07-28 metadata, or None for a handshake-era request.
        self.modern: Optional[RequestMeta] = None
        #: Answers the client sent for this request's input requests (2026-07-28).
        self.answers: Dict[str, Any] = {}
        self._asked: Dict[str, dict] = {}
        self._asks = 0
        self._batching = 0

    @property
    def connection(self) -> "ServerConnection":
        """The client connection this request came in on."""
        return self.session.owner

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version of this request (2026-07-28) or negotiated with this client."""
        return self.modern.version if self.modern else self.session.owner.protocol_version

    @property
    def client_capabilities(self) -> dict:
        """The capabilities the client declared, in this request (2026-07-28) or at initialize."""
        return self.modern.capabilities if self.modern else self.session.owner.client_capabilities

    @property
    def client_info(self) -> dict:
        """The client's ``clientInfo`` (name, version), self-reported."""
        return self.modern.client_info if self.modern else self.session.owner.client_info

    @property
    def principal(self) -> Any:
        """Who the client authenticated as (what the HTTP ``auth`` hook returned), or None."""
        return self.session.owner.principal

    def close_sse_stream(self) -> None:
        """End this request's SSE stream now; the client reconnects and resumes (Streamable HTTP,
        2025-11-25 polling). Messages sent meanwhile are kept for it. Elsewhere (other
        transports, other protocol versions): does nothing."""
        # spec 2025-11-25 basic/transports: only a stream primed with an event id may be
        # closed before its response; older versions cannot resume, so it stays open.
        version = self.protocol_version
        if self.modern is None and version is not None and knows(version, "sse_priming"):
            self.session.transport.close_stream(self.request_id)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message to the client, if it asked for this level or above.

        Args:
            level: one of ``debug info notice warning error critical alert emergency``.
            data: any JSON value: a string, or a dict of details.
            logger: the name of the part of the server that logs.
        """
        if self.modern is None:
            self.connection.send_log(level, data, logger, related_to=self.request_id)
            return
        # 2026-07-28: logs are request-scoped, only at the level this request asked
        # for, and nothing more once it was cancelled (spec basic/patterns/cancellation).
        wanted = self.modern.log_level
        if wanted is not None and _RANK.get(level, 0) >= _RANK.get(wanted, 0) and not self.is_cancelled:
            params: Dict[str, Any] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self.session.notify("notifications/message", params, related_to=self.request_id)

    def _require(self, capability: str, what: str, sub: Optional[str] = None) -> None:
        declared = self.client_capabilities.get(capability)
        if declared is None or (sub is not None and sub not in declared):
            name = f"{capability}.{sub}" if sub else capability
            raise CapabilityError(f"cannot {what}: the client did not declare the {name!r} capability "
                                  f"(client: {self.client_info.get('name', 'unknown')})", capability)

    def _ask(self, method: str, params: Optional[dict], key: Optional[str], timeout: Optional[float]) -> Any:
        """Ask the client: a request now (handshake era), or an input request (2026-07-28)."""
        if self.modern is None:
            return self.connection.request(method, params, timeout, self.request_id)
        self._asks += 1
        key = key or f"{method.split('/')[0]}-{self._asks}"
        if key in self.answers and _fits(method, self.answers[key]):
            return self.answers[key]  # (a malformed answer is asked for again: spec MRTR)
        self._asked[key] = {"method": method, "params": params or {}}
        if self._batching:
            return None
        raise InputRequired(dict(self._asked))

    def inputs(self) -> "_Inputs":
        """Ask for several things in one round (2026-07-28); elsewhere it changes nothing.

        Inside the block, a question with no answer yet returns ``None``; at
        the end, the round's input requests go to the client together::

            with ctx.inputs():
                name = ctx.elicit("Your name?", {...}, key="name")
                roots = ctx.list_roots(key="roots")
            # here both are answered
        """
        return _Inputs(self)

    def sample(self, messages: Union[str, List[Any]], *, max_tokens: int, system_prompt: Optional[str] = None,
               temperature: Optional[float] = None, stop_sequences: Optional[List[str]] = None,
               model_preferences: Optional[dict] = None, include_context: Optional[str] = None,
               tools: Optional[List[dict]] = None, tool_choice: Optional[dict] = None,
               metadata: Optional[dict] = None, timeout: Optional[float] = None, key: Optional[str] = None) -> dict:
        """Ask the client's LLM for a message (``sampling/createMessage``).

        Args:
            messages: a string (one user message) or a list of strings and
                ``{"role": ..., "content": ...}`` dicts.
            max_tokens: the most tokens to generate (required by the spec).
            tools, tool_choice: tools the model may call (2025-11-25; the
                client must declare ``sampling.tools``).
            key: this question's name among the request's input requests
                (2026-07-28); by default its place in the order of questions.

        Returns:
            The ``CreateMessageResult``: ``role``, ``content``, ``model``, ``stopReason``.

        Raises:
            CapabilityError: the client did not declare ``sampling``.
            RPCError: the client refused (a user may decline).
        """
        self._require("sampling", "sample")
        if tools is not None:
            self._require("sampling", "sample with tools", "tools")
        items = [messages] if isinstance(messages, str) else messages
        params: Dict[str, Any] = {
            "messages": [{"role": "user", "content": {"type": "text", "text": m}} if isinstance(m, str) else m
                         for m in items],
            "maxTokens": max_tokens}
        for field, value in (("systemPrompt", system_prompt), ("temperature", temperature),
                             ("stopSequences", stop_sequences), ("modelPreferences", model_preferences),
                             ("includeContext", include_context), ("tools", tools), ("toolChoice", tool_choice),
                             ("metadata", metadata)):
            if value is not None:
                params[field] = value
        return self._ask("sampling/createMessage", params, key, timeout)

    def elicit(self, message: str, schema: Any, *, timeout: Optional[float] = 600.0,
               key: Optional[str] = None) -> dict:
        """Ask the user to fill in a form (``elicitation/create``, form mode, 2025-06-18+).

        Args:
            message: what to ask.
            schema: a flat JSON Schema object (``{"type": "object", "properties": ...}``),
                or a dataclass / TypedDict whose fields are str, int, float, bool or Literal.
            timeout: seconds to wait for the person (default ten minutes).

        Returns:
            The ``ElicitResult``: ``{"action": "accept", "content": {...}}``,
            or ``action`` ``"decline"`` / ``"cancel"``.

        Raises:
            CapabilityError: the client did not declare ``elicitation`` (form mode).
        """
        self._require("elicitation", "elicit")
        declared = self.client_capabilities["elicitation"]
        if declared and "form" not in declared:  # 2025-11-25: {} means form only
            raise CapabilityError("cannot elicit a form: the client declared elicitation for URLs only")
        if not isinstance(schema, dict):
            from .schema import type_schema

            schema = type_schema(schema)
        params = {"message": message, "requestedSchema": schema}
        if (self.protocol_version or "") >= "2025-11-25":
            params = {"mode": "form", **params}
        return self._ask("elicitation/create", params, key, timeout)

    def elicit_url(self, message: str, url: str, *, elicitation_id: Optional[str] = None,
                   timeout: Optional[float] = 600.0, key: Optional[str] = None) -> dict:
        """Ask the user to visit a URL (``elicitation/create``, URL mode, 2025-11-25).

        When the out-of-band step is done, call
        ``ctx.connection.notify_elicitation_complete(elicitation_id)``.

        Returns:
            The ``ElicitResult``; ``accept`` only means the user agreed to open the URL.
        """
        self._require("elicitation", "elicit a URL", "url")
        if elicitation_id is None:
            import secrets

            elicitation_id = secrets.token_urlsafe(12)
        params = {"mode": "url", "message": message, "url": url}
        if self.modern is None:  # 2026-07-28 dropped elicitationId: the state carries it
            params["elicitationId"] = elicitation_id
        return self._ask("elicitation/create", params, key, timeout)

    def list_roots(self, *, timeout: Optional[float] = None, key: Optional[str] = None) -> List[dict]:
        """Ask the client for its roots (``roots/list``): ``[{"uri": "file:///...", "name": ...}]``.

        Raises:
            CapabilityError: the client did not declare ``roots``.
        """
        self._require("roots", "list roots")
        answer = self._ask("roots/list", None, key, timeout)
        return None if answer is None else answer.get("roots", [])  # type: ignore[return-value]


def _fits(method: str, answer: Any) -> bool:
    """Does a client's input response have the shape of ``method``'s result? (spec 2026-07-28 MRTR:
    servers SHOULD validate input responses; a bad one is asked for again.)"""
    if type(answer) is not dict:
        return False
    if method == "elicitation/create":
        return answer.get("action") in ("accept", "decline", "cancel") and (
            answer.get("action") != "accept" or "content" not in answer or type(answer["content"]) is dict)
    if method == "sampling/createMessage":
        return isinstance(answer.get("role"), str) and isinstance(answer.get("content"), (dict, list))
    if method == "roots/list":
        return type(answer.get("roots")) is list
    return True


class _Inputs:
    __slots__ = ("ctx",)

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def __enter__(self) -> None:
        self.ctx._batching += 1

    def __exit__(self, kind: Any, *rest: Any) -> None:
        ctx = self.ctx
        ctx._batching -= 1
        if kind is None and not ctx._batching and any(key not in ctx.answers for key in ctx._asked):
            raise InputRequired(dict(ctx._asked))


class ServerConnection:
    """One client's connection to a :class:`~minimcp.Server`: what it negotiated, and its session."""

    def __init__(self, server: "Server", transport: Any, trace: bool, workers: Any = None,
                 principal: Any = None) -> None:
        self.server = server
        #: Who the client authenticated as (HTTP with an ``auth`` hook), else None.
        self.principal = principal
        self.protocol_version: Optional[str] = None
        self.client_capabilities: dict = {}
        self.client_info: dict = {}
        #: The least severe level the client wants (``logging/setLevel``); None: send nothing.
        self.log_level: Optional[str] = server.log_level
        #: Resource URIs this client subscribed to (``resources/subscribe``).
        self.subscriptions: set = set()
        self._lock = threading.Lock()
        self.session = Session(transport, self.handlers(),
                               {"notifications/roots/list_changed": self._roots_changed},
                               owner=self, context_class=Context, max_workers=server.max_workers,
                               timeout=server.timeout, trace=trace, name=f"server {server.name}",
                               workers=workers)
        self.session.inline_methods = {"initialize"}

    def handlers(self) -> Dict[str, Callable]:
        """Every MCP request a connection answers (the table is built once, for all connections:
        each handler finds its connection as ``ctx.session.owner``, so none holds a closure)."""
        return _HANDLERS

    @property
    def version(self) -> str:
        """The negotiated protocol version (the newest, before the handshake)."""
        return self.protocol_version or PROTOCOL_VERSION

    def ping(self, params: dict, ctx: Context) -> dict:
        """Answer ``ping`` (spec basic/utilities/ping; gone in 2026-07-28)."""
        if VERSION_KEY in (params.get("_meta") or ()):
            raise RPCError(METHOD_NOT_FOUND, "Method not found: ping (not part of protocol version 2026-07-28)")
        return {}

    def initialize(self, params: dict, ctx: Context) -> dict:
        """Negotiate the protocol version (spec basic/lifecycle "Initialization")."""
        if VERSION_KEY in (params.get("_meta") or ()):
            raise RPCError(METHOD_NOT_FOUND, "Method not found: initialize (not part of protocol version 2026-07-28)")
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
        return self.server.initialize_result(version)

    # -- lists, with pagination -----------------------------------------------------

    def list_items(self, registry: str, key: str, params: dict, ctx: Context) -> dict:
        """Answer a list method: one page of ``server.<registry>()`` as ``key``."""
        version = ctx.protocol_version or PROTOCOL_VERSION
        items = getattr(self.server, registry)()
        page, next_cursor = paginate([item.definition_for(version) for item in items],
                                     params.get("cursor"), self.server.page_size)
        result: Dict[str, Any] = {key: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # -- tools, resources, prompts, completion ----------------------------------------

    def call_tool(self, params: dict, ctx: Context) -> dict:
        """Answer ``tools/call``: an unknown tool is a protocol error, a failing tool a result."""
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
        with self.server.log_bridge.handling(ctx):
            return tool.call(arguments, ctx, ctx.protocol_version or PROTOCOL_VERSION)

    def _resource_uri(self, params: dict) -> str:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RPCError(INVALID_PARAMS, 'needs "uri" (a string)')
        return uri

    def read_resource(self, params: dict, ctx: Context) -> dict:
        """Answer ``resources/read``; an unknown URI is ``-32002`` (spec server/resources "Error Handling")."""
        uri = self._resource_uri(params)
        found = self.server.find_resource(uri)
        try:
            if found is None:
                raise RPCError(jsonrpc.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
            resource, variables = found
            with self.server.log_bridge.handling(ctx):
                result = resource.read(uri, variables, ctx)
        except RPCError as exc:
            if exc.code == jsonrpc.RESOURCE_NOT_FOUND and ctx.modern is not None:
                exc.code = INVALID_PARAMS  # spec 2026-07-28 server/resources: -32002 is gone
            raise
        if ctx.modern is not None and resource.ttl_ms is not None:
            result["ttlMs"], result["cacheScope"] = resource.ttl_ms, resource.cache_scope
        return result

    def subscribe(self, params: dict, ctx: Context) -> dict:
        """Answer ``resources/subscribe``: updates to ``uri`` will be sent to this client."""
        uri = self._resource_uri(params)
        if self.server.find_resource(uri) is None:
            raise RPCError(jsonrpc.RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        with self._lock:
            self.subscriptions.add(uri)
        return {}

    def unsubscribe(self, params: dict, ctx: Context) -> dict:
        """Answer ``resources/unsubscribe`` (unknown URIs are fine: the goal is reached)."""
        uri = self._resource_uri(params)
        with self._lock:
            self.subscriptions.discard(uri)
        return {}

    def get_prompt(self, params: dict, ctx: Context) -> dict:
        """Answer ``prompts/get``: unknown prompts and bad arguments are ``-32602``."""
        name = params.get("name")
        prompt = self.server.get_prompt(name) if isinstance(name, str) else None
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"Unknown prompt: {name!r}")
        arguments = params.get("arguments") or {}
        if type(arguments) is not dict:
            raise RPCError(INVALID_PARAMS, 'prompts/get "arguments" must be an object')
        with self.server.log_bridge.handling(ctx):
            return prompt.get(arguments, ctx, ctx.protocol_version or PROTOCOL_VERSION)

    def complete(self, params: dict, ctx: Context) -> dict:
        """Answer ``completion/complete`` (spec server/utilities/completion), at most 100 values."""
        ref = params.get("ref")
        argument = params.get("argument")
        if type(ref) is not dict or type(argument) is not dict or not isinstance(argument.get("name"), str):
            raise RPCError(INVALID_PARAMS, 'completion/complete needs "ref" and "argument": {"name", "value"}')
        context = (params.get("context") or {}).get("arguments") or {}
        completer = self.server.find_completer(ref, argument["name"])
        if completer is None:
            values: Any = []
        else:
            with self.server.log_bridge.handling(ctx):
                values = completer(str(argument.get("value", "")), context)
        if type(values) is dict:
            return {"completion": values}
        values = [str(v) for v in values]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    # -- logging --------------------------------------------------------------------

    def set_level(self, params: dict, ctx: Context) -> dict:
        """Answer ``logging/setLevel``: send log messages at this level and above."""
        level = params.get("level")
        if level not in _RANK:
            raise RPCError(INVALID_PARAMS, f"Unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    def send_log(self, level: str, data: Any, logger: Optional[str] = None, related_to: Any = None) -> None:
        """Send ``notifications/message`` if the client's level lets it through."""
        if level not in _RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self.log_level is None or _RANK[level] < _RANK[self.log_level]:
            return
        params: Dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params, related_to)

    # -- talking to the client ---------------------------------------------------------

    def request(self, method: str, params: Optional[dict], timeout: Optional[float], related_to: Any = None) -> Any:
        """Send a request to the client and wait for its answer (used by ``Context``)."""
        return self.session.request(method, params, timeout=timeout, related_to=related_to)

    def notify(self, method: str, params: Optional[dict] = None, related_to: Any = None) -> None:
        """Send a notification if the connection is open (after the handshake, or for a request)."""
        if self.session.closed or (self.protocol_version is None and related_to is None):
            return
        try:
            self.session.notify(method, params, related_to=related_to)
        except Exception as exc:  # the client went away: nothing to tell
            log.debug("could not send %s: %s", method, exc)

    def notify_elicitation_complete(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished (2025-11-25)."""
        if self.version >= "2025-11-25":
            self.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def _roots_changed(self, params: dict) -> None:
        if self.server.on_roots_changed is not None:
            self.server.on_roots_changed(self)

    def __repr__(self) -> str:
        return f"<ServerConnection {self.client_info.get('name')!r} version={self.protocol_version}>"


def _ready(method: Callable) -> Callable:
    """Guard a connection method: a request with 2026-07-28 ``_meta`` is served on its own
    (stateless); any other needs the handshake first (spec basic/lifecycle)."""

    def guarded(params: dict, ctx: Context) -> Any:
        connection = ctx.session.owner
        if VERSION_KEY in (params.get("_meta") or ()):
            return modern.serve(connection, lambda p, c: method(connection, p, c), params, ctx)
        if ctx.method in ("server/discover", "subscriptions/listen"):
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method} (2026-07-28 only)")
        if connection.protocol_version is None:
            raise RPCError(INVALID_REQUEST, "Invalid Request: the session is not initialized; "
                                            "send initialize first")
        return method(connection, params, ctx)

    return guarded


def _lister(registry: str, key: str) -> Callable:
    return _ready(lambda connection, params, ctx: connection.list_items(registry, key, params, ctx))


#: The MCP method table: every request a server answers, and the code that answers it.
_HANDLERS: Dict[str, Callable] = {
    "initialize": lambda params, ctx: ctx.session.owner.initialize(params, ctx),
    "ping": lambda params, ctx: ctx.session.owner.ping(params, ctx),
    "server/discover": _ready(modern.discover),
    "subscriptions/listen": _ready(modern.listen),
    "tools/list": _lister("tools", "tools"),
    "tools/call": _ready(ServerConnection.call_tool),
    "resources/list": _lister("resources", "resources"),
    "resources/templates/list": _lister("resource_templates", "resourceTemplates"),
    "resources/read": _ready(ServerConnection.read_resource),
    "resources/subscribe": _ready(ServerConnection.subscribe),
    "resources/unsubscribe": _ready(ServerConnection.unsubscribe),
    "prompts/list": _lister("prompts", "prompts"),
    "prompts/get": _ready(ServerConnection.get_prompt),
    "completion/complete": _ready(ServerConnection.complete),
    "logging/setLevel": _ready(ServerConnection.set_level),
}


def paginate(items: list, cursor: Optional[str], page_size: Optional[int]) -> tuple:
    """Return one page of ``items`` and the ``nextCursor`` (``None`` at the end).

    Cursors are opaque to clients (spec server/utilities/pagination); here
    they are the base64 of the next offset. A bad one is ``-32602``.
    """
    if cursor is None and page_size is None:
        return items, None  # the usual case: one page
    import base64  # late: only servers that page need it

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
