"""Who hears about changes: the connections a server tracks, and the 2026-07-28 listeners.

A server tells its clients when a list changes (``notifications/tools/list_changed``
…) and when a subscribed resource is updated (``notifications/resources/updated``).
Handshake-era clients hear it on their connection (for updates, only if they
subscribed to that URI); 2026-07-28 clients hear it on an open
``subscriptions/listen`` request, if its filters ask for it (spec 2026-07-28
basic/patterns/subscriptions).
"""

from __future__ import annotations

import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Set

    from .connection import ServerConnection

UPDATED = "notifications/resources/updated"


class Audience:
    """The connections and listen requests a server's notifications go to."""

    def __init__(self) -> None:
        #: The open 2026-07-28 ``subscriptions/listen`` requests, of every connection.
        self.subscriptions: Set[Any] = set()
        self._connections: List[ServerConnection] = []
        self._lock = threading.Lock()

    def add(self, connection: ServerConnection) -> ServerConnection:
        """Track a connection (and forget those that have closed)."""
        with self._lock:
            self._connections = [c for c in self._connections if not c.session.closed]
            self._connections.append(connection)
        return connection

    def connections(self) -> List[ServerConnection]:
        """The tracked connections that are still open."""
        with self._lock:
            return [c for c in self._connections if not c.session.closed]

    def changed(self, method: str) -> None:
        """Send a ``list_changed`` notification to every connection and every listener that asked."""
        for connection in self.connections():
            connection.notify(method)
        for subscription in list(self.subscriptions):
            if subscription.wants(method):
                subscription.send(method)

    def updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to those subscribed to ``uri``."""
        for connection in self.connections():
            if uri in connection.subscriptions:
                connection.notify(UPDATED, {"uri": uri})
        for subscription in list(self.subscriptions):
            if subscription.wants(UPDATED, uri):
                subscription.send(UPDATED, {"uri": uri})
