"""Streamable HTTP, server side: a plain WSGI application.

``server.wsgi_app()`` returns an :class:`MCPApp`; it runs on minimcp's built-in server (``server.run("http")``),
gunicorn (``gthread`` workers), waitress, or any WSGI server. spec basic/transports "Streamable HTTP"
(2025-03-26 … 2026-07-28) and, beside it, the 2024-11-05 "HTTP with SSE" endpoints for old clients.

One endpoint (``/mcp``):

- ``POST`` carries one client message (or, under 2025-03-26, a batch). Notifications and
  responses get ``202``. A request is answered with JSON when its handler sends nothing before
  its result, else with an SSE stream (progress, logs, the server's own requests, then the response).
- ``GET`` opens the standalone SSE stream for messages that belong to no request, or resumes
  a broken stream from ``Last-Event-ID``.
- ``DELETE`` ends the session.

Sessions: ``initialize`` mints a ``Mcp-Session-Id``; later requests must carry it (400 without, 404
for an unknown or ended one). A sessionless app (``sessions=False``) keeps none, for deployments behind a plain load
balancer: each POST is served on its own, with the version from ``MCP-Protocol-Version``.

Security defaults (spec "Security Warning"): a present ``Origin`` must be local (else
403), the ``Host`` too (else 421: DNS-rebinding protection), bodies are capped (413),
and an ``auth`` hook may demand credentials (401 + ``WWW-Authenticate``). Every 4xx
carries a JSON-RPC error body saying what to fix.

Beside this module: :mod:`~minimcp.server.http.security` (those checks, the ``auth`` hook),
:mod:`~minimcp.server.http.replies` (statuses, error bodies), :mod:`~minimcp.server.http.sse`
(the 2024-11-05 endpoints), :mod:`~minimcp.server.http.streams` (the SSE streams of a session).
"""

import secrets
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from ...engine.session import id_in_use
from ...engine.threads import MAX_QUEUED, WorkerPool
from ...errors import RPCError
from ...logs import get_logger
from ...protocol import jsonrpc
from ...protocol.headers import check_headers
from ...protocol.jsonrpc import Malformed, Request, Response
from ...protocol.stateless import VERSION_KEY, RequestMeta
from ...protocol.versions import HANDSHAKE_VERSIONS, HTTP_DEFAULT_VERSION, STATELESS_VERSION, knows
from ..auth.protection import WELL_KNOWN, ProtectedResource, check_request_scopes
from ..connection import ServerConnection
from ..context import Context
from .replies import (
    SSE_HEADERS,
    STATUS,
    HTTPError,
    error,
    error_status,
    read_body,
    reply,
    session_not_found,
    stateless_status,
)
from .request import HEADER_NAME
from .security import LOCAL_HOSTS, authenticate, check_host_and_origin, check_owner
from .sockets import gone_probe
from .sse import SSEEndpoints
from .streams import (
    GONE_POLL_SECONDS,
    OPENING,
    EventStore,
    HTTPSessionTransport,
    MemoryEventStore,
    OutStream,
    format_event,
)

if TYPE_CHECKING:
    from ...logs import Logger
    from ..server import Server

__all__ = ["MCPApp"]

log: "Logger" = get_logger(__name__)
_Environ = Dict[str, Any]  # a WSGI environ, and the start_response that comes with it (PEP 3333)
_Start = Callable[..., Any]


#: Methods whose handlers are minimcp's own quick code (no user code that could wait).
QUICK = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list",
                   "server/discover", "ping", "logging/setLevel", "subscriptions/listen"})
#: Methods never answered in their POST's own body: ``initialize`` (its answer opens a session),
#: and ``subscriptions/listen``, held open (it returns at once, but its answer is a stream).
STREAMED = frozenset({"initialize", "subscriptions/listen"})
#: Methods whose answer can only be a stream: refused by an app that answers JSON only
#: (``json_response``). A listen's notifications come on its response stream and its answer
#: only when it ends (spec 2026-07-28 basic/patterns/subscriptions): in one JSON body it
#: would have nothing to say, and would hold its POST (and a thread) open until then.
STREAM_ONLY = frozenset({"subscriptions/listen"})


def runs_here(server: "Server", message: Any, tool: Any = None) -> bool:
    """Run this request on the thread that read its POST? Yes when its handler cannot wait on
    the client or be cancelled: our quick methods, and plain tools with no ``ctx`` (they can ask
    the client nothing and cannot see a cancel; an ``async def`` tool can see one). Anything
    else runs on a worker, so that this thread can stream what it sends (progress, logs, its
    questions to the client).
    ``tool``: the one a tools/call names, if the caller has looked it up."""
    method = getattr(message, "method", None)
    if method in QUICK:
        return True
    if method == "tools/call":
        if tool is None:
            tool = server.get_tool((message.params or {}).get("name") or "")
        return tool is not None and tool.can_run_inline
    return False


def answers_here(server: "Server", tool: Any, log_level: Optional[str]) -> bool:
    """Answer a request that :func:`runs_here` in its POST's own body, with no response stream?
    When the client asked for no log messages (``log_level``: in ``_meta``, the session's level,
    or the server's default) and it is no task (a task outlives its request): then nothing can be
    sent before its answer, and nothing can cancel it. Not under ``trace`` (the session prints
    the stream). ``tool``: the one a tools/call names."""
    return log_level is None and not server.trace and (tool is None or tool.task is None)


#: The longest ``session_id_prefix``: with the 32 random characters after it, an id fits in 64
#: (a proxy's stick table keys, say HAProxy's ``type string len 64``, hold it whole).
MAX_PREFIX = 32


def _checked_prefix(prefix: str) -> str:
    """``prefix``, if it can start a ``Mcp-Session-Id``: at most :data:`MAX_PREFIX` characters,
    each visible ASCII, 0x21 to 0x7E (spec basic/transports "Session Management"), so no space.

    Raises:
        ValueError: it cannot, saying what would.
    """
    if (type(prefix) is not str or len(prefix) > MAX_PREFIX
            or not all("\x21" <= char <= "\x7e" for char in prefix)):
        raise ValueError(f"session_id_prefix={prefix!r} cannot start a Mcp-Session-Id: use at most {MAX_PREFIX} "
                         f"visible ASCII characters, no space (spec basic/transports: a session id holds only "
                         f"0x21 to 0x7E), for example 'w1.'")
    return prefix


#: The most one-POST connections an app keeps to use again (see ``MCPApp._spare``): about as
#: many as POSTs it answers at once.
SPARES = 64


class MCPApp:
    """The WSGI application for one :class:`~minimcp.Server`; see the module docstring.

    Example::

        app = server.wsgi_app()          # gunicorn -k gthread 'myserver:app'

    Args:
        server: the server to serve.
        path: the MCP endpoint, relative to where the app is mounted (``SCRIPT_NAME``);
            mounted under a prefix, the prefix itself is the endpoint too.
        sessions: keep HTTP sessions (``Mcp-Session-Id``); False: a sessionless app, whose every
            POST is served on its own, so any worker can answer any request.
        json_response: always answer with JSON, never SSE (progress and logs are dropped).
            A request only a stream can answer (2026-07-28 ``subscriptions/listen``) is then
            refused at once: ``404`` with -32601.
        allowed_hosts: ``Host`` names accepted (default: localhost names); ``["*"]`` any.
        allowed_origins: ``Origin`` values accepted besides local ones.
        auth: ``hook(headers) -> principal``; raise :class:`Unauthorized` (or return None) to answer
            401. ``headers`` has lower-case names. An OAuth :class:`~minimcp.server.auth.protection.ProtectedResource`
            is such a hook that also serves the RFC 9728 metadata. A session answers only the principal that opened
            it (403 for another, compared with ``==``: return a user id, say).
        max_body: the largest request body, in bytes.
        event_store: where SSE events are kept for resumption.
        retry_ms: the ``retry`` sent in priming events (2025-11-25).
        sse_path, messages_path: the 2024-11-05 HTTP+SSE endpoints (``sse_path=None``: off).
        max_workers: handler threads shared by all sessions. A ``subscriptions/listen`` holds none
            while it listens (only its HTTP connection: the WSGI server's cap bounds those).
        max_queued: requests that wait for a free handler thread; past it a request is answered
            -32603 "server busy" at once (so no POST waits without bound, nor grows memory): a POST
            of one request with ``503`` and ``Retry-After``, so proxies and clients see the overload.
        sse_after: seconds a handler may take before its answer switches from JSON to
            an SSE stream (so the client can time out or cancel).
        session_ttl: seconds after which an idle session ends (its client gets 404 and
            starts anew); ``None`` keeps sessions until DELETE.
        max_sessions: sessions kept at once (both transports). At the cap a new session
            ends the least recently used idle one (no request running, no GET stream: its
            client gets 404 and starts again); none idle: ``503`` with ``Retry-After``.
        session_id_prefix: the start of every ``Mcp-Session-Id`` this app mints (``"w1."``): a
            session id that names its worker, so that a proxy can route a session's requests
            to the worker that holds it by the id alone (nginx ``map``:
            ``examples/deploy/nginx-sticky.conf``). At most 32 visible ASCII characters, else
            ``ValueError``.
    """

    def __init__(self, server: "Server", path: str = "/mcp", *, sessions: bool = True, json_response: bool = False,
                 allowed_hosts: Optional[Iterable[str]] = None, allowed_origins: Iterable[str] = (),
                 auth: Optional[Callable[[Dict[str, str]], Any]] = None, max_body: int = 4 * 1024 * 1024,
                 event_store: Optional[EventStore] = None, retry_ms: int = 1000, sse_path: Optional[str] = "/sse",
                 messages_path: str = "/messages/", max_workers: int = 64, sse_after: float = 0.1,
                 session_ttl: Optional[float] = 3600.0, max_sessions: int = 1024,
                 max_queued: int = MAX_QUEUED, session_id_prefix: str = "") -> None:
        self.server: Server = server
        #: The start of every ``Mcp-Session-Id`` minted here (``""``: none).
        self.session_id_prefix: str = _checked_prefix(session_id_prefix)
        self.path = path
        #: False: a sessionless app (``sessions=False``), whose every POST has a connection of its own.
        self.keeps_sessions = sessions
        self.json_response = json_response
        self.allowed_hosts: Set[str] = set(allowed_hosts) if allowed_hosts is not None else set(LOCAL_HOSTS)
        self.allowed_origins: Set[str] = set(allowed_origins)
        self.auth = auth
        self.max_body = max_body
        self.store: EventStore = event_store or MemoryEventStore()
        self.retry_ms = retry_ms
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.sse_after = sse_after
        self.session_ttl = session_ttl
        self.max_sessions = max_sessions
        self._last_used: Dict[str, float] = {}
        self.workers: WorkerPool = WorkerPool(max_workers, max_queued)
        self.sessions: Dict[str, ServerConnection] = {}
        self._lock = threading.Lock()
        self.sse_endpoints: SSEEndpoints = SSEEndpoints(self)
        self._spares: List[ServerConnection] = []  # one-POST connections to use again (_spare)
        # One-POST connections whose SSE response is being written (a listen stream, a slow tool):
        # close() ends them, as it ends the sessions' streams. (Under _lock.)
        self._streaming: Set[ServerConnection] = set()
        self._closing = False

    def __repr__(self) -> str:
        mode = "sessionless" if not self.keeps_sessions else f"sessions={len(self.sessions) + len(self.sse_endpoints.sessions)}"
        return f"<MCPApp {self.server.name!r} at {self.path} {mode}>"

    # -- the WSGI entry point ---------------------------------------------------------

    def __call__(self, environ: _Environ, start_response: _Start) -> Iterable[bytes]:
        """Serve one HTTP request."""
        try:
            headers = {}
            for key, value in environ.items():
                name = HEADER_NAME[key]
                if name:
                    headers[name] = value
            path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
            if path.startswith(WELL_KNOWN) and isinstance(self.auth, ProtectedResource):  # public: RFC 9728
                served = self.auth.serve_metadata(path, method, start_response)
                if served is not None:
                    return served
            check_host_and_origin(headers, self.allowed_hosts, self.allowed_origins)  # (check_request()'s rules)
            principal = None if self.auth is None else authenticate(self.auth, headers, environ)
            if path == self.path or self._is_endpoint(path, environ.get("SCRIPT_NAME", "")):
                handler = {"POST": self._post, "GET": self._get, "DELETE": self._delete}.get(method)
                if handler is None:
                    raise HTTPError(405, f"Method Not Allowed: use POST, GET or DELETE on {self.path}",
                                    headers=[("Allow", "GET, POST, DELETE")])
                body: Iterable[bytes] = handler(environ, headers, principal, start_response)
                return body
            if self.sse_path is not None and path == self.sse_path and method == "GET":
                return self.sse_endpoints.stream(environ, principal, start_response)
            if self.sse_path is not None and path == self.messages_path and method == "POST":
                return self.sse_endpoints.post(environ, principal, start_response)
            raise HTTPError(404, f"Not Found: the MCP endpoint is {environ.get('SCRIPT_NAME', '')}{self.path}")
        except HTTPError as exc:
            return error(start_response, exc.status, exc.code, str(exc), exc.headers)

    def _is_endpoint(self, path: str, script_name: str) -> bool:
        """Is ``PATH_INFO`` the MCP endpoint? ``path`` is relative to the mount point (WSGI's
        ``SCRIPT_NAME``), which is an endpoint too: ``DispatcherMiddleware(flask_app, {"/mcp":
        server.wsgi_app()})`` answers ``/mcp``, as does any prefix, and the app alone too."""
        return path in (self.path, self.path + "/") or (bool(script_name) and path in ("", "/"))

    def check_request(self, headers: Dict[str, str], environ: Optional[_Environ] = None) -> Any:
        """Apply the Host, Origin and auth rules to a request's headers (lower-case names);
        return the principal. Raises an error with a ``status`` (a WebSocket upgrade uses it).
        ``environ``: the request's, for an auth hook that checks a DPoP proof (RFC 9449 §4.3)."""
        check_host_and_origin(headers, self.allowed_hosts, self.allowed_origins)
        return None if self.auth is None else authenticate(self.auth, headers, environ)

    # -- POST: one client message ---------------------------------------------------------

    def _post(self, environ: _Environ, headers: Dict[str, str], principal: Any, start_response: _Start) -> Any:
        """One POST, of either era, by one path: checked, given its connection (the session's, or
        one of its own for a 2026-07-28 request and a sessionless app's), then answered here, in the
        POST's body, when nothing can be sent before its answer (:func:`answers_here`), else
        through a response stream (JSON if the answer comes first and quickly, else SSE)."""
        if not environ.get("CONTENT_TYPE", "").startswith("application/json"):
            raise HTTPError(415, "Unsupported Media Type: send Content-Type: application/json")
        accept = headers.get("accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            raise HTTPError(406, "Not Acceptable: Accept must list application/json and text/event-stream")
        parsed = jsonrpc.parse(read_body(environ, self.max_body))
        if type(parsed) is Malformed:
            raise HTTPError(400, parsed.message, parsed.code)
        batch = type(parsed) is list
        request: Optional[Request] = parsed if type(parsed) is Request else None
        # The tool a tools/call names, looked up once for the header, scope and thread decisions.
        tool = self.server.get_tool((request.params or {}).get("name") or "") \
            if request is not None and request.method == "tools/call" else None
        meta: Optional[RequestMeta] = None
        params = getattr(parsed, "params", None)
        meta_in = params.get("_meta") if params else None  # (what stateless_version() reads)
        per_request = not batch and ((type(meta_in) is dict and meta_in.get(VERSION_KEY) is not None)
                                     or headers.get("mcp-protocol-version") == STATELESS_VERSION)
        if per_request:  # 2026-07-28: headers mirror the body; errors are HTTP statuses (basic/transports)
            problem = check_headers(parsed, headers, tool.param_headers if tool is not None else None)
            if problem:  # first: a header that contradicts the body is -32020 whatever the body says
                return error(start_response, 400, jsonrpc.HEADER_MISMATCH, f"Header mismatch: {problem}",
                             request_id=getattr(parsed, "id", None))
        messages: List[Any] = parsed if type(parsed) is list else [parsed]
        if tool is None or tool.scopes:  # (a lone tools/call of a tool that needs no scope: nothing to check)
            check_request_scopes(self, messages, principal, tool)  # before any handler runs: 403 to step up from
        if per_request and request is not None:
            try:
                meta = RequestMeta(request.params or {})
            except RPCError as exc:  # -32602 / -32022: bad or missing _meta
                return error(start_response, 400, exc.code, exc.message, request_id=request.id, data=exc.data)
            if self.json_response and request.method in STREAM_ONLY:
                # Refused before anything is taken for it. -32601 is also "capability not supported"
                # (spec 2026-07-28 basic, error codes), and its status there is 404 (basic/transports
                # "Server validation", as error_status() maps it): nothing in the request is wrong
                # (400 would say so), this server does not serve the method.
                return error(start_response, 404, jsonrpc.METHOD_NOT_FOUND,
                             f"Method not found: {request.method} needs an SSE response, and this server "
                             "answers JSON only (json_response=True); read what you would listen for "
                             "again when you need it (tools/list, resources/read), or serve the app "
                             "with json_response=False", request_id=request.id)
        if batch and any(type(m) is Request and m.method == "initialize" for m in messages):
            # spec 2025-03-26 basic/lifecycle: initialize MUST NOT be part of a batch (refused before
            # a session is opened for it, which nobody could then use)
            raise HTTPError(400, "Invalid Request: initialize cannot be part of a JSON-RPC batch")
        one_post = per_request or not self.keeps_sessions  # the connection lives for this POST alone
        new_session: Optional[str] = None
        if one_post:
            version = None if per_request else self._handshake_version(headers)  # (a 400 before anything is taken)
            try:  # a spare connection (see _spare), else a new one
                connection = self._spares.pop()
                connection.principal = principal
            except IndexError:
                connection = self._new_connection(principal, session=False)
            if not per_request and not any(type(m) is Request and m.method == "initialize" for m in messages):
                # a sessionless app's, at the version its header says (spec 2025-06-18
                # basic/transports: no header means 2025-03-26)
                connection.protocol_version = version or HTTP_DEFAULT_VERSION
        else:
            connection, new_session = self._connection_for(messages, headers, principal)
        if batch and not connection.allows_batches():
            self._end_if_one_post(connection, one_post)
            raise HTTPError(400, "Invalid Request: JSON-RPC batches are allowed only in protocol version 2025-03-26")
        if request is None and not any(type(m) is Request for m in messages):  # notifications, responses
            for message in messages:
                connection.session.receive(message)
            self._end_if_one_post(connection, one_post)
            return reply(start_response, 202)
        # (a tool's own flag says it for a tools/call: what runs_here() reads)
        here = tool.can_run_inline if tool is not None else request is not None and runs_here(self.server, request)
        if request is not None and here and new_session is None and request.method not in STREAMED and answers_here(
                self.server, tool, meta.log_level if meta is not None else connection.log_level):
            answer = self._answer_here(connection, request, meta)
            if one_post:
                self._spare(connection)
            status = error_status(answer) if per_request and type(answer) is not Response else 200
            return reply(start_response, status, self._encoded(connection, request, answer))
        transport: HTTPSessionTransport = connection.session.transport
        if request is not None and request.id in transport.streams:  # a stream waits for that id's answer
            # The id of a request in flight: refused here, in this POST's body. On a stream of its
            # own the refusal would take the id's stream, and the first request's answer with it.
            return reply(start_response, 200, jsonrpc.encode(id_in_use(request.id)))
        session = connection.session
        turned_away = False
        if request is not None:  # the lone request, with its _meta as parsed above
            stream = transport.open_stream({request.id})
            ctx = session.accept(request)
            if ctx is not None:
                ctx.meta = meta  # type: ignore[attr-defined]  # (a server session makes Contexts)
                if here:
                    session.run(ctx)
                elif not self.workers.submit(session.run, ctx):  # (what session.submit() does: the app's pool is its)
                    session.turn_away(ctx)  # every worker busy, the queue full: -32603 "server busy" now
                    turned_away = True
        else:
            stream = transport.open_stream({m.id for m in messages if type(m) is Request})
            for message in messages:
                session.receive(message, inline=runs_here(self.server, message))
        extra = []
        if new_session is not None:
            if connection.protocol_version is None:  # initialize failed: no session after all
                self._end_session(new_session)
            else:
                extra.append(("Mcp-Session-Id", new_session))
        if turned_away and stream.done:  # (not done: the session ended meanwhile, as _answer() sees)
            return self._busy(stream, connection, extra, start_response, one_post)
        return self._answer(stream, connection, batch, extra, start_response,
                            per_request=request.id if per_request and request is not None else None,
                            one_post=one_post, environ=environ)

    def _busy(self, stream: OutStream, connection: ServerConnection, extra: List[Tuple[str, str]],
              start_response: _Start, one_post: bool) -> List[bytes]:
        """Answer a lone request the worker pool turned away (``max_queued``): the -32603 "server
        busy" that ``turn_away`` pushed, as the body of a ``503`` with ``Retry-After`` (RFC 9110
        §15.6.4, §10.2.3), so a proxy or client sees the overload (and may retry after a second),
        as for ``max_sessions``."""
        with stream.cond:
            body = stream.pending[0][0]  # (done: the error, its one response, is there)
        if one_post:  # answered as a whole: the connection may serve another POST
            self._spare(connection, stream)
        return reply(start_response, 503, body, extra + [("Retry-After", "1")])

    def _answer_here(self, connection: ServerConnection, request: Request, meta: Optional[RequestMeta]) -> Any:
        """Run ``request`` on this thread through the one dispatch (in flight in its session
        meanwhile: its id taken, close() waits for it) and return its answer."""
        session = connection.session
        ctx = Context(session, request, session.handlers[request.method])  # (answers_here: a known method)
        ctx.meta = meta  # (parsed once, here: the 2026-07-28 handler reads it from ctx)
        return session.answer_here(ctx)

    @staticmethod
    def _encoded(connection: ServerConnection, request: Request, answer: Any) -> bytes:
        try:
            return jsonrpc.encode(answer)
        except (TypeError, ValueError) as exc:  # the result is not JSON
            log.error("%s: result of %r cannot be sent: %s", connection.session.name, request.method, exc)
            return jsonrpc.encode(jsonrpc.ErrorResponse(request.id, jsonrpc.INTERNAL_ERROR,
                                                        f"Internal error: result is not JSON-serialisable: {exc}"))

    def _connection_for(self, messages: List[Any], headers: Dict[str, str],
                        principal: Any) -> Tuple[ServerConnection, Optional[str]]:
        """The session a handshake-era POST belongs to (its connection), and the new session id
        if it starts one. (A 2026-07-28 request and a sessionless app's POST get a connection of
        their own: see ``_post``.)"""
        connection: Optional[ServerConnection]  # (narrowed where it is set)
        initializing = any(type(m) is Request and m.method == "initialize" for m in messages)
        self._handshake_version(headers)  # (a 400 for a version the handshake era lacks)
        if initializing:
            self._expire_idle()
            self.admit_session()
            # Visible ASCII (spec basic/transports "Session Management"), cryptographically random
            # after the prefix that names this worker.
            session_id = self.session_id_prefix + secrets.token_urlsafe(24)
            connection = self._new_connection(principal, session=True)
            connection.session.transport.session_id = session_id  # (a tracer names the session by it)
            with self._lock:
                self.sessions[session_id] = connection
                self._last_used[session_id] = time.monotonic()
            return connection, session_id
        session_id = headers.get("mcp-session-id", "")  # ("": as absent)
        if not session_id:
            raise HTTPError(400, "Bad Request: Mcp-Session-Id header is required (send initialize first)")
        with self._lock:
            connection = self.sessions.get(session_id)
            if connection is not None:
                self._last_used[session_id] = time.monotonic()
        if connection is None:
            raise session_not_found("it expired or was ended; send initialize again")
        check_owner(connection.principal, principal)
        connection.principal = principal  # the same caller; its newest token (a step-up widens the scopes)
        return connection, None

    def _handshake_version(self, headers: Dict[str, str]) -> Optional[str]:
        """The request's ``MCP-Protocol-Version``, if any; 400 for one the handshake era lacks."""
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            raise HTTPError(400, f"Bad Request: unsupported MCP-Protocol-Version {version!r}; "
                            f"supported: {', '.join(HANDSHAKE_VERSIONS)}")
        return version

    def _expire_idle(self) -> None:
        """End sessions idle past ``session_ttl`` (a client that vanished without DELETE).

        Idle means: no request for that long, none running, and no GET stream open. Checked when
        a session starts, so the cost follows the traffic."""
        if self.session_ttl is None:
            return
        deadline = time.monotonic() - self.session_ttl
        with self._lock:
            idle = [sid for sid, used in self._last_used.items() if used <= deadline
                    and not self.sessions[sid].session.busy
                    and not self.sessions[sid].session.transport.listening]
        for session_id in idle:
            log.info("session %s idle for %.0fs: ended", session_id[:8], self.session_ttl)
            self._end_session(session_id)

    def admit_session(self) -> None:
        """Make room for one more session, or refuse it (503): see ``max_sessions``."""
        with self._lock:
            if len(self.sessions) + len(self.sse_endpoints.sessions) < self.max_sessions:
                return
            idle = [sid for sid, connection in self.sessions.items()
                    if not connection.session.busy and not connection.session.transport.listening]
            victim = min(idle, key=self._last_used.__getitem__, default=None)
        if victim is None:
            log.warning("%d sessions, none idle: a new one is refused", self.max_sessions)
            raise HTTPError(503, f"Service Unavailable: {self.max_sessions} sessions are open and busy; "
                            "try again shortly", jsonrpc.HTTP_ERROR, headers=[("Retry-After", "1")])
        log.info("%d sessions: the least recently used idle one (%s) ended", self.max_sessions, victim[:8])
        self._end_session(victim)

    def _spare(self, connection: ServerConnection, stream: Optional[OutStream] = None) -> None:
        """Keep a one-POST connection whose request was answered in the POST's body (here, or
        through ``stream`` as JSON) for the next such POST, if nothing of it outlives the request:
        nothing in flight either way, nothing started (no reader, no dispatcher), no subscription,
        no stream waiting. Then it carries nothing from one POST to the next but the server it
        serves, and the next POST pays for no new session (making and closing one is a large part
        of such a POST: benchmarks/instructions_http.py). Else, or past :data:`SPARES`, it is
        closed as any one-POST connection is."""
        if connection.session.pristine and not connection.subscriptions and len(self._spares) < SPARES and (
                stream is None or connection.session.transport.answered(stream)):
            # Everything a client left on it, as a new ServerConnection has it (its __init__), so
            # the next POST's client is not taken for this one: its version (a sessionless app's
            # POST sets it from its header), what it declared in initialize and who it said it
            # was, its log level, who it authenticated as. (Subscriptions: none, or not spared.)
            connection.protocol_version = None
            connection.client_capabilities, connection.client_info = {}, {}
            connection.initialized = False
            connection.log_level = self.server.log_level
            connection.principal = None
            self._spares.append(connection)
        else:
            connection.session.close(grace=self.server.timeout)

    def _new_connection(self, principal: Any, session: bool) -> ServerConnection:
        """A connection over a new HTTP transport: a session's (tracked, with a GET stream), or
        one that lives for a single POST (the stateless era's, a sessionless app's)."""
        transport = HTTPSessionTransport(self.store, standalone=session)
        return self.server.open_connection(transport, principal=principal, workers=self.workers, track=session)

    def _answer(self, stream: OutStream, connection: ServerConnection, batch: bool,
                extra: List[Tuple[str, str]], start_response: _Start, per_request: Any = None,
                one_post: bool = False, environ: Optional[_Environ] = None) -> Any:
        """JSON if the handler's first message is its answer and comes quickly; SSE otherwise.

        A handler that takes longer than ``sse_after`` gets an SSE response at once, so the client
        holds a stream it can close (the 2026-07-28 cancel) and its own timeouts run while it works.
        Under ``json_response`` it waits for the answer instead (:meth:`_wait_json`). ``environ``:
        the POST's, to notice a client that leaves meanwhile.
        """
        while True:
            first = stream.first_messages(self.sse_after)
            answers = []  # as jsonrpc.encode made them: sent unchanged
            for data, is_response in first:
                if not is_response:
                    break
                answers.append(data)
            if answers and len(answers) == len(first) and stream.done:  # nothing but the answers
                body = answers[0] if not batch else b"[" + b",".join(answers) + b"]"
                if one_post:  # answered as a whole: the connection may serve another POST
                    self._spare(connection, stream)
                status = 200 if per_request is None else stateless_status(answers[0])
                return reply(start_response, status, body, extra)
            if not self.json_response:
                break
            if stream.abandoned and not self._closing:  # cancelled, or the session ended: nothing will come
                return reply(start_response, 202)
            ended = self._wait_json(stream, connection, start_response, per_request, one_post, environ)
            if ended is not None:
                return ended
        start = stream.switch_to_sse()
        start_response(STATUS[200], SSE_HEADERS + extra)
        if per_request is not None:
            return self._stateless_sse_body(stream, start, connection, per_request)
        return self._sse_body(stream, start, connection, one_post)

    def _wait_json(self, stream: OutStream, connection: ServerConnection, start_response: _Start,
                   per_request: Any, one_post: bool, environ: Optional[_Environ]) -> Optional[List[bytes]]:
        """JSON forced (``json_response``): drop what is not a response, and wait for the rest.

        Waits in slices, never without end: a one-POST connection is noted for :meth:`close`
        meanwhile (nothing else would end it: a session's ends with the session), and each
        slice looks whether the app is closing or the client has left. Returns None when
        ``stream`` has more to read; else the POST's answer, its connection ended here:
        ``503`` if the app is closing, an empty ``202`` if the client left.
        """
        gone = gone_probe(environ) if environ is not None else None
        noted = one_post and self._stream_opens(connection)  # (False: the app is closing)
        try:
            while True:
                with stream.cond:
                    stream.pending = [item for item in stream.pending if item[1]]
                    if stream.done or stream.abandoned or self._closing:  # (a batch's first answers: wait on)
                        break
                    if stream.cond.wait(GONE_POLL_SECONDS):
                        continue  # something came: look again
                if gone is not None and gone():  # (a socket poll: never while holding cond)
                    break
            with stream.cond:
                if stream.done or (stream.abandoned and not self._closing):
                    return None  # (abandoned: the caller answers 202, as it always did)
                waiting = list(stream.expected)
        finally:
            if noted:
                self._stream_ends(connection)
        closing = self._closing
        # The client left (its answer has nowhere to go) or the app is closing. Under 2026-07-28 a
        # client that leaves cancels (spec basic/transports "Cancellation"); closing cancels any
        # request. An older client's JSON answer waits on no stream it could resume: only this
        # thread is freed, and the handler runs on (spec 2025-03-26: a disconnect is no cancel).
        if per_request is not None or closing:
            for waited in waiting:
                connection.session.cancel_incoming(waited, "the server is shutting down" if closing
                                                   else "the client closed the connection")
        if one_post:
            connection.session.close(grace=0.0 if per_request is not None or closing else self.server.timeout)
        request_id = waiting[0] if len(waiting) == 1 else None
        if closing:
            return error(start_response, 503, jsonrpc.INTERNAL_ERROR, "Service Unavailable: the server is "
                         "shutting down; send the request again (to another instance)", [("Retry-After", "1")],
                         request_id)
        log.debug("%s: the client left before the JSON answer to %r", connection.session.name, request_id)
        return reply(start_response, 202)

    def _stateless_sse_body(self, stream: OutStream, start: str, connection: ServerConnection,
                         request_id: Any) -> Iterable[bytes]:
        # 2026-07-28: no event ids or resumption; a client that closes the stream
        # cancels the request, noticed at the next write (a keepalive each second). The comment
        # first sends the headers now (PEP 3333: with the first bytes), so the client holds a
        # stream it can close from the start, not only after the first keepalive.
        try:
            if not self._stream_opens(connection):
                return  # the app is closing: the request is cancelled below, the stream ends at once
            yield OPENING
            for chunk in stream.events(after=start, keepalive=1.0):
                if chunk.startswith(b"id: "):
                    chunk = chunk.split(b"\n", 1)[1]
                yield chunk
        finally:
            if not stream.done:
                connection.session.cancel_incoming(request_id)
            self._stream_ends(connection)
            connection.session.close()

    def _sse_body(self, stream: OutStream, start: str, connection: ServerConnection,
                  one_post: bool) -> Iterable[bytes]:
        try:
            if one_post and not self._stream_opens(connection):
                return
            yield from self._priming(connection, start)
            yield from stream.events(after=start)
        finally:
            if one_post:
                self._stream_ends(connection)
            self._end_if_one_post(connection, one_post)

    def _stream_opens(self, connection: ServerConnection) -> bool:
        """A one-POST connection's SSE response begins: noted, for :meth:`close` to end it (a
        listen stream has no end of its own). False if the app is closing: it must not begin."""
        with self._lock:
            if self._closing:
                return False
            self._streaming.add(connection)
            return True

    def _stream_ends(self, connection: ServerConnection) -> None:
        with self._lock:
            self._streaming.discard(connection)

    def _priming(self, connection: ServerConnection, start: str) -> List[bytes]:
        """The event a stream opens with, from 2025-11-25 on: spec basic/transports "prime the
        stream with an event id" (and how long to wait before reconnecting), so it can be resumed."""
        version = connection.protocol_version
        if version is None or not knows(version, "sse_priming"):
            return []
        return [format_event(b"", start, event="", retry_ms=self.retry_ms)]

    def _end_if_one_post(self, connection: ServerConnection, one_post: bool) -> None:
        """Close a connection that lived for one POST (2026-07-28, a sessionless app's)."""
        if one_post:
            connection.session.close(grace=self.server.timeout)

    # -- the session a GET or DELETE names -----------------------------------------------------

    def _session(self, headers: Dict[str, str], principal: Any) -> Tuple[str, ServerConnection]:
        if not self.keeps_sessions:
            raise HTTPError(405, "Method Not Allowed: this server keeps no sessions; use POST", headers=[("Allow", "POST")])
        session_id = headers.get("mcp-session-id")
        if not session_id:
            raise HTTPError(400, "Bad Request: Mcp-Session-Id header is required")
        with self._lock:
            connection = self.sessions.get(session_id)
        if connection is None:
            raise session_not_found("it expired or was ended; send initialize again")
        check_owner(connection.principal, principal)
        return session_id, connection

    # -- GET: the standalone stream, or a broken stream resumed ----------------------------------

    def _get(self, environ: _Environ, headers: Dict[str, str], principal: Any, start_response: _Start) -> Any:
        """GET on the endpoint: a session's standalone SSE stream, or a broken stream resumed.

        The standalone stream carries what belongs to no request (the server's own requests,
        notifications, list changes). One GET holds it at a time; a new GET takes it over at once
        from one whose client is gone (``HTTPSessionTransport.attach_standalone``), else gets
        409. ``Last-Event-ID`` resumes any stream of the session after that event (spec
        2025-11-25 "Resumability and Redelivery"). The stateless era has no GET (405).
        """
        if headers.get("mcp-protocol-version") == STATELESS_VERSION:
            raise HTTPError(405, "Method Not Allowed: 2026-07-28 uses POST only", headers=[("Allow", "POST")])
        if "text/event-stream" not in headers.get("accept", ""):
            raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
        _, connection = self._session(headers, principal)
        transport: HTTPSessionTransport = connection.session.transport
        last_event_id = headers.get("last-event-id", "")  # ("": as absent)
        gone = gone_probe(environ)  # has this client left? (where the WSGI server can tell)
        stream = None
        if last_event_id:
            replay = self.store.events_after(last_event_id)
            # The store's events after it, or (the server ended the response itself, and the store
            # has dropped what came since) the stream that holds them for this resume.
            stream = transport.resumable(replay[0]) if replay else transport.handed_over(last_event_id)
            if stream is None:
                raise HTTPError(404, f"Not Found: no stream to resume at event {last_event_id!r}")
            # The headers go out with the first bytes: a comment, unless an event is there to replay.
            opening = [] if replay and any(data for _, data in replay[1]) else [OPENING]
            if stream is not transport.standalone:
                start_response(STATUS[200], SSE_HEADERS)
                return _resumed_body(stream, last_event_id, opening)
        start = transport.attach_standalone(gone is not None)
        if start is None:
            raise HTTPError(409, "Conflict: this session already has a GET stream open")
        start_response(STATUS[200], SSE_HEADERS)
        if stream is not None:  # the standalone stream, resumed: after the client's last event
            return _standalone_body(transport, last_event_id, opening, gone)
        # A new stream starts with the priming event, or with a comment where there is none: the
        # server may have nothing to send on it for long, and the client waits for its headers.
        return _standalone_body(transport, start, self._priming(connection, start) or [OPENING], gone)

    # -- DELETE: end the session ---------------------------------------------------------------

    def _delete(self, environ: _Environ, headers: Dict[str, str], principal: Any, start_response: _Start) -> Any:
        if headers.get("mcp-protocol-version") == STATELESS_VERSION:
            raise HTTPError(405, "Method Not Allowed: 2026-07-28 has no sessions", headers=[("Allow", "POST")])
        self._end_session(self._session(headers, principal)[0])
        return reply(start_response, 200)

    def _end_session(self, session_id: str) -> None:
        with self._lock:
            connection = self.sessions.pop(session_id, None)
            self._last_used.pop(session_id, None)
        if connection is not None:
            connection.session.close()

    def close(self) -> None:
        """End every session and stream (on server shutdown); the app can serve no more."""
        with self._lock:
            self._closing = True
            sessions, self.sessions = list(self.sessions.values()), {}
            streaming, self._streaming = list(self._streaming), set()
        spares, self._spares = self._spares, []
        # A one-POST connection's stream (a 2026-07-28 listen's above all) ends with its session:
        # its held request ends at once, a handler still running is cancelled (no grace: the
        # server is stopping), and the thread writing the stream sees the end.
        for connection in sessions + spares + streaming:
            connection.session.close()
        self.sse_endpoints.close()
        self.workers.shutdown(timeout=5.0)
        self.server.log_bridge.uninstall()
        from ..tasks import close as close_tasks  # late: few servers have tasks
        close_tasks(self.server)  # running tasks end cancelled; their threads are joined


def _resumed_body(stream: OutStream, last_event_id: str, opening: List[bytes]) -> Iterable[bytes]:
    yield from opening
    yield from stream.events(after=last_event_id)


def _standalone_body(transport: HTTPSessionTransport, start: str, opening: List[bytes],
                     gone: Optional[Callable[[], bool]]) -> Iterable[bytes]:
    try:
        yield from opening
        yield from transport.standalone.events(after=start, gone=gone)  # type: ignore[union-attr]
    finally:
        transport.detach_standalone()
