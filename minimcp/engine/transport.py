"""What the engine needs of a connection: the :class:`Transport` interface.

A transport moves whole JSON-RPC messages between two peers and knows nothing of MCP
methods. It has three operations:

- ``read()`` blocks until the next message arrives and returns it (a
  :mod:`minimcp.protocol.jsonrpc` message, a ``Malformed``, or a list for a batch),
  or returns ``None`` at the end of the stream;
- ``write(message)`` sends one message (or a batch); it is safe to call from
  several threads at once;
- ``close()`` ends the connection; calling it twice is harmless.

The Session, the Client and a handler's Context call the other methods and
attributes of :class:`Transport`: each is declared here with a default that
does nothing, and a transport overrides what it has (Streamable HTTP, most).
The transports themselves live in :mod:`minimcp.transports`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Callable, Dict, List, Optional, Union

from ..errors import ConnectionClosed
from ..protocol import jsonrpc


class Failed:
    """What ``read()`` hands back to fail one request with an exception.

    For transports that send each request separately (HTTP): when a POST
    cannot reach the server, only that request fails, and with the same
    ``ConnectionClosed`` a broken pipe would give.
    """

    __slots__ = ("request_id", "error")

    def __init__(self, request_id: jsonrpc.RequestId, error: Exception) -> None:
        self.request_id: jsonrpc.RequestId = request_id
        self.error: Exception = error

    def __repr__(self) -> str:
        return f"Failed({self.request_id!r}, {self.error!r})"


class Transport:
    """The interface every transport implements: ``read``, ``write`` and ``close``; the rest
    have defaults that do nothing."""

    #: Set by the Client: called (no arguments) when the server says the session is gone,
    #: to start a new one (Streamable HTTP: a 404). Other transports never call it.
    on_session_expired: Optional[Callable[[], None]] = None

    #: Set by whoever opened the transport: called once by ``close()``, after the peer was
    #: told (the in-memory client closes the server's session with it). Only
    #: :class:`~minimcp.transports.memory.MemoryTransport` calls it.
    on_close: Optional[Callable[[], None]] = None

    #: tool name -> {argument: header}: the ``x-mcp-header`` arguments a 2026-07-28 HTTP
    #: client mirrors in headers (the Client fills it from tools/list); None where there
    #: are no headers.
    param_headers: Optional[Dict[str, Dict[str, str]]] = None

    #: True where :meth:`exchange` works: a request is sent and answered on its caller's thread
    #: (HTTP, request/response). The Session then has each caller post its own request.
    exchanges: bool = False

    #: True where :meth:`read_within` works: a read can wait with a timeout (a child's stdout,
    #: which ``poll`` can watch). The Session then lets a caller read its own answer.
    timed_reads: bool = False

    def read(self) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """Return the next message, or ``None`` once the stream has ended (or, over HTTP, a
        :class:`Failed` for a request that could not be sent)."""
        raise NotImplementedError

    def read_within(self, timeout: float) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """As :meth:`read`, but wait at most ``timeout`` seconds for a whole message (where
        :attr:`timed_reads` says so); a message begun and not yet whole stays for the next read.

        Raises:
            TimeoutError: no whole message came in time.
        """
        raise NotImplementedError

    def exchange(self, request_id: jsonrpc.RequestId, deadline: float,
                 receive: Callable[[Union[jsonrpc.Parsed, Failed]], None]) -> None:
        """Send the request ``request_id``, just written, and read its answer on this thread,
        handing what comes to ``receive``, until it is in or ``deadline`` (``time.monotonic()``)
        passes (where :attr:`exchanges` says so). A transport may leave the rest to ``read()``."""
        raise NotImplementedError

    def write(self, message: Union[jsonrpc.Message, List[jsonrpc.Message]],
              related_to: Optional[jsonrpc.RequestId] = None) -> None:
        """Send one message or a list of messages (a batch). Thread-safe.

        ``related_to`` is the id of the incoming request a message belongs
        to (progress, logs, a server's nested request); transports with a
        stream per request (Streamable HTTP) send it there, others ignore it.
        """
        raise NotImplementedError

    def close(self) -> None:
        """End the connection and free its resources. Idempotent."""
        raise NotImplementedError

    def discard(self, request_id: Any) -> None:
        """Called when the answer to an incoming request will never be sent (it was
        cancelled); a transport holding a response open for it can end it now."""

    def abandon(self, request_id: Any) -> None:
        """Called when we stop waiting for the answer to one of our requests (a timeout, a
        cancel); a transport with a stream per request closes it (the 2026-07-28 HTTP cancel)."""

    def close_stream(self, request_id: Any) -> None:
        """Called by ``ctx.close_sse_stream()``: end the HTTP response carrying this incoming
        request's messages now; the client reconnects and resumes (Streamable HTTP, 2025-11-25
        polling). A transport with one stream for everything has nothing to end."""

    def negotiated(self, version: str) -> None:
        """Called once the handshake agreed on ``version`` (HTTP sends it as a header from then on)."""

    def closed_error(self) -> ConnectionClosed:
        """Return the error pending callers get once the stream has ended."""
        return ConnectionClosed("the peer closed the connection")
