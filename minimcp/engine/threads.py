"""Threads owned by minimcp: how they are started, joined, and pooled.

Every thread minimcp starts is named ``minimcp-<kind>-<n>`` (a child process's two,
``minimcp-<kind>-<pid>``) and is joined by
the ``close()`` of the object that started it; ``daemon=True`` is only a
safety net, so a handler stuck in user code cannot keep the interpreter alive.
"""

from __future__ import annotations

import itertools
import threading
import time

try:  # queue.SimpleQueue is this C type; queue.py itself loads heapq too (a stdio start would pay both)
    from _queue import SimpleQueue
except ImportError:  # (an interpreter without it)
    from queue import SimpleQueue

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, List, Optional, Tuple


from ..logs import get_logger

log: Logger = get_logger(__name__)

_thread_ids = itertools.count(1)

#: The most tasks that wait in a :class:`WorkerPool`'s queue for a free worker, by default. Past it
#: the pool refuses (``submit()`` is False) rather than block whoever submits: that is a thread that
#: reads (a ping, a cancel must still be read) or an HTTP POST's; and a peer that sends requests
#: faster than they finish cannot grow the process's memory without bound. Large enough that a
#: client pipelining a few thousand requests over stdio (benchmarks/instructions.py sends 2,000) is
#: queued, not turned away: a request is small next to the threads it waits for.
MAX_QUEUED = 4096


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


class WorkerPool:
    """A bounded pool of named worker threads, started on demand, with a bounded queue.

    ``concurrent.futures.ThreadPoolExecutor`` would do, except that its
    ``shutdown()`` cannot time out: one handler stuck in user code would hang
    ``close()`` forever, and its queue has no bound. This one joins with a deadline and logs
    stragglers, and refuses a task when ``max_queued`` wait already::

        pool = WorkerPool(4)
        if not pool.submit(print, "hello"):   # every worker busy and the queue full
            ...                                # tell the caller to try again later
        pool.shutdown(timeout=5.0)
    """

    def __init__(self, max_workers: int, max_queued: int = MAX_QUEUED, kind: str = "handler") -> None:
        self.max_workers: int = max_workers
        #: What its threads do, in their names (``minimcp-<kind>-N``).
        self.kind: str = kind
        #: The most tasks that wait for a free worker; past it :meth:`submit` refuses.
        self.max_queued: int = max_queued
        self._tasks: SimpleQueue[Optional[Tuple[Callable[..., Any], Tuple[Any, ...]]]] = SimpleQueue()
        self._idle = 0  # workers waiting for a task, not yet promised one (under _lock)
        self._threads: List[threading.Thread] = []
        self._lock = threading.Lock()
        self._shutdown = False

    @property
    def threads(self) -> List[threading.Thread]:
        """The worker threads started so far (a copy)."""
        return list(self._threads)

    @property
    def queued(self) -> int:
        """Tasks waiting for a worker now (a snapshot)."""
        return self._tasks.qsize()

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on a worker thread, at once or once one is free; never blocks.

        Returns False, and runs nothing, when every worker is busy and ``max_queued`` tasks wait
        already, or the pool is shut down: the caller answers for it (a request gets -32603
        "server busy").
        """
        with self._lock:  # a plain lock: threading.Semaphore is Python code, this is the hot path
            if self._shutdown:  # nobody would run it
                return False
            if self._idle:
                self._idle -= 1  # an idle worker will pick it up
            elif len(self._threads) < self.max_workers:
                self._threads.append(start_thread(self._work, self.kind))
            elif self._tasks.qsize() >= self.max_queued:  # (C: no frame)
                return False
            self._tasks.put((fn, args))
        return True

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
        # catch_up() waits on it; made with the thread (most sessions of an HTTP server get no
        # notification, and a Condition is the costliest part of a session to make).
        self._ran: Optional[threading.Condition] = None
        self._waiters = 0  # threads in catch_up() (under _ran): notify only when someone waits
        self._stopped = False

    def dispatch(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` on the dispatcher thread, after those handed in before."""
        with self._lock:
            if self._closed:
                return
            if self._queue is None:
                self._queue = SimpleQueue()
                self._ran = threading.Condition()
                self.thread = start_thread(self._loop, "dispatch")
            self.queued += 1
            self._queue.put((callback, args))

    def catch_up(self, mark: int, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) until the first ``mark`` callbacks have run.

        On the dispatcher's own thread it returns at once: a callback that waits
        for something queued behind it would wait for ever.
        """
        ran = self._ran
        if threading.current_thread() is self.thread or ran is None:  # (None: nothing was handed in)
            return
        deadline = time.monotonic() + timeout
        with ran:
            self._waiters += 1
            try:
                while self.ran < mark and not self._stopped:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    ran.wait(left)
            finally:
                self._waiters -= 1

    def _woke(self) -> None:
        ran = self._ran
        if ran is not None:  # (made with the thread that calls this)
            with ran:
                ran.notify_all()

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
        ran = self._ran
        if ran is None:  # (made with the thread, which exists: never None here)
            self._stopped = True
            return
        with ran:  # (a callback stuck past the timeout must not hold up its waiters too)
            self._stopped = True
            ran.notify_all()
