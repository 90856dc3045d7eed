"""WebSocket, both ends. NOT an MCP standard transport: no spec version defines it.

It is what the TypeScript SDK and the older Python SDK ship: subprotocol
``mcp``, one JSON-RPC message per text frame, the connection is the session
(spec digest transports.md §5). Use stdio or Streamable HTTP where you can.

- :class:`WebSocketTransport`: the client end, over ``websocket-client``
  (imported here only).
- :class:`WebSocketServerTransport`: the server end of one connection,
  over a socket the built-in HTTP server upgraded (RFC 6455 framing is
  done here, with the standard library).

Both ends cap a message's size, as stdio does: ``max_message=``, else ``MINIMCP_MAX_MESSAGE``,
else 4 MiB for what a server reads (:data:`SERVER_MAX_MESSAGE`, the HTTP body cap's figure:
its peer is whoever reaches the port) and 64 MiB for what a client reads. The built-in HTTP
server works its WebSocket routes' limit out once, when it is made
(:class:`~minimcp.server.http.wsgiserver.WSGIServer`: the app's ``max_body``). A frame is
checked by the length in its header, before its payload is read, and the connection is
closed with status 1009 "message too big" (RFC 6455 §7.4.1).
"""

import base64
import hashlib
import socket
import struct
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ..engine.transport import Transport
from ..errors import ConnectionClosed
from ..logs import get_logger
from ..protocol import jsonrpc
from .stdio import CLIENT_MAX_MESSAGE, MAX_MESSAGE_VARIABLE, message_limit

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: RFC 6455 §1.3: the GUID that turns Sec-WebSocket-Key into Sec-WebSocket-Accept.
_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_TEXT, _BINARY, _CLOSE, _PING, _PONG, _CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0
#: RFC 6455 §7.4.1: the close status of an endpoint given a message too big for it.
TOO_BIG = 1009
#: The largest message a WebSocket server reads by default: the figure of the HTTP server's
#: body cap (``max_body``), so a request too big for one network transport is too big for both.
#: (Not stdio's server figure: there the peer is the process that started the server.)
SERVER_MAX_MESSAGE = 4 * 1024 * 1024
#: The most a server reads (and drops) of a frame over its limit before closing, so the close
#: frame reaches a client still sending rather than a reset: the HTTP server lingers as long.
DRAIN_MAX = 64 * 1024 * 1024


class _TooBig(Exception):
    """Raised from within websocket-client's frame reading: the message is over the limit."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def _bounded_frames(frames: Any, limit: int) -> Any:
    """A websocket-client ``frame_buffer`` like ``frames`` that raises :class:`_TooBig` as soon
    as a frame's header says its message (its fragments so far, this one too) is over ``limit``
    bytes: before the payload is read, so a server cannot make us hold more than that."""
    import websocket

    class BoundedFrames(websocket.frame_buffer):
        message = 0  # the bytes of the data message being read, over its fragments

        def recv_length(self) -> None:
            super().recv_length()
            opcode = self.header[4] if self.header else None  # (fin, rsv1, rsv2, rsv3, opcode, mask, length bits)
            if opcode == _TEXT or opcode == _BINARY:
                self.message = self.length or 0
            elif opcode == _CONTINUATION:
                self.message += self.length or 0
            else:  # a control frame: at most 125 bytes (RFC 6455 §5.5)
                return
            if self.message > limit:
                raise _TooBig(self.message)

    return BoundedFrames(frames.recv, frames.skip_utf8_validation)


class WebSocketTransport(Transport):
    """The client end: ``minimcp.connect("ws://127.0.0.1:8000/ws")`` makes one.

    Args:
        url: the ``ws://`` or ``wss://`` URL.
        headers: sent with the upgrade request.
        timeout: seconds to connect.
        max_message: the largest message read, in bytes; over it, the connection is closed
            (1009) and the calls waiting fail, saying the limit. Default:
            ``MINIMCP_MAX_MESSAGE`` from the environment, else 64 MiB (as stdio's client).

    Raises:
        ConnectionClosed: the server cannot be reached or refused the upgrade.
        ValueError: ``max_message`` is not a positive number of bytes, or
            ``MINIMCP_MAX_MESSAGE`` is set, and not to one (said before connecting).
    """

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None, timeout: float = 60.0,
                 max_message: Optional[int] = None) -> None:
        import websocket  # the websocket-client package

        #: The largest message read, in bytes.
        self.max_message: int = message_limit(CLIENT_MAX_MESSAGE, max_message)
        self._refused: Optional[ConnectionClosed] = None  # why we closed: a message over the limit
        self.url = url
        self._errors = (websocket.WebSocketException, OSError)
        try:
            self.ws: websocket.WebSocket = websocket.create_connection(url, subprotocols=["mcp"], timeout=timeout,
                                                  header=[f"{k}: {v}" for k, v in (headers or {}).items()])
        except self._errors as exc:
            raise ConnectionClosed(f"cannot open a WebSocket to {url}: {exc}") from exc
        self.ws.settimeout(None)  # the reader blocks until a frame comes; close() wakes it
        # websocket-client has no size limit of its own: its frame reader is swapped (it holds
        # nothing between frames yet) for one that checks each frame's length first.
        self.ws.frame_buffer = _bounded_frames(self.ws.frame_buffer, self.max_message)
        self._write_lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"<WebSocketTransport {self.url}>"

    def read(self) -> Optional[jsonrpc.Parsed]:
        """The next message (one text frame); ``None`` once the connection closed."""
        try:
            data = self.ws.recv()
        except _TooBig as exc:
            self._refused = ConnectionClosed(
                f"closed the WebSocket to {self.url} (1009, message too big): the server sent a message of "
                f"{exc.size} bytes, over this client's limit of {self.max_message}; raise it with "
                f"{MAX_MESSAGE_VARIABLE}=<bytes> in the client's environment (or WebSocketTransport's max_message=)")
            log.warning("%s", self._refused)
            with self._write_lock:
                try:
                    self.ws.send_close(TOO_BIG, b"message too big")
                except self._errors:
                    pass
            return None
        except self._errors:
            return None
        if not data:  # a close frame
            return None
        return jsonrpc.parse(data)

    def closed_error(self) -> ConnectionClosed:
        """Why the connection ended: a message over ``max_message``, or the server closed it."""
        return self._refused or super().closed_error()

    def write(self, message: Any, related_to: Any = None) -> None:
        """Send one message as one text frame."""
        data = jsonrpc.encode(message)  # bytes, as stdio sends them (a lone surrogate escaped)
        with self._write_lock:
            try:
                self.ws.send(data)  # a text frame still: websocket-client sends bytes as given
            except self._errors as exc:
                raise ConnectionClosed(f"the WebSocket to {self.url} is closed: {exc}") from exc

    def close(self) -> None:
        """Say goodbye (a close frame) and shut the socket, which wakes the reader. Idempotent."""
        if self._closed:
            return
        self._closed = True
        with self._write_lock:
            try:
                self.ws.send_close()
            except self._errors:
                pass
        try:
            self.ws.sock.shutdown(socket.SHUT_RDWR)  # type: ignore[union-attr]  # None: AttributeError, caught
        except (AttributeError, OSError):
            pass
        self.ws.shutdown()  # type: ignore[no-untyped-call]  # websocket-client leaves it unannotated


def accept_key(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` answer to a client's ``Sec-WebSocket-Key`` (RFC 6455 §4.2.2)."""
    return base64.b64encode(hashlib.sha1((key + _GUID).encode("ascii")).digest()).decode("ascii")


def unmask(mask: bytes, payload: bytes) -> bytes:
    """``payload`` XORed with the 4-byte ``mask``, repeated (RFC 6455 §5.3: what a client masks,
    the same XOR unmasks).

    Done on the whole payload as one big integer: linear C loops in ``int.from_bytes``, ``^``
    and ``to_bytes``, some fifty times faster than a Python loop over its bytes (a second of
    CPU for a 4 MiB message). The mask is repeated to the payload's length, so a length that
    is no multiple of 4 ends on the right byte of it.
    """
    size = len(payload)
    if not size:
        return b""
    key = (mask * (size // 4 + 1))[:size]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")


def encode_frame(opcode: int, payload: bytes) -> bytes:
    """One unmasked, final frame (servers never mask, RFC 6455 §5.1)."""
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 127, size)
    return header + payload


class WebSocketServerTransport(Transport):
    """The server end of one upgraded connection (the handshake was answered already).

    Args:
        rfile, wfile: the connection's buffered reader and writer.
        max_message: the largest message accepted; a bigger one closes the
            connection with status 1009 (message too big), and the server serves on.
            Default: ``MINIMCP_MAX_MESSAGE`` from the environment, else 4 MiB, the HTTP
            server's body cap (:data:`SERVER_MAX_MESSAGE`). (The built-in HTTP server passes
            the limit it worked out once, when it was made.)

    Raises:
        ValueError: ``max_message`` is not a positive number of bytes, or
            ``MINIMCP_MAX_MESSAGE`` is set, and not to one.
    """

    def __init__(self, rfile: Any, wfile: Any, max_message: Optional[int] = None) -> None:
        self.rfile = rfile
        self.wfile = wfile
        self.max_message: int = message_limit(SERVER_MAX_MESSAGE, max_message)
        self._write_lock = threading.Lock()
        self._closed = False

    def _read_exact(self, size: int) -> bytes:
        data: bytes = self.rfile.read(size)
        if len(data) != size:
            raise EOFError
        return data

    def _read_frame(self) -> Tuple[Any, ...]:
        first, second = self._read_exact(2)
        fin, opcode, masked, size = first & 0x80, first & 0x0F, second & 0x80, second & 0x7F
        if size == 126:
            size = struct.unpack("!H", self._read_exact(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self._read_exact(8))[0]
        if not masked:
            raise ValueError("client frames must be masked (RFC 6455 §5.1)")
        if size > self.max_message:
            self._discard(4 + size)
            raise OverflowError(size)
        mask = self._read_exact(4)
        return bool(fin), opcode, unmask(mask, self._read_exact(size))

    def _discard(self, size: int) -> None:
        # Read (and drop) an oversized frame, within reason, so the close frame
        # that follows reaches a client still busy sending instead of a reset.
        if size > DRAIN_MAX:
            return
        while size > 0:
            chunk = self.rfile.read(min(size, 1 << 20))
            if not chunk:
                return
            size -= len(chunk)

    def read(self) -> Optional[jsonrpc.Parsed]:
        """The next text message (fragments joined; pings answered); ``None`` when the peer leaves."""
        parts: List[Any] = []
        try:
            while True:
                fin, opcode, payload = self._read_frame()
                if opcode == _PING:
                    self._send_frame(_PONG, payload)
                elif opcode == _CLOSE:
                    self._send_frame(_CLOSE, payload[:2])
                    return None
                elif opcode in (_TEXT, _BINARY, _CONTINUATION):
                    parts.append(payload)
                    if sum(len(p) for p in parts) > self.max_message:
                        raise OverflowError
                    if fin:
                        return jsonrpc.parse(b"".join(parts))
        except OverflowError:
            log.warning("a WebSocket message over %d bytes (the limit; %s raises it): closing (1009)",
                        self.max_message, MAX_MESSAGE_VARIABLE)
            self._send_frame(_CLOSE, struct.pack("!H", TOO_BIG) + f"message too big: over {self.max_message} "
                             f"bytes".encode("ascii"))
            return None
        except (EOFError, OSError, ValueError) as exc:
            log.debug("WebSocket closed: %r", exc)
            return None

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        with self._write_lock:
            try:
                self.wfile.write(encode_frame(opcode, payload))
                self.wfile.flush()
            except (OSError, ValueError):
                pass

    def write(self, message: Any, related_to: Any = None) -> None:
        """Send one message as one text frame."""
        if self._closed:
            raise ConnectionClosed("the WebSocket is closed")
        data = encode_frame(_TEXT, jsonrpc.encode(message))
        with self._write_lock:
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except (OSError, ValueError) as exc:
                raise ConnectionClosed(f"the WebSocket client went away: {exc}") from exc

    def close(self) -> None:
        """Send a close frame (normal closure). Idempotent."""
        if not self._closed:
            self._closed = True
            self._send_frame(_CLOSE, struct.pack("!H", 1000))
