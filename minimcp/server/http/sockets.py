"""What the built-in HTTP server does at the socket level with a client it cannot trust.

The framing checks and the ways of ending a connection that a WSGI app never
sees: an invalid ``Content-Length``, a close with a request body still unread,
a connection past the cap, a client that left in the middle of a long stream.
No threads here, and nothing that knows MCP beyond the shape of an error body.
"""

import socket
import struct
import sys
import time
from typing import Any, Callable, Dict, List, Optional

from ...protocol import jsonrpc
from ...protocol.jsonrpc import ErrorResponse
from ...transports.sockets import readable

#: Lingering close: how long and how much of an unread request body is read and dropped.
LINGER_SECONDS, LINGER_BYTES = 5.0, 64 * 1024 * 1024
#: Seconds a refused connection may take to send its request head.
REFUSE_TIMEOUT = 5.0


def kernel_timeouts(sock: socket.socket, seconds: float) -> bool:
    """Have the kernel end any read or write of ``sock`` that waits past ``seconds`` (0: never),
    with ``SO_RCVTIMEO`` and ``SO_SNDTIMEO``, the socket left blocking. False where that is not
    done (not Linux): the caller then uses ``settimeout``.

    ``settimeout`` would ``poll`` before every ``recv`` and every ``send``: two more system calls
    a request, and each one lets go of the GIL, which costs a thread switch when connections
    contend for it. A read that the kernel ends raises ``socket.timeout`` all the same (see
    :class:`TimedReads`). Two differences: a write it ends raises ``BlockingIOError`` (an
    ``OSError``, as ``socket.timeout`` is: the connection ends either way), and the time runs
    for each system call, so a ``sendall()`` to a client that goes on reading, however slowly,
    is not cut at ``seconds`` in all.
    """
    if not sys.platform.startswith("linux"):  # (a struct timeval is two longs there; elsewhere: see above)
        return False
    whole = int(seconds)
    micros = int((seconds - whole) * 1_000_000)
    if seconds > 0 and not (whole or micros):
        micros = 1  # (under a microsecond: (0, 0) would mean never)
    try:
        timeval = struct.pack("ll", whole, micros)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
    except (OSError, struct.error):
        return False
    return True


class TimedReads(socket.SocketIO):
    """A blocking socket's reads, for a ``BufferedReader``, where a wait ended by
    :func:`kernel_timeouts` raises ``socket.timeout``, as with ``settimeout``. (``SocketIO`` returns
    None for it, which a ``BufferedReader`` would take for the end of the stream: a request head
    cut short would then be read as whole.)"""

    def readinto(self, buffer: Any) -> Optional[int]:
        """Read into ``buffer``; the count read (0 at the end of the stream)."""
        count = super().readinto(buffer)
        if count is None:  # EAGAIN: only SO_RCVTIMEO makes a blocking socket's recv say it
            self._timeout_occurred = True  # (SocketIO's flag: a later read fails at once, as after settimeout's)
            raise socket.timeout("timed out")
        return count


def content_length(values: List[str]) -> Optional[int]:
    """The body length the ``Content-Length`` headers give (0 when none), or None when invalid.

    Invalid: not plain digits (``int()`` would take ``-1``, ``+5`` and ``1_0``,
    and ``-1`` would read to the end of the stream), or several values that
    differ (RFC 9112 §6.3: a message framed two ways is a smuggling attempt).
    """
    lengths = {value.strip() for value in values}
    if not lengths:
        return 0
    if len(lengths) != 1:
        return None
    text = lengths.pop()
    return int(text) if text.isascii() and text.isdigit() else None


def linger(sock: socket.socket) -> None:
    """Prepare to close with the request body unread, so the client still reads our answer.

    Closing a socket with unread input resets the connection, and the client,
    still sending, sees a broken pipe instead of the answer. So: shut our side
    (the client reads the answer, then the end of the stream), and read and
    drop what it still sends, up to ``LINGER_BYTES`` within ``LINGER_SECONDS``.
    """
    deadline, budget = time.monotonic() + LINGER_SECONDS, LINGER_BYTES
    try:
        sock.shutdown(socket.SHUT_WR)
        while budget > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            sock.settimeout(left)
            data = sock.recv(min(65536, budget))
            if not data:
                return
            budget -= len(data)
    except OSError:
        pass  # reset, or the time is up: it is closed anyway


def client_gone(sock: socket.socket) -> bool:
    """True once the client closed or reset the connection.

    For a long response (an SSE stream) whose client sends nothing more:
    readable then means the end of the stream, or a reset. It costs one poll.
    """
    if not readable(sock):
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def gone_probe(environ: Dict[str, Any]) -> Optional[Callable[[], bool]]:
    """How to ask whether this request's client has left, where its server lends a way.

    The built-in server puts ``minimcp.client_gone`` in the environ; gunicorn lends its
    socket as ``gunicorn.socket``. Other servers: None (a vanished client is then
    noticed when a keepalive write fails).
    """
    probe = environ.get("minimcp.client_gone")
    if probe is None and type(environ.get("gunicorn.socket")) is socket.socket:  # (not TLS: no peeking there)
        sock = environ["gunicorn.socket"]
        probe = lambda: client_gone(sock)  # noqa: E731
    return probe


def refusal(protocol_version: str) -> bytes:
    """The whole ``503`` answer to a connection past the server's cap (then it is closed)."""
    body = jsonrpc.encode(ErrorResponse(None, jsonrpc.HTTP_ERROR,
                                        "Service Unavailable: too many connections; try again shortly"))
    head = (f"{protocol_version} 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n")
    return head.encode("latin-1") + body
