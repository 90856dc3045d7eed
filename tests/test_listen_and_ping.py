"""Limits that hold whatever the handlers do (issue 29): the reading answers pings and cancels with
every worker stuck, a request past the pool's bounded queue is turned away (-32603 "server busy")
instead of waiting, and a ``subscriptions/listen`` costs no thread while it listens.

Real server processes over real pipes, and real HTTP servers (in this process, and a child stopped
by SIGTERM). spec basic/utilities/ping (respond promptly), basic/utilities/cancellation, 2026-07-28
basic/patterns/subscriptions.
"""

import json
import os
import re
import select
import signal
import subprocess
import threading
import time

import pytest
import requests

from minimcp import Context, Server
from minimcp.engine.inflight import MAX_HELD
from minimcp.engine.threads import MAX_QUEUED
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT

#: A stdio server whose tool hangs until cancelled (60 s at most), saying so on stderr.
SERVER = '''
import sys
from minimcp import Context, Server

server = Server("hung", max_workers=int(sys.argv[1]))
server.add_resource(lambda: "v1", "mem://doc")

@server.tool()
def hang(ctx: Context) -> str:
    """Wait until cancelled."""
    sys.stderr.write(f"started {ctx.request_id}\\n")
    sys.stderr.flush()
    if ctx.cancelled.wait(60):
        sys.stderr.write(f"cancelled {ctx.request_id}\\n")
        sys.stderr.flush()
    return "done"

@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text

@server.tool()
def touch() -> str:
    """Tell every listener that the resource changed."""
    server.notify_resource_updated("mem://doc")
    return "touched"

server.run()
'''

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def call(id, name, arguments=None):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments or {}, "_meta": META}}


def listen(id, **filters):
    return {"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"notifications": filters or {"resourceSubscriptions": ["mem://doc"]}, "_meta": META}}


def cancel(id):
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}


DISCOVER = {"jsonrpc": "2.0", "id": "discover", "method": "server/discover", "params": {"_meta": META}}
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}


class Lines:
    """The lines of a pipe, each within a timeout (select() on the pipe, and a buffer of our own:
    a file object's buffer would hide whole lines from select())."""

    def __init__(self, pipe):
        self.fd = pipe.fileno()
        self.buffer = b""

    def next(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            assert select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))[0], \
                f"no line in {timeout}s"
            chunk = os.read(self.fd, 65536)
            assert chunk, "the pipe was closed"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


class Child:
    """The stdio server, driven line by line; its stderr read line by line to wait on what it says."""

    def __init__(self, script, max_workers):
        self.proc = subprocess.Popen([PY, str(script), str(max_workers)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, PYTHONPATH=ROOT))
        self.out, self.err = Lines(self.proc.stdout), Lines(self.proc.stderr)
        self.said = []

    def send(self, *messages):
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def recv(self, timeout=5.0):
        """The next message, within ``timeout`` seconds."""
        return json.loads(self.out.next(timeout))

    def answer(self, request_id, timeout=5.0, limit=2000):
        """The answer to ``request_id``, within ``timeout`` seconds (what comes before it: skipped,
        ``limit`` messages at most)."""
        deadline = time.monotonic() + timeout
        for _ in range(limit):
            message = self.recv(max(0.0, deadline - time.monotonic()))
            if message.get("id") == request_id and "method" not in message:
                return message
        raise AssertionError(f"no answer to {request_id!r} in {limit} messages")

    def wait_stderr(self, text, times=1, limit=2000):
        """Read stderr until it has said ``text`` ``times`` times (bounded: ``limit`` lines)."""
        for _ in range(limit):
            if sum(line.count(text) for line in self.said) >= times:
                return
            self.said.append(self.err.next(10).decode())
        raise AssertionError(f"no {text!r} x{times} on stderr: {self.said}")

    def stop(self):
        """SIGTERM (every handler is cancelled), then the exit; killed if it does not come."""
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    pipe.close()
                except OSError:  # stdin: a broken pipe, the server gone
                    pass


@pytest.fixture
def child(tmp_path):
    script = tmp_path / "hung_server.py"
    script.write_text(SERVER)
    started = []

    def start(max_workers):
        server = Child(script, max_workers)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# -- 1. pings and cancels get through whatever the pool is doing --------------------------------


def test_a_ping_and_a_cancel_get_through_with_more_tools_hung_than_workers(child):
    """spec basic/utilities/ping: the receiver MUST respond promptly. 2026-07-28 has no ping: a
    client checks a server answers with server/discover (Client.ping() does), which waited in the
    pool's queue behind the hung tools."""
    server = child(2)
    server.send(*[call(i, "hang") for i in range(1, 41)])
    server.wait_stderr("started", times=3)  # a reading thread and the 2 pool workers hang (the other
                                            # reading thread reads on); 37 wait in the pool's queue
    started = time.monotonic()
    server.send(DISCOVER, PING)
    assert server.answer("discover")["result"]["resultType"] == "complete"
    assert server.answer("ping") == {"jsonrpc": "2.0", "id": "ping", "result": {}}
    assert time.monotonic() - started < 5
    server.send(cancel(1))  # read by the reading thread, and seen by the hung tool at once
    server.wait_stderr("cancelled 1")


def test_a_request_past_the_bounded_queue_is_turned_away_busy_and_the_reading_goes_on(child):
    """A request that finds every worker busy waits in the pool's queue; past MAX_QUEUED it gets
    -32603 "server busy" at once (never a reader blocked, never memory without bound)."""
    server = child(1)  # 1 worker hangs, MAX_QUEUED calls wait, the rest are turned away
    extra = 10
    last = 1 + MAX_QUEUED + extra
    server.send(call(1, "hang"))
    server.wait_stderr("started")  # the worker holds call 1: every later call waits, or is turned away
    server.send(*[call(i, "hang") for i in range(2, last + 1)])
    busy = []
    while len(busy) < extra:
        message = server.recv(10)
        assert message["error"]["code"] == -32603 and "Server busy" in message["error"]["message"], message
        busy.append(message["id"])
    # the last ones read (one more may wait while a thread takes a queued call a moment late)
    assert len(set(busy)) == extra and all(last - extra <= i <= last for i in busy), busy
    server.send(PING)
    assert server.answer("ping", limit=2) == {"jsonrpc": "2.0", "id": "ping", "result": {}}


def test_past_the_queue_an_http_request_is_turned_away_busy_and_ping_is_answered():
    """Over HTTP the app's pool is bounded the same way (``max_queued``): a POST past it is
    answered -32603 at once instead of waiting; a ping, and a cancel, still get through."""
    server = Server("hung")
    started, cancelled, one_cancelled = [], [], threading.Event()

    @server.tool()
    def hang(ctx: Context) -> str:
        started.append(ctx.request_id)
        if ctx.cancelled.wait(30):
            cancelled.append(ctx.request_id)
            one_cancelled.set()
        return "done"

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    streams = []
    with BackgroundServer(server.wsgi_app(max_workers=2, max_queued=2)) as running, requests.Session() as http:
        url = running.url + "/mcp"
        try:
            opened = http.post(url, headers=headers, timeout=5, json={
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
            headers = {**headers, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"],
                       "MCP-Protocol-Version": "2025-11-25"}
            http.post(url, headers=headers, timeout=5, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            for i in range(1, 5):  # 2 run, 2 wait in the queue: each an open SSE answer
                stream = requests.post(url, headers=headers, stream=True, timeout=5, json={
                    "jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
                streams.append(stream)
                assert stream.status_code == 200
            turned_away = http.post(url, headers=headers, timeout=5, json={
                "jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
            error = turned_away.json()["error"]
            assert error["code"] == -32603 and "Server busy" in error["message"], error
            ping = http.post(url, headers=headers, timeout=5, json=PING)
            assert ping.json() == {"jsonrpc": "2.0", "id": "ping", "result": {}}
            discover = http.post(url, timeout=5, json=DISCOVER, headers={
                "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
            assert discover.json()["result"]["resultType"] == "complete"
            assert sorted(started) == [1, 2]
            http.post(url, headers=headers, timeout=5, json=cancel(1))
            assert one_cancelled.wait(5) and cancelled == [1]
        finally:
            for stream in streams:
                stream.close()


# -- 2. a listen costs no thread -------------------------------------------------------------------


def test_two_hundred_listens_on_one_stdio_connection_then_a_call_is_answered(child):
    """Each listen used to hold a thread until cancelled: 31 were acknowledged, and then a
    tools/call waited for ever. Now each is held open with no thread; a cancelled one hears no more."""
    server = child(16)
    server.send(*[listen(i) for i in range(1, 201)])
    acknowledged = set()
    for _ in range(200):
        note = server.recv()
        assert note["method"] == "notifications/subscriptions/acknowledged", note
        acknowledged.add(note["params"]["_meta"][SUBSCRIPTION])
    assert acknowledged == set(range(1, 201))
    server.send(call("echo", "echo", {"text": "still here"}))
    assert server.answer("echo")["result"]["content"][0]["text"] == "still here"
    server.send(cancel(7), call("touch", "touch"))
    heard = set()
    for _ in range(200):  # 199 updates, one per listener still open, and the call's answer
        message = server.recv()
        if message.get("method") == "notifications/resources/updated":
            heard.add(message["params"]["_meta"][SUBSCRIPTION])
    assert heard == set(range(1, 201)) - {7}


def test_listens_past_the_bound_are_refused_at_open(child):
    """MAX_HELD listens per connection; the next one gets a clear -32603 at once, not silence."""
    server = child(4)
    server.send(*[listen(i) for i in range(1, MAX_HELD + 2)])
    acknowledged, refused = [], []
    for _ in range(MAX_HELD + 1):
        message = server.recv()
        if message.get("method") == "notifications/subscriptions/acknowledged":
            acknowledged.append(message["params"]["_meta"][SUBSCRIPTION])
        else:
            refused.append(message)
    # (handled on 4 threads: whichever came last to the bound is the one refused)
    assert len(acknowledged) == MAX_HELD and len(refused) == 1
    error = refused[0]["error"]
    assert error["code"] == -32603 and f"{MAX_HELD} requests are held open" in error["message"], error
    server.send(cancel(acknowledged[0]), listen("again"))  # one cancelled: room for one more
    note = server.recv()
    assert note["params"]["_meta"][SUBSCRIPTION] == "again"


def _sse_messages(response, within=5.0):
    """The JSON-RPC messages of an SSE response, as they come, each within ``within`` seconds (a
    stream with nothing to say still sends a keepalive each second: the wait is bounded by them)."""
    deadline = time.monotonic() + within
    for line in response.iter_lines():
        if line.startswith(b"data: "):
            yield json.loads(line[6:])
            deadline = time.monotonic() + within
        elif time.monotonic() > deadline:
            raise AssertionError(f"no message on the stream in {within}s")


def test_more_http_listeners_than_workers_are_all_acknowledged_and_all_hear_an_update():
    """spec 2026-07-28 basic/patterns/subscriptions, over Streamable HTTP: 10 listen streams on an
    app with 4 workers. Each used to hold a worker: the 5th listener heard nothing at all."""
    server = Server("listened")
    server.add_resource(lambda: "v1", "mem://doc")
    seen = []

    @server.add_middleware
    def count(request, call_next):
        seen.append(request.method)
        return call_next(request)

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    streams = []
    with BackgroundServer(server.wsgi_app(max_workers=4)) as running:
        try:
            for i in range(10):
                response = requests.post(running.url + "/mcp", json=listen(i), headers=headers, stream=True,
                                         timeout=5)
                streams.append((response, _sse_messages(response)))
            for i, (_, messages) in enumerate(streams):
                ack = next(messages)
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                assert ack["params"]["_meta"] == {SUBSCRIPTION: i}
            server.notify_resource_updated("mem://doc")
            for i, (_, messages) in enumerate(streams):
                update = next(messages)
                assert update["method"] == "notifications/resources/updated", update
                assert update["params"] == {"uri": "mem://doc", "_meta": {SUBSCRIPTION: i}}
            assert seen == ["subscriptions/listen"] * 10  # the middleware saw each listen once
        finally:
            for response, _ in streams:
                response.close()
    assert server.subscriptions == set()


# -- 3. a stopping server ends its listen streams --------------------------------------------------

HTTP_SERVER = '''
from minimcp import Server

server = Server("listened")
server.add_resource(lambda: "v1", "mem://doc")
server.run("http", port=0)
'''


def test_sigterm_with_a_listen_stream_open_exits_within_seconds(tmp_path):
    """A listen stream held a worker, and its connection lived on: serve() took ~15 s to exit
    (the workers' 5 s, then the connections' 10 s). Now it ends with the app, as GET streams do."""
    script = tmp_path / "http_server.py"
    script.write_text(HTTP_SERVER)
    proc = subprocess.Popen([PY, str(script)], stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=ROOT))
    response = None
    try:
        assert select.select([proc.stderr], [], [], 20)[0], "the server said nothing in 20 s"
        where = re.search(rb"http://127\.0\.0\.1:(\d+)/mcp", proc.stderr.readline())
        assert where, "the server did not say where it listens"
        response = requests.post(f"http://127.0.0.1:{int(where.group(1))}/mcp", json=listen(1), stream=True,
                                 timeout=5, headers={
                                     "Accept": "application/json, text/event-stream",
                                     "Content-Type": "application/json", "MCP-Protocol-Version": "2026-07-28",
                                     "Mcp-Method": "subscriptions/listen"})
        messages = _sse_messages(response)
        assert next(messages)["method"] == "notifications/subscriptions/acknowledged"
        stopped = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(8)
        except subprocess.TimeoutExpired:
            raise AssertionError("the server did not exit within 8 s of SIGTERM") from None
        took = time.monotonic() - stopped
        assert code == 0 and took < 4, f"exit {code} after {took:.1f}s"
        assert list(messages) == []  # the stream ended (no more messages, no error)
    finally:
        if response is not None:
            response.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_an_http_listen_costs_no_worker_thread():
    """While 3 listeners listen, the app's pool has started no thread at all."""
    server = Server("listened")
    server.add_resource(lambda: "v1", "mem://doc")
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    app = server.wsgi_app(max_workers=4)
    streams = []
    with BackgroundServer(app) as running:
        try:
            for i in range(3):
                response = requests.post(running.url + "/mcp", json=listen(i), headers=headers, stream=True,
                                         timeout=5)
                streams.append(response)
                assert next(_sse_messages(response))["method"] == "notifications/subscriptions/acknowledged"
            assert app.workers.threads == []
        finally:
            for response in streams:
                response.close()
