"""The way out of a :class:`~minimcp.session.Session`: the requests and notifications it sends
to the peer, and the waiting for answers.

:class:`Outbound` is the half of the Session that a caller uses: ``request()``
records a pending request in :class:`~minimcp.inflight.Outgoing`, sends it, and
blocks the calling thread only until the answer (or a timeout, a cancel, the
end of the stream); ``notify()`` sends and forgets. The other half, the way in,
is in ``session.py``: the reader resolves what waits here.
"""

from __future__ import annotations

import time

from .errors import ConnectionClosed, Timeout
from .inflight import NoAnswer, Outgoing, _Pending, with_progress_token
from .logs import trace
from .protocol.jsonrpc import Notification, Request

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, Optional

    from .inflight import ProgressCallback
    from .threads import Dispatcher, Readers


class Outbound:
    """What a session sends and waits for (the base of :class:`~minimcp.session.Session`,
    which sets these attributes)."""

    transport: Any
    timeout: float
    trace: bool
    name: str
    _outgoing: Outgoing
    _dispatcher: Dispatcher
    _readers: Optional[Readers]

    def _send(self, message: Any, related_to: Any = None) -> None:
        if self.trace:
            trace(self.name, "→", message)
        try:
            if related_to is None:
                self.transport.write(message)
            else:
                self.transport.write(message, related_to=related_to)
        except OSError as exc:
            raise self._error_for_send(exc) from exc

    def _error_for_send(self, exc: Exception) -> ConnectionClosed:
        known = exc if isinstance(exc, ConnectionClosed) else None  # (it can say how: a child's exit code)
        return self._outgoing.closed_error or known or ConnectionClosed(f"cannot send: the connection is closed ({exc})")

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None,
                on_progress: Optional[ProgressCallback] = None,
                max_timeout: Optional[float] = None, related_to: Any = None,
                request_id: Optional[int] = None, cancellable: bool = True) -> Any:
        """Send a request and block until its answer comes.

        Args:
            method: the method name, e.g. ``"tools/call"``.
            params: the params object.
            timeout: seconds to wait; ``None`` means the session's default.
            on_progress: ``callback(progress, total, message)``, called for
                each ``notifications/progress`` about this request (a
                ``progressToken`` is added to ``params._meta``).
            max_timeout: when given, each progress notification restarts the
                ``timeout`` clock, up to this many seconds in all.
            related_to: the id of the incoming request this one is part of (a server
                asking its client mid-call): a transport with a stream per request uses it.
            request_id: an id from :meth:`new_request_id`, for a caller that
                may need to :meth:`cancel` the request from another thread.
            cancellable: tell the peer when we stop waiting (a timeout, Ctrl-C)? False for
                one never cancelled (spec basic/utilities/cancellation: ``initialize``).

        Returns:
            The ``result`` of the response.

        Raises:
            RPCError: the peer answered with an error.
            Timeout: no answer in time; the peer was sent ``notifications/cancelled``.
            ConnectionClosed: the connection ended first, or was already closed.
            KeyboardInterrupt: the request is cancelled at the peer, then re-raised.
        """
        request_id, pending = self._outgoing.open(method, on_progress, cancellable, request_id)
        if on_progress is not None or max_timeout is not None:
            params = with_progress_token(params, request_id)  # our ids are unique: good tokens
        try:
            self._send(Request(request_id, method, params), related_to)
            return self._wait(request_id, pending, self.timeout if timeout is None else timeout, max_timeout)
        except KeyboardInterrupt:  # anywhere from send to answer: cancel at the peer
            self._give_up(request_id, pending, "interrupted by the user")
            raise
        except BaseException:
            self._outgoing.pop(request_id)
            raise

    def _wait(self, request_id: int, pending: _Pending, timeout: float, max_timeout: Optional[float]) -> Any:
        started = time.monotonic()
        if self._readers is not None:  # a stdio server's handler may hold the reading: someone must
            self._readers.let_go()     # read the answer, now rather than a watch's tick later
        try:
            return pending.wait(timeout, max_timeout)
        except NoAnswer:
            waited = time.monotonic() - started
            self._give_up(request_id, pending, f"timed out after {waited:.1f}s")
            raise Timeout(f"{pending.method} (request {request_id}) got no answer in {waited:.1f}s") from None
        finally:  # the callbacks of what the peer sent before the answer (progress, logs) run first
            if pending.mark is not None:
                self._dispatcher.catch_up(pending.mark, timeout)

    def new_request_id(self) -> int:
        """An id for a request to send later with ``request(..., request_id=...)``."""
        return self._outgoing.new_id()

    def cancel(self, request_id: int, reason: str = "cancelled") -> None:
        """Stop waiting for a request another thread sent: it fails with ``ConnectionClosed``
        and the peer is told (``notifications/cancelled``). Unknown ids are ignored."""
        pending = self._outgoing.get(request_id)
        if pending is not None and self._give_up(request_id, pending, reason):  # (unless answered meanwhile)
            pending.set_exception(ConnectionClosed(f"{pending.method} was cancelled: {reason}"))

    def _give_up(self, request_id: int, pending: _Pending, reason: str) -> bool:
        """Stop waiting for a request; tell the peer. False if its answer already came."""
        still_pending = self._outgoing.pop(request_id) is not None
        if still_pending:
            self.transport.abandon(request_id)
        # spec basic/lifecycle "Timeouts": cancel what we stop waiting for (unless it must not be).
        if still_pending and pending.cancellable and self._outgoing.closed_error is None:
            try:
                self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
            except ConnectionClosed:
                pass
        return still_pending

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, related_to: Any = None) -> None:
        """Send a notification (``related_to``: as for :meth:`request`).

        Raises:
            ConnectionClosed: the connection is closed.
        """
        if self._outgoing.closed_error is not None:
            raise self._outgoing.closed_error
        self._send(Notification(method, params), related_to)
