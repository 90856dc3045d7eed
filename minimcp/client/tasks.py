"""Tool calls the server runs as tasks: the tasks extension (``io.modelcontextprotocol/tasks``,
SEP-2663), client side.

On a 2026-07-28 server, every request of a minimcp client declares the
extension, so the server may answer ``tools/call`` with a task
(``resultType: "task"``) instead of the result. :meth:`Client.call_tool`
then waits for it (polling ``tasks/get`` at the server's ``pollIntervalMs``,
within its timeout) and returns the result as if the call had been plain.
:meth:`Client.start_task` returns the :class:`TaskHandle` itself::

    task = client.start_task("build_report", {"year": 2026})
    print(task.status)                 # "working"
    result = task.wait(timeout=600)    # a ToolResult
    # or later, even from another process: client.task(task_id).wait()

While the task waits for input, its requests (elicitation, sampling, roots)
go to the client's own handlers, the same ones that answer a server's
question in any other call, and the answers go back with ``tasks/update``.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Optional, Set

from ..errors import MCPError, ProtocolError, RPCError, Timeout
from ..errors import (
    TaskCancelled as TaskCancelled,  # (re-exported: raised by this module, importable where its feature lives)
)
from ..logs import get_logger
from ..protocol.stateless import TASKS_EXTENSION
from . import wire
from .results import ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from logging import Logger

    from .client import Client

log: Logger = get_logger(__name__)

EXTENSION = TASKS_EXTENSION
TERMINAL = ("completed", "failed", "cancelled")
STATUSES = ("working", "input_required") + TERMINAL


class TaskHandle:
    """A task on the server: its status, and a way to wait for, cancel or fetch its result.

    Attributes:
        task_id: the server's id for it (keep it to come back with ``client.task(task_id)``).
        status: the last status seen: ``working``, ``input_required``, ``completed``,
            ``failed`` or ``cancelled``.
        status_message: the server's last ``statusMessage`` (progress, say), or None.
        poll_interval: seconds between polls the server suggests.
        task: the last ``tasks/get`` answer (the whole ``DetailedTask``).
    """

    def __init__(self, client: Client, task_id: str, task: Optional[Dict[str, Any]] = None) -> None:
        self.client = client
        self.task_id = task_id
        self.task: Dict[str, Any] = {}
        self.status: str = "working"
        self.status_message: Optional[str] = None
        self.poll_interval: float = 0.1
        self._answered: Set[Any] = set()  # input request keys answered already (the server may show them again)
        self._stop = threading.Event()
        if task is not None:
            self._seen(task)

    def __repr__(self) -> str:
        return f"<TaskHandle {self.task_id} {self.status}>"

    @property
    def done(self) -> bool:
        """True once the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL

    def _seen(self, task: Dict[str, Any]) -> None:
        what = "the server's task"
        status = wire.field(task, "status", str, what)
        if status not in STATUSES:
            raise ProtocolError(f"{what} has an unknown status {status!r}")
        self.task = task
        self.status = status
        self.status_message = wire.field(task, "statusMessage", str, what)
        interval = wire.field(task, "pollIntervalMs", int, what)
        if interval is not None and interval > 0:
            self.poll_interval = min(interval / 1000, 30.0)

    def refresh(self, timeout: Optional[float] = None) -> str:
        """Ask the server (``tasks/get``) and answer any input request it shows; return the status."""
        task = self.client._call("tasks/get", {"taskId": self.task_id}, timeout=timeout)
        self._seen(wire.obj(task, "the server's answer to tasks/get"))
        if self.status == "input_required":
            self._answer(wire.field(self.task, "inputRequests", dict, "the server's task", {}), timeout)
        return self.status

    def _answer(self, requests: Dict[str, Any], timeout: Optional[float]) -> None:
        """Answer the new input requests with the client's handlers, in one ``tasks/update``."""
        responses = {}
        for key, request in requests.items():
            if key not in self._answered:
                responses[key] = self.client.stateless._answer(wire.obj(request, f"inputRequests[{key!r}]"))
        if responses:
            self.client._call("tasks/update", {"taskId": self.task_id, "inputResponses": responses},
                              timeout=timeout)
            self._answered.update(responses)

    def wait(self, timeout: Optional[float] = None) -> ToolResult:
        """Poll until the task ends (answering its input requests) and return its result.

        Args:
            timeout: seconds to wait in all (default: the client's timeout).

        Raises:
            Timeout: it had not ended in time (it goes on at the server: ``cancel()`` it if need be).
            RPCError: the task failed with this JSON-RPC error.
            TaskCancelled: the task was cancelled.
        """
        limit = self.client.session.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        while not self.done:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"task {self.task_id} did not end within {limit:g}s (status: {self.status})")
            self.refresh(timeout=left)
            if not self.done:  # the server's pace, not a guess: its pollIntervalMs
                self._stop.wait(min(self.poll_interval, max(0.0, deadline - time.monotonic())))
        return self.result()

    def result(self) -> ToolResult:
        """The result of an ended task (what the plain call would have returned).

        Raises:
            ProtocolError: it has not ended yet (``wait()`` for it).
            RPCError: it failed; TaskCancelled: it was cancelled.
        """
        if self.status == "completed":
            return ToolResult(wire.field(self.task, "result", dict, "the completed task", {}))
        if self.status == "failed":
            error = wire.field(self.task, "error", dict, "the failed task", {})
            raise RPCError(wire.field(error, "code", int, "the task's error", -32603),
                           wire.field(error, "message", str, "the task's error", "the task failed"), error.get("data"))
        if self.status == "cancelled":
            raise TaskCancelled(f"task {self.task_id} was cancelled")
        raise ProtocolError(f"task {self.task_id} has not ended (status: {self.status}); wait() for it")

    def cancel(self, timeout: Optional[float] = None) -> None:
        """Ask the server to cancel the task (``tasks/cancel``); cooperative, and harmless if it ended."""
        self.client._call("tasks/cancel", {"taskId": self.task_id}, timeout=timeout)


def handle(client: Client, result: Dict[str, Any]) -> TaskHandle:
    """The handle of the task a ``tools/call`` answered with (a ``CreateTaskResult``)."""
    task_id = wire.field(result, "taskId", str, "the server's CreateTaskResult")
    if task_id is None:
        raise ProtocolError("the server answered tools/call with a task but no taskId")
    return TaskHandle(client, task_id, result)


def handle_for(client: Client, result: Any) -> TaskHandle:
    """The handle for what ``tools/call`` answered: its task, or an ended one holding the result."""
    if type(result) is dict and result.get("resultType") == "task":
        return handle(client, result)
    return TaskHandle(client, "", {"status": "completed", "result": wire.obj(result, "the answer to tools/call")})


def wait_for(client: Client, result: Dict[str, Any], timeout: Optional[float]) -> ToolResult:
    """A plain ``call_tool`` the server ran as a task: wait for it; cancel it when time is up."""
    task = handle(client, result)
    try:
        return task.wait(timeout)
    except Timeout:
        try:
            task.cancel(timeout=5.0)
        except MCPError as exc:  # the timeout is the news; a failed cancel is only logged
            log.debug("cancelling task %s failed: %s", task.task_id, exc)
        raise
