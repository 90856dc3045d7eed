"""The client's side of stdio: a server started as a child process, over its stdin/stdout.

:class:`SubprocessTransport` is a :class:`~minimcp.transports.stdio.StdioTransport` whose
streams are a child's pipes (spec basic/transports "stdio"). Besides the framing it adds
what a client needs of a process it started: the child's stderr drained on a thread (a
full pipe would look like a hang), reads with a bound (``read_within()``, for callers that
read their own answers), the exit code and stderr's last lines when the child ends, and the
shutdown of spec basic/lifecycle: close stdin, then SIGTERM, then SIGKILL, to the child's
whole process group.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
from time import monotonic

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only
    import io
    from logging import Logger
    from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

    from ..engine.transport import Failed

from ..errors import ConnectionClosed
from ..logs import get_logger, trace_words
from ..protocol import jsonrpc
from .stdio import CLIENT_MAX_MESSAGE, HEAD, StdioTransport, message_limit, too_long

log: Logger = get_logger(__name__)

#: Bytes a client reads from its server's stdout at a time (a longer message takes more reads).
CHUNK = 65536


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
        max_message: the longest line read from the server, in bytes (its newline aside). A
            longer one is dropped as it comes (never held whole) and fails the call it answers,
            saying the limit. Default: ``MINIMCP_MAX_MESSAGE`` from the environment, else
            :data:`~minimcp.transports.stdio.CLIENT_MAX_MESSAGE` (64 MiB). Given here, it is
            this client's alone: nothing is put in the child's environment, so the server keeps
            its own limit. (``MINIMCP_MAX_MESSAGE`` in ours is inherited by the child with the
            rest, and sets its limit too, as it does every minimcp process's that inherits it.)

    The child inherits this process's environment, but for ``MINIMCP_TRACE``: that one turns
    this client's trace on, which shows every message already. The child gets it when it says
    ``both`` (``MINIMCP_TRACE=both``: the server traces its side too), or when ``env`` sets it.

    Raises:
        FileNotFoundError: the command does not exist (said at once, not as a hang).
        ValueError: ``max_message`` is not a positive number of bytes, or
            ``MINIMCP_MAX_MESSAGE`` is set, and not to one.
    """

    def __init__(self, command: Sequence[str], *, env: Optional[Dict[str, str]] = None,
                 cwd: Optional[str] = None, on_stderr: Optional[Callable[[str], None]] = None,
                 shutdown_timeout: float = 2.0, max_message: Optional[int] = None) -> None:
        import select  # late, both: only a client starts servers; a server's start-up skips them
        import subprocess

        if isinstance(command, str) or not command:
            raise TypeError("command must be a non-empty list of strings, e.g. ['python', 'server.py']")
        max_message = message_limit(CLIENT_MAX_MESSAGE, max_message)  # (before starting anything)
        self.command: List[str] = [str(part) for part in command]
        full_env = None
        # MINIMCP_TRACE turns this client's trace on, not the server's as well (each message
        # would show twice): the child gets it only when it says "both", or when env= sets it.
        hidden = "MINIMCP_TRACE" in os.environ and "both" not in trace_words()
        if env or hidden:
            full_env = dict(os.environ)
            if hidden:
                del full_env["MINIMCP_TRACE"]
            full_env.update(env or {})
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
        super().__init__(self.process.stdout, self.process.stdin, skip_non_json=True,  # type: ignore[arg-type]
                         max_message=max_message)
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
        self._dropping = False  # a line over max_message goes by: its head is in the buffer, the rest dropped
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

    def read(self) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """Return the next message, or ``None`` once the server's stdout closes."""
        return self.read_within(None)

    def read_within(self, timeout: Optional[float]) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """Return the next message if a whole one comes within ``timeout`` seconds (``None``: as
        long as it takes); ``None`` once the server's stdout closes (then a read with no timeout
        waits for the exit, to say how it ended). A line over ``max_message`` is dropped as it
        comes and read as what :func:`~minimcp.transports.stdio.too_long` makes of it (an
        answer's: a :class:`~minimcp.engine.transport.Failed` for the call that waits for it).

        Raises:
            TimeoutError: no whole message came in time (what came of one stays buffered).
        """
        # (read() calls this, not the other way round: a caller reading its own answer comes
        # here directly, one frame less a call.)
        buffer, deadline = self._buffer, None
        while True:
            end = buffer.find(b"\n", self._scanned) if buffer else -1
            if end >= 0:  # a whole line held from an earlier read
                if end > self.max_message:  # its newline came in the read that crossed the limit: over it still
                    head = bytes(buffer[:HEAD])
                    self._scanned = 0
                    del buffer[:end + 1]
                    return self._dropped(head)
                line = bytes(buffer[:end + 1])
                self._scanned = 0  # (first: a Ctrl-C between the two must not skip a newline)
                del buffer[:end + 1]  # (cheap: a bytearray drops its head without copying the rest)
            else:  # read what the pipe has, waiting at most until the deadline
                self._scanned = len(buffer)
                if buffer and self._scanned > self.max_message:  # a line over the limit: keep its head, drop the rest
                    self._dropping = True
                    del buffer[HEAD:]
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
                    if self._dropping:  # (the end of a line over the limit too)
                        head = bytes(buffer)
                        buffer.clear()
                        return self._dropped(head)
                    if buffer:  # a last line without its newline is still a line
                        line, self._scanned = bytes(buffer), 0
                        buffer.clear()
                    else:  # (only a read with no timeout waits for the exit: read_within's is bounded)
                        if not self._closing and timeout is None:
                            self._await_exit()
                        return None
                elif not buffer and chunk.find(b"\n") == len(chunk) - 1:
                    if len(chunk) > self._limit:  # one whole line, but over a limit below CHUNK
                        return self._dropped(chunk[:HEAD])
                    line = chunk  # the usual read: one whole line (no copy into the buffer and out)
                else:
                    if self._dropping:  # (the head in the buffer keeps the usual read above from here)
                        end = chunk.find(b"\n")
                        if end < 0:
                            continue
                        head = bytes(buffer)
                        buffer[:] = chunk[end + 1:]  # the next line's start stays
                        return self._dropped(head)
                    buffer += chunk
                    continue
            message = jsonrpc.parse(line)
            if type(message) is not jsonrpc.Malformed or not self._skips(line, message):
                return message

    def _dropped(self, head: bytes) -> Union[jsonrpc.Malformed, Failed]:
        # The line over the limit has gone by (the buffer holds none of it now): say what it was.
        self._dropping, self._scanned = False, 0
        log.warning("dropped a message of the server over %d bytes (the limit)", self.max_message)
        return too_long(head[:HEAD], self.max_message, "client")

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
