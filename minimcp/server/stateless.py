"""The stateless protocol, 2026-07-28, server side: serving one request, discover, listen,
and multi round-trip requests (their signed ``requestState`` is :mod:`minimcp.server.state`'s).

spec 2026-07-28 basic (digest base.md §9); the shared names are in
:mod:`minimcp.protocol.stateless`.

How minimcp resumes a handler: it *re-runs* it. The handler's
``ctx.elicit()`` / ``ctx.sample()`` / ``ctx.list_roots()`` calls find the
answers the client sent (keyed by call order, or by ``key=``) and return
them; the first call with no answer yet stops the run with
:class:`~minimcp.protocol.stateless.InputRequired`. Answers from earlier rounds ride in ``requestState``,
which is signed (HMAC-SHA256 with the server's secret), expires, and is bound
to the method and a digest of the request's own params, so a client can
neither forge nor move it. The server stores nothing between rounds: a
client that never comes back costs nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Callable, Dict, Optional

    from ..engine.session import Session
    from ..protocol.jsonrpc import RequestId
    from .connection import ServerConnection
    from .context import Context
    from .server import Server

from ..engine.inflight import HELD_OPEN
from ..errors import CapabilityError, RPCError
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from ..protocol.levels import LOG_LEVELS
from ..protocol.stateless import (
    CACHEABLE,
    LOG_LEVEL_KEY,
    MRTR_METHODS,
    SERVER_INFO_KEY,
    SUBSCRIPTION_KEY,
    TASKS_EXTENSION,
    InputRequired,
    RequestMeta,
    missing_capability,
)
from ..protocol.versions import STATELESS_VERSION, SUPPORTED_VERSIONS

# -- serving one stateless-era request ---------------------------------------------------------


def serve(connection: ServerConnection, answer: Callable[[Any, Dict[str, Any], Context], Any],
          params: Dict[str, Any], ctx: Context) -> Any:
    """Serve one request that carries 2026-07-28 ``_meta``: check it, run ``answer(connection,
    params, ctx)``, finish the result (a request held open, ``HELD_OPEN``, has none yet).
    (:mod:`minimcp.server.methods` has already refused the methods 2026-07-28 does not have.)

    Raises:
        RPCError: -32602 for bad ``_meta`` or ``requestState``, -32022 for
            another version, -32021 when the handler needs a capability the
            request did not declare.
    """
    method = ctx.method
    meta = ctx.meta
    if meta is None:  # (the HTTP app has parsed it already when it answers in the POST's body)
        meta = ctx.meta = RequestMeta(params)
    if meta.log_level is not None and meta.log_level not in LOG_LEVELS:
        raise RPCError(INVALID_PARAMS, f"Invalid params: _meta[{LOG_LEVEL_KEY!r}] is an unknown log level: "
                                       f"{meta.log_level!r}")
    server = connection.server
    if method in MRTR_METHODS and ("requestState" in params or "inputResponses" in params):
        ctx.answers = server.state_signer.answers(method, params)
    try:
        result = answer(connection, params, ctx)
    except InputRequired as exc:
        if method not in MRTR_METHODS:
            raise RPCError(INTERNAL_ERROR, f"Internal error: {method} cannot ask the client for input") from None
        return {"resultType": "input_required", "inputRequests": exc.requests,
                "requestState": server.state_signer.sign(method, params, ctx.answers, list(exc.requests))}
    except CapabilityError as exc:
        raise missing_capability(exc.capability) from None
    if result is HELD_OPEN:  # (subscriptions/listen: no answer now)
        return result
    result = dict(result)
    if result.get("resultType") != "task":  # (a CreateTaskResult: the tasks extension)
        result["resultType"] = "complete"
    if method in CACHEABLE:  # a resource read brings its own scope (see server.resources), maybe its ttl
        result.setdefault("ttlMs", server.cache_ttl_ms)
        result.setdefault("cacheScope", server.cache_scope)
    return result


def discover(connection: ServerConnection, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
    """Answer ``server/discover``: versions, capabilities, instructions, identity (spec 2026-07-28 server/discover)."""
    server = connection.server
    info = {"name": server.name, "version": server.version}
    if server.title:
        info["title"] = server.title
    result: Dict[str, Any] = {"supportedVersions": list(SUPPORTED_VERSIONS),
                              "capabilities": server.capabilities(STATELESS_VERSION), "_meta": {SERVER_INFO_KEY: info}}
    extensions = declared_extensions(server)
    if extensions:
        result["capabilities"]["extensions"] = extensions
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def declared_extensions(server: Server) -> Dict[str, Dict[str, Any]]:
    """The extensions this server declares: tasks when a tool runs as one, skills once published,
    MCP Apps once a view or a tool with one is registered (which ``initialize`` declares too)."""
    extensions: Dict[str, Dict[str, Any]] = {}
    if any(tool.task for tool in server.tools()):
        extensions[TASKS_EXTENSION] = {}
    for name in ("skills", "apps"):
        extension = server.__dict__.get(name)
        if extension is not None:
            extensions[extension.EXTENSION] = extension.settings()
    return extensions


#: listen filter -> the notification it lets through
_FILTERS = {"toolsListChanged": "notifications/tools/list_changed",
            "promptsListChanged": "notifications/prompts/list_changed",
            "resourcesListChanged": "notifications/resources/list_changed"}


class Subscription:
    """One open ``subscriptions/listen`` request: where and what to send."""

    def __init__(self, ctx: Context, filters: Dict[str, Any]) -> None:
        self.ctx: Context = ctx
        self.session: Session = ctx.session
        self.request_id: RequestId = ctx.request_id
        self.filters: Dict[str, Any] = filters

    def wants(self, method: str, uri: Optional[str] = None) -> bool:
        """True if this listener asked for ``method`` (about ``uri``)."""
        if method == "notifications/resources/updated":
            return uri in (self.filters.get("resourceSubscriptions") or ())
        if method == "notifications/tasks":  # (uri: the task id)
            return uri in (self.filters.get("taskIds") or ())
        return any(self.filters.get(name) and note == method for name, note in _FILTERS.items())

    def send(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send one notification on this listen stream, tagged with its subscription id."""
        if self.ctx.is_cancelled:  # spec: nothing more for a cancelled request
            return
        tagged = dict(params or {})
        tagged["_meta"] = {SUBSCRIPTION_KEY: self.request_id}
        try:
            self.session.notify(method, tagged, related_to=self.request_id)
        except Exception:  # the listener went away; its request ends by itself
            pass


def listen_filters(requested: Any) -> Dict[str, Any]:
    """The filters of a listen request that minimcp honours, each checked (spec 2026-07-28
    ``SubscriptionFilter``: booleans, and ``resourceSubscriptions`` a list of URIs).

    Raises:
        RPCError: -32602 naming the filter that has the wrong type.
    """
    if requested is None:
        return {}
    if type(requested) is not dict:
        raise RPCError(INVALID_PARAMS, f'Invalid params: "notifications" must be an object, not {requested!r}')
    honoured = {}
    for name, value in requested.items():
        if name in ("resourceSubscriptions", "taskIds"):
            if type(value) is not list or not all(isinstance(uri, str) for uri in value):
                raise RPCError(INVALID_PARAMS, f'Invalid params: "notifications.{name}" '
                                               f'must be a list of strings, not {value!r}')
        elif name in _FILTERS:
            if type(value) is not bool:
                raise RPCError(INVALID_PARAMS, f'Invalid params: "notifications.{name}" must be true or false, '
                                               f'not {value!r}')
        else:
            continue  # a filter of a later revision: not honoured, not acknowledged
        honoured[name] = value
    return honoured


def listen(connection: ServerConnection, params: Dict[str, Any], ctx: Context) -> Any:
    """Answer ``subscriptions/listen``: acknowledge, then hold the request open for notifications.

    spec 2026-07-28 basic/patterns/subscriptions. The request ends when the client cancels it
    (``notifications/cancelled``, or closing its HTTP stream) or the connection ends; it is held
    open with no thread (``ctx.held_open()``), so a server has as many listeners as clients ask
    for, up to :data:`~minimcp.engine.inflight.MAX_HELD` per connection (past it, -32603 at
    once). Ended so, it gets no answer, as any cancelled request (spec basic/utilities/cancellation).
    """
    honoured = listen_filters(params.get("notifications"))
    if "taskIds" in honoured:  # the tasks extension: only for a listener that declared it
        from .tasks import listen_task_ids

        honoured["taskIds"] = listen_task_ids(connection.server, honoured["taskIds"], ctx)
    subscription = Subscription(ctx, honoured)
    connection.server._audience.hear()  # a shared backend: what other workers change is heard here too
    subscriptions = connection.server.subscriptions
    subscriptions.add(subscription)  # (before it is held: a cancel that comes meanwhile takes it out)
    try:
        held = ctx.held_open(on_end=lambda: subscriptions.discard(subscription))
    except BaseException:  # too many held open: refused, and never listened
        subscriptions.discard(subscription)
        raise
    subscription.send("notifications/subscriptions/acknowledged", {"notifications": honoured})
    return held
