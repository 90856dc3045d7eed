"""Tool calls as futures: start many at once, take the results as they come
(:meth:`Client.submit_tool_call <minimcp.Client.submit_tool_call>`).

The thread-based twin of ``asyncio.gather``: each submitted call returns a standard
:class:`concurrent.futures.Future` at once, which ``concurrent.futures.wait()`` and
``as_completed()`` take like any other. This module (and with it ``concurrent.futures``
and ``logging``) is loaded by the first submitted call only: ``import minimcp`` and a
client that never submits import neither.

Where a call runs: on one of the client's call threads (an
:class:`~minimcp.engine.threads.WorkerPool` of at most :data:`CALL_THREADS`, started as
calls come and reused, joined by ``client.close()``); more calls wait their turn in its
queue. A thread per call in flight, not per call made, and on every transport the same,
because:

- over HTTP the POST that carries a request blocks until the server answers it;
- a 2026-07-28 call may take several rounds (``input_required`` answered by the client's
  own sampling, elicitation and roots handlers) or become a task that is polled;
- a Future runs its done-callbacks on the thread that completes it, and the thread that
  reads a connection never runs user code (ARCHITECTURE.md, threads).

It does not touch what a plain ``call_tool()`` does: the calls go through the same
session, in the same era, with the same timeouts and cancellation.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import CancelledError, Future
from typing import TYPE_CHECKING, Any, Dict, Optional, cast

from ..engine.threads import WorkerPool
from ..errors import ConnectionClosed
from ..logs import get_logger
from . import tasks, wire
from .results import ToolResult
from .stateless import StatelessSide

if TYPE_CHECKING:
    from logging import Logger

    from ..engine.inflight import ProgressCallback
    from .client import Client

log: Logger = get_logger(__name__)

#: The most submitted calls of one client in flight at once; more wait their turn. Set it
#: before a client's first ``submit_tool_call()``.
CALL_THREADS = 16

_calls_lock = threading.Lock()  # makes each client's Calls once


class ToolCallFuture(Future[ToolResult]):
    """The :class:`concurrent.futures.Future` of one submitted tool call.

    A standard Future (``result(timeout)``, ``exception()``, ``done()``,
    ``add_done_callback()``, ``concurrent.futures.wait`` and ``as_completed``), with one
    difference that makes ``cancel()`` useful: while the call is in flight it stays
    *pending* (``running()`` is False), so ``cancel()`` still works, and tells the server.

    Example::

        future = client.submit_tool_call("slow_report", {"year": 2026})
        ...
        if not future.done():
            future.cancel()          # notifications/cancelled goes to the server

    Done-callbacks run on the thread that ends the call: one of the client's call
    threads, or the thread that calls ``cancel()``.
    """

    def __init__(self, client: Client) -> None:
        super().__init__()
        self._client = client
        self._lock = threading.Lock()
        self._request_id: Optional[int] = None  # the request of this call on the wire now
        self._task: Optional[tasks.TaskHandle] = None  # the server's task, once it answered with one
        self._ended = False  # the call ended: answered, failed or cancelled (whoever ended it sets the Future)

    def cancel(self) -> bool:
        """Cancel the call; True if it is cancelled, False if it had ended already.

        A call not started yet is never sent. A call in flight is cancelled at the server
        (``notifications/cancelled``, spec basic/utilities/cancellation; on 2026-07-28 HTTP,
        its response stream is closed), and a task the server runs it as gets
        ``tasks/cancel``. The Future is cancelled at once; the server may still finish the
        work it had begun (cancellation is a request, not an order). Two cases where the
        server cannot hear it: a 2026-07-28 HTTP call the server answers in its POST's own
        body (a call that asks for no log messages and is no task: there is no stream to
        close), and a call cancelled before the answer that makes it a task has come (the
        request is cancelled, not the task, whose id the client never learns).
        """
        if not super().cancel():  # (it ended: its result or error is set, or being set)
            return False
        with self._lock:
            if self._ended:  # the call thread ended it meanwhile, and told the waiters
                return True
            self._ended = True
            request_id, task = self._request_id, self._task
        if request_id is not None:
            self._client.session.cancel(request_id, "cancelled by the caller")
        if task is not None:
            tasks.cancel_quietly(task)
        self.set_running_or_notify_cancel()  # wakes wait() and as_completed() (the executor's part)
        return True

    # -- on a call thread ------------------------------------------------------------------

    def _request(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None,
                 on_progress: Optional[ProgressCallback] = None, max_timeout: Optional[float] = None,
                 related_to: Any = None, request_id: Optional[int] = None, cancellable: bool = True) -> Any:
        # Send one request of this call and wait for its answer: Session.request, with the id
        # kept so that cancel() can cancel it. Nothing is sent once the call is cancelled.
        session = self._client.session
        if request_id is None:
            request_id = session.new_request_id()
        with self._lock:
            if self._ended:
                raise CancelledError()
            self._request_id = request_id
        # A cancel() in the few bytecodes between here and the session recording the request
        # finds nothing to cancel: the call then runs to its answer (or timeout) unseen, its
        # Future cancelled all the same. Closing that window needs a Session call that records
        # a request before it is sent and hands back its id.
        return session.request(method, params, timeout=timeout, on_progress=on_progress, max_timeout=max_timeout,
                               related_to=related_to, request_id=request_id, cancellable=cancellable)

    def run(self, name: str, arguments: Optional[Dict[str, Any]], timeout: Optional[float],
            on_progress: Optional[ProgressCallback], max_timeout: Optional[float]) -> None:
        """Make the call (what ``Client.call_tool`` does) and set the Future; on a call thread."""
        if self._ended:  # cancelled while it waited its turn: never sent
            return
        try:
            result = self._call_tool(name, arguments, timeout, on_progress, max_timeout)
        except BaseException as exc:  # (like ThreadPoolExecutor's work item: everything goes to the Future)
            self._end(None, exc)
        else:
            self._end(result, None)

    def _call_tool(self, name: str, arguments: Optional[Dict[str, Any]], timeout: Optional[float],
                   on_progress: Optional[ProgressCallback], max_timeout: Optional[float]) -> ToolResult:
        client = self._client
        if client.server_capabilities.get("tools") is None:
            client._require("tools")
        params: Dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        if on_progress is not None:
            on_progress = wire.checked_progress(on_progress)
        send: Any
        if client.stateless.active:
            # The 2026-07-28 rounds (_meta, input_required, a stale header list) as the client's own
            # side runs them, but each request sent through this call, so its id is known to cancel().
            shared = client.stateless
            side = StatelessSide(cast(Any, _Requests(self)), answers=shared.answers, capabilities=shared.capabilities,
                                 client_info=shared.client_info, refresh_tools=shared.refresh_tools)
            side.active, side.log_level = True, shared.log_level
            send = side.call
        else:
            def send(method: str, params: Dict[str, Any], timeout: Optional[float] = None,
                     on_progress: Optional[ProgressCallback] = None, max_timeout: Optional[float] = None) -> Any:
                return self._request(method, params, timeout, on_progress, max_timeout)
        # What Client.call_tool does (a task asked for when the tool requires one, any task followed
        # to its end, cancelled on timeout), with the task kept for cancel().
        return tasks.call_tool(client, params, timeout, on_progress, max_timeout, send=send, on_task=self._keep_task)

    def _keep_task(self, task: tasks.TaskHandle) -> None:
        """Keep the call's task, so that cancel() cancels it (a cancel() that came as the
        server answered cancelled no task: it is cancelled now)."""
        with self._lock:
            cancelled = self._ended
            if not cancelled:
                self._task, self._request_id = task, None
        if cancelled:
            tasks.cancel_quietly(task)
            raise CancelledError()

    def _end(self, result: Optional[ToolResult], error: Optional[BaseException]) -> None:
        with self._lock:
            if self._ended:  # cancel() ended it, and told the waiters
                return
            self._ended = True
        if not self.set_running_or_notify_cancel():  # cancelled just now: that told the waiters
            return
        if result is not None:
            self.set_result(result)
        else:
            self.set_exception(error)


class _Requests:
    """What a StatelessSide takes for its session: the requests of one submitted call go
    through its Future, which keeps the id of each for ``cancel()``."""

    __slots__ = ("request",)

    def __init__(self, future: ToolCallFuture) -> None:
        self.request = future._request


class Calls:
    """One client's submitted calls: the threads they run on, made on first use."""

    def __init__(self, client: Client) -> None:
        self.client = client
        # (threads minimcp-call-N) The queue is the script's own calls, each a few objects: no bound
        # to refuse at, as a server's pool has against its peers.
        self.pool: WorkerPool = WorkerPool(CALL_THREADS, max_queued=sys.maxsize, kind="call")
        self.closed: bool = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Calls threads={len(self.pool.threads)}{' closed' if self.closed else ''}>"

    def submit(self, name: str, arguments: Optional[Dict[str, Any]], timeout: Optional[float],
               on_progress: Optional[ProgressCallback], max_timeout: Optional[float]) -> ToolCallFuture:
        """Queue one call; its Future, failed at once with ConnectionClosed if the client is closed."""
        future = ToolCallFuture(self.client)
        with self._lock:
            refused = (self.closed or self.client.session.closed
                       or not self.pool.submit(future.run, name, arguments, timeout, on_progress, max_timeout))
        if refused:  # (the pool refuses only once it is shut down: the client is closing)
            future.set_running_or_notify_cancel()
            future.set_exception(ConnectionClosed(f"cannot call {name!r}: the client is closed"))
        return future

    def close(self, timeout: float = 5.0) -> None:
        """After the session closed: the calls in flight fail with ConnectionClosed, those queued
        fail at once as their turn comes; every call thread is joined (within ``timeout``)."""
        with self._lock:
            self.closed = True
        self.pool.shutdown(timeout)


def submit(client: Client, name: str, arguments: Optional[Dict[str, Any]], timeout: Optional[float],
           on_progress: Optional[ProgressCallback], max_timeout: Optional[float]) -> ToolCallFuture:
    """What :meth:`Client.submit_tool_call` does: queue the call on the client's call threads."""
    calls = client._calls
    if calls is None:
        with _calls_lock:
            calls = client._calls
            if calls is None:
                calls = client._calls = Calls(client)
    return calls.submit(name, arguments, timeout, on_progress, max_timeout)
