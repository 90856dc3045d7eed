"""How a stdio server ends: at the end of stdin, on SIGTERM and Ctrl-C, and with handlers stuck.

Real server processes over real pipes. The rules pinned here: every request
read before stdin closes is answered, within the grace period (2 s), after
which the handlers still running are cancelled (``ctx.cancelled``) and the
process exits; a request held open only for the peer (``subscriptions/listen``)
is cancelled at once; SIGTERM and Ctrl-C cancel what is in flight and exit 0,
quietly; ``ping`` is answered whatever the handlers are doing.
"""

import json
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import PY, ROOT, TESTING_SERVER

#: A server whose tools block: minding cancellation, or not at all.
SERVER = '''
import sys, threading
from minimcp import Context, Server

def say(text):  # one write per line: print() writes the newline apart, and threads interleave
    sys.stderr.write(text + "\\n")
    sys.stderr.flush()

server = Server("stuck", max_workers=int(sys.argv[1]) if len(sys.argv) > 1 else 16)
never = threading.Event()

@server.tool()
def wait_for_cancel(seconds: float, ctx: Context) -> str:
    """Block until cancelled (or seconds pass); say which on stderr."""
    say(f"started {ctx.request_id}")
    if ctx.cancelled.wait(seconds):
        say(f"cancelled {ctx.request_id}")
        return "cancelled"
    say(f"finished {ctx.request_id}")
    return "finished"

@server.tool()
def stubborn(seconds: float, ctx: Context) -> str:
    """Block for seconds, whatever happens (a tool that ignores cancellation)."""
    say(f"started {ctx.request_id}")
    never.wait(seconds)
    return "done"

server.run()
'''

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
STATELESS_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


def call(id, name, arguments):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


class Proc:
    """A server process driven line by line; stderr read line by line to wait on what it says."""

    def __init__(self, script, *args):
        env = dict(os.environ, PYTHONPATH=ROOT)
        self.proc = subprocess.Popen([PY, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.stderr = []

    def send(self, *messages):
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def recv(self, timeout=10):
        assert select.select([self.proc.stdout], [], [], timeout)[0], f"no answer in {timeout}s"
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        return json.loads(line)

    def wait_stderr(self, text, times=1, limit=200):
        """Read stderr until it has said ``text`` ``times`` times in all (bounded: ``limit`` lines)."""
        for _ in range(limit):
            if "".join(self.stderr).count(text) >= times:
                return
            line = self.proc.stderr.readline().decode()
            assert line, f"stderr ended before {text!r}: {self.stderr}"
            self.stderr.append(line)
        raise AssertionError(f"no {text!r} x{times} on stderr: {self.stderr}")

    def finish(self, timeout=20):
        """Wait for the exit; return (code, the rest of stdout, all of stderr). Its output is
        small, so waiting before reading cannot block it on a full pipe."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the server did not exit in {timeout}s: {self.stop()}") from None
        return code, self.proc.stdout.read(), self.stop()

    def stop(self):
        """Kill it if it still runs; close its pipes; return all it wrote to stderr."""
        if self.proc.stderr.closed:
            return "".join(self.stderr)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.append(self.proc.stderr.read().decode())
        err = "".join(self.stderr)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except OSError:  # stdin: a broken pipe, the server gone
                pass
        return err


@pytest.fixture
def stuck_server(tmp_path):
    script = tmp_path / "stuck_server.py"
    script.write_text(SERVER)
    started = []

    def start(*args):
        server = Proc(str(script), *args)
        started.append(server)
        server.send(INIT)
        assert server.recv()["id"] == 0
        server.send(INITIALIZED)
        return server

    yield start
    for server in started:
        server.stop()


# -- item 2: every request read before EOF is answered -------------------------------


def test_two_thousand_pipelined_calls_then_eof_are_all_answered():
    lines = [INIT, INITIALIZED] + [call(i, "echo", {"text": str(i)}) for i in range(1, 2001)]
    out = subprocess.run([PY, TESTING_SERVER], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                         capture_output=True, timeout=60)
    ids = sorted(json.loads(line)["id"] for line in out.stdout.splitlines())
    assert ids == list(range(2001)), f"{2001 - len(ids)} answers missing"
    assert out.returncode == 0 and b"Traceback" not in out.stderr


# -- item 3: the grace, then cancellation; listeners at once --------------------------


def test_a_handler_still_running_at_eof_is_cancelled_after_the_grace(stuck_server):
    server = stuck_server()
    server.send(call(1, "wait_for_cancel", {"seconds": 60}))
    server.wait_stderr("started 1")
    closed = time.monotonic()
    server.proc.stdin.close()
    code, out, err = server.finish()
    assert time.monotonic() - closed < 20  # (2 s of grace; without the fix it waited the tool's 60)
    assert "cancelled 1" in err and code == 0 and out == b""  # cancelled: no answer (spec)


def test_a_handler_that_ignores_cancellation_does_not_keep_the_process_alive(stuck_server):
    server = stuck_server()
    server.send(call(1, "stubborn", {"seconds": 120}))
    server.wait_stderr("started 1")
    server.proc.stdin.close()
    code, out, err = server.finish(timeout=30)
    assert code == 0 and "Traceback" not in err and "Fatal" not in err


def test_an_open_listen_request_does_not_hold_up_the_exit(stuck_server):
    """spec 2026-07-28 basic/patterns/subscriptions: a listen stream only waits for its peer;
    once the peer is gone there is nothing to wait for, so no grace period is spent on it."""
    server = stuck_server()
    server.send({"jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
                 "params": {"notifications": {"toolsListChanged": True}, "_meta": STATELESS_META}})
    assert server.recv()["method"] == "notifications/subscriptions/acknowledged"
    closed = time.monotonic()
    server.proc.stdin.close()
    code, out, err = server.finish()
    took = time.monotonic() - closed
    assert code == 0 and "Traceback" not in err
    # the grace alone is 2 s; an exit that skips it takes ~0.2 s, so 1.9 s is room for a loaded machine
    assert took < 1.9, f"exit took {took:.2f}s: the listen request waited out the 2 s grace"


# -- item 4: SIGTERM and Ctrl-C -------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_with_a_call_in_flight_cancels_it_and_exits_zero_quietly(stuck_server, sig, ctrl_c):
    for _ in range(3):  # the fatal error of a signal inside buffered I/O was a race: try a few times
        server = stuck_server()
        server.send(call(1, "wait_for_cancel", {"seconds": 60}))
        server.wait_stderr("started 1")
        server.proc.send_signal(sig)
        code, out, err = server.finish()
        assert "Traceback" not in err and "Fatal" not in err, err
        assert "cancelled 1" in err and code == 0


def test_sigterm_during_the_grace_ends_it_at_once_quietly(stuck_server):
    server = stuck_server()
    server.send(call(1, "stubborn", {"seconds": 120}))
    server.wait_stderr("started 1")
    server.proc.stdin.close()  # the grace begins: the tool will not stop
    server.proc.send_signal(signal.SIGTERM)
    code, out, err = server.finish()
    assert code == 0 and "Traceback" not in err and "Fatal" not in err and "KeyboardInterrupt" not in err


# -- item 6: ping is never queued behind user code ------------------------------------


def test_ping_is_answered_while_every_worker_is_stuck(stuck_server):
    """spec basic/utilities/ping: the receiver MUST respond promptly."""
    server = stuck_server("4")
    # 3 of the 4 reading threads and the 4 pool workers run a stubborn tool each (the 4th
    # thread reads on); the last three calls wait in the pool's queue, where a ping would too.
    server.send(*[call(i, "stubborn", {"seconds": 60}) for i in range(1, 11)])
    server.wait_stderr("started", times=7)
    server.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    assert server.recv() == {"jsonrpc": "2.0", "id": "p", "result": {}}
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    server.send({"jsonrpc": "2.0", "id": "p2", "method": "ping"})
    assert server.recv() == {"jsonrpc": "2.0", "id": "p2", "result": {}}
    server.proc.send_signal(signal.SIGTERM)
    code, out, err = server.finish()
    assert code == 0
