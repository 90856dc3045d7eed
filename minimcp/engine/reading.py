"""Who reads a session's stream: four ways, behind one small interface.

A :class:`~minimcp.engine.session.Session` reads its transport in one of four ways,
chosen when it starts; each is a :class:`Reading` here, and the Session calls nothing else
of it:

- :class:`ReaderThread`: one thread reads, and hands each message to the Session (a
  client over WebSocket, an in-memory pair, HTTP+SSE; a server connection served in the
  background).
- :class:`Exchanges`: a client over HTTP (a transport that ``exchanges``): each caller
  posts its own request and reads its answer; a reader thread takes what comes outside
  the calls (the standalone GET stream, a streamed answer).
- :class:`SharedReading`: a client over a stdio child (a transport with ``timed_reads``):
  a caller that finds nobody reading reads its own answer, and the reader thread reads
  only for the others (see the class).
- :class:`Readers`: a stdio server's ``serve_forever()``: a quick request runs on the
  thread that read it, and the reading goes on (see the class).

A transport that is pushed to rather than read from (the HTTP server's, whose messages
come in POSTs) has no reading at all.
"""

from __future__ import annotations

import threading
import time
from time import monotonic  # (one global, not time.monotonic's two lookups: twice a request)

from ..errors import ConnectionClosed
from ..logs import get_logger
from .threads import join, start_thread

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from .inflight import _Pending
    from .session import Session

log: Logger = get_logger(__name__)


def read_all(read: Callable[[], Any], receive: Callable[[Any], None], name: str) -> Optional[ConnectionClosed]:
    """Hand every message ``read()`` returns to ``receive`` until the stream ends; return why
    it ended (None: the peer closed it; a ``ConnectionClosed``: the transport failed)."""
    try:
        while True:
            message = read()
            if message is None:
                return None
            receive(message)
    except Exception as exc:  # a transport failing is the end of the stream
        log.debug("%s: reader stopped: %r", name, exc)
        return ConnectionClosed(f"the connection failed: {exc}")


class Reading:
    """What the Session asks of whoever reads its stream (the four ways below implement it)."""

    #: True where the threads only read (their handlers run elsewhere): a close joins them
    #: within 5 s; False where they run handlers too, which get the close's grace.
    reads_only: bool = True

    def __init__(self) -> None:
        #: The threads it started, for the Session to join (and to know its own from).
        self.threads: List[threading.Thread] = []

    def start(self) -> None:
        """Start the threads that read (a stdio server's :class:`Readers` serve instead)."""

    def awaiting(self, request_id: int, pending: _Pending, deadline: float) -> None:
        """A caller is about to wait (until ``deadline``) for the answer to ``request_id``: it
        may read the answer itself, or make sure somebody reads it. Returns before the answer
        only if somebody else will read it."""

    def let_go(self) -> None:
        """A handler on this thread is about to wait on the peer for as long as it takes: if it
        holds the reading, it lets it go."""

    def wake(self) -> None:
        """The transport was closed: a reader waiting between its looks sees the end now."""

    def stop(self) -> Optional[int]:
        """Read no more; return the ident of a thread that may be blocked in a read (or None),
        for the caller to wake. Plain stores only, so a signal handler may call it."""
        return None

    def join(self, timeout: float) -> None:
        """Join the threads within ``timeout`` seconds in all; one stuck is left behind (a daemon)."""
        deadline = time.monotonic() + timeout
        for thread in list(self.threads):
            join(thread, max(0.0, deadline - time.monotonic()))


class ReaderThread(Reading):
    """One thread reads, and hands each message to ``Session.receive`` until the stream ends."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session: Session = session

    def start(self) -> None:
        """Start the reader thread."""
        self.threads.append(start_thread(self._run, "reader"))

    def _run(self) -> None:
        session = self.session
        session.stream_ended(read_all(session.transport.read, session.receive, session.name))


class Exchanges(ReaderThread):
    """Each caller sends its own request and reads its answer (``transport.exchange``), on its
    own thread: request/response, as HTTP is. The reader thread reads the rest."""

    def awaiting(self, request_id: int, pending: _Pending, deadline: float) -> None:
        """Post the request and read its answer here, within ``deadline``."""
        session = self.session
        session.transport.exchange(request_id, deadline, session.receive)


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


class SharedReading(Reading):
    """The turns at reading one client session's stream.

    :class:`SharedReading` is who reads a client's stream: its reader thread, or a caller
    waiting for its own answer. Over a transport whose reads can wait with a timeout
    (``timed_reads``: a stdio child), a caller that finds nobody reading reads its answer
    itself. The reader thread would otherwise read it and wake the caller: two thread
    wake-ups and two GIL hand-offs per call, a large part of a stdio client's CPU per call
    (benchmarks/instructions_client.py measures it).
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
      wake-ups; the first call after that pays the hand-off, and the reader looks again
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

    def __init__(self, session: Session) -> None:
        super().__init__()
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

    def start(self) -> None:
        """Start the reader thread (it reads when no caller does)."""
        self.threads.append(start_thread(self._run, "reader"))

    def _run(self) -> None:
        self.session.stream_ended(self.run())

    def awaiting(self, request_id: int, pending: _Pending, deadline: float) -> None:
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
            return  # (awaiting() lets the reading go)
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
                self._slow_calls = self.session.still_waiting(self._slow_calls)
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
            self._handed = self.session.still_waiting(self._handed)
            return bool(self._handed)

    # -- the reader thread ---------------------------------------------------------

    def run(self) -> Optional[ConnectionClosed]:
        """The reader thread: read when no caller does, until the stream ends. Returns why
        it ended, as :func:`read_all` does (None: the peer closed it)."""
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
        # serves them best). Then the callers read for
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
        self.session.connection_lost(self.ended)
        self.wake()  # the reader thread, if a caller saw it, ends too


#: How long (seconds) a request may run on the reading thread before the watch lets the reading
#: go to another thread: a request that turns out slow delays the next read by at most about
#: twice this (the requests that run there are the quick kinds, see QUICK).
WATCH_TICK = 0.005
#: Ticks with no new request after which the watch stops ticking, so an idle server never wakes.
IDLE_TICKS = 20
#: A request runs on the reading thread only if the last one of its kind (``ctx.kind``) took
#: less than this (seconds), so a queue of them holds the next read up by little; a slower kind,
#: or one not seen yet, gets a reading thread of its own, as concurrent clients need.
QUICK = 0.0005
#: The most kinds whose last duration is kept (the names come from the peer).
MAX_KINDS = 1024
#: Seconds between two calls of :meth:`Readers.serve`'s ``while_waiting``.
WAITING_TICK = 1.0


class Readers(Reading):
    """``serve_forever``'s threads: a quick request runs on the thread that read it, and reading goes on.

    One thread at a time (the leader) holds the read lock and reads. A response or
    notification it reads, it handles itself (quickly, in order). A request of a kind whose
    last run was quick (under :data:`QUICK`: an ``echo``, a list) it runs itself too, keeping
    the read lock: no wake-up, no lock passed, which is what makes sequential calls fast
    (the hand-off is the largest cost of a sequential call: benchmarks/stdio.py measures it).
    Meanwhile another thread, *the watch*, waits for the lock with a timeout of
    :data:`WATCH_TICK`: if that request is still running a whole tick later, the watch lets the
    lock go on the leader's behalf and reads on, so a tool that is slow this once still
    cannot stop the reading (a ping, a cancel). A handler that waits on the peer (a request
    of its own) lets the reading go at once (:meth:`let_go`); a held-open listen waits on no
    thread at all (``RequestContext.held_open``).

    Any other request (a slower kind, one not seen yet, or any while no thread watches) gets
    the reading handed to a waiting thread (one is started if none waits) before the leader
    runs it, so concurrent requests run at once; at ``max_workers`` threads, requests go to
    the worker pool (whose queue is bounded: past it, -32603 "server busy" at once) and the
    leader reads on, so ``ping`` (and 2026-07-28's ``server/discover``), run where they are read,
    and cancels are answered whatever the handlers do. A thread that comes back to wait while no thread
    watches becomes the watch; the watch stops ticking after :data:`IDLE_TICKS` ticks with no
    new request, so an idle server never wakes.

    The thread that called ``serve_forever`` is not one of them: it waits in
    :meth:`serve` for the end of the stream, then closes the session. So no
    handler, however stuck, can keep it from giving the grace period and
    cancelling, and it is never inside a read or write when a signal comes.
    """

    reads_only = False  # (its threads run handlers)

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session: Session = session
        self.read_lock: threading.Lock = threading.Lock()
        #: Guards ``waiting``, ``watching``, ``inline``, ``started`` and ``threads`` (``eof`` and
        #: ``reading`` are plain flags, so that a signal handler may set them).
        self.state: threading.Lock = threading.Lock()
        #: Threads waiting for the read lock (the watch among them).
        self.waiting: int = 0
        #: True while one of the waiting threads watches the leader (ticks).
        self.watching: bool = False
        #: The ident of the leader while it runs a request with the read lock held, else None.
        self.inline: Optional[int] = None
        #: Requests run with the read lock held, so far (the watch tells a slow one by it).
        self.started: int = 0
        #: Per kind of request (``ctx.kind``): was the last one quick? (see :data:`QUICK`)
        self.quick: Dict[Any, bool] = {}
        self.eof: bool = False
        self.error: Optional[ConnectionClosed] = None
        #: The ident of the thread that read last (it may be blocked in read()).
        self.reading: Optional[int] = None
        self._ended = threading.Event()

    def serve(self, while_waiting: Optional[Callable[[], None]] = None) -> Optional[ConnectionClosed]:
        """Start the first reading thread and wait until the stream ends (or :meth:`stop`);
        return why it ended. (On the main thread a signal's handler runs within the wait.)

        ``while_waiting``, if given, is called on this thread every :data:`WAITING_TICK` seconds
        of the wait (``run()``'s parent watch: a check that needs no thread of its own).
        """
        with self.state:
            self.threads.append(start_thread(self.run, "handler"))
        if while_waiting is None:
            self._ended.wait()
        else:
            while not self._ended.wait(WAITING_TICK):
                while_waiting()
        return self.error

    def stop(self) -> Optional[int]:
        """Read no more; return the ident of a thread that may be blocked in a read now, for the
        caller to wake (or None). Plain stores only, so a signal handler may call it."""
        was_eof, self.eof = self.eof, True
        return None if was_eof else self.reading

    def run(self) -> None:
        """Take turns reading and handling until the stream ends."""
        me = threading.get_ident()
        while True:
            self._follow()
            if not self._lead(me):
                return

    def _follow(self) -> None:
        """Wait for the read lock, as the watch if no other thread watches."""
        state = self.state
        with state:
            self.waiting += 1
            watch = not self.watching
            self.watching = True
        if not watch or not self._watch():
            self.read_lock.acquire()
        with state:
            self.waiting -= 1

    def _watch(self) -> bool:
        """Wait for the read lock, ticking: let it go for a request that ran a whole tick; stop
        ticking when idle. True once the lock is held, False when it stopped watching."""
        read_lock, state = self.read_lock, self.state
        seen, idle = -1, 0
        while not read_lock.acquire(True, WATCH_TICK):
            with state:
                if self.inline is not None and self.started == seen:
                    self.inline = None  # the same request as a tick ago: read on for it
                    read_lock.release()
                elif self.started == seen:
                    idle += 1
                    if idle >= IDLE_TICKS:
                        self.watching = False
                        return False
                else:
                    idle = 0
                seen = self.started
        with state:
            self.watching = False
        return True

    def awaiting(self, request_id: int, pending: _Pending, deadline: float) -> None:
        """A handler on this thread waits for the client's answer: someone must read it, now
        rather than a watch's tick later."""
        self.let_go()

    def let_go(self) -> None:
        """Let the reading go now if this thread runs a request with the read lock held: it is
        about to wait on the peer, whose answer someone must read. Otherwise, nothing."""
        me = threading.get_ident()
        if self.inline != me:  # (only this thread sets it to its own ident)
            return
        with self.state:
            if self.inline == me:
                self.inline = None
                self.read_lock.release()

    def _end_inline(self, me: int) -> bool:
        """A request run with the read lock held is done: True if this thread still holds it."""
        with self.state:
            if self.inline == me:
                self.inline = None
                return True
            return False

    def _lead(self, me: int) -> bool:
        """Read and handle, holding the read lock, until it is let go (True: follow again) or
        the stream ends (False)."""
        session = self.session
        read, state, read_lock = session.transport.read, self.state, self.read_lock
        while True:
            if self.eof:
                read_lock.release()
                self._ended.set()
                return False
            self.reading = me
            try:
                message = read()
            except Exception as exc:  # a transport failing is the end of the stream
                log.debug("%s: reader stopped: %r", session.name, exc)
                self.error, message = ConnectionClosed(f"the connection failed: {exc}"), None
            except BaseException:  # the others must not wait for the lock forever
                self.eof = True
                read_lock.release()
                self._ended.set()
                raise
            if message is None:
                self.eof = True
                read_lock.release()
                self._ended.set()
                return False
            try:
                ctx = session.accept(message)  # responses and notifications: handled right here
            except BaseException:
                read_lock.release()
                raise
            if ctx is None:
                continue
            kind = ctx.kind
            quick = self.quick.get(kind, False)
            with state:
                inline = quick and self.watching  # quick, and someone watches: run it here, the lock held
                if inline:
                    self.inline = me
                    self.started += 1
                    self.reading = None  # (not in a read: a signal must not interrupt the handler)
                else:
                    hand_off = self.waiting > 0  # someone reads next
                    if not hand_off and len(self.threads) < session.max_workers:
                        self.threads.append(start_thread(self.run, "handler"))
                        hand_off = True
            if inline:
                begun = monotonic()
                try:
                    session.run(ctx)
                except BaseException:
                    if self._end_inline(me):
                        read_lock.release()  # (this thread ends: the others must not wait for the lock)
                    raise
                if monotonic() - begun >= QUICK:  # (a kind still quick is kept as it is: no write)
                    self._took(kind, False)
                if self._end_inline(me):
                    continue
                return True  # the reading was let go meanwhile: follow
            if not hand_off:  # every thread is busy: queue it, read on
                session.submit(ctx)
                continue
            read_lock.release()
            begun = monotonic()
            session.run(ctx)
            self._took(kind, monotonic() - begun < QUICK)
            return True

    def _took(self, kind: Any, quick: bool) -> None:
        """Keep whether the last request of this kind was quick, for the next one (bounded)."""
        if len(self.quick) < MAX_KINDS or kind in self.quick:
            self.quick[kind] = quick

    def join(self, timeout: float) -> None:
        """Join the threads within ``timeout`` seconds in all (after the end of the stream each
        leaves once its handler returns; one stuck in user code is left behind: it is a daemon)."""
        deadline = time.monotonic() + timeout
        with self.state:
            threads = list(self.threads)
        for thread in threads:
            join(thread, max(0.0, deadline - time.monotonic()))
