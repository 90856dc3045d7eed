"""The way out of a :class:`~minimcp.engine.session.Session`: the requests and notifications it sends
to the peer, and the waiting for answers.

:class:`Outbound` is the half of the Session that a caller uses: ``request()``
records a pending request in :class:`~minimcp.engine.inflight.Outgoing`, sends it, and
blocks the calling thread only until the answer (or a timeout, a cancel, the
end of the stream); ``notify()`` sends and forgets. The other half, the way in,
is in ``session.py``: the reader resolves what waits here.

:class:`SharedReading` is who reads a client's stream: its reader thread, or a caller
waiting for its own answer. Over a transport whose reads can wait with a timeout
(``timed_reads``: a stdio child), a caller that finds nobody reading reads its answer
itself. The reader thread would otherwise read it and wake the caller: two thread
wake-ups and two GIL hand-offs per call, about 40% of a stdio client's CPU per call.
One lock says who reads; whoever holds it hands everything it reads to
``Session.receive`` (other callers' answers, the server's requests and notifications),
as the reader thread does. Its rules:

- **A caller** takes the reading only if it is free, reads until its answer comes, and
  lets it go. If its answer has not come within ``CALLER_WAIT`` (a slow tool), or by its
  deadline, it gives the reading up, wakes the reader thread (which blocks in a read until
  a call comes), and waits for its answer as any caller does.
- **A caller that finds the reading taken** waits, and whoever reads reads for it. A
  caller that goes while such callers wait first hands on what has come for them (at most
  ``DRAIN_MOST`` messages), then wakes the reader thread, which reads for them. While calls
  overlap (many threads), the reader thread goes on reading for all of them, as one reader
  serves them best. One not answered within ``CALLER_WAIT`` is slow (or held open: a
  listen) and is waited for no longer.
- **The reader thread**, after a call, looks for what came between calls (a log, a
  ``list_changed``): ``TICK`` after the call, then at twice the wait each time no call
  came. After ``IDLE_LOOKS`` such looks it blocks in a read, so an idle client makes no
  wake-ups; the first call after that pays the old hand-off, and the reader looks again
  once it is answered. For ``SLOW_WAIT`` after a call was slow, the looks stay ``TICK``
  apart: its answer may come at any time.
- **The end of the stream**, whoever reads it, fails every waiting request. The reader
  thread first waits for a child's exit (up to ~2 s: the exit code and the last stderr
  lines say how it ended); a caller that read the end leaves that wait to it and waits
  within its own timeout.

A Ctrl-C (``KeyboardInterrupt``, raised on the main thread) that lands in the microseconds
between a message read off the pipe and its handing on loses that message: if the main
thread was reading another thread's answer, that call then times out.
"""

from __future__ import annotations

import threading
import time

from ..errors import ConnectionClosed, Timeout
from ..logs import get_logger, trace
from ..protocol.jsonrpc import Notification, Request
from .inflight import NoAnswer, Outgoing, _Pending, with_progress_token

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from logging import Logger
    from typing import Any, Dict, List, Optional, Tuple

    from .inflight import ProgressCallback
    from .session import Session
    from .threads import Dispatcher, Readers

log: Logger = get_logger(__name__)


class Outbound:
    """What a session sends and waits for (the base of :class:`~minimcp.engine.session.Session`,
    which sets these attributes)."""

    transport: Any
    timeout: float
    trace: bool
    name: str
    _outgoing: Outgoing
    _dispatcher: Dispatcher
    _readers: Optional[Readers]
    _shared: Optional[SharedReading]

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
        if self._shared is not None:  # a stdio client: read the answer here, if nobody else reads
            self._shared.read_for(request_id, pending, started + timeout)
        elif self._readers is not None:  # a stdio server's handler may hold the reading: someone must
            self._readers.let_go()       # read the answer, now rather than a watch's tick later
        try:
            return pending.wait(timeout, max_timeout, started)
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


#: Seconds a caller reads for its answer before it gives the reading up (its tool is slow: it
#: then waits as any caller does, and the reader thread reads its answer).
CALLER_WAIT = 0.05
#: Seconds from a call's end to the reader thread's first look; each look with no call since
#: waits twice as long as the one before.
TICK = 0.005
#: Looks with no call after which the reader thread blocks in a read (5: after 155 ms).
IDLE_LOOKS = 5
#: Seconds after a call gave the reading up during which the looks do not back off (its
#: answer may come at any time). Past it they do, so a held-open listen costs no looks.
SLOW_WAIT = 1.0
#: The most messages a caller that has its answer hands on for others before it goes (the
#: reader thread, woken, reads the rest).
DRAIN_MOST = 64


class SharedReading:
    """The turns at reading one client session's stream (see the module's docstring)."""

    def __init__(self, session: Session) -> None:
        self.session: Session = session
        # Held by whoever reads. (An RLock for its _is_owned(): a caller interrupted by Ctrl-C
        # right after taking it still lets it go.)
        self._lock = threading.RLock()
        self._wake = threading.Lock()  # released to wake the reader thread out of a look's wait
        self._wake.acquire()
        #: Calls made: the reader thread's clock of activity (a rough count will do).
        self.calls: int = 0
        # The requests of callers that found the reading taken: they wait on whoever reads.
        self._handed: List[Tuple[int, _Pending]] = []
        self._handed_lock = threading.Lock()
        self._serving = False  # the reader thread reads, blocking (for callers, a slow call, or idle)
        self._contended = 0.0  # when a caller last found another caller reading (monotonic)
        self._gave_up = False  # a slow call gave the reading up: the reader thread reads for it
        # Slow calls still waiting, and until when they keep the looks TICK apart (SLOW_WAIT).
        self._slow_calls: List[Tuple[int, _Pending]] = []
        self._slow_until = 0.0
        self._at_end = False  # a caller read the end of the stream: the reader thread ends it
        #: Why the stream ended (set by whoever read its end); None while it is open.
        self.ended: Optional[ConnectionClosed] = None
        self._finished = False

    def __repr__(self) -> str:
        state = "ended" if self._finished else "the reader thread reads" if self._serving else "open"
        return f"<SharedReading {state} calls={self.calls} handed={len(self._handed)}>"

    # -- a caller -------------------------------------------------------------------

    def read_for(self, request_id: int, pending: _Pending, deadline: float) -> None:
        """Read the stream on this thread until ``pending`` is answered, if nobody else reads.

        Returns when the answer is in, or without it (somebody else reads; no answer within
        ``CALLER_WAIT``, or by the deadline; the stream ended): the caller then waits on
        ``pending`` as usual.
        """
        self.calls += 1
        lock = self._lock
        try:
            if lock.acquire(False):
                self._read_until(pending, min(deadline, time.monotonic() + CALLER_WAIT))
            else:
                self._handed_over(request_id, pending, deadline)
        finally:
            if lock._is_owned():  # type: ignore[attr-defined]
                lock.release()
                if pending.unanswered():  # a slow call (or the end): the reader thread reads for it
                    self._slow(request_id, pending, True)
                elif self._at_end or (self._handed and self._someone_waits()):
                    self.wake()  # the end, or handed callers: the reader thread reads for them

    def _read_until(self, pending: _Pending, give_up: float) -> None:
        # Read, handing every message on, until our answer is in or it is time to give up.
        unanswered, read_within, receive = pending.unanswered, self.session.transport.read_within, self.session.receive
        try:
            while unanswered():
                left = give_up - time.monotonic()
                if left <= 0 or self._finished:
                    break
                try:
                    message = read_within(left)
                except TimeoutError:
                    break  # a slow call: the reader thread reads its answer
                if message is None:
                    self._at_end = True  # the reader thread waits for the exit and fails every call
                    break
                receive(message)
            if self._handed and not self._finished and not self._at_end:  # others wait on us:
                self._drain(False)                                          # hand on what came
        except Exception as exc:  # the transport failed: the end of the stream
            self._end(exc)

    def _handed_over(self, request_id: int, pending: _Pending, deadline: float) -> None:
        # The reading is taken: whoever reads reads for us, or wakes the reader thread to.
        if not self._serving:  # calls overlap: the reader thread had better read for them all
            self._contended = time.monotonic()
        entry = (request_id, pending)
        with self._handed_lock:
            self._handed.append(entry)
        if self._lock.acquire(False):  # the reader let go meanwhile (maybe before it saw us): read
            with self._handed_lock:  # for ourselves, handed no more (else, if we then give up, the
                if entry in self._handed:  # reader thread would read for us to the end: a listen's)
                    self._handed.remove(entry)
            self._read_until(pending, min(deadline, time.monotonic() + CALLER_WAIT))
            return  # (read_for lets the reading go)
        if not pending.settle(min(CALLER_WAIT, deadline - time.monotonic())):
            with self._handed_lock:  # a slow call (or one held open): the reader thread need not
                if entry in self._handed:  # keep reading for it, but looks TICK apart for a while
                    self._handed.remove(entry)
            self._slow(request_id, pending, False)

    def _slow(self, request_id: int, pending: _Pending, gave_up: bool) -> None:
        # A call is slow: its answer may come at any time. One that gave the reading up has the
        # reader thread block in a read for it; while it waits, for SLOW_WAIT at most, the
        # looks do not back off.
        with self._handed_lock:
            self._slow_calls.append((request_id, pending))
        self._slow_until = time.monotonic() + SLOW_WAIT
        if gave_up:
            self._gave_up = True
            self.wake()

    def _slow_waits(self) -> bool:
        # Does a slow call still wait, and not for long yet?
        if not self._slow_calls:
            return False
        with self._handed_lock:
            if time.monotonic() > self._slow_until:
                self._slow_calls = []
            else:
                self._slow_calls = self.session._outgoing.still_waiting(self._slow_calls)
            return bool(self._slow_calls)

    def wake(self) -> None:
        """Wake the reader thread (for the callers still waiting, or to see the end)."""
        try:
            self._wake.release()
        except RuntimeError:  # it was woken already
            pass

    def _someone_waits(self) -> bool:
        # Does a caller that found the reading taken still wait for its answer? (Not once its
        # request is out of the table: answered, or given up on, timed out, interrupted.)
        with self._handed_lock:
            self._handed = self.session._outgoing.still_waiting(self._handed)
            return bool(self._handed)

    # -- the reader thread ---------------------------------------------------------

    def run(self) -> Optional[ConnectionClosed]:
        """The reader thread: read when no caller does, until the stream ends. Returns why
        it ended, as ``threads.read_all`` does (None: the peer closed it)."""
        idle, seen = 0, self.calls
        try:
            while not self._finished:
                woken = self._wake.acquire(True, TICK * (1 << idle))
                if self.calls != seen:
                    idle, seen = 0, self.calls
                elif not woken and not self._slow_waits():
                    idle += 1
                if not self._lock.acquire(False):
                    idle = 0  # a caller reads: a call is under way, look again a tick after it
                    continue
                try:
                    if not self._drain(True):
                        break
                    if self._someone_waits():  # callers found the reading taken: read for them
                        self._serve(until_a_call=False)
                        idle, seen = 0, self.calls
                    elif self._gave_up or idle >= IDLE_LOOKS:  # a slow call waits, or nothing to
                        self._gave_up = False                    # do: block in a read
                        self._serve(until_a_call=True)
                        idle, seen = 0, self.calls
                finally:
                    self._lock.release()
        except Exception as exc:  # the transport failed: the end of the stream
            self._end(exc)
        return self.ended

    def _serve(self, until_a_call: bool) -> None:
        # Blocking reads, until no handed caller waits, and then: for a slow call or while
        # idle, until a call has come meanwhile (and been answered); else until a tick has
        # passed since callers last overlapped (while many threads call at once, one reader
        # serves them best, as it did before callers read). Then the callers read for
        # themselves again, and a slow call still waiting is read for at the looks (TICK apart
        # for SLOW_WAIT) or by another caller.
        seen, read, waits, receive = self.calls, self.session.transport.read, self._someone_waits, self.session.receive
        self._serving = True
        try:
            while not self._finished:
                message = read()
                if message is None:  # (read() waited for a child's exit, to say how it ended)
                    self._end(None)
                    return
                receive(message)
                if waits():
                    continue
                if self.calls != seen if until_a_call else time.monotonic() - self._contended > TICK:
                    return
        finally:
            self._serving = False

    def _drain(self, reader: bool) -> bool:
        # What came, without waiting for more (a caller: DRAIN_MOST at most); False at the end
        # of the stream. There the reader thread's blocking read waits for a child's exit, to say
        # how it ended (a caller leaves that wait to it: its own is bounded by its timeout).
        read_within, receive = self.session.transport.read_within, self.session.receive
        left = -1 if reader else DRAIN_MOST  # (-1: no bound)
        try:
            while left:
                left -= 1
                message = read_within(0.0)
                if message is None:
                    if not reader:
                        self._at_end = True
                        return False
                    message = self.session.transport.read()
                    if message is None:
                        self._end(None)
                        return False
                receive(message)
        except TimeoutError:
            pass
        return True

    def _end(self, error: Optional[Exception]) -> None:
        # The stream ended (error None: the peer closed it): every waiting request fails now.
        if error is not None:
            log.debug("%s: reader stopped: %r", self.session.name, error)
            self.ended = error if isinstance(error, ConnectionClosed) else ConnectionClosed(
                f"the connection failed: {error}")  # (a child's exit code and stderr kept)
        self._finished = True
        self.session._connection_lost(self.ended)
        self.wake()  # the reader thread, if a caller saw it, ends too
