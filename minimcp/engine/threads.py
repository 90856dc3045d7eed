"""Threads owned by minimcp: how they are started, joined, and pooled.

Every thread minimcp starts is named ``minimcp-<kind>-<n>`` and is joined by
the ``close()`` of the object that started it; ``daemon=True`` is only a
safety net, so a handler stuck in user code cannot keep the interpreter alive.
"""

from __future__ import annotations

import itertools
import threading
import time
from time import monotonic  # (one global, not time.monotonic's two lookups: twice a request)

try:  # queue.SimpleQueue is this C type; queue.py itself loads heapq too (~2M instructions of a stdio start)
    from _queue import SimpleQueue
except ImportError:  # (an interpreter without it)
    from queue import SimpleQueue

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from .session import Session

from ..errors import ConnectionClosed
from ..logs import get_logger

log: Logger = get_logger(__name__)

_thread_ids = itertools.count(1)


def start_thread(target: Callable[[], Any], kind: str) -> threading.Thread:
    """Start ``target`` on a thread named ``minimcp-<kind>-<n>`` and return it."""
    # daemon=True is only a safety net (a stuck user handler must not keep
    # the interpreter alive); the shutdown plan is close() joining each one.
    thread = threading.Thread(target=target, name=f"minimcp-{kind}-{next(_thread_ids)}", daemon=True)
    thread.start()
    return thread


def join(thread: Optional[threading.Thread], timeout: float) -> None:
    """Join ``thread`` within ``timeout`` (never the calling thread itself); log it if it is stuck."""
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout)
        if thread.is_alive():
            log.warning("thread %s did not stop within %.1fs", thread.name, timeout)


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


class WorkerPool:
    """A bounded pool of named worker threads, started on demand.

    ``concurrent.futures.ThreadPoolExecutor`` would do, except that its
    ``shutdown()`` cannot time out: one handler stuck in user code would hang
    ``close()`` forever. This one joins with a deadline and logs stragglers.
    """

    def __init__(self, max_workers: int) -> None:
        self.max_workers: int = max_workers
        self._tasks: SimpleQueue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...]]]] = SimpleQueue()
        self._idle = 0  # workers waiting for a task, not yet promised one (under _lock)
        self._threads: List[threading.Thread] = []
        self._lock = threading.Lock()
        self._shutdown = False

    @property
    def threads(self) -> List[threading.Thread]:
        """The worker threads started so far (a copy)."""
        return list(self._threads)

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on a worker thread."""
        self._tasks.put((fn, args))
        with self._lock:  # a plain lock: threading.Semaphore is Python code, this is the hot path
            if self._idle:
                self._idle -= 1  # an idle worker will pick it up
            elif not self._shutdown and len(self._threads) < self.max_workers:
                self._threads.append(start_thread(self._work, "handler"))

    def _work(self) -> None:
        get = self._tasks.get
        while True:
            task = get()
            if task is None:
                return
            fn, args = task
            try:
                fn(*args)
            except BaseException:  # a worker must survive anything a task does
                log.exception("unhandled error in a minimcp worker")
            del task, fn, args
            with self._lock:
                self._idle += 1

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every worker after the queued tasks, joining each within ``timeout``."""
        with self._lock:
            self._shutdown = True
            threads, self._threads = self._threads, []
        for _ in threads:
            self._tasks.put(None)
        deadline = time.monotonic() + timeout
        for thread in threads:
            join(thread, max(0.0, deadline - time.monotonic()))


class Dispatcher:
    """One thread that runs callbacks in the order they were handed in.

    A session's notification callbacks run here: in the peer's order, and
    never on the reader (a slow callback must not stop the reading). The
    thread starts on first use; :meth:`close` ends and joins it. It counts the
    callbacks handed in (``queued``) and run (``ran``), so a caller can wait,
    with :meth:`catch_up`, for those handed in before some point.
    """

    def __init__(self) -> None:
        self.thread: Optional[threading.Thread] = None
        #: Callbacks handed in so far (written under the lock).
        self.queued: int = 0
        #: Callbacks run so far (written by the dispatcher thread alone).
        self.ran: int = 0
        self._queue: Optional[SimpleQueue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...]]]]] = None
        self._lock = threading.Lock()
        self._closed = False
        self._ran = threading.Condition()  # catch_up() waits on it
        self._waiters = 0  # threads in catch_up() (under _ran): notify only when someone waits
        self._stopped = False

    def dispatch(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` on the dispatcher thread, after those handed in before."""
        with self._lock:
            if self._closed:
                return
            if self._queue is None:
                self._queue = SimpleQueue()
                self.thread = start_thread(self._loop, "dispatch")
            self.queued += 1
            self._queue.put((callback, args))

    def catch_up(self, mark: int, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) until the first ``mark`` callbacks have run.

        On the dispatcher's own thread it returns at once: a callback that waits
        for something queued behind it would wait for ever.
        """
        if threading.current_thread() is self.thread:
            return
        deadline = time.monotonic() + timeout
        with self._ran:
            self._waiters += 1
            try:
                while self.ran < mark and not self._stopped:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    self._ran.wait(left)
            finally:
                self._waiters -= 1

    def _woke(self) -> None:
        with self._ran:
            self._ran.notify_all()

    def _loop(self) -> None:
        get = self._queue.get  # type: ignore[union-attr]
        while True:
            item = get()
            if item is None:
                return
            callback, args = item
            try:
                callback(*args)
            except Exception:  # a callback cannot kill the loop (websocket-client's rule)
                log.exception("notification callback %r failed", callback)
            del item, callback, args
            self.ran += 1
            if self._waiters:  # (catch_up counts itself in before it reads ran: no wake-up is lost)
                self._woke()

    def close(self, timeout: float = 5.0) -> None:
        """Run what was handed in already, then stop the thread and join it."""
        with self._lock:
            self._closed = True
            started = self._queue is not None
            if self._queue is not None:  # (started: the checker narrows this spelling)
                self._queue.put(None)
        if not started:  # (most sessions of an HTTP server get no notification: nothing to stop)
            self._stopped = True
            return
        join(self.thread, timeout)
        with self._ran:  # (a callback stuck past the timeout must not hold up its waiters too)
            self._stopped = True
            self._ran.notify_all()


#: How long (seconds) a request may run on the reading thread before the watch lets the reading
#: go to another thread: a request that turns out slow delays the next read by at most about
#: twice this (the requests that run there are the quick kinds, see QUICK).
WATCH_TICK = 0.005
#: Ticks with no new request after which the watch stops ticking, so an idle server never wakes.
IDLE_TICKS = 20
#: A request runs on the reading thread only if the last one of its kind (method and name) took
#: less than this (seconds), so a queue of them holds the next read up by little; a slower kind,
#: or one not seen yet, gets a reading thread of its own, as concurrent clients need.
QUICK = 0.0005
#: The most kinds whose last duration is kept (the names come from the peer).
MAX_KINDS = 1024
#: Seconds between two calls of :meth:`Readers.serve`'s ``while_waiting``.
WAITING_TICK = 1.0


class Readers:
    """``serve_forever``'s threads: a quick request runs on the thread that read it, and reading goes on.

    One thread at a time (the leader) holds the read lock and reads. A response or
    notification it reads, it handles itself (quickly, in order). A request of a kind whose
    last run was quick (under :data:`QUICK`: an ``echo``, a list) it runs itself too, keeping
    the read lock: no wake-up, no lock passed, which is what makes sequential calls fast
    (measured in benchmarks/stdio.py: the hand-off was the largest cost of a sequential call).
    Meanwhile another thread, *the watch*, waits for the lock with a timeout of
    :data:`WATCH_TICK`: if that request is still running a whole tick later, the watch lets the
    lock go on the leader's behalf and reads on, so a tool that is slow this once still
    cannot stop the reading (a ping, a cancel). A handler that waits on the peer (a request
    of its own, a held-open listen) lets the reading go at once (:meth:`let_go`).

    Any other request (a slower kind, one not seen yet, or any while no thread watches) gets
    the reading handed to a waiting thread (one is started if none waits) before the leader
    runs it, so concurrent requests run at once; at ``max_workers`` threads, requests go to
    the worker pool and the leader reads on. A thread that comes back to wait while no thread
    watches becomes the watch; the watch stops ticking after :data:`IDLE_TICKS` ticks with no
    new request, so an idle server never wakes.

    The thread that called ``serve_forever`` is not one of them: it waits in
    :meth:`serve` for the end of the stream, then closes the session. So no
    handler, however stuck, can keep it from giving the grace period and
    cancelling, and it is never inside a read or write when a signal comes.
    """

    def __init__(self, session: Session) -> None:
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
        #: Per kind of request (method, name): was the last one quick? (see :data:`QUICK`)
        self.quick: Dict[Tuple[str, Optional[str]], bool] = {}
        self.threads: List[threading.Thread] = []
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
            name = ctx.params.get("name")
            kind = (ctx.method, name if type(name) is str else None)
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

    def _took(self, kind: Tuple[str, Optional[str]], quick: bool) -> None:
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
