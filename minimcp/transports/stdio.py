"""The stdio transport: newline-delimited JSON-RPC over a pair of byte streams.

Both sides live here (spec basic/transports "stdio"):

- :class:`StdioTransport` frames messages over any binary reader/writer pair;
  ``StdioTransport.for_current_process()`` is a server's own stdin/stdout.
- :class:`SubprocessTransport` starts a server as a child process and talks
  to its stdin/stdout, draining its stderr on a thread.

The wire rule that shapes this module: one JSON message per line, and
nothing but messages on the server's stdout. A server therefore keeps a
private duplicate of file descriptor 1 for the wire and points fd 1 and
``sys.stdout`` at stderr, so a stray ``print()`` (or a C library writing to
fd 1) cannot corrupt the protocol.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from time import monotonic

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    import io
    from logging import Logger
    from typing import IO, Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import ConnectionClosed
from ..logs import get_logger
from ..protocol import jsonrpc
from . import Transport

log: Logger = get_logger(__name__)

#: Bytes a client reads from its server's stdout at a time (a longer message takes more reads).
CHUNK = 65536


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
        # Is this line one to skip: blank, or non-JSON a client skips? (Asked of a line that
        # did not parse only, so a message's way in has no frame for it.)
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
        """Write one message (or a batch) as one line, and flush. (To a child process that
        has exited: raises how it ended, its exit code and stderr.)"""
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


class SubprocessTransport(StdioTransport):
    """Start an MCP server as a child process and talk to it over its stdin/stdout.

    Example::

        transport = SubprocessTransport(["python", "server.py"], env={"DEBUG": "1"})

    Args:
        command: the program and its arguments.
        env: variables set over this process's environment (so ``PATH``
            and friends survive).
        cwd: the child's working directory.
        on_stderr: ``callback(line)`` for each line the child writes to
            stderr; by default each is written to our own ``sys.stderr``
            (pass ``on_stderr=logging.getLogger("server").info`` to log them).
        shutdown_timeout: seconds to wait at each step of the shutdown:
            close stdin, then SIGTERM, then SIGKILL (spec basic/lifecycle "Shutdown").

    Raises:
        FileNotFoundError: the command does not exist (said at once, not as a hang).
    """

    def __init__(self, command: Sequence[str], *, env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, on_stderr: Optional[Callable[[str], None]] = None,
                 shutdown_timeout: float = 2.0) -> None:
        import select  # late, both: only a client starts servers; a server's start-up skips them
        import subprocess

        if isinstance(command, str) or not command:
            raise TypeError("command must be a non-empty list of strings, e.g. ['python', 'server.py']")
        self.command: List[str] = [str(part) for part in command]
        full_env = None
        if env:
            full_env = dict(os.environ)
            full_env.update(env)
        try:
            # start_new_session: the child leads its own process group, so
            # closing takes the server's own children down with it.
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=full_env, cwd=cwd, start_new_session=True)
        except FileNotFoundError as exc:
            where = f" in {cwd!r}" if cwd else ""
            raise FileNotFoundError(
                f"cannot start the MCP server: {self.command[0]!r} was not found{where} "
                f"(is it installed and on PATH?)") from exc
        super().__init__(self.process.stdout, self.process.stdin, skip_non_json=True)  # type: ignore[arg-type]
        self.shutdown_timeout = shutdown_timeout
        self._on_stderr = on_stderr
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._closing = False
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr, name=f"minimcp-stderr-{self.process.pid}", daemon=True)
        self._stderr_thread.start()
        # The child's stdout is read here, a chunk at a time from its raw file (one read()
        # call each), into a buffer of our own: not with readline(), whose buffer cannot be
        # looked at without blocking. So read_within() can wait for a line with a timeout,
        # and a line begun stays for the next read.
        self._stdout: io.FileIO = self.process.stdout.raw  # type: ignore[union-attr]
        self._buffer = bytearray()
        self._scanned = 0  # how much of the buffer holds no newline (a long line is searched once)
        self._poll: Optional[Callable[[float], List[Tuple[int, int]]]] = None
        if hasattr(select, "poll"):  # (not on Windows, where pipes cannot be polled)
            poller = select.poll()
            poller.register(self._stdout.fileno(), select.POLLIN)
            self._poll = poller.poll
            self.timed_reads = True

    def _drain_stderr(self) -> None:
        # Always read stderr to the end: a child blocked on a full pipe would
        # look like a hang (the lesson of subprocess._readerthread).
        for raw in iter(self.process.stderr.readline, b""):  # type: ignore[union-attr]
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr_tail.append(line)
            try:
                if self._on_stderr is not None:
                    self._on_stderr(line)
                else:  # like the official SDKs: the server's logs show where ours do
                    sys.stderr.write(line + "\n")
            except Exception:
                log.exception("on_stderr callback failed")
        self.process.stderr.close()  # type: ignore[union-attr]

    def read(self) -> Optional[jsonrpc.Parsed]:
        """Return the next message, or ``None`` once the server's stdout closes."""
        return self.read_within(None)

    def read_within(self, timeout: Optional[float]) -> Optional[jsonrpc.Parsed]:
        """Return the next message if a whole one comes within ``timeout`` seconds (``None``: as
        long as it takes); ``None`` once the server's stdout closes (then a read with no timeout
        waits for the exit, to say how it ended).

        Raises:
            TimeoutError: no whole message came in time (what came of one stays buffered).
        """
        # (read() calls this, not the other way round: a caller reading its own answer comes
        # here directly, one frame less a call.)
        buffer, deadline = self._buffer, None
        while True:
            end = buffer.find(b"\n", self._scanned) if buffer else -1
            if end >= 0:  # a whole line held from an earlier read
                line = bytes(buffer[:end + 1])
                self._scanned = 0  # (first: a Ctrl-C between the two must not skip a newline)
                del buffer[:end + 1]  # (cheap: a bytearray drops its head without copying the rest)
            else:  # read what the pipe has, waiting at most until the deadline
                self._scanned = len(buffer)
                if timeout is not None and not self._stdout.closed:  # (closed: its fd may be reused)
                    wait = timeout if deadline is None else max(0.0, deadline - monotonic())
                    if deadline is None:
                        deadline = monotonic() + timeout
                    if not self._poll(wait * 1000):  # type: ignore[misc]
                        raise TimeoutError("no whole message from the server in time")
                try:
                    chunk = self._stdout.read(CHUNK)  # one read() of what the pipe holds
                except (OSError, ValueError):  # the stream was closed under us
                    chunk = b""
                if not chunk:  # the end
                    if buffer:  # a last line without its newline is still a line
                        line, self._scanned = bytes(buffer), 0
                        buffer.clear()
                    else:  # (only a read with no timeout waits for the exit: read_within's is bounded)
                        if not self._closing and timeout is None:
                            self._await_exit()
                        return None
                elif not buffer and chunk.find(b"\n") == len(chunk) - 1:
                    line = chunk  # the usual read: one whole line (no copy into the buffer and out)
                else:
                    buffer += chunk
                    continue
            message = jsonrpc.parse(line)
            if type(message) is not jsonrpc.Malformed or not self._skips(line, message):
                return message

    def _pipe_broke(self) -> None:
        # The server exited before reading what we wrote (often before the handshake): say
        # why, as a read at end of stream would, instead of a bare broken pipe.
        if self._closing:
            return
        self._await_exit()
        raise self.closed_error() from None

    def _await_exit(self) -> None:
        # The server went away by itself: wait a moment for its exit code and
        # last words, so the ConnectionClosed can carry them.
        try:
            self.process.wait(timeout=1.0)
        except Exception:  # subprocess.TimeoutExpired: it is still running
            pass
        self._stderr_thread.join(1.0)

    def closed_error(self) -> ConnectionClosed:
        """Describe how the server ended: exit code and the tail of its stderr."""
        code = self.process.poll()
        tail = "\n".join(self._stderr_tail)
        if code is None:
            text = f"the MCP server {self.command[0]!r} closed its stdout"
        else:
            text = f"the MCP server {self.command[0]!r} exited with code {code}"
        if tail:
            text += "; its last stderr lines:\n" + tail
        return ConnectionClosed(text, exit_code=code, stderr_tail=tail)

    # No timeout= as StdioTransport.close has (so the checker objects): a child's shutdown is
    # bounded by shutdown_timeout, which this passes on as that timeout.
    def close(self) -> None:  # type: ignore[override]
        """Shut the server down: close its stdin, wait, SIGTERM, wait, SIGKILL."""
        if self._closing:
            return
        self._closing = True
        super().close(timeout=self.shutdown_timeout)  # a write stuck on a full pipe must not stop us
        if not self._stuck:  # (closing stdin would wait for that write too: the reaping ends it)
            try:
                self.process.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        self._reap()
        self._stderr_thread.join(self.shutdown_timeout)
        try:
            self.process.stdout.close()  # type: ignore[union-attr]
        except (OSError, ValueError):
            pass

    def _reap(self) -> None:
        # A blocking wait() plus a watchdog thread: Popen.wait(timeout) polls
        # with sleeps of up to 50 ms, which every client exit would pay.
        import signal  # late: only a client stops servers; a server's start-up skips it

        done = threading.Event()
        pgid = self.process.pid

        def escalate() -> None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if done.wait(self.shutdown_timeout):
                    return
                log.info("MCP server %s did not exit; sending %s", pgid, sig.name)
                _kill_group(pgid, sig)

        watchdog = threading.Thread(target=escalate, name=f"minimcp-reaper-{pgid}", daemon=True)
        watchdog.start()
        try:
            self.process.wait()
        finally:
            done.set()
            watchdog.join()
        _kill_group(pgid, signal.SIGTERM)  # the server's own children, if any outlived it

    def __repr__(self) -> str:
        state = "running" if self.process.poll() is None else f"exited {self.process.returncode}"
        return f"<SubprocessTransport {' '.join(self.command)!r} pid={self.process.pid} {state}>"


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
