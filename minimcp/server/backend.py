"""What the workers of one deployment share: task records, task control, and a notification bus.

One process needs none of it: :class:`MemoryBackend`, the default, keeps
everything in this process. Several workers (gunicorn processes, machines
behind a load balancer) share a :class:`Backend` such as
:class:`~minimcp.server.redis_backend.RedisBackend`, given once as
``Server(backend=...)``. It carries:

- **task records** (:class:`~minimcp.server.taskstore.TaskStore`'s ``save``,
  ``load``, ``delete``): any worker answers ``tasks/get``;
- **task control** (``post``, ``take``): a ``tasks/update`` answered on another
  worker is posted to the task's inbox, which the worker running the task takes
  (a ``tasks/cancel`` is the record saved as ``cancelled``, which no later save
  overwrites);
- **a notification bus** (``publish``, ``listen``): list changes, resource
  updates and task status reach the listeners of every worker, and a wake-up tells
  the worker running a task that its inbox or record changed.

A bus is at-most-once (a worker may miss a message while disconnected), so the
worker running a task also reconciles on its own every third of a lease, and a
bus that reconnects delivers ``{"kind": "resync"}`` so that local listeners are
told to fetch their lists again. Writing a backend for another engine (PostgreSQL
with ``LISTEN``/``NOTIFY``, say) is implementing the methods below.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List

from .taskstore import MemoryTaskStore, TaskStore

#: What ``listen()`` hands each message to.
Deliver = Callable[[Dict[str, Any]], None]


class Backend(TaskStore):
    """The interface a backend implements: a :class:`~minimcp.server.taskstore.TaskStore`, task
    control and a bus. Every method may raise :class:`~minimcp.errors.BackendUnavailable` (a
    -32603 naming the engine) when the engine cannot be reached within its bounds.

    Attributes:
        lease: seconds a worker vouches for a task it runs; it renews every third of it, and a
            task whose lease has passed is reported ``failed`` by whichever worker is asked.
        worker_id: this worker's name in records and on the bus (unique per process).
    """

    lease: float = 10.0
    worker_id: str = ""

    def post(self, task_id: str, message: Dict[str, Any]) -> None:
        """Add ``message`` (``{"inputResponses": {...}}``) to the task's inbox, durably."""
        raise NotImplementedError

    def take(self, task_id: str) -> List[Dict[str, Any]]:
        """Remove and return the messages in the task's inbox, oldest first."""
        raise NotImplementedError

    def publish(self, message: Dict[str, Any]) -> None:
        """Send ``message`` (a JSON object) to the other workers' ``listen`` callbacks.

        It must not block a request on a slow engine: a backend queues what it cannot
        send at once. The worker that publishes delivers to its own listeners itself.
        """
        raise NotImplementedError

    def listen(self, deliver: Deliver) -> None:
        """Call ``deliver(message)`` for every message another worker publishes, from a thread
        of the backend's, until :meth:`close`; ``{"kind": "resync"}`` after a reconnection."""
        raise NotImplementedError

    def steady_for(self) -> float:
        """Seconds the engine has answered this process without a failure. A worker reports
        another's task ``failed`` for a lapsed lease only after a whole lease of this: after an
        outage, the worker running the task needs that long to renew it."""
        return float("inf")

    def close(self) -> None:
        """Stop listening and release connections; threads started here are joined."""


class MemoryBackend(MemoryTaskStore, Backend):
    """The default: one process, nothing shared, nothing to publish (every listener is local).

    Args: as :class:`~minimcp.server.taskstore.MemoryTaskStore`.
    """

    def __init__(self, max_tasks: int = 10000, clock: Callable[[], float] = time.time) -> None:
        super().__init__(max_tasks, clock)
        self._inbox: Dict[str, List[Dict[str, Any]]] = {}
        self._inbox_lock = threading.Lock()

    def post(self, task_id: str, message: Dict[str, Any]) -> None:
        """Add ``message`` to the task's inbox."""
        with self._inbox_lock:
            self._inbox.setdefault(task_id, []).append(message)

    def take(self, task_id: str) -> List[Dict[str, Any]]:
        """Remove and return the task's inbox."""
        with self._inbox_lock:
            return self._inbox.pop(task_id, [])

    def publish(self, message: Dict[str, Any]) -> None:
        """Nothing to do: every listener is in this process, and has been told."""

    def listen(self, deliver: Deliver) -> None:
        """Nothing to do: no other worker publishes."""
