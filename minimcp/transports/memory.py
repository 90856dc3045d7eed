"""An in-process transport: two connected ends, for tests and for embedding.

Messages still go through ``jsonrpc.encode()`` and ``jsonrpc.parse()``, so
what works in memory works on a pipe: a result that is not JSON fails here
the same way it would over stdio.

    client_end, server_end = memory.pair()
"""

import queue
from typing import Any, Callable, Optional, Tuple

from ..engine.transport import Transport
from ..errors import ConnectionClosed
from ..protocol import jsonrpc


class MemoryTransport(Transport):
    """One end of an in-process pair; see :func:`pair`."""

    def __init__(self, inbox: "queue.SimpleQueue[Any]", outbox: "queue.SimpleQueue[Any]") -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False
        #: Called once by close(), after the peer was told: the memory
        #: client uses it to close the server's session with it.
        self.on_close: Optional[Callable[[], None]] = None

    def read(self) -> Optional[jsonrpc.Parsed]:
        """Return the next message, or ``None`` once either end has closed."""
        data = self._inbox.get()
        if data is None:
            self._inbox.put(None)  # stay at end of stream for any later read
            return None
        return jsonrpc.parse(data)

    def write(self, message: object, related_to: object = None) -> None:
        """Hand one message (or a batch) to the other end."""
        if self._closed:
            raise ConnectionClosed("the in-memory connection is closed")
        self._outbox.put(jsonrpc.encode(message))  # type: ignore[arg-type]

    def close(self) -> None:
        """Close both directions; the peer reads end of stream."""
        if self._closed:
            return
        self._closed = True
        self._outbox.put(None)
        self._inbox.put(None)
        if self.on_close is not None:
            self.on_close()

    def __repr__(self) -> str:
        return f"<MemoryTransport {'closed' if self._closed else 'open'}>"


def pair() -> Tuple[MemoryTransport, MemoryTransport]:
    """Return two connected transports: what one writes, the other reads."""
    a_to_b: queue.SimpleQueue[Any] = queue.SimpleQueue()
    b_to_a: queue.SimpleQueue[Any] = queue.SimpleQueue()
    return MemoryTransport(b_to_a, a_to_b), MemoryTransport(a_to_b, b_to_a)
