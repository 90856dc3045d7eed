"""Requests in flight, both ways: what a handler knows about the request it answers, and
what a caller waits on for the request it sent.

:class:`RequestContext` is the engine-level part of an incoming request (id,
params, cancellation, progress); the server's :class:`minimcp.Context` adds
what the client negotiated and the requests a handler can make of it.
``_Pending`` is an outgoing request: a ``concurrent.futures.Future`` and its
progress callback.
"""

import threading
from typing import Any, Callable, Dict, Optional

from .protocol.jsonrpc import Request

#: ``callback(progress, total, message)`` for ``notifications/progress`` about a request.
ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]

_event_lock = threading.Lock()


class RequestContext:
    """What a request handler knows about the request it is answering.

    Attributes:
        session: the :class:`Session` the request came in on.
        request_id: the JSON-RPC id of the request.
        method: the request's method name.
        params: the request's params (``{}`` when it had none).
        progress_token: ``params._meta.progressToken``, or ``None`` when the
            caller did not ask for progress.
    """

    __slots__ = ("session", "request_id", "method", "params", "progress_token", "_cancelled")

    def __init__(self, session: Any, request: Request) -> None:
        self.session = session
        self.request_id = request.id
        self.method = request.method
        self.params = params = request.params or {}
        meta = params.get("_meta")
        self.progress_token = meta.get("progressToken") if type(meta) is dict else None
        self._cancelled: Optional[threading.Event] = None  # made on first use: most requests never need it

    @property
    def cancelled(self) -> threading.Event:
        """An Event set when the peer cancels this request or the connection ends.

        A long-running handler should check ``ctx.cancelled.is_set()`` (or
        wait on it) and stop early; its answer is dropped either way.
        """
        event = self._cancelled
        if event is None:
            with _event_lock:
                if self._cancelled is None:
                    self._cancelled = threading.Event()
                event = self._cancelled
        return event

    @property
    def is_cancelled(self) -> bool:
        """True once the request was cancelled (cheaper than ``cancelled.is_set()``)."""
        return self._cancelled is not None and self._cancelled.is_set()

    def report_progress(self, progress: float, total: Optional[float] = None,
                        message: Optional[str] = None) -> None:
        """Send ``notifications/progress`` for this request, if the caller asked for it.

        ``progress`` must grow with every call (spec basic/utilities/progress).
        Does nothing when the request carried no ``progressToken``.
        """
        if self.progress_token is None or self.is_cancelled:
            return
        params: Dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.session.notify("notifications/progress", params, related_to=self.request_id)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.request_id!r} method={self.method!r}>"


_futures: Any = None  # concurrent.futures, once an outgoing request needs it


def _futures_module() -> Any:
    # Late: concurrent.futures imports logging, and a stdio server that never
    # sends a request should not pay for either at start-up.
    global _futures
    if _futures is None:
        import concurrent.futures

        _futures = concurrent.futures
    return _futures


class _Pending:
    """One outgoing request waiting for its answer: a ``concurrent.futures.Future``."""

    __slots__ = ("method", "future", "on_progress", "last_progress")

    def __init__(self, method: str, on_progress: Optional[ProgressCallback]) -> None:
        self.method = method
        self.future: Any = _futures_module().Future()
        self.on_progress = on_progress
        self.last_progress: Optional[float] = None
