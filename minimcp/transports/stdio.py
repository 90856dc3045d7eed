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
"""

from __future__ import annotations

import os
import sys
import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import IO, Callable, Optional

from ..engine.transport import Transport
from ..errors import ConnectionClosed
from ..logs import get_logger
from ..protocol import jsonrpc

log: Logger = get_logger(__name__)

class StdioTransport(Transport):
    """JSON-RPC messages, one per line, over a binary reader and writer.

    Example (a server's side; ``Server.run()`` does this for you)::

        transport = StdioTransport.for_current_process()
        message = transport.read()

    Args:
        reader: where messages come from (read with ``readline()``; no line
            length cap, so a 20 MB message is fine).
        writer: where messages go (each line is written and flushed under a lock).
        skip_non_json: skip lines that are not JSON, warning once, instead of
            handing them on as parse errors. A client sets it, because some
            servers print a banner to stdout before they start speaking MCP.
    """

    def __init__(self, reader: IO[bytes], writer: IO[bytes], *, skip_non_json: bool = False) -> None:
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
    def for_current_process(cls) -> StdioTransport:
        """Take over this process's stdin/stdout for the wire.

        The wire gets a private duplicate of fd 1; fd 1 itself and
        ``sys.stdout`` are pointed at stderr until ``close()`` restores them.
        """
        sys.stdout.flush()
        wire_fd = os.dup(1)
        os.dup2(2, 1)
        saved_stdout = sys.stdout
        sys.stdout = sys.stderr
        transport = cls(sys.stdin.buffer, open(wire_fd, "wb"))

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

    def read(self) -> Optional[jsonrpc.Parsed]:
        """Return the next message, or ``None`` at end of stream."""
        while True:
            try:
                line = self._reader.readline()
            except (OSError, ValueError):  # the stream was closed under us
                return None
            if not line:
                return None
            message = jsonrpc.parse(line)
            if type(message) is not jsonrpc.Malformed or not self._skips(line, message):
                return message

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
