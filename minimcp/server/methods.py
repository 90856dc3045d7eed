"""The MCP method table: every request a minimcp server answers, the code that answers it, and
the protocol eras that have it.

Two eras share one endpoint (spec: each version's basic/lifecycle page):

- ``HANDSHAKE``: 2024-11-05 … 2025-11-25. The client sends ``initialize``
  first; the connection remembers what was negotiated.
- ``STATELESS``: 2026-07-28. No handshake: every request names its version
  and capabilities in ``params._meta`` and is served on its own.

One guard applies the era rules to every method, so no handler checks them:
a stateless request for a handshake-only method, or a handshake request for
a stateless-only one, is ``-32601`` (that era has no such method); a
handshake request before ``initialize`` is ``-32600`` (but ``initialize``
itself and ``ping`` come first); a stateless request goes through
:func:`minimcp.server.stateless.serve`, which reads its ``_meta`` and
finishes its result.

Last, for the HTTP app: which requests run on the thread that read them
(:func:`runs_inline`), and the requests answered in their POST's own body
(:func:`needs_no_session`): one-POST requests with no session at all
(:func:`answer_at_once`), a session's with no response stream (:func:`answer_in_session`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from .server import Server

from ..engine.session import Session, dispatch, not_json
from ..errors import RPCError
from ..logs import get_logger
from ..protocol import jsonrpc
from ..protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Request
from ..protocol.stateless import VERSION_KEY
from ..protocol.versions import MODERN_VERSION
from .connection import ServerConnection
from .context import Context

log: Logger = get_logger(__name__)

HANDSHAKE, STATELESS, BOTH = "handshake", "stateless", "both"

#: The handshake-era requests a client may send before ``initialize`` (spec basic/lifecycle).
BEFORE_INITIALIZE = ("initialize", "ping")


def call_tool(connection: ServerConnection, params: Dict[str, Any], ctx: Context) -> Any:
    """Answer ``tools/call``; a tool registered with ``task=`` goes through :mod:`.tasks`
    (a task, when the 2026-07-28 request declares the extension)."""
    tool = connection.server.get_tool(params.get("name"))
    if tool is None or tool.task is None or ctx.modern is None:
        return connection.call_tool(params, ctx, tool)  # (the tool passed on: one lookup per call, not two)
    from .tasks import call_tool as call_with_task  # late, like every extension's code

    return call_with_task(connection, params, ctx)


def _later(module: str, name: str) -> Callable[..., Any]:
    """``minimcp.server.<module>.<name>``, imported on first use and then kept: a server that
    publishes no skills, runs no tasks and gets no 2026-07-28 request never loads those modules
    (start-up time is import time), and one that does imports once (an import per call: ~0.8 µs)."""
    found: Optional[Callable[..., Any]] = None

    def answer(*args: Any) -> Any:
        nonlocal found
        if found is None:
            from importlib import import_module

            found = getattr(import_module(f"{__package__}.{module}"), name)
        return found(*args)

    answer.__qualname__ = f"{module}.{name}"
    return answer


#: ``server.stateless.serve(connection, answer, params, ctx)``: every 2026-07-28 request goes through it.
_serve_modern = _later("stateless", "serve")


#: method -> (the code that answers it: ``answer(connection, params, ctx)``, the eras that have it)
METHODS: Dict[str, Tuple[Callable[[Any, Dict[str, Any], Context], Any], str]] = {
    "initialize":               (ServerConnection.initialize, HANDSHAKE),
    "ping":                     (ServerConnection.ping, HANDSHAKE),
    "logging/setLevel":         (ServerConnection.set_level, HANDSHAKE),
    "resources/subscribe":      (ServerConnection.subscribe, HANDSHAKE),
    "resources/unsubscribe":    (ServerConnection.unsubscribe, HANDSHAKE),
    "server/discover":          (_later("stateless", "discover"), STATELESS),
    "subscriptions/listen":     (_later("stateless", "listen"), STATELESS),
    "tools/list":               (ServerConnection.list_tools, BOTH),
    "tools/call":               (call_tool, BOTH),
    "resources/list":           (ServerConnection.list_resources, BOTH),
    "resources/templates/list": (ServerConnection.list_resource_templates, BOTH),
    "resources/read":           (ServerConnection.read_resource, BOTH),
    "prompts/list":             (ServerConnection.list_prompts, BOTH),
    "prompts/get":              (ServerConnection.get_prompt, BOTH),
    "completion/complete":      (ServerConnection.complete, BOTH),
    # the tasks extension (io.modelcontextprotocol/tasks): server/tasks.py
    "tasks/get":                (_later("tasks", "tasks_get"), STATELESS),
    "tasks/update":             (_later("tasks", "tasks_update"), STATELESS),
    "tasks/cancel":             (_later("tasks", "tasks_cancel"), STATELESS),
    "tasks/result":             (_later("tasks", "removed"), BOTH),  # 2025-11-25 tasks: not in the extension
    "tasks/list":               (_later("tasks", "removed"), BOTH),
    # the skills extension (io.modelcontextprotocol/skills): server/skills.py
    "skills/list":              (_later("skills", "list_skills"), BOTH),
    "skills/get":               (_later("skills", "get_skill"), BOTH),
    "resources/directory/read": (_later("skills", "read_directory"), BOTH),
}


def guarded(method: str, answer: Callable[[Any, Dict[str, Any], Context], Any],
            era: str) -> Callable[[Dict[str, Any], Context], Any]:
    """``answer`` wrapped in the era rules (see the module docstring), as a session handler."""
    handshake_only, stateless_only = era == HANDSHAKE, era == STATELESS
    needs_initialize = method not in BEFORE_INITIALIZE

    def handler(params: Dict[str, Any], ctx: Context) -> Any:
        connection = ctx.session.owner
        meta = params.get("_meta")
        if meta is not None:  # (most requests have none: no call for them)
            check_meta(meta)
        if meta is not None and VERSION_KEY in meta:  # a stateless request
            if handshake_only:
                raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method} "
                                                 f"(not part of protocol version {MODERN_VERSION})")
            return _serve_modern(connection, answer, params, ctx)
        if stateless_only:
            raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method} ({MODERN_VERSION} only)")
        if needs_initialize and connection.protocol_version is None:
            raise RPCError(INVALID_REQUEST, "Invalid Request: the session is not initialized; "
                                            "send initialize first")
        return answer(connection, params, ctx)

    handler.__qualname__ = f"answer[{method}]"  # what a traceback or the trace shows
    return handler


def check_meta(meta: Any) -> None:
    """Refuse a request whose ``params._meta`` is not an object, or whose ``progressToken`` is
    neither a string nor an integer (spec schema ``RequestParams``), with -32602 naming the field."""
    if meta is None:
        return
    if type(meta) is not dict:
        raise RPCError(INVALID_PARAMS, f'Invalid params: "_meta" must be an object, not {meta!r}')
    token = meta.get("progressToken")
    if token is not None and type(token) not in (int, str):
        raise RPCError(INVALID_PARAMS, f'Invalid params: "_meta.progressToken" must be a string or an integer, '
                                       f'not {token!r}')


#: What a server connection's session gets: ``method -> handler(params, ctx)``, built once for all
#: connections (each handler finds its connection as ``ctx.session.owner``).
HANDLERS: Dict[str, Callable[[Dict[str, Any], Context], Any]] = {
    method: guarded(method, answer, era) for method, (answer, era) in METHODS.items()}


# -- which requests run on the thread that read them, and which need no session at all ---------

#: Methods whose handlers are minimcp's own quick code (no user code that could wait).
QUICK = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list",
                   "server/discover", "ping", "logging/setLevel"})


def runs_inline(server: Server, message: Any) -> bool:
    """Run this request on the thread that read it (an HTTP server's)? Yes when its handler cannot
    wait on the client or be cancelled: our quick methods, and tools with no ``ctx`` (they can ask
    the client nothing and cannot see a cancel). It saves the hand-off to a worker, the largest
    per-request cost (benchmarks/http.py); anything with a ``ctx`` keeps the worker, so it streams."""
    method = getattr(message, "method", None)
    if method in QUICK:
        return True
    if method == "tools/call":
        tool = server.get_tool((message.params or {}).get("name") or "")
        return tool is not None and tool.can_run_inline
    return False


def needs_no_session(server: Server, request: Request, log_level: Optional[str]) -> bool:
    """Can this request be answered at once, in its HTTP POST's own body: one that lives for one
    POST (2026-07-28, or a stateless app's) with no Session (:func:`answer_at_once`), or a
    session's with no response stream (:func:`answer_in_session`)? When it runs inline, the
    client asked for no log messages (``log_level``: in ``_meta``, the session's level, or the
    server's default for a stateless app), and it is no task (a task outlives its request): then
    nothing can be sent before its answer and nothing can cancel it. Not under ``trace`` (the
    session prints it)."""
    if log_level is not None or server.trace or not runs_inline(server, request):
        return False
    tool = server.get_tool((request.params or {}).get("name") or "") if request.method == "tools/call" else None
    return tool is None or tool.task is None


class OneRequest:
    """The session of a request answered at once (:func:`answer_at_once`): the few parts of a
    :class:`~minimcp.engine.session.Session` its handler reaches (``owner``, ``closed``, ``notify``),
    without the reader, the request tables, the streams or a close."""

    closed = False

    def __init__(self, server: Server, principal: Any, version: Optional[str]) -> None:
        self.name: str = f"server {server.name}"
        self.middleware: List[Any] = server.middleware
        # (a stand-in, not a Session: it has just the parts of one that such a handler reaches)
        self.owner: ServerConnection = ServerConnection(server, None, HANDLERS, principal=principal,
                                                        session=self)  # type: ignore[arg-type]
        self.owner.protocol_version = version  # (a handshake-era version: what a stateless app's POST says)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, related_to: Any = None) -> None:
        """Drop it: such a request asked for nothing to be sent before its answer (see
        :func:`needs_no_session`)."""
        log.debug("%s dropped: a request answered at once carries no notifications", method)


def answer_at_once(server: Server, request: Request, principal: Any, version: Optional[str] = None) -> bytes:
    """Answer a request on this thread with no Session: its encoded response, what ``Session.run``
    would send. Only for a request :func:`needs_no_session` accepts; ``version``: the handshake-era
    version a stateless app's request is served in (None for 2026-07-28: its ``_meta`` says).

    A stateless request pays for no session it would not use: the Session and its tables,
    the transport, the response stream, the close (a fifth of a stateless ``tools/call``'s
    instructions in the built-in server, 831k -> 670k: benchmarks/instructions_http.py).
    """
    # (a known method: runs_inline said so; the stand-in has all of a Session the handler reaches)
    ctx = Context(OneRequest(server, principal, version), request, HANDLERS[request.method])  # type: ignore[arg-type]
    return _encoded(ctx, dispatch(ctx), ctx.session.name)


def answer_in_session(session: Session, request: Request) -> bytes:
    """Answer a request of a handshake-era HTTP session on this thread, in its POST's own body:
    its encoded response. Only for a request :func:`needs_no_session` accepts at the session's
    log level: nothing can be sent before its answer, so it needs no response stream (the
    stream, the transport's routing of the answer into it, the wait for it: a fifth of a
    2025-11-25 ``tools/call`` echo in the built-in server, 372k -> 302k instructions,
    benchmarks/instructions_http.py). It is in flight in the session as any request
    (``Session.answer_here``)."""
    ctx = Context(session, request, session.handlers[request.method])
    return _encoded(ctx, session.answer_here(ctx), session.name)


def _encoded(ctx: Context, reply: Any, name: str) -> bytes:
    try:
        return jsonrpc.encode(reply)
    except (TypeError, ValueError) as exc:  # the result is not JSON
        return jsonrpc.encode(not_json(ctx, exc, name))
