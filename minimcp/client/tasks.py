"""Tool calls the server runs as tasks, client side, in both eras. It follows tasks; it
never runs one (the server's side is ``server/tasks.py``).

- **2025-11-25** (the handshake era; spec 2025-11-25 basic/utilities/tasks, experimental): the
  client asks for a task by adding ``params.task`` to ``tools/call``, for a tool that
  ``tools/list`` shows with ``execution.taskSupport`` and only when the server declares
  ``tasks.requests.tools.call``. The server answers ``{"task": {"taskId", "status", ...}}``;
  the client polls ``tasks/get`` (at the server's ``pollInterval``) and ``tasks/result``
  gives what the plain call would have returned, once the task ended. While the task is
  ``input_required``, the client waits in ``tasks/result``: the server sends its questions
  (elicitation, sampling) then, as requests that carry
  ``_meta["io.modelcontextprotocol/related-task"]``, and the client's own handlers answer
  them. The call's ``progressToken`` stays valid until the task ends.
- **2026-07-28** (the extension ``io.modelcontextprotocol/tasks``, SEP-2663): every request
  declares the extension and the server decides, per request, to answer ``tools/call`` with
  ``{"resultType": "task", "taskId", "status", ...}``. ``tasks/get`` shows the questions
  (``inputRequests``, answered in one ``tasks/update``) and, once the task ended, its
  result or error.

:meth:`Client.call_tool` makes the task when the tool requires one, follows any task the
server makes, and returns the result as a plain call would. :meth:`Client.start_task`
returns the :class:`TaskHandle` itself::

    task = client.start_task("build_report", {"year": 2026})
    print(task.task_id, task.status)   # "working"
    result = task.wait(timeout=600)    # a ToolResult
    # or later, even from another process: client.task(task_id).wait()
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Optional, Set, Union

from ..errors import CapabilityError, MCPError, ProtocolError, RPCError, Timeout
from ..errors import (
    TaskCancelled as TaskCancelled,  # (re-exported: raised by this module, importable where its feature lives)
)
from ..logs import get_logger
from ..protocol.jsonrpc import INVALID_PARAMS
from ..protocol.stateless import TASKS_EXTENSION
from . import wire
from .results import ToolResult

if TYPE_CHECKING:  # pragma: no cover
    from logging import Logger

    from ..engine.inflight import ProgressCallback
    from .client import Client

log: Logger = get_logger(__name__)

EXTENSION = TASKS_EXTENSION
TERMINAL = ("completed", "failed", "cancelled")
STATUSES = ("working", "input_required") + TERMINAL
#: The longest pause between two polls, whatever the server suggests.
MAX_POLL_INTERVAL = 30.0
#: The least time an ended task's ``tasks/result`` is given, even past the deadline: the result
#: is there, only its trip is left, and losing it to the deadline would cancel a finished job.
RESULT_GRACE = 2.0
#: How long the ``tasks/cancel`` sent after a timeout or a Ctrl-C may take.
CANCEL_TIMEOUT = 5.0

_tokens = itertools.count(1)  # progress tokens of calls made as tasks (strings: never a request id)


class TaskHandle:
    """A task on the server: its status, and a way to wait for, cancel or fetch its result.

    Example::

        task = client.start_task("build_report", {"year": 2026})
        while not task.done:
            task.refresh()                  # one tasks/get; answers what the task asks
            print(task.status_message)
        print(task.result().text)

    Attributes:
        task_id: the server's id for it (keep it to come back with ``client.task(task_id)``);
            None when the server answered the call at once, with its result, and made no task
            (2026-07-28 lets the server choose, per request).
        status: the last status seen: ``working``, ``input_required``, ``completed``,
            ``failed`` or ``cancelled``.
        status_message: the server's last ``statusMessage`` (progress, say), or None.
        poll_interval: seconds between polls the server suggests.
        task: the last task the server showed (2025-11-25: a ``Task``; 2026-07-28: a
            ``DetailedTask``, which holds the result once it ended).
        era: ``"handshake"`` for a 2025-11-25 task (``tasks/result`` gives its result),
            ``"stateless"`` for one of the 2026-07-28 extension.
    """

    def __init__(self, client: Client, task_id: Optional[str], task: Optional[Dict[str, Any]] = None) -> None:
        self.client: Client = client
        self.task_id: Optional[str] = task_id
        self.task: Dict[str, Any] = {}
        self.status: str = "working"
        self.status_message: Optional[str] = None
        self.poll_interval: float = 0.1
        self.era: str = client.era
        # 2025-11-25: what tasks/result answered (the result, or the JSON-RPC error), once asked
        self._outcome: Optional[Union[Dict[str, Any], RPCError]] = None
        self._answered: Set[Any] = set()  # input request keys answered already (the server may show them again)
        self._wake = threading.Event()  # set by a status notification that wants the poller now
        self._watch: Optional[Watch] = None  # the call that follows this task: its deadline and progress
        if task is not None:
            self._seen(task)

    def __repr__(self) -> str:
        return f"<TaskHandle {self.task_id if self.task_id is not None else '(no task)'} {self.status}>"

    @property
    def done(self) -> bool:
        """True once the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL

    def _seen(self, task: Dict[str, Any]) -> None:
        what = "the server's task"
        task_id = wire.field(task, "taskId", str, what)
        if task_id is not None and self.task_id is not None and task_id != self.task_id:
            raise ProtocolError(f"{what} is {task_id!r}, not {self.task_id!r}, the one asked about")
        status = wire.field(task, "status", str, what)
        if status not in STATUSES:
            raise ProtocolError(f"{what} has an unknown status {status!r}")
        self.task = task
        self.status = status
        self.status_message = wire.field(task, "statusMessage", str, what)
        interval = wire.field(task, "pollIntervalMs", (int, float), what)  # the extension's name
        if interval is None:
            interval = wire.field(task, "pollInterval", (int, float), what)  # 2025-11-25's (also ms)
        if interval is not None and interval > 0:
            self.poll_interval = min(interval / 1000, MAX_POLL_INTERVAL)

    def _get(self, timeout: Optional[float]) -> Dict[str, Any]:
        return wire.obj(self.client._call("tasks/get", {"taskId": self.task_id}, timeout=timeout),
                        "the server's answer to tasks/get")

    def refresh(self, timeout: Optional[float] = None) -> str:
        """Ask the server how the task is (``tasks/get``), answer what it asks, return the status.

        A 2026-07-28 task shows its questions in ``tasks/get``: the client's handlers answer
        them, in one ``tasks/update``. A 2025-11-25 server asks only while the client waits
        in ``tasks/result``, which returns when the task ends: so on ``input_required`` this
        waits (up to ``timeout``) for the end, answering the questions as they come.
        """
        if self.task_id is None:  # the server answered at once: nothing to ask
            return self.status
        self._seen(self._get(timeout))
        if self.status == "input_required":
            if self.era == "handshake":  # spec 2025-11-25 tasks "Input Required Status": call tasks/result
                self._fetch_result(timeout)
            else:
                self._answer(wire.field(self.task, "inputRequests", dict, "the server's task", {}), timeout)
        watch = self._watch
        if watch is not None:
            watch.status(self.status_message)
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

    def _fetch_result(self, timeout: Optional[float]) -> None:
        """2025-11-25 ``tasks/result``: wait for the end (the server's questions come meanwhile,
        as requests the client's handlers answer) and keep what the call would have returned."""
        try:
            answer = self.client._call("tasks/result", {"taskId": self.task_id}, timeout=timeout)
        except RPCError as exc:  # (what the call itself would have raised)
            self._outcome = exc
        else:
            self._outcome = wire.result("tasks/result", answer)
        if self.done:
            return
        try:  # it ended: how (completed, failed, or cancelled meanwhile), tasks/get says
            task = self._get(timeout)
        except RPCError:  # (gone already, say a short TTL): what tasks/result answered says enough
            task = {}
        if task.get("status") in TERMINAL:
            self._seen(task)
        else:  # (2025-11-25 "failed" covers a result with isError)
            outcome = self._outcome
            failed = isinstance(outcome, RPCError) or outcome.get("isError") is True
            self.status = "failed" if failed else "completed"

    def wait(self, timeout: Optional[float] = None) -> ToolResult:
        """Poll until the task ends (answering its input requests) and return its result.

        Args:
            timeout: seconds to wait in all (default: the client's timeout).

        Raises:
            Timeout: it had not ended in time (it goes on at the server: ``cancel()`` it if need be).
            RPCError: the task failed with this JSON-RPC error.
            TaskCancelled: the task was cancelled.
        """
        return self._follow(Watch(self.client.session.timeout if timeout is None else timeout, None, None))

    def _follow(self, watch: Watch) -> ToolResult:
        followed = self.client._tasks_followed  # (status notifications about it wake this loop)
        self._watch = watch
        if self.task_id is not None:
            followed[self.task_id] = self
        try:
            while not self.done:
                left = watch.left()
                if left <= 0:
                    raise self._late(watch)
                self._wake.clear()
                try:
                    self.refresh(timeout=left)
                except Timeout as exc:  # (a request given the time left: the task's time is up)
                    raise self._late(watch) from exc
                if not self.done:  # the server's pace (spec: SHOULD respect pollInterval), or sooner if it says so
                    self._wake.wait(min(self.poll_interval, max(0.0, watch.left())))
            return self.result(timeout=max(watch.left(), RESULT_GRACE))
        finally:
            if self.task_id is not None and followed.get(self.task_id) is self:
                del followed[self.task_id]
            self._watch = None

    def _late(self, watch: Watch) -> Timeout:
        return Timeout(f"task {self.task_id} did not end within {watch.timeout:g}s (status: {self.status})")

    def _notified(self, task: Dict[str, Any]) -> None:
        """A status notification about this task (on the dispatcher thread): its message shown as
        progress, and the poller woken when the task wants input or ended. Polls stay the source
        of truth: the spec lets a server send no notification at all."""
        watch = self._watch
        if watch is not None:
            watch.status(task.get("statusMessage"))
        if task.get("status") in ("input_required",) + TERMINAL:
            self._wake.set()

    def result(self, timeout: Optional[float] = None) -> ToolResult:
        """The result of an ended task (what the plain call would have returned).

        Args:
            timeout: for a 2025-11-25 task, how long its ``tasks/result`` may take (default:
                the client's timeout); a 2026-07-28 task holds its result already.

        Raises:
            ProtocolError: it has not ended yet (``wait()`` for it).
            RPCError: it failed; TaskCancelled: it was cancelled.
        """
        if self._outcome is None and self.era == "handshake" and self.status in ("completed", "failed"):
            self._fetch_result(timeout)
        if self.status == "cancelled":  # (whatever a 2025-11-25 tasks/result answered for it)
            raise TaskCancelled(f"task {self.task_id} was cancelled")
        outcome = self._outcome
        if isinstance(outcome, RPCError):
            raise outcome
        if outcome is not None:
            return ToolResult(outcome)
        if self.status == "completed":
            return ToolResult(wire.field(self.task, "result", dict, "the completed task", {}))
        if self.status == "failed":
            error = wire.field(self.task, "error", dict, "the failed task", {})
            raise RPCError(wire.field(error, "code", int, "the task's error", -32603),
                           wire.field(error, "message", str, "the task's error", "the task failed"), error.get("data"))
        raise ProtocolError(f"task {self.task_id} has not ended (status: {self.status}); wait() for it")

    def cancel(self, timeout: Optional[float] = None) -> None:
        """Ask the server to cancel the task (``tasks/cancel``); cooperative, and harmless if it ended.

        Raises:
            RPCError: the server does not know the task (``-32602``: a wrong id, or expired).
        """
        if self.task_id is None:  # no task: the call was answered at once
            return
        try:
            answer = self.client._call("tasks/cancel", {"taskId": self.task_id}, timeout=timeout)
        except RPCError as exc:
            # spec 2025-11-25 tasks "Task Cancellation": a task that ended is refused with -32602
            # (the extension acknowledges it instead). Harmless: unless the task is unknown.
            if self.era != "handshake" or exc.code != INVALID_PARAMS:
                raise
            self._seen(self._get(timeout))  # (an unknown task: tasks/get raises -32602 too)
            if not self.done:
                raise
            return
        if self.era == "handshake" and type(answer) is dict and "status" in answer:
            self._seen(answer)  # 2025-11-25 answers with the task, cancelled


class Watch:
    """One call followed as a task: its deadline, and where its progress goes.

    The deadline is ``timeout`` after the call began; with ``max_timeout``, each sign of life
    (a progress report, a new status message) moves it to ``timeout`` after that, up to
    ``max_timeout`` after the start, as for a plain call.

    Progress: the server's ``notifications/progress`` for the call's token (2025-11-25: valid
    until the task ends) reach ``on_progress`` as they come. Until the first one comes, each
    new ``statusMessage`` of the task does, as ``on_progress(n, None, message)`` for the n-th:
    a 2026-07-28 task has no progress notifications (minimcp's server turns
    ``ctx.report_progress()`` into the status message), and a 2025-11-25 server may send none.
    """

    def __init__(self, timeout: float, max_timeout: Optional[float], on_progress: Optional[ProgressCallback],
                 started: Optional[float] = None) -> None:
        #: When the call began (``time.monotonic()``).
        self.started: float = time.monotonic() if started is None else started
        self.timeout: float = timeout
        self.max_timeout: Optional[float] = max_timeout
        self.on_progress: Optional[ProgressCallback] = on_progress
        #: The ``progressToken`` the call carries, if it asked for progress.
        self.token: Optional[str] = None
        self._alive: Optional[float] = None  # the last sign of life
        self._reported = False  # a notifications/progress came: status messages are no longer progress
        self._shown = 0
        self._recent: Deque[str] = deque(maxlen=8)  # (a poll's answer may be older than a notification)
        self._lock = threading.Lock()

    def left(self) -> float:
        """Seconds left before the call gives up."""
        end = self.started + self.timeout
        alive = self._alive
        if self.max_timeout is not None and alive is not None:
            end = max(end, min(alive + self.timeout, self.started + self.max_timeout))
        return end - time.monotonic()

    def progress(self, progress: Any, total: Any, message: Any) -> None:
        """A ``notifications/progress`` for the call's token (on the dispatcher thread)."""
        self._reported = True
        self._alive = time.monotonic()
        if self.on_progress is not None:
            self.on_progress(progress, total, message)

    def status(self, message: Optional[str]) -> None:
        """The task's status message, from a poll or a notification: shown if it is new."""
        with self._lock:
            if message is None or message in self._recent:
                return
            self._recent.append(message)
            self._alive = time.monotonic()
            if self._reported or self.on_progress is None:
                return
            self._shown += 1
            shown = self._shown
        self.on_progress(shown, None, message)  # (never under the lock: user code)


# -- what the server can do, and what it answered ---------------------------------------------------


def runs_tools_as_tasks(client: Client) -> bool:
    """Does the server run tool calls as tasks? 2025-11-25: it declares
    ``tasks.requests.tools.call``; 2026-07-28: the extension, in its capabilities."""
    capabilities = client.server_capabilities
    if client.stateless.active:
        extensions = capabilities.get("extensions")
        return type(extensions) is dict and EXTENSION in extensions
    declared = capabilities.get("tasks")
    requests = declared.get("requests") if type(declared) is dict else None
    tools = requests.get("tools") if type(requests) is dict else None
    return type(tools) is dict and tools.get("call") is not None


def required(client: Client, name: Any, timeout: Optional[float]) -> bool:
    """Must ``tools/call`` of ``name`` ask for a task? 2025-11-25: yes when the server runs tool
    calls as tasks and lists the tool with ``execution.taskSupport: "required"`` (it refuses a
    plain call: spec "Tool-Level Negotiation"); the tool list is fetched if the client has none.
    2026-07-28: never, the server decides."""
    if client.stateless.active or not runs_tools_as_tasks(client):
        return False
    return client._task_support(name, timeout) == "required"


def _is_tool_result(result: Dict[str, Any]) -> bool:
    return type(result.get("content")) is list or "structuredContent" in result


def _handle(client: Client, task: Any, what: str) -> TaskHandle:
    task = wire.obj(task, what)
    task_id = wire.field(task, "taskId", str, what)
    if not task_id:
        raise ProtocolError(f"{what} has no taskId: {task!r:.200}")
    return TaskHandle(client, task_id, task)


def created(client: Client, result: Any, asked: bool) -> Optional[TaskHandle]:
    """The task a ``tools/call`` answer holds, or None for a tool result.

    Either era's shape: 2026-07-28 ``{"resultType": "task", "taskId", "status", ...}``; 2025-11-25,
    to a call that asked for a task, ``{"task": {"taskId", "status", ...}}``.

    Args:
        asked: the call asked for a task (or must get a task or a tool result: ``start_task()``).

    Raises:
        ProtocolError: the answer to a call that ``asked`` is neither a task nor a tool result,
            or a task without an id.
    """
    raw = wire.result("tools/call", result)
    if raw.get("resultType") == "task":
        return _handle(client, raw, "the server's CreateTaskResult")
    if not asked:
        return None
    if "task" in raw and not client.stateless.active:
        return _handle(client, raw["task"], "the server's CreateTaskResult: its 'task'")
    if not _is_tool_result(raw):
        raise ProtocolError(f"the server answered tools/call with neither a task nor a tool result: {raw!r:.200}")
    return None


def handle(client: Client, result: Any) -> TaskHandle:
    """The handle of the task a ``tools/call`` answered with (a ``CreateTaskResult``, either era's).

    Raises:
        ProtocolError: the answer holds no task.
    """
    task = created(client, result, asked=True)
    if task is None:
        raise ProtocolError("the server's answer to tools/call holds no task")
    return task


def _answered_at_once(client: Client, result: Dict[str, Any]) -> TaskHandle:
    """The handle of a call the server answered with its result: no task, ended."""
    task = TaskHandle(client, None)
    task.status, task._outcome = "completed", result
    return task


# -- the calls --------------------------------------------------------------------------------------


Send = Callable[..., Any]


def call_tool(client: Client, params: Dict[str, Any], timeout: Optional[float],
              on_progress: Optional[ProgressCallback], max_timeout: Optional[float],
              send: Optional[Send] = None, on_task: Optional[Callable[[TaskHandle], None]] = None,
              requires_task: Optional[bool] = None) -> ToolResult:
    """What :meth:`Client.call_tool` does on a server that runs tasks: the call, asking for a task
    when the tool requires one, and any task it becomes followed to its end, all in ``timeout``.

    Args:
        send: ``send(method, params, timeout=, on_progress=, max_timeout=)`` sends the
            ``tools/call`` (default: the client's own way).
        on_task: told the task, once the server answered with one (to cancel it from elsewhere).
        requires_task: whether the tool requires a task, when the caller knows (default: looked
            up in the server's tool list, fetched if need be).

    Raises:
        Timeout: no result in time: the task, if there was one, was cancelled (``tasks/cancel``).
        RPCError: the call, or the task, failed with this JSON-RPC error.
        TaskCancelled: the task was cancelled (at the server, or by another client).
        ProtocolError: the server answered with neither a task nor a tool result.
        KeyboardInterrupt: the task was cancelled, then it is raised again.
    """
    send = send if send is not None else client._call
    started, limit = time.monotonic(), client.session.timeout if timeout is None else timeout
    asked = required(client, params.get("name"), timeout) if requires_task is None else requires_task
    watch = Watch(limit, max_timeout, on_progress, started) if asked else None
    if watch is not None:  # spec 2025-11-25 tasks "Creating Tasks": params.task (the server picks the ttl)
        params = dict(params, task={})
        if on_progress is not None or max_timeout is not None:
            # spec 2025-11-25 tasks "Task Progress Notifications": the token lasts as long as the task,
            # past the answer to this request: so it is routed here (client/wire.py), not by the session.
            watch.token = f"minimcp-task-{next(_tokens)}"
            params["_meta"] = dict(params.get("_meta") or {}, progressToken=watch.token)
            client._task_progress[watch.token] = watch
    try:
        if watch is not None:
            result = send("tools/call", params, timeout=max(watch.left(), 0.001))
        else:
            result = send("tools/call", params, timeout=timeout, on_progress=on_progress, max_timeout=max_timeout)
        task = created(client, result, asked)
        if task is None:
            return ToolResult(result)
        if watch is None:  # (2026-07-28: the server made it a task; the timeout counts from the call's start)
            watch = Watch(limit, max_timeout, on_progress, started)
        watch._alive = time.monotonic()  # (its creation is a sign of life, for max_timeout)
        if on_task is not None:
            on_task(task)
        return follow(task, watch)
    finally:
        if watch is not None and watch.token is not None:
            client._task_progress.pop(watch.token, None)


def follow(task: TaskHandle, watch: Watch) -> ToolResult:
    """Follow a call's task to its end and return its result; when the call's time is up or the
    user interrupts (Ctrl-C), cancel the task (``tasks/cancel``) and raise."""
    try:
        return task._follow(watch)
    except (Timeout, KeyboardInterrupt):  # spec basic/lifecycle "Timeouts": stop what we stop waiting for
        cancel_quietly(task)
        raise


def cancel_quietly(task: TaskHandle) -> None:
    """Cancel a task whose caller gave up; a failure is only logged (the timeout is the news)."""
    try:
        task.cancel(timeout=CANCEL_TIMEOUT)
    except MCPError as exc:
        log.debug("cancelling task %s failed: %s", task.task_id, exc)


def start_task(client: Client, name: str, arguments: Optional[Dict[str, Any]],
               timeout: Optional[float]) -> TaskHandle:
    """What :meth:`Client.start_task` does: call the tool as a task; its handle at once.

    Raises:
        CapabilityError: the server runs no tool as a task, or (2025-11-25) not this one;
            nothing was sent.
        ProtocolError: the server answered with neither a task nor a tool result.
    """
    server = client.server_info.get("name", "")
    if not runs_tools_as_tasks(client):
        declares = (f"the {EXTENSION} extension" if client.stateless.active
                    else "the tasks.requests.tools.call capability")
        raise CapabilityError(f"the server {server!r} runs no tool as a task (it does not declare {declares}): "
                              f"call {name!r} with call_tool()", "tasks")
    params: Dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
    if not client.stateless.active:  # spec 2025-11-25 tasks "Tool-Level Negotiation"
        support = client._task_support(name, timeout)
        if support not in ("optional", "required"):
            raise CapabilityError(f"the server {server!r} does not run {name!r} as a task (its tools/list "
                                  f"entry has execution.taskSupport {support!r}): call it with call_tool()", "tasks")
        params["task"] = {}
    result = client._call("tools/call", params, timeout=timeout)
    task = created(client, result, asked=True)
    if task is None:  # the server ran it at once (2026-07-28: the server's choice, per request)
        return _answered_at_once(client, wire.result("tools/call", result))
    return task
