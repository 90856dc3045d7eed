"""Threads owned by minimcp: how they are started, joined, and pooled.

Every thread minimcp starts is named ``minimcp-<kind>-<n>`` and is joined by
the ``close()`` of the object that started it; ``daemon=True`` is only a
safety net, so a handler stuck in user code cannot keep the interpreter alive.
"""

import itertools
import queue
import threading
import time
from typing import Any, Callable, Optional

from .logs import get_logger

log = get_logger(__name__)

_thread_ids = itertools.count(1)


def start_thread(target: Callable, kind: str) -> threading.Thread:
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
    """A bounded pool of named worker threads, started on demand.

    ``concurrent.futures.ThreadPoolExecutor`` would do, except that its
    ``shutdown()`` cannot time out: one handler stuck in user code would hang
    ``close()`` forever. This one joins with a deadline and logs stragglers.
    """

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self._tasks: "queue.SimpleQueue" = queue.SimpleQueue()
        self._idle = 0  # workers waiting for a task, not yet promised one (under _lock)
        self._threads: list = []
        self._lock = threading.Lock()
        self._shutdown = False

    @property
    def threads(self) -> list:
        """The worker threads started so far (a copy)."""
        return list(self._threads)

    def submit(self, fn: Callable, *args: Any) -> None:
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
