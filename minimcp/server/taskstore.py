"""Where a server keeps its tasks (the tasks extension, ``io.modelcontextprotocol/tasks``):
the durable record of each one, the store interface, and the in-memory store.

A task's *record* is what ``tasks/get`` shows: its status, timestamps, TTL,
the input requests it waits on, and its result or error once it ends. The
record is all that has to outlive the process: the thread running the tool
and the answers it waits for stay in :mod:`minimcp.server.tasks`. A deployment
with several workers plugs a shared store in here (a database, Redis …) and
routes ``tasks/*`` requests by their ``Mcp-Name`` header (the task id) to the
worker that runs the task, as the extension intends.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

#: The statuses after which a task never changes (extension: "Task Status").
TERMINAL = ("completed", "failed", "cancelled")


def iso(seconds: float) -> str:
    """An ISO 8601 UTC timestamp, to the millisecond: ``2026-07-28T10:30:00.000Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z"


class TaskRecord:
    """One task as ``tasks/get`` shows it (extension ``DetailedTask``).

    Attributes:
        task_id: the unguessable id the client polls with.
        status: ``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``.
        created, updated: seconds since the epoch.
        ttl_ms: how long after ``created`` the task may be dropped (None: kept until evicted).
        input_requests: ``{key: {"method", "params"}}`` while it waits for the client.
        result, error: the tool's ``CallToolResult`` (completed), the JSON-RPC error (failed).
        owner: who created it (the HTTP ``auth`` principal), so no one else can see it.
    """

    __slots__ = ("task_id", "status", "status_message", "created", "updated", "ttl_ms", "poll_interval_ms",
                 "input_requests", "result", "error", "owner")

    def __init__(self, task_id: str, created: float, ttl_ms: Optional[int], poll_interval_ms: int,
                 owner: Any = None) -> None:
        self.task_id: str = task_id
        self.status: str = "working"
        self.status_message: Optional[str] = None
        self.created: float = created
        self.updated: float = created
        self.ttl_ms: Optional[int] = ttl_ms
        self.poll_interval_ms: int = poll_interval_ms
        self.input_requests: Dict[str, Dict[str, Any]] = {}
        self.result: Optional[Dict[str, Any]] = None
        self.error: Optional[Dict[str, Any]] = None
        self.owner: Any = owner  # the principal that created it (compared, never read)

    @property
    def terminal(self) -> bool:
        """True once the task has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """True when the task has ended and its TTL has passed (a running task is never dropped)."""
        return self.terminal and self.ttl_ms is not None and now >= self.created + self.ttl_ms / 1000

    def wire(self) -> Dict[str, Any]:
        """The task on the wire: the ``Task`` fields, plus what its status inlines (extension
        ``DetailedTask``: ``inputRequests`` while waiting, ``result`` or ``error`` at the end)."""
        task: Dict[str, Any] = {"taskId": self.task_id, "status": self.status, "createdAt": iso(self.created),
                                "lastUpdatedAt": iso(self.updated), "ttlMs": self.ttl_ms,
                                "pollIntervalMs": self.poll_interval_ms}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        if self.status == "input_required":
            task["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task

    def __repr__(self) -> str:
        return f"<TaskRecord {self.task_id} {self.status}>"


class TaskStore:
    """The interface a task store implements: save, load, delete records by task id.

    ``save`` must be durable when it returns: the server answers the
    ``CreateTaskResult`` only after it (extension: "durably created").
    """

    def save(self, record: TaskRecord) -> None:
        """Create or replace ``record``."""
        raise NotImplementedError

    def load(self, task_id: str) -> Optional[TaskRecord]:
        """The record of ``task_id``, or None if unknown or expired."""
        raise NotImplementedError

    def delete(self, task_id: str) -> None:
        """Forget ``task_id`` (nothing happens if it is unknown)."""
        raise NotImplementedError


class MemoryTaskStore(TaskStore):
    """The default store: records in this process, bounded, expired ones dropped.

    Args:
        max_tasks: the most records kept; past it the oldest *ended* tasks are
            dropped first (running ones are bounded by the runner's ``max_running``).
        clock: seconds since the epoch (inject one to test expiry without waiting).
    """

    def __init__(self, max_tasks: int = 10000, clock: Callable[[], float] = time.time) -> None:
        self.max_tasks = max_tasks
        self.clock = clock
        self._records: OrderedDict[str, TaskRecord] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._records)

    def save(self, record: TaskRecord) -> None:
        """Keep ``record``, dropping expired records and, when full, the oldest ended ones."""
        with self._lock:
            self._records[record.task_id] = record
            self._purge()

    def load(self, task_id: str) -> Optional[TaskRecord]:
        """The record of ``task_id``, or None if unknown or expired."""
        with self._lock:
            record = self._records.get(task_id)
            if record is not None and record.expired(self.clock()):
                del self._records[task_id]
                return None
            return record

    def delete(self, task_id: str) -> None:
        """Forget ``task_id``."""
        with self._lock:
            self._records.pop(task_id, None)

    def _purge(self) -> None:
        now = self.clock()
        for task_id in [key for key, record in self._records.items() if record.expired(now)]:
            del self._records[task_id]
        if len(self._records) > self.max_tasks:  # oldest ended tasks first
            ended = [key for key, record in self._records.items() if record.terminal]
            for task_id in ended[:len(self._records) - self.max_tasks]:
                del self._records[task_id]
