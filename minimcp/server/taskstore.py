"""Where a server keeps its tasks (the tasks extension, ``io.modelcontextprotocol/tasks``):
the durable record of each one, the store interface, and the in-memory store.

A task's *record* is what ``tasks/get`` shows: its status, timestamps, TTL,
the input requests it waits on, and its result or error once it ends. The
record is all that has to outlive the process: the thread running the tool
and the answers it waits for stay in :mod:`minimcp.server.tasks`. A deployment
with several workers shares its records through a backend
(:mod:`minimcp.server.backend`, :class:`~minimcp.server.redis_backend.RedisBackend`),
which is a store with task control and a notification bus added.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional, Union

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
        owner: who created it, as :func:`owner_key` writes the HTTP ``auth`` principal, so
            that no one else can see it.
        worker, lease_until: with a shared backend, the worker running it and the time (seconds
            since the epoch) until which that worker vouches for it; past it, the task is failed.
        version: how many times it was saved: a store drops a snapshot of a running task older
            than the one it holds (they may arrive out of order from the threads of one worker).
    """

    __slots__ = ("task_id", "status", "status_message", "created", "updated", "ttl_ms", "poll_interval_ms",
                 "input_requests", "result", "error", "owner", "worker", "lease_until", "version")

    def __init__(self, task_id: str, created: float, ttl_ms: Optional[int], poll_interval_ms: int,
                 owner: Optional[str] = None) -> None:
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
        self.owner: Optional[str] = owner  # owner_key() of the principal that created it (compared, never shown)
        self.worker: Optional[str] = None
        self.lease_until: Optional[float] = None
        self.version: int = 0

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

    def copy(self) -> TaskRecord:
        """A snapshot of this record (what a save sends, taken while no one changes it)."""
        twin = TaskRecord.__new__(TaskRecord)
        for name in self.__slots__:
            setattr(twin, name, getattr(self, name))
        return twin

    def to_json(self) -> str:
        """The whole record as JSON text, for a store outside this process (:meth:`from_json` reads it)."""
        return json.dumps({name: getattr(self, name) for name in self.__slots__}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> TaskRecord:
        """The record :meth:`to_json` wrote."""
        fields = json.loads(text)
        record = cls(fields["task_id"], fields["created"], fields["ttl_ms"], fields["poll_interval_ms"])
        for name in cls.__slots__:
            setattr(record, name, fields.get(name))
        record.input_requests = record.input_requests or {}
        record.version = record.version or 0
        return record

    def __repr__(self) -> str:
        return f"<TaskRecord {self.task_id} {self.status}>"


def owner_key(principal: Any) -> Optional[str]:
    """The stable key a task's owner is stored and compared as, the same on every worker.

    A verified token's :class:`~minimcp.server.auth.protection.Principal` (anything with a
    ``subject``) is its issuer and subject, so a refreshed token of the same user is the same
    owner; a string is itself; any other principal an ``auth`` hook returns is its ``str()``,
    which must then name the caller uniquely (an object without a ``__str__`` of its own has
    none that lasts: it is refused). Each kind is tagged, so no two kinds can collide.

    Raises:
        TypeError: the principal has no stable name (give its class a ``__str__``).
    """
    if principal is None:
        return None
    subject = getattr(principal, "subject", None)
    if isinstance(subject, str):
        return json.dumps(["token", getattr(principal, "issuer", None) or "", subject])
    if not isinstance(principal, str) and getattr(type(principal), "__str__", None) is object.__str__:
        raise TypeError(f"a task's owner must have a stable name: {type(principal).__name__} (the auth hook's "
                        f"principal) has no __str__ of its own; give it one that names the caller, or a subject")
    return json.dumps(["name", str(principal)])


class TaskStore:
    """The interface a task store implements: save, load, delete records by task id.

    ``save`` must be durable when it returns: the server answers the
    ``CreateTaskResult`` only after it (extension: "durably created"). It never
    replaces a record that has ended: a task cancelled on one worker stays
    cancelled when the worker running it finishes (extension: "Task Status":
    terminal statuses do not change).
    """

    #: True when other processes see the same records (a backend shared by several workers).
    shared: bool = False

    def save(self, record: TaskRecord) -> Optional[TaskRecord]:
        """Create or replace ``record``, unless the stored one has ended: then keep it and return it."""
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

    def save(self, record: TaskRecord) -> Optional[TaskRecord]:
        """Keep ``record`` (unless the stored one has ended: that one is returned; or a running
        one's snapshot is older than the stored one: it is dropped), dropping expired records and,
        when full, the oldest ended ones."""
        with self._lock:
            kept = self._records.get(record.task_id)
            if kept is not None and kept is not record:
                if kept.terminal:
                    return kept
                if not record.terminal and kept.version > record.version:
                    return None
            self._records[record.task_id] = record
            self._purge()
        return None

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
