"""Middleware: one function that wraps every request a side answers or sends.

A middleware is a plain function::

    def timing(request, call_next):
        started = time.perf_counter()
        try:
            return call_next(request)          # the handler (or the next middleware)
        finally:
            log.info("%s took %.1f ms", request.method, (time.perf_counter() - started) * 1000)

    server = Server("demo", middleware=[timing])   # or: @server.add_middleware
    client = minimcp.connect(target, middleware=[timing])

``request`` is what the request is, on either side of the wire:

- a request this side **answers** (a server's ``tools/call``, a client's
  ``sampling/createMessage``) is its :class:`~minimcp.engine.inflight.RequestContext`
  (on a server, the :class:`~minimcp.Context` the handler gets): ``method``, ``params``,
  ``request_id``, ``session``, ``outgoing`` is False. ``call_next(request)`` runs the
  handler and returns its result (a dict); an error leaves it as an exception (an
  :class:`~minimcp.errors.RPCError` keeps its JSON-RPC code, any other is answered -32603);
- a request this side **sends** (a client's ``tools/call``, a server's ``ctx.sample()``) is
  an :class:`OutgoingRequest`: ``method``, ``params`` (a dict the middleware may change,
  to add ``_meta``, say), ``session``, ``outgoing`` is True. ``call_next(request)`` sends it
  and returns the peer's result, or raises what the wait raised (``RPCError``,
  ``Timeout``, ``ConnectionClosed``).

Every request passes each middleware exactly once, whatever carried it (stdio, Streamable
HTTP of either era, HTTP+SSE, WebSocket, in memory): this is the one seam the engine has for
it (``engine.session.dispatch`` and ``Session.request``). The first middleware in the list is the
outermost. Notifications do not pass through: they have no answer to wrap. A middleware
runs on the request's own thread, so it may keep per-request state in locals.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Callable, Dict, Optional, Sequence

    from .session import Session

    #: ``middleware(request, call_next) -> result``: see the module docstring.
    Middleware = Callable[[Any, Callable[[Any], Any]], Any]


def __getattr__(name: str) -> Any:
    """``Middleware``, made when first asked for at run time (it needs ``typing``)."""
    if name != "Middleware":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Any, Callable

    alias = globals()["Middleware"] = Callable[[Any, Callable[[Any], Any]], Any]
    return alias


class OutgoingRequest:
    """A request this side sends, as a middleware sees it.

    Attributes:
        session: the :class:`~minimcp.engine.session.Session` it goes out on.
        method: its method name.
        params: its params (a dict; a middleware may change it before ``call_next``).
        request_id: the JSON-RPC id it goes out with (None for a request a middleware builds
            itself: it is given one when sent; a retry gets a new one, set here).
    """

    __slots__ = ("session", "method", "params", "request_id")

    #: True: this side sends it (a :class:`~minimcp.engine.inflight.RequestContext` says False).
    outgoing = True

    def __init__(self, session: Session, method: str, params: Dict[str, Any],
                 request_id: Optional[int] = None) -> None:
        self.session: Session = session
        self.method: str = method
        self.params: Dict[str, Any] = params
        self.request_id: Optional[int] = request_id

    def __repr__(self) -> str:
        return f"<OutgoingRequest method={self.method!r}>"


def through(middleware: Sequence[Middleware], request: Any, last: Callable[[Any], Any]) -> Any:
    """``last(request)``, called through each of ``middleware`` (the first is the outermost)."""
    def call(index: int, request: Any) -> Any:
        if index == len(middleware):
            return last(request)
        return middleware[index](request, lambda passed: call(index + 1, passed))

    return call(0, request)
