"""Transports move whole JSON-RPC messages between two peers.

A transport knows nothing of MCP methods. It has three operations:

- ``read()`` blocks until the next message arrives and returns it (a
  :mod:`minimcp.jsonrpc` message, a ``Malformed``, or a list for a batch),
  or returns ``None`` at the end of the stream;
- ``write(message)`` sends one message (or a batch); it is safe to call from
  several threads at once;
- ``close()`` ends the connection; calling it twice is harmless.

Only :class:`minimcp.session.Session` calls these. The modules here:
``stdio`` (a child process, or this process's own stdin/stdout) and
``memory`` (an in-process pair, for tests and embedding).
"""

from typing import Optional

from .. import jsonrpc
from ..errors import ConnectionClosed


class Transport:
    """The interface every transport implements."""

    def read(self) -> Optional["jsonrpc.Parsed"]:
        """Return the next message, or ``None`` once the stream has ended."""
        raise NotImplementedError

    def write(self, message, related_to=None) -> None:
        """Send one message or a list of messages (a batch). Thread-safe.

        ``related_to`` is the id of the incoming request a message belongs
        to (progress, logs, a server's nested request); transports with a
        stream per request (Streamable HTTP) send it there, others ignore it.
        """
        raise NotImplementedError

    def close(self) -> None:
        """End the connection and free its resources. Idempotent."""
        raise NotImplementedError

    def negotiated(self, version: str) -> None:
        """Called once the handshake agreed on ``version`` (HTTP sends it as a header from then on)."""

    def closed_error(self) -> ConnectionClosed:
        """Return the error pending callers get once the stream has ended."""
        return ConnectionClosed("the peer closed the connection")
