"""Long-running tool calls as tasks: the tasks extension (``io.modelcontextprotocol/tasks``,
SEP-2663), server side.

A tool declares it may or must run as a task where it is declared
(``@server.tool(task="optional")`` or ``task="required"``). When a 2026-07-28
request opts in (``_meta["io.modelcontextprotocol/clientCapabilities"].extensions``
names the extension), ``tools/call`` answers at once with a ``CreateTaskResult``
(``resultType: "task"``) and the tool runs on the runner's threads. The client
then polls ``tasks/get`` (which inlines the result or error once it ends),
answers input requests with ``tasks/update``, and may ``tasks/cancel``.

The tool does not change to become a task: ``ctx.elicit()`` / ``ctx.sample()``
/ ``ctx.list_roots()`` park the task in ``input_required`` and block the
tool's thread until ``tasks/update`` brings the answer; ``ctx.cancelled`` is
set by ``tasks/cancel``; ``ctx.report_progress()`` becomes the task's
``statusMessage``. A block of questions (``with ctx.inputs():``) is asked at
once and the tool is run again with the answers, as in a multi round-trip request.

A tool that asks its questions *before* the task exists (over multi
round-trip requests, as the extension recommends) is registered with
``task="required"`` (or ``"optional"``) and :func:`starts_task_later`, and calls
``ctx.start_task()`` once it has its answers.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, List, Optional, Tuple, Union, cast

from ..engine.threads import join, start_thread
from ..errors import BackendUnavailable, CapabilityError, RPCError
from ..logs import get_logger, reference
from ..protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    Request,
)
from ..protocol.stateless import TASKS_EXTENSION, InputRequired, RequestMeta
from ..protocol.versions import STATELESS_VERSION
from .connection import MAX_DEPTH, too_deep
from .context import Context, StartTask, _fits
from .taskstore import MemoryTaskStore, TaskRecord, TaskStore, owner_key
from .tools import RequestFailed

if TYPE_CHECKING:
    from logging import Logger

    from .backend import Backend

log: Logger = get_logger(__name__)

EXTENSION = TASKS_EXTENSION


def opted_in(ctx: Any) -> bool:
    """Did this request declare the tasks extension in its own capabilities?"""
    meta = ctx.meta
    extensions = meta.capabilities.get("extensions") if meta is not None else None
    return type(extensions) is dict and EXTENSION in extensions


def missing_extension() -> RPCError:
    """The -32021 error for a request that needs the tasks extension but did not declare it."""
    return RPCError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Missing required client capability: the {EXTENSION} extension (declare it in "
                    f"_meta clientCapabilities.extensions)", {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def starts_task_later(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a task tool that asks its questions first, synchronously, and becomes a task only
    when it calls ``ctx.start_task()`` (a plain result if it returns without calling it)."""
    fn.__minimcp_task_later__ = True  # type: ignore[attr-defined]
    return fn


class TaskContext(Context):
    """The ``ctx`` of a tool run as a task: the same calls, served through the task."""

    __slots__ = ("task", "runner", "waiting")

    def __init__(self, ctx: Context, runner: TaskRunner, record: TaskRecord) -> None:
        super().__init__(ctx.session, Request(ctx.request_id, ctx.method, ctx.params), None)  # the creating request's parts
        self.meta: Optional[RequestMeta] = ctx.meta
        self.answers: Dict[str, Any] = dict(ctx.answers)
        self.task: TaskRecord = record
        self.runner: TaskRunner = runner
        self._cancelled = threading.Event()
        #: key -> the request still unanswered (its answer lands in ``answers``)
        self.waiting: Dict[str, Dict[str, Any]] = {}

    def start_task(self) -> None:
        """Already a task: nothing to do."""

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """A task has no request to carry log notifications: the server's own log gets them."""
        log.info("task %s: [%s] %s", self.task.task_id, level, data)

    def report_progress(self, progress: float, total: Optional[float] = None,
                        message: Optional[str] = None) -> None:
        """Progress becomes the task's ``statusMessage`` (``"3/10 copying"``)."""
        text = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        self.runner._status_message(self, f"{text} {message}" if message else text)

    def _ask(self, method: str, params: Optional[Dict[str, Any]], key: Optional[str], timeout: Optional[float]) -> Any:
        """Ask the client through the task: park it in ``input_required`` until ``tasks/update``."""
        self._asks += 1
        key = key or f"{method.split('/')[0]}-{self._asks}"
        if key in self.answers and _fits(method, self.answers[key]):
            return self.answers[key]
        self._asked[key] = {"method": method, "params": params or {}}
        self.runner._ask(self, key, self._asked[key])
        if self._batching:
            return None
        return self.runner._wait(self, timeout)[key]


class TaskRunner:
    """Runs tasks on threads of its own and keeps their records in a :class:`TaskStore`.

    With a shared store (a backend such as :class:`~minimcp.server.redis_backend.RedisBackend`),
    any worker answers ``tasks/*``: the one running a task holds a lease on it, renewed every
    third of the backend's ``lease``, and takes the answers and cancels other workers hand it
    (woken by the bus, and on its own at each renewal, since the bus may lose a message); a task
    whose lease has passed is reported ``failed`` by whichever worker is asked.

    Args:
        store: where records live (default: a :class:`MemoryTaskStore`; ``Server(backend=...)``
            makes it the server's backend).
        ttl_ms: how long an ended task stays readable after its creation.
        poll_interval_ms: the polling interval suggested to clients.
        max_running: the most tools running at once; more tasks wait their turn, as ``working``.
        clock: seconds since the epoch (inject one to test TTLs).
    """

    def __init__(self, store: Optional[TaskStore] = None, *, ttl_ms: Optional[int] = 3600000,
                 poll_interval_ms: int = 100, max_running: int = 16, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.store: Union[TaskStore, MemoryTaskStore] = store if store is not None else MemoryTaskStore(clock=clock)
        #: The store again when other workers share it (a :class:`~minimcp.server.backend.Backend`), else None.
        self.shared: Optional[Backend] = cast("Backend", store) if store is not None and store.shared else None
        self.ttl_ms: Optional[int] = ttl_ms
        self.poll_interval_ms: int = poll_interval_ms
        self.max_running = max_running
        self._live: Dict[str, TaskContext] = {}  # task id -> the context of a task not yet ended
        self._queue: Deque[Any] = deque()
        self._threads: List[Any] = []
        self._lock = threading.Condition()
        self._closed = False
        self._lease_thread: Any = None
        self._lease_stop = threading.Event()
        self._fallback_said = False  # "optional" tools run without a task while the store is away: logged once
        #: task id -> a record whose last save failed (a shared store away): saved again at each renewal
        self._unsaved: Dict[str, TaskRecord] = {}
        #: task id -> (its overdue lease_until, when this worker first saw it overdue): see _check_lease
        self._suspects: Dict[str, Tuple[float, float]] = {}

    # -- creating and running ---------------------------------------------------------------------

    def start(self, tool: Any, arguments: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Create a task for ``tool(arguments)``, saved before this returns, and queue it; return the
        ``CreateTaskResult``."""
        import secrets  # late: only a server that starts tasks pays for it

        # 144 random bits: the id is all a client needs to read the task (with no auth, nothing else).
        record = TaskRecord(secrets.token_urlsafe(18), self.clock(), self.ttl_ms, self.poll_interval_ms,
                            owner=owner_key(ctx.principal))
        shared = self.shared
        if shared is not None:
            record.worker, record.lease_until = shared.worker_id, record.created + shared.lease
        task_ctx = TaskContext(ctx, self, record)
        created = dict(record.wire(), resultType="task")
        if self._closed:
            raise _shutting_down()
        self.store.save(record.copy() if shared is not None else record)  # durable before the answer
        with self._lock:  # (extension: "Task Creation")
            if self._closed:
                raise _shutting_down()
            self._live[record.task_id] = task_ctx
            # The request's context variables go with the task (a trace's current span: the
            # tool's own spans are children of the tools/call that made the task).
            self._queue.append((tool, arguments, task_ctx, contextvars.copy_context()))
            self._threads = [thread for thread in self._threads if thread.is_alive()]
            if len(self._threads) < self.max_running:
                self._threads.append(start_thread(self._work, "task"))
            if shared is not None:
                self._renewing()
        return created

    def _renewing(self) -> None:
        """Have the lease thread run (under the lock): a task runs here, or a record waits to be saved."""
        if self._lease_thread is None or not self._lease_thread.is_alive():
            self._lease_stop.clear()
            self._lease_thread = start_thread(self._renew, "task-lease")

    def fallback(self, exc: RPCError) -> None:
        """Say (once) that an ``optional`` task tool runs without a task because the store is away."""
        if not self._fallback_said:
            self._fallback_said = True
            log.warning("tasks: %s; tools with task=\"optional\" run without a task until it answers", exc.message)

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                tool, arguments, ctx, variables = self._queue.popleft()
            try:
                variables.run(self._run, tool, arguments, ctx)
            except Exception:  # (the runner's own bug: the queued tasks behind it still run)
                log.exception("task %s: the runner failed", ctx.task.task_id)

    def _run(self, tool: Any, arguments: Dict[str, Any], ctx: TaskContext) -> None:
        outcome: Dict[str, Any] = {}
        try:
            while not ctx.is_cancelled:
                try:
                    outcome = {"result": tool.call(arguments, ctx, STATELESS_VERSION)}
                    break
                except InputRequired:  # a block of questions: wait for all, then run again
                    self._wait(ctx, None)
                    ctx._asks, ctx._asked = 0, {}
        except RequestFailed as exc:
            outcome = {"error": exc.to_error()}
        except CapabilityError as exc:
            outcome = {"error": {"code": MISSING_REQUIRED_CLIENT_CAPABILITY, "message": str(exc),
                                 "data": {"requiredCapabilities": {exc.capability: {}}}}}
        except _Cancelled:
            pass
        except Exception:  # the runner's own failure: the task fails, the server lives on
            # Its text may name what the client must not see (CWE-209): a reference instead,
            # the same one in the log line with the traceback (as server/methods.py does).
            ref = reference()
            log.exception("task %s failed (ref %s)", ctx.task.task_id, ref)
            outcome = {"error": {"code": INTERNAL_ERROR, "message": f"Internal error (ref {ref}): see the server's log"}}
        self._end(ctx, outcome)

    def _end(self, ctx: TaskContext, outcome: Dict[str, Any]) -> None:
        record = ctx.task
        with self._lock:
            ended_here = not record.terminal  # (else cancelled meanwhile: what the tool returned is dropped)
            if ended_here:
                if "result" in outcome:
                    record.status, record.result = "completed", outcome["result"]
                elif "error" in outcome:
                    record.status, record.error = "failed", outcome["error"]
                    record.status_message = outcome["error"].get("message")
                else:
                    record.status = "cancelled"
                record.input_requests, record.updated = {}, self.clock()
        if ended_here:
            self._changed(record, quiet=True)
        with self._lock:  # (live until saved: until then this worker answers for it from memory)
            self._live.pop(record.task_id, None)

    # -- input requests ---------------------------------------------------------------------------------

    def _ask(self, ctx: TaskContext, key: str, request: Dict[str, Any]) -> None:
        with self._lock:
            ctx.waiting[key] = request
            record = ctx.task
            if record.terminal:
                raise _Cancelled()
            record.input_requests = dict(ctx.waiting)
            if not ctx._batching:
                record.status = "input_required"
            record.updated = self.clock()
        self._changed(record, quiet=True)

    def _wait(self, ctx: TaskContext, timeout: Optional[float]) -> Dict[str, Any]:
        """Show every unanswered question and wait until all are answered (or the task is cancelled)."""
        record = ctx.task
        with self._lock:
            if ctx.waiting and record.status == "working":
                record.status, record.input_requests, record.updated = "input_required", dict(ctx.waiting), self.clock()
                changed = True
            else:
                changed = False
        if changed:
            self._changed(record, quiet=True)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while ctx.waiting and not ctx.is_cancelled:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"no answer to {sorted(ctx.waiting)} within {timeout}s")
                self._lock.wait(left)
            if ctx.is_cancelled:
                raise _Cancelled()
            return ctx.answers

    # -- the methods ---------------------------------------------------------------------------------

    def _record(self, params: Dict[str, Any], ctx: Any) -> TaskRecord:
        if not opted_in(ctx):
            raise missing_extension()
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise RPCError(INVALID_PARAMS, 'Invalid params: "taskId" (a string) is required')
        live = self._live.get(task_id)
        record = live.task if live is not None else self.store.load(task_id)
        if record is None or record.owner != owner_key(ctx.principal):
            raise RPCError(INVALID_PARAMS, f"Invalid params: no task {task_id!r} (unknown, or expired after its "
                                           f"ttlMs); start the call again")
        if live is None and self.shared is not None and not record.terminal and record.lease_until is not None:
            record = self._check_lease(record, self.shared)
        return record

    def _check_lease(self, record: TaskRecord, shared: Backend) -> TaskRecord:
        """``record`` (running on another worker) if its lease holds, else failed.

        A lease overdue is a suspicion, not a death: the worker running the task may have been
        cut off from Redis as everyone was (an outage, a failover), and needs a moment to renew
        after it. The task fails only when the same overdue lease is seen again a whole lease
        later, by a worker Redis has answered all that time (clocks of two machines may differ
        a little: a third of a lease is allowed for it).
        """
        now, lease_until = time.monotonic(), cast(float, record.lease_until)
        with self._lock:
            if self.clock() <= lease_until + shared.lease / 3:
                self._suspects.pop(record.task_id, None)
                return record
            seen = self._suspects.get(record.task_id)
            if seen is None or seen[0] != lease_until:
                if len(self._suspects) >= 10000:  # bounded: the oldest suspicion goes first
                    self._suspects.pop(next(iter(self._suspects)))
                self._suspects[record.task_id] = (lease_until, now)
                return record
            if now - seen[1] < shared.lease or shared.steady_for() < shared.lease:
                return record
            del self._suspects[record.task_id]
        return self._lapsed(record)

    def _lapsed(self, record: TaskRecord) -> TaskRecord:
        """The worker running ``record`` stopped renewing its lease: the task has failed."""
        # Which worker it was is the server's business (its log), not the client's (CWE-209).
        log.warning("task %s: its worker %s stopped renewing its lease: the task failed", record.task_id,
                    record.worker)
        record.status, record.input_requests, record.updated = "failed", {}, self.clock()
        record.status_message = "the server worker running this task stopped (its lease ran out)"
        record.error = {"code": INTERNAL_ERROR, "message": f"Internal error: {record.status_message}; start the "
                                                            f"call again"}
        return self._changed(record)

    def get(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """Answer ``tasks/get``: the task, its result or error inlined once it ended."""
        record = self._record(params, ctx)
        with self._lock:
            return record.wire()

    def update(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """Answer ``tasks/update``: hand the answers to the questions the task waits on.

        Keys not outstanding are ignored (extension: "Task Update Requests");
        a malformed answer to an outstanding key is -32602 and the question stays open.
        """
        record = self._record(params, ctx)
        responses = params.get("inputResponses")
        if type(responses) is not dict:
            raise RPCError(INVALID_PARAMS, 'Invalid params: "inputResponses" must be an object of answers by key')
        elsewhere: Dict[str, Any] = {}
        with self._lock:
            live = self._live.get(record.task_id)
            if live is None and self.shared is not None and not record.terminal:
                waiting = record.input_requests  # as the worker running it last saved them
            else:
                waiting = live.waiting if live is not None else {}
            for key, answer in responses.items():
                if key in waiting and not _fits(waiting[key]["method"], answer):
                    raise RPCError(INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}] is not a result of "
                                                   f"{waiting[key]['method']}; nothing was taken, answer again")
            answered = [key for key in responses if key in waiting]
            if live is None:
                elsewhere = {key: responses[key] for key in answered}
            else:
                for key in answered:
                    live.answers[key] = responses[key]
                    del waiting[key]
                if answered and not record.terminal:
                    record.input_requests = dict(waiting)
                    if not waiting:
                        record.status = "working"
                    record.updated = self.clock()
                    self._lock.notify_all()
        if elsewhere and self.shared is not None:  # it runs on another worker: to its inbox, then a wake-up
            self.shared.post(record.task_id, {"inputResponses": elsewhere})  # (Redis outside the lock)
            self.shared.publish({"kind": "task", "taskId": record.task_id})
        elif live is not None and answered:
            self._changed(record)
        return {}

    def cancel(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """Answer ``tasks/cancel``: a running task ends ``cancelled`` now and its tool sees
        ``ctx.cancelled``; an ended task stays as it is (idempotent)."""
        record = self._record(params, ctx)
        with self._lock:
            live = self._live.get(record.task_id)
            if record.terminal:
                return {}
            record.status, record.input_requests, record.updated = "cancelled", {}, self.clock()
            record.status_message = "cancelled by the client"
            if live is not None:
                live.cancelled.set()
            self._lock.notify_all()
        self._changed(record)
        return {}

    # -- telling listeners, ending --------------------------------------------------------------------

    def _status_message(self, ctx: TaskContext, message: str) -> None:
        with self._lock:
            if ctx.task.terminal:
                return
            ctx.task.status_message, ctx.task.updated = message, self.clock()
        self._changed(ctx.task)

    def _changed(self, record: TaskRecord, quiet: bool = False, tell: bool = True) -> TaskRecord:
        """Save the record, and tell those listening for this task (``notifications/tasks``), here
        and on the other workers; return it as saved (the stored one, if that had ended).

        With a shared store each save is a numbered snapshot taken under the lock (the store
        drops one older than it holds). A save that fails is tried again at every lease renewal;
        ``quiet`` (a task's own thread) goes on as if it had worked, so that a store away for a
        moment costs the tool nothing, else the error is raised (the request needed the store).
        """
        shared = self.shared
        with self._lock:
            if shared is not None:
                record.version += 1
                snapshot = record.copy()
            else:
                snapshot = record
        try:
            kept = self.store.save(snapshot)
        except RPCError:
            with self._lock:
                self._unsaved[record.task_id] = record
                if shared is not None:
                    self._renewing()
            if quiet:
                return record
            raise
        with self._lock:
            if self._unsaved.get(record.task_id) is record and record.version <= snapshot.version:
                del self._unsaved[record.task_id]
        if kept is not None:  # ended elsewhere (cancelled, or failed after its lease): that stands
            self._adopt(record, kept)
        if tell:
            with self._lock:
                wire = record.wire()
            self._tell(record.task_id, wire)
            if shared is not None:  # (the status only: a worker whose listeners want it reads the record)
                shared.publish({"kind": "task", "taskId": record.task_id, "status": record.status})
        return record

    def _tell(self, task_id: str, wire: Dict[str, Any]) -> None:
        for subscription in list(self.subscriptions):
            if subscription.wants("notifications/tasks", task_id):
                subscription.send("notifications/tasks", wire)

    def _adopt(self, record: TaskRecord, kept: TaskRecord) -> None:
        """Take the stored, ended status over the local one, and stop the tool if it runs here."""
        with self._lock:
            for name in ("status", "status_message", "updated", "result", "error"):
                setattr(record, name, getattr(kept, name))
            record.input_requests = {}
            live = self._live.get(record.task_id)
            if live is not None:
                live.cancelled.set()
            self._lock.notify_all()

    # -- across workers (a shared store) ------------------------------------------------------------------

    def heard(self, message: Dict[str, Any]) -> None:
        """A bus message about a task (from another worker): tell the local listeners that want it
        the task as stored, and if the task runs here, reconcile it (its inbox, or its record
        cancelled). Nothing of the message but the task id is trusted."""
        task_id = message["taskId"]
        try:
            if self.shared is not None and any(subscription.wants("notifications/tasks", task_id)
                                               for subscription in list(self.subscriptions)):
                record = self.shared.load(task_id)
                if record is not None:
                    self._tell(task_id, record.wire())
            if task_id in self._live:
                self._reconcile(task_id)
        except RPCError as exc:  # the store is away: the renewals reconcile later
            log.debug("task %s: not reconciled now: %s", task_id, exc.message)

    def _reconcile(self, task_id: str) -> None:
        """Apply what other workers left for a task running here: answers from its inbox, and an
        ended record (cancelled) over the running one."""
        live = self._live.get(task_id)
        if live is None or self.shared is None:
            return
        stored = self.shared.load(task_id)
        if stored is not None and stored.terminal and not live.task.terminal:
            self._adopt(live.task, stored)
            return
        messages = self.shared.take(task_id)
        answered = False
        with self._lock:
            for message in messages:
                responses = message.get("inputResponses")
                if type(responses) is not dict:
                    continue
                for key, answer in responses.items():
                    if key in live.waiting and _fits(live.waiting[key]["method"], answer):
                        live.answers[key] = answer
                        del live.waiting[key]
                        answered = True
            record = live.task
            if answered and not record.terminal:
                record.input_requests = dict(live.waiting)
                if not live.waiting:
                    record.status = "working"
                record.updated = self.clock()
                self._lock.notify_all()
        if answered:
            self._changed(record, quiet=True)

    def _renew(self) -> None:
        """Every third of a lease: renew the lease of every task running here and reconcile each
        (pub/sub is at-most-once: a wake-up lost on the bus is made up for here), and save again
        what a store away could not take. Ends when there is nothing of either."""
        store = self.shared
        assert store is not None  # started only for a shared store
        while not self._lease_stop.wait(store.lease / 3):
            with self._lock:
                running = [ctx.task for ctx in self._live.values() if not ctx.task.terminal]
                unsaved = [record for record in self._unsaved.values() if record.task_id not in self._live
                           or record.terminal]
                if not running and not unsaved and not self._live:
                    self._lease_thread = None
                    return
                for record in running:
                    record.lease_until = self.clock() + store.lease
            for record in running + unsaved:
                try:
                    self._changed(record, tell=record.terminal)
                    if record.task_id in self._live and not record.terminal:
                        self._reconcile(record.task_id)
                except RPCError as exc:  # the store is away: at the next renewal, then
                    log.warning("task %s: not saved (lease renewal): %s", record.task_id, exc.message)

    subscriptions: Any = ()  # set by runner_for(): the server's open listen requests

    def close(self, timeout: float = 5.0) -> None:
        """Cancel every running task and join the threads (a later task starts new ones)."""
        with self._lock:
            self._closed = True
            ended = [ctx.task for ctx in self._live.values()]
            for ctx in self._live.values():
                ctx.task.status, ctx.task.status_message = "cancelled", "the server shut down"
                ctx.cancelled.set()
            self._queue.clear()
            self._lock.notify_all()
            threads, self._threads = self._threads, []
        deadline = time.monotonic() + timeout
        try:
            for record in ended:  # best effort, within the deadline: a store away must not hold the shutdown
                if time.monotonic() > deadline:
                    break
                try:
                    self._changed(record, tell=False)
                except RPCError as exc:
                    log.warning("task %s: its end not saved at shutdown: %s", record.task_id, exc.message)
        finally:
            self._lease_stop.set()
            for thread in [*threads, self._lease_thread]:
                join(thread, max(0.0, deadline - time.monotonic()))
            with self._lock:
                self._closed = False


def _shutting_down() -> RPCError:
    return RPCError(INTERNAL_ERROR, "Internal error: the server is shutting down; try again later")


class _Cancelled(Exception):
    """The task was cancelled while its tool waited for an answer."""


def runner_for(server: Any) -> TaskRunner:
    """The server's task runner (``server.tasks``), made with the defaults on first use; set
    ``server.tasks = TaskRunner(...)`` before serving to choose the store, TTL or limits."""
    runner: Optional[TaskRunner] = server.__dict__.get("tasks")
    if runner is None:
        runner = server.__dict__.setdefault("tasks", TaskRunner(getattr(server, "backend", None)))
    if runner.subscriptions is not server.subscriptions:
        runner.subscriptions = server.subscriptions
        if runner.shared is not None:
            server._audience.on_task = runner.heard
    if runner.shared is not None:
        server._audience.hear()
    return runner


def close(server: Any) -> None:
    """Close the server's task runner, if it has one (its running tasks end cancelled), and stop
    its backend's threads (a later use starts them again)."""
    runner = server.__dict__.get("tasks")
    try:
        if runner is not None:
            runner.close()
    finally:
        backend = getattr(server, "backend", None)
        if backend is not None:
            backend.close()


def listen_task_ids(server: Any, task_ids: List[Any], ctx: Any) -> List[Any]:
    """The task ids a ``subscriptions/listen`` request will hear ``notifications/tasks`` about:
    those it may see (-32021 if it did not declare the extension)."""
    if not opted_in(ctx):
        raise missing_extension()
    store, owner, visible = runner_for(server).store, owner_key(ctx.principal), []
    for task_id in task_ids:
        record = store.load(task_id)
        if record is not None and record.owner == owner:
            visible.append(task_id)
    return visible


# -- the methods, as rows of server.methods.METHODS --------------------------------------------------


def _plain_call(connection: Any, params: Dict[str, Any], ctx: Context, tool: Any) -> Dict[str, Any]:
    # The usual tools/call, no task: the tool passed on, so that it runs here (and is looked up once).
    result: Dict[str, Any] = connection.call_tool(params, ctx, tool)
    return result


def call_tool(connection: Any, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
    """Answer ``tools/call``: as a task when the tool supports it and the request opted in;
    -32021 for a tool that requires a task from a request that did not; else as usual."""
    tool = connection.server.get_tool(params.get("name"))
    support = getattr(tool, "task", None)
    if support is None or ctx.meta is None:
        return _plain_call(connection, params, ctx, tool)
    if not opted_in(ctx):
        if support == "required":
            raise missing_extension()
        return _plain_call(connection, params, ctx, tool)
    arguments = params.get("arguments")
    if arguments is not None and type(arguments) is not dict:
        raise RPCError(INVALID_PARAMS, 'tools/call "arguments" must be an object')
    if too_deep(arguments or {}, MAX_DEPTH):
        raise RPCError(INVALID_PARAMS, f'Invalid params: tools/call "arguments" nest deeper than {MAX_DEPTH} levels')
    if getattr(tool.fn, "__minimcp_task_later__", False):
        try:
            return _plain_call(connection, params, ctx, tool)  # a plain result if it never starts the task
        except StartTask:
            pass
    runner = runner_for(connection.server)
    try:
        return runner.start(tool, arguments or {}, ctx)
    except BackendUnavailable as exc:  # task creation is the server's choice per request (extension)
        if support == "required" or getattr(tool.fn, "__minimcp_task_later__", False):
            raise  # (a tool that asks first becomes a task in its call: run plain, it would ask for ever)
        runner.fallback(exc)
        return _plain_call(connection, params, ctx, tool)


def tasks_get(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``tasks/get``."""
    return runner_for(connection.server).get(params, ctx)


def tasks_update(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``tasks/update``."""
    return runner_for(connection.server).update(params, ctx)


def tasks_cancel(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``tasks/cancel``."""
    return runner_for(connection.server).cancel(params, ctx)


def removed(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """``tasks/result`` and ``tasks/list`` (2025-11-25 tasks) are not part of the extension: -32601."""
    raise RPCError(METHOD_NOT_FOUND, f"Method not found: {ctx.method} (the {EXTENSION} extension has none: "
                                     f"tasks/get inlines the result, and tasks are not listed)")
