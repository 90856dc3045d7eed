"""Who hears about changes: the connections a server tracks, the 2026-07-28 listeners, and
the other workers, through the server's backend.

A server tells its clients when a list changes (``notifications/tools/list_changed``
…) and when a subscribed resource is updated (``notifications/resources/updated``).
Handshake-era clients hear it on their connection (for updates, only if they
subscribed to that URI); 2026-07-28 clients hear it on an open
``subscriptions/listen`` request, if its filters ask for it (spec 2026-07-28
basic/patterns/subscriptions). With a shared backend, a change made on one worker
is published on the bus and told to the listeners of every other worker too.
"""

from __future__ import annotations

import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Dict, List, Optional, Set

    from .backend import Backend
    from .connection import ServerConnection

UPDATED = "notifications/resources/updated"
#: The list changes a bus may carry; after a reconnection, all of them (the lists may have changed).
LISTS = ("notifications/tools/list_changed", "notifications/resources/list_changed",
         "notifications/prompts/list_changed")
_CAPABILITY = dict(zip(LISTS, ("tools", "resources", "prompts")))


class Audience:
    """The connections and listen requests a server's notifications go to.

    Args:
        backend: the server's backend; a shared one carries changes to the other workers.
    """

    def __init__(self, backend: Optional[Backend] = None) -> None:
        #: The open 2026-07-28 ``subscriptions/listen`` requests, of every connection.
        self.subscriptions: Set[Any] = set()
        #: Where bus messages about tasks go (set by the task runner, when there is one).
        self.on_task: Optional[Callable[[Dict[str, Any]], None]] = None
        self._backend = backend if backend is not None and backend.shared else None
        self._connections: List[ServerConnection] = []
        self._lock = threading.Lock()

    def add(self, connection: ServerConnection) -> ServerConnection:
        """Track a connection (and forget those that have closed)."""
        self.hear()
        with self._lock:
            self._connections = [c for c in self._connections if not c.session.closed]
            self._connections.append(connection)
        return connection

    def connections(self) -> List[ServerConnection]:
        """The tracked connections that are still open."""
        with self._lock:
            return [c for c in self._connections if not c.session.closed]

    def hear(self) -> None:
        """Listen to the other workers (a shared backend's bus), once per process; else nothing."""
        if self._backend is not None:
            self._backend.listen(self.heard)

    def changed(self, method: str) -> None:
        """Send a ``list_changed`` notification to every connection and every listener that asked,
        here and, through a shared backend, on every other worker."""
        self._tell_changed(method)
        if self._backend is not None:
            self._backend.publish({"kind": "changed", "method": method})

    def updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to those subscribed to ``uri``, on every worker."""
        self._tell_updated(uri)
        if self._backend is not None:
            self._backend.publish({"kind": "updated", "uri": uri})

    def heard(self, message: Dict[str, Any]) -> None:
        """Tell this worker's listeners what another worker published (the bus's callback).

        Anything not understood is dropped: a bus message never becomes a notification of a
        method or shape this server would not send itself.
        """
        kind = message.get("kind")
        if kind == "changed" and message.get("method") in LISTS:
            self._tell_changed(message["method"])
        elif kind == "updated" and isinstance(message.get("uri"), str):
            self._tell_updated(message["uri"])
        elif kind == "resync":  # the bus was away: what changed meanwhile is unknown, so say everything may have
            for method in LISTS:
                self._tell_changed(method, declared_only=True)
        elif kind == "task" and isinstance(message.get("taskId"), str) and self.on_task is not None:
            self.on_task(message)

    def _tell_changed(self, method: str, declared_only: bool = False) -> None:
        for connection in self.connections():
            # A server sends no notification of a capability it did not declare (spec
            # server/tools, prompts, resources: "listChanged"): a resync names every list.
            if declared_only and _CAPABILITY[method] not in connection.server.capabilities(
                    connection.protocol_version or "2025-11-25"):
                continue
            connection.notify(method)
        for subscription in list(self.subscriptions):
            if subscription.wants(method):
                subscription.send(method)

    def _tell_updated(self, uri: str) -> None:
        for connection in self.connections():
            if uri in connection.subscriptions:
                connection.notify(UPDATED, {"uri": uri})
        for subscription in list(self.subscriptions):
            if subscription.wants(UPDATED, uri):
                subscription.send(UPDATED, {"uri": uri})
