"""The stdio transport: newline-delimited JSON-RPC over a pair of byte streams.

Spec basic/transports "stdio". Its two sides:

- :class:`StdioTransport`, here, frames messages over any binary reader/writer pair;
  ``StdioTransport.for_current_process()`` is a server's own stdin/stdout.
- :class:`~minimcp.transports.child.SubprocessTransport`, in :mod:`minimcp.transports.child`,
  starts a server as a child process and talks to its stdin/stdout (a client's side: a
  server's start-up does not load it).

The wire rule that shapes this module: one JSON message per line, and
nothing but messages on the server's stdout. A server therefore keeps a
private duplicate of file descriptor 1 for the wire and points fd 1 and
``sys.stdout`` at stderr, so a stray ``print()`` (or a C library writing to
fd 1) cannot corrupt the protocol.

A message has a size limit, as an HTTP body has (the spec sets none; a line without end
would otherwise be held whole in memory): ``max_message=`` where the transport is made, else
the bytes given by the environment variable ``MINIMCP_MAX_MESSAGE``, else
:data:`SERVER_MAX_MESSAGE` for what a server reads and :data:`CLIENT_MAX_MESSAGE` for what a
client reads of its server's answers. A longer line is read and dropped a chunk at a time,
never whole, answered with an error that says the limit and how to raise it, and reading
goes on with the next line.
"""

from __future__ import annotations

import os
import sys
import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import IO, Callable, Optional, Union

from ..engine.transport import Failed, Transport
from ..errors import ConnectionClosed
from ..logs import get_logger
from ..protocol import jsonrpc

log: Logger = get_logger(__name__)

#: The largest message (bytes, its newline aside) a stdio server reads. Not the 4 MiB of the
#: HTTP body cap: over HTTP and WebSocket the peer is whoever reaches the port, but over stdio
#: it is the process that started this one (and chose its command and environment), and what it
#: legitimately sends can be large: a tool's arguments carrying a file, a sampling result
#: carrying an image (base64: 4/3 of its size). So the limit is the client's own: it only keeps
#: a runaway line (one without end) from being held whole in memory.
SERVER_MAX_MESSAGE = 64 * 1024 * 1024
#: The largest message a client reads from its server. Answers may be bigger than requests
#: (a tool's long result; a skill file of up to 16 MiB, served base64 as a blob).
CLIENT_MAX_MESSAGE = 64 * 1024 * 1024
#: The environment variable that sets the limit in bytes, over either default. Every minimcp
#: process that inherits it takes it: a client's stdio servers too (``max_message=`` is the
#: way to set one process's limit alone).
MAX_MESSAGE_VARIABLE = "MINIMCP_MAX_MESSAGE"
#: Bytes read at a time while dropping the rest of a line over the limit.
DROP_CHUNK = 65536


def message_limit(default: int, given: Optional[int] = None, name: str = "max_message") -> int:
    """The message size limit in bytes: ``given`` if not None, else ``MINIMCP_MAX_MESSAGE`` if
    set, else ``default``.

    ``name``: what ``given`` is called where it was passed, for the error.

    Raises:
        ValueError: ``given`` is not a positive number of bytes (0 is no "default": a limit of
            nothing would refuse every message), or the variable is set to something else than one.
    """
    if given is not None:
        if not isinstance(given, int) or isinstance(given, bool) or given <= 0:
            raise ValueError(f"{name} should be a positive number of bytes, such as 16777216, not {given!r} "
                             f"(leave it out for the default)")
        return given
    text = os.environ.get(MAX_MESSAGE_VARIABLE, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{MAX_MESSAGE_VARIABLE} should be a number of bytes, such as 16777216, not {text!r}")
    return value


#: A message's head as SDKs write it: "jsonrpc" (maybe), "id" (group 1: a number or a string),
#: "jsonrpc" (maybe), then what it is (group 2). Only top-level keys in that order count, so a
#: nested "id" is never taken for the message's.
_HEAD = (rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*,'
         rb'\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(method|result|error)"')
#: How much of a long line's start is kept for :func:`too_long` to look at.
HEAD = 256


def too_long(head: bytes, limit: int, who: str) -> Union[jsonrpc.Malformed, Failed]:
    """What a reader hands on for a message over ``limit`` bytes, which began with ``head``.

    The message itself is not parsed (nor even kept), but its first bytes usually say what it
    was, for every SDK writes ``{"jsonrpc": "2.0", "id": ..`` and then ``"method"``, or
    ``"result"`` / ``"error"``. So a request gets a -32600 Invalid Request error with its own
    id (the peer's call fails at once, as a 413 fails an HTTP POST, not at its timeout); an
    answer fails the call of ours that waits for it (a :class:`Failed`); anything else gets
    the -32600 error with id null (JSON-RPC 2.0 "Response object": the id could not be read).
    ``who``: "server" or "client", the side that reads, for the message.
    """
    import json  # late, both: only a message over the limit needs them (jsonrpc loaded them already)
    import re

    size = f"{limit} bytes ({limit / 1048576:g} MiB)"
    how = f"raise the limit: {MAX_MESSAGE_VARIABLE}=<bytes> in the {who}'s environment"
    found = re.match(_HEAD, head)
    request_id: Optional[jsonrpc.RequestId] = None
    kind = b""
    if found is not None:
        try:
            request_id, kind = json.loads(found.group(1)), found.group(2)
        except ValueError:  # a string id with an escape JSON has not: no id then
            pass
    if request_id is not None and kind != b"method":  # an answer to one of our requests: that call fails
        from ..errors import ProtocolError

        return Failed(request_id, ProtocolError(
            f"the answer to request {request_id!r} is over this {who}'s limit of {size} for one "
            f"message, so it was dropped; {how}"))
    return jsonrpc.Malformed(jsonrpc.INVALID_REQUEST, f"Invalid Request: a message over this {who}'s limit of "
                             f"{size}, dropped unread; send less, or {how}", request_id)


class StdioTransport(Transport):
    """JSON-RPC messages, one per line, over a binary reader and writer.

    Example (a server's side; ``Server.run()`` does this for you)::

        transport = StdioTransport.for_current_process()
        message = transport.read()

    Args:
        reader: where messages come from (read with ``readline()``, bounded by ``max_message``).
        writer: where messages go (each line is written and flushed under a lock).
        skip_non_json: skip lines that are not JSON, warning once, instead of
            handing them on as parse errors. A client sets it, because some
            servers print a banner to stdout before they start speaking MCP.
        max_message: the longest line read, in bytes (its newline aside); a longer one is
            dropped as it is read and answered with a -32600 error that says the limit.
            Default: ``MINIMCP_MAX_MESSAGE`` from the environment, else
            :data:`SERVER_MAX_MESSAGE` (64 MiB).

    Raises:
        ValueError: ``max_message`` is not a positive number of bytes, or
            ``MINIMCP_MAX_MESSAGE`` is set, and not to one.
    """

    def __init__(self, reader: IO[bytes], writer: IO[bytes], *, skip_non_json: bool = False,
                 max_message: Optional[int] = None) -> None:
        #: The longest message read, in bytes.
        self.max_message: int = message_limit(SERVER_MAX_MESSAGE, max_message)
        self._limit = self.max_message + 1  # what one readline() may return: a whole line, its newline too
        self._reader = reader
        self._writer = writer
        self._skip_non_json = skip_non_json
        self._warned = False
        self._write_lock = threading.Lock()
        self._closed = False
        self._stuck = False  # close() found a write blocked on a full pipe
        self._restore: Optional[Callable[[], None]] = None
        self._input_fd: Optional[int] = None  # this process's stdin, for end_input()

    @classmethod
    def for_current_process(cls, max_message: Optional[int] = None) -> StdioTransport:
        """Take over this process's stdin/stdout for the wire.

        The wire gets a private duplicate of fd 1; fd 1 itself and
        ``sys.stdout`` are pointed at stderr until ``close()`` restores them.
        ``max_message``: as the constructor's (default: ``MINIMCP_MAX_MESSAGE``, else 64 MiB).

        Raises:
            ValueError: ``max_message`` is not a positive number of bytes, or
                ``MINIMCP_MAX_MESSAGE`` is set, and not to one.
        """
        max_message = message_limit(SERVER_MAX_MESSAGE, max_message)  # (first: a bad value changes nothing)
        sys.stdout.flush()
        wire_fd = os.dup(1)
        os.dup2(2, 1)
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr
        transport = cls(sys.stdin.buffer, open(wire_fd, "wb"), max_message=max_message)

        def restore() -> None:
            os.dup2(wire_fd, 1)
            sys.stdout = saved_stdout

        transport._restore = restore
        transport._input_fd = sys.stdin.fileno()
        return transport

    def end_input(self) -> None:
        """Make this process's stdin read as ended: the next read, and one blocked now once a
        signal interrupts it, sees end of stream (what a server does on SIGTERM).

        It points the stdin file descriptor at ``/dev/null`` and touches no Python
        file object or lock, so a signal handler may call it even while a read or a
        write is under way on its own thread. Only for ``for_current_process()``.
        """
        if self._input_fd is None:
            return
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, self._input_fd)
        finally:
            os.close(null)

    def read(self) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """Return the next message, or ``None`` at end of stream; for a line over
        ``max_message``, what :func:`too_long` makes of it (reading goes on after it)."""
        limit = self._limit
        while True:
            try:
                line = self._reader.readline(limit)  # bounded: a line without end is not held whole
            except (OSError, ValueError):  # the stream was closed under us
                return None
            if not line:
                return None
            if len(line) == limit and line[-1] != 10:  # (10: b"\n") the line goes on past the limit
                return self._drop_line(line)
            message = jsonrpc.parse(line)
            if type(message) is not jsonrpc.Malformed or not self._skips(line, message):
                return message

    def _drop_line(self, start: bytes) -> Union[jsonrpc.Malformed, Failed]:
        # Read the rest of a line over the limit a chunk at a time, keeping none of it, so memory
        # holds one limit's worth at most (not the 200 MB a line without end can be).
        log.warning("dropping a message over %d bytes (the limit; %s raises it)", self.max_message,
                    MAX_MESSAGE_VARIABLE)
        head = start[:HEAD]
        readline = self._reader.readline
        while True:
            try:
                chunk = readline(DROP_CHUNK)
            except (OSError, ValueError):  # closed under us: the next read says so
                break
            if not chunk or chunk[-1] == 10:
                break
        who = "client" if self._skip_non_json else "server"  # (only a client's transport skips non-JSON)
        return too_long(head, self.max_message, who)

    def _skips(self, line: bytes, malformed: jsonrpc.Malformed) -> bool:
        # Is this line one to skip: blank, or non-JSON a client skips? (Asked only of a line
        # that is no message, a Malformed, so a message's way in has no frame for it.)
        if line.isspace():
            return True
        if self._skip_non_json and malformed.code == jsonrpc.PARSE_ERROR:
            if not self._warned:
                self._warned = True
                log.warning("skipping non-JSON output from the server (it should log to stderr): %r",
                            line[:200])
            return True
        return False

    def write(self, message: object, related_to: object = None) -> None:
        """Write one message (or a batch) as one line, and flush.

        Raises:
            ConnectionClosed: the transport is closed; over a child process that has exited
                (:class:`~minimcp.transports.child.SubprocessTransport`, not closing it), how it
                ended: its exit code and the last lines of its stderr.
            OSError: the peer stopped reading (a ``BrokenPipeError``), or another write error.
        """
        data = jsonrpc.encode(message) + b"\n"  # type: ignore[arg-type]
        try:
            with self._write_lock:
                if self._closed:
                    raise ConnectionClosed("the stdio stream is closed")
                self._writer.write(data)
                self._writer.flush()
        except BrokenPipeError:
            self._pipe_broke()  # (a child's transport raises how the child ended instead)
            raise

    def _pipe_broke(self) -> None:
        # The peer stopped reading: the BrokenPipeError goes on as it is (a hook, not an
        # override of write(): that would be one more frame on every message's way out).
        pass

    def close(self, timeout: Optional[float] = None) -> None:
        """Stop writing; a server's stdout is restored to what it was.

        ``timeout``: how long to wait for a write in progress (a peer that
        stopped reading blocks it on a full pipe); past it, close anyway.
        """
        if not self._write_lock.acquire(timeout=-1 if timeout is None else timeout):
            self._closed = self._stuck = True  # the stuck writer fails once the pipe breaks
            return
        try:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.flush()
            except (OSError, ValueError):
                pass
            if self._restore is not None:
                self._restore()
                try:
                    self._writer.close()
                except OSError:
                    pass
        finally:
            self._write_lock.release()

    def __repr__(self) -> str:
        return f"<StdioTransport {'closed' if self._closed else 'open'}>"
