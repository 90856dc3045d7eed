"""A message's size is capped on stdio and WebSocket, both ends (issue 29): a line without end
(or a frame past the limit) is dropped as it comes, never held whole, answered with an error
that says the limit and how to raise it, and the connection (stdio) or the server (WebSocket)
serves on. The limit is ``max_message=`` (``server.run()``, ``connect()``, each transport),
else ``MINIMCP_MAX_MESSAGE``, else a default: 64 MiB over stdio, both ways (the peer is the
process at the other end of the pipe), 4 MiB for a WebSocket server (the HTTP body cap's).

Real processes and sockets throughout; the server's memory is measured in the server process
itself (``VmHWM`` and ``VmRSS`` of ``/proc/self/status``), the client's with ``tracemalloc``.
"""

import base64
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest
import requests

import minimcp
from minimcp import RPCError, Server
from minimcp.engine.transport import Failed
from minimcp.errors import ConnectionClosed, ProtocolError
from minimcp.protocol import jsonrpc
from minimcp.transports.child import SubprocessTransport
from minimcp.transports.stdio import CLIENT_MAX_MESSAGE, SERVER_MAX_MESSAGE, StdioTransport

from conftest import PY, ROOT, TESTING_SERVER

MiB = 1024 * 1024

#: A stdio server with an echo tool and one that reports its own memory, in kB; its limit is
#: ``server.run(max_message=argv[1])`` when given.
SERVER = """
import sys

from minimcp import Server

server = Server("limits")


@server.tool()
def echo(text: str) -> str:
    return text


@server.tool()
def memory() -> dict:
    # VmHWM, not ru_maxrss: the latter survives exec, so it starts at the parent's size
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return {"peak_kb": int(fields["VmHWM"].split()[0]), "rss_kb": int(fields["VmRSS"].split()[0])}


server.run(max_message=int(sys.argv[1]) if len(sys.argv) > 1 else None)
"""

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")


@pytest.fixture
def server_script(tmp_path):
    path = tmp_path / "limits_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return str(path)


def call(request_id, name, arguments):
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


class Raw:
    """The server as a child process, driven line by line; killed after 30 s whatever happens,
    so no read below can wait for ever."""

    def __init__(self, script, *args, env=None):
        self.proc = subprocess.Popen([PY, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=ROOT, **(env or {})))
        self.watchdog = threading.Timer(30, self.proc.kill)
        self.watchdog.start()

    def send(self, data):
        self.proc.stdin.write(data if isinstance(data, bytes) else json.dumps(data).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self):
        line = self.proc.stdout.readline()
        assert line, "the server closed its stdout"
        return json.loads(line)

    def initialize(self):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        assert "result" in self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def memory(self, request_id):
        self.send(call(request_id, "memory", {}))
        return self.recv()["result"]["structuredContent"]

    def close(self):
        """End its stdin and expect a clean exit; whatever fails on the way, the child is killed
        and reaped (the watchdog is cancelled only then, so it guards the wait too)."""
        try:
            self.proc.stdin.close()
            self.proc.stdout.close()
            assert self.proc.wait(10) == 0
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.watchdog.cancel()


# -- stdio, the server reading ---------------------------------------------------------------------


@linux_only
def test_a_line_without_end_is_dropped_and_the_server_serves_on(server_script):
    """64 MiB without a newline, then a request, to a server run with ``max_message=`` 4 MiB: the
    first gets -32600 with id null, saying the limit and how to raise it; the request gets its
    answer; the server's memory peak rises by far less than the line (it read a limit's worth at
    most) and its RSS comes back."""
    raw = Raw(server_script, str(4 * MiB))
    try:
        raw.initialize()
        before = raw.memory(1)
        raw.send(b"x" * (64 * MiB) + b"\n")  # (the pipe takes it as fast as the server reads)
        raw.send(call(2, "echo", {"text": "still here"}))
        error = raw.recv()
        assert error["id"] is None and error["error"]["code"] == -32600
        message = error["error"]["message"]
        assert f"limit of {4 * MiB} bytes (4 MiB)" in message and "MINIMCP_MAX_MESSAGE=" in message
        assert raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "still here"}], "isError": False}}
        after = raw.memory(3)
    finally:
        raw.close()
    grown_peak, grown_rss = after["peak_kb"] - before["peak_kb"], after["rss_kb"] - before["rss_kb"]
    print(f"server: peak {before['peak_kb']} -> {after['peak_kb']} kB, rss {before['rss_kb']} -> {after['rss_kb']} kB")
    assert grown_peak < 16 * 1024, (before, after)  # 64 MiB went by
    assert grown_rss < 8 * 1024, (before, after)


def test_a_request_over_the_servers_max_message_fails_at_once_and_the_server_serves_on(server_script):
    """Through minimcp's client, to a server run with ``server.run(max_message=1 MiB)``: a call
    whose request is over it fails at once with the error (the request's own id read from its
    first bytes), and the next call is answered."""
    with minimcp.connect([PY, server_script, str(MiB)], env={"PYTHONPATH": ROOT}, timeout=30) as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("echo", {"text": "y" * (2 * MiB)})
        assert caught.value.code == -32600 and "limit of 1048576 bytes (1 MiB)" in caught.value.message
        assert client.call_tool("echo", {"text": "next"}).text == "next"


def test_a_stdio_server_takes_large_arguments_by_default_and_the_environment_can_lower_it(server_script):
    """A stdio server's peer is the process that started it: by default it takes what that
    process legitimately sends, here a 20 MiB tool argument (a file, an image in a sampling
    result), up to 64 MiB, the client's own figure. ``MINIMCP_MAX_MESSAGE`` in its environment
    sets its limit too."""
    assert SERVER_MAX_MESSAGE == CLIENT_MAX_MESSAGE == 64 * MiB
    text = base64.b64encode(os.urandom(15 * MiB)).decode()  # 20 MiB
    with minimcp.connect([PY, server_script], env={"PYTHONPATH": ROOT}, timeout=30) as client:
        assert client.call_tool("echo", {"text": text}).text == text
    with minimcp.connect([PY, server_script], env={"PYTHONPATH": ROOT, "MINIMCP_MAX_MESSAGE": str(MiB)},
                         timeout=30) as client:
        with pytest.raises(RPCError, match="limit of 1048576 bytes"):
            client.call_tool("echo", {"text": text[:2 * MiB]})


# -- stdio, the client reading ---------------------------------------------------------------------


def test_an_answer_over_the_clients_limit_fails_its_call_and_is_never_held(monkeypatch):
    """A server answering with 20 MB, a client limited to 1 MiB (MINIMCP_MAX_MESSAGE, which the
    child inherits too: its requests are small): the call fails at once with ProtocolError
    saying the limit, the client's memory peak stays near the limit, and the next call works."""
    monkeypatch.setenv("MINIMCP_MAX_MESSAGE", str(MiB))
    with minimcp.connect([PY, TESTING_SERVER], timeout=30) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolError) as caught:
                client.call_tool("big", {"size": 20_000_000})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        print(f"client: traced peak {peak // 1024} kB during a 20 MB answer")
        assert "over this client's limit of 1048576 bytes" in str(caught.value)
        assert peak < 4 * MiB
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_a_clients_max_message_is_its_own_and_never_reaches_its_server(server_script):
    """``connect(max_message=1 MiB)``: the client's limit alone. The server (started without it
    in its environment) takes a 2 MiB request, and its 2 MiB answer fails the call on the
    client's side, saying the client's limit; the next call works."""
    with minimcp.connect([PY, server_script], env={"PYTHONPATH": ROOT}, timeout=30, max_message=MiB) as client:
        with pytest.raises(ProtocolError, match="over this client's limit of 1048576 bytes"):
            client.call_tool("echo", {"text": "y" * (2 * MiB)})
        assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_a_bad_limit_in_the_environment_is_said_at_once(monkeypatch):
    monkeypatch.setenv("MINIMCP_MAX_MESSAGE", "lots")
    with pytest.raises(ValueError, match="MINIMCP_MAX_MESSAGE should be a number of bytes"):
        with minimcp.connect([PY, TESTING_SERVER], timeout=30):
            pass


@pytest.mark.parametrize("limit", [0, -1])
def test_a_max_message_of_zero_or_less_is_refused_naming_it(limit):
    """0 is no "default" and a negative no limit: each place that takes ``max_message=`` says
    so, before it starts or connects to anything."""
    from minimcp.server.http.wsgiserver import BackgroundServer
    from minimcp.transports.websocket import WebSocketServerTransport, WebSocketTransport

    reading, writing = os.pipe()
    with open(reading, "rb") as reader, open(writing, "wb") as writer:
        makers = {
            "StdioTransport": lambda: StdioTransport(reader, writer, max_message=limit),
            "SubprocessTransport": lambda: SubprocessTransport([PY, TESTING_SERVER], max_message=limit),
            "WebSocketTransport": lambda: WebSocketTransport("ws://127.0.0.1:9/ws", max_message=limit),
            "WebSocketServerTransport": lambda: WebSocketServerTransport(reader, writer, max_message=limit),
            "connect": lambda: minimcp.connect([PY, TESTING_SERVER], max_message=limit),
            "BackgroundServer": lambda: BackgroundServer(lambda e, s: [], websockets={"/ws": Server("x")},
                                                         max_message=limit),
        }
        for where, make in makers.items():
            with pytest.raises(ValueError, match=f"max_message should be a positive number of bytes.*not {limit}"):
                make()
                pytest.fail(f"{where} took max_message={limit}")


def test_server_run_refuses_a_max_message_of_zero_before_serving(tmp_path):
    script = tmp_path / "zero.py"
    script.write_text("from minimcp import Server\nServer('zero').run(max_message=0)\n", encoding="utf-8")
    done = subprocess.run([PY, str(script)], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=30)
    assert done.returncode != 0 and "max_message should be a positive number of bytes" in done.stderr, done


# -- the client's reads of a child: the limit is exact --------------------------------------------

#: A "server" that writes lines of set sizes in steps, each step when a line comes on its stdin.
STEPS = r"""
import os, sys

limit = int(sys.argv[1])


def line(request_id, size):
    # a JSON-RPC answer of exactly `size` bytes, its newline aside
    head = b'{"jsonrpc":"2.0","id":%d,"result":{"pad":"' % request_id
    return head + b"x" * (size - len(head) - 3) + b'"}}'


over = line(2, limit + 1)
# 1: a line of exactly the limit, then the first bytes of one just over it, still under the limit
os.write(1, line(1, limit) + b"\n" + over[:limit - 10])
sys.stdin.buffer.readline()
# 2: the rest of it: its newline comes in the read that takes it over the limit
os.write(1, over[limit - 10:] + b"\n" + line(3, 100) + b"\n")
sys.stdin.buffer.readline()
# 3: a whole line over the limit in one read of its own
os.write(1, line(4, limit + 1) + b"\n")
sys.stdin.buffer.readline()
os.write(1, line(5, 100) + b"\n")
sys.stdin.buffer.readline()
"""


def test_a_childs_line_over_the_limit_is_dropped_to_the_byte(tmp_path):
    """The limit is exact, however the pipe cuts the lines: a line of ``max_message`` bytes is
    read; one of a byte more is dropped (and fails the call it answers) whether its newline
    comes in the read that crosses the limit or the whole line comes in one read. (Writes under
    PIPE_BUF: each one arrives whole.)"""
    script = tmp_path / "steps.py"
    script.write_text(STEPS, encoding="utf-8")
    transport = SubprocessTransport([PY, str(script), "1000"], max_message=1000)
    try:
        def step():
            transport.write({"jsonrpc": "2.0", "method": "go"})

        def read():
            return transport.read_within(10)

        assert isinstance(read(), jsonrpc.Response)  # exactly 1000 bytes
        step()
        dropped = read()
        assert isinstance(dropped, Failed) and dropped.request_id == 2, dropped
        assert "over this client's limit of 1000 bytes" in str(dropped.error)
        assert read().id == 3
        step()
        dropped = read()
        assert isinstance(dropped, Failed) and dropped.request_id == 4, dropped
        step()
        assert read().id == 5
    finally:
        transport.close()


# -- WebSocket ------------------------------------------------------------------------------------


@pytest.fixture
def ws_server():
    from minimcp.server.http.wsgiserver import BackgroundServer

    server = Server("ws-limits")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def big(size: int) -> str:
        return "z" * size

    app = server.wsgi_app()
    try:
        with BackgroundServer(app, websockets={"/ws": server}) as running:
            yield running.url.replace("http://", "ws://") + "/ws"
    finally:
        app.close()


def test_a_websocket_message_over_the_servers_limit_closes_1009_and_the_server_serves_on(ws_server):
    """5 MiB, over the server's 4 MiB (the HTTP body cap's figure): a 1009 close that says the
    limit, for that connection only; the next client is served."""
    import websocket

    ws = websocket.create_connection(ws_server, subprotocols=["mcp"], timeout=10)
    try:
        ws.send("x" * (5 * MiB))
        opcode, frame = ws.recv_data()
        assert opcode == websocket.ABNF.OPCODE_CLOSE
        assert frame[:2] == (1009).to_bytes(2, "big") and b"4194304" in frame[2:]
    finally:
        ws.close()
    with minimcp.connect(ws_server, timeout=10) as client:
        assert client.call_tool("echo", {"text": "served"}).text == "served"


def test_a_websocket_answer_over_the_clients_limit_closes_1009(ws_server, monkeypatch):
    """The client's side: a frame whose header says more than the limit closes the connection
    (1009) before its payload is read; the waiting call fails saying why; the server serves on."""
    monkeypatch.setenv("MINIMCP_MAX_MESSAGE", str(MiB))
    with minimcp.connect(ws_server, timeout=10) as client:
        with pytest.raises(ConnectionClosed, match=r"1009, message too big.*over this client's limit of 1048576"):
            client.call_tool("big", {"size": 2 * MiB})
    with minimcp.connect(ws_server, timeout=10) as client:
        assert client.call_tool("echo", {"text": "next"}).text == "next"


def test_a_websocket_routes_limit_follows_the_apps_max_body():
    """A WebSocket route beside an HTTP app takes the app's ``max_body`` as its limit: a
    message too big for a POST is too big here (1009, saying the limit)."""
    import websocket

    from minimcp.server.http.wsgiserver import BackgroundServer

    server = Server("ws-body")
    app = server.wsgi_app(max_body=MiB)
    try:
        with BackgroundServer(app, websockets={"/ws": server}) as running:
            ws = websocket.create_connection(running.url.replace("http://", "ws://") + "/ws",
                                             subprotocols=["mcp"], timeout=10)
            try:
                ws.send("x" * (2 * MiB))
                opcode, frame = ws.recv_data()
            finally:
                ws.close()
    finally:
        app.close()
    assert opcode == websocket.ABNF.OPCODE_CLOSE
    assert frame[:2] == (1009).to_bytes(2, "big") and b"1048576" in frame[2:]


def test_a_bad_limit_in_the_environment_stops_a_websocket_server_before_it_listens(monkeypatch):
    """Worked out once, when the HTTP server is made: a bad ``MINIMCP_MAX_MESSAGE`` is a
    ValueError there, not a failure in each connection's thread after its 101."""
    from minimcp.server.http.wsgiserver import BackgroundServer

    monkeypatch.setenv("MINIMCP_MAX_MESSAGE", "lots")

    def app(environ, start_response):  # no max_body: the variable is what counts
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]

    with pytest.raises(ValueError, match="MINIMCP_MAX_MESSAGE should be a number of bytes"):
        BackgroundServer(app, websockets={"/ws": Server("ws-env")}).httpd.server_close()


#: A server run over HTTP with a WebSocket route, its limit from argv.
NETWORK_SERVER = """
import sys

from minimcp import Server

server = Server("limits-net")
server.run("http", port=0, websocket_path="/ws", max_message=int(sys.argv[1]))
"""


def test_server_run_max_message_bounds_a_post_and_a_websocket_message(tmp_path):
    """``server.run("http", websocket_path="/ws", max_message=1 MiB)``: a 2 MiB POST is a 413
    (the app's ``max_body`` follows it) and a 2 MiB WebSocket message closes 1009."""
    import websocket

    script = tmp_path / "net.py"
    script.write_text(NETWORK_SERVER, encoding="utf-8")
    proc = subprocess.Popen([PY, str(script), str(MiB)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        said = proc.stderr.readline()  # "serving MCP at http://127.0.0.1:PORT/mcp and ws://127.0.0.1:PORT/ws"
        found = re.search(r"(http://\S+/mcp) and (ws://\S+/ws)", said)
        assert found, said
        big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * (2 * MiB)}}
        response = requests.post(found.group(1), json=big, timeout=30, headers={
            "Accept": "application/json, text/event-stream"})
        assert response.status_code == 413 and "1048576" in response.text
        ws = websocket.create_connection(found.group(2), subprotocols=["mcp"], timeout=10)
        try:
            ws.send("x" * (2 * MiB))
            opcode, frame = ws.recv_data()
        finally:
            ws.close()
        assert opcode == websocket.ABNF.OPCODE_CLOSE
        assert frame[:2] == (1009).to_bytes(2, "big") and b"1048576" in frame[2:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        watchdog.cancel()
        proc.stderr.close()


def test_unmasking_is_exact_for_every_length_and_fast():
    """RFC 6455 §5.3: octet i of the payload is XORed with octet i mod 4 of the mask, for a
    length that is no multiple of 4 too; 4 MiB take well under a second (a Python loop over the
    bytes took about one)."""
    from minimcp.transports.websocket import unmask

    mask = bytes([0x0F, 0xF0, 0xAA, 0x55])
    for size in (0, 1, 2, 3, 4, 5, 6, 7, 9, 125, 126, 65537):
        payload = os.urandom(size)
        expected = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
        assert unmask(mask, payload) == expected, size
        assert unmask(mask, expected) == payload, size
    payload = os.urandom(4 * MiB + 3)
    started = time.perf_counter()
    masked = unmask(mask, payload)
    took = time.perf_counter() - started
    assert masked[-3:] == bytes(byte ^ mask[i] for i, byte in enumerate(payload[-3:]))  # (4 MiB + 3: 0, 1, 2)
    assert unmask(mask, masked) == payload
    assert took < 0.5, f"unmasking 4 MiB took {took:.2f} s"


def test_a_message_near_4_mib_round_trips_over_websocket(ws_server):
    """A message just under the server's 4 MiB, of random text and a length no multiple of 4,
    masked by websocket-client with a random mask: the tool gets it unchanged, and it comes back."""
    text = base64.b64encode(os.urandom(3 * MiB)).decode()[:4 * MiB - 1001]
    with minimcp.connect(ws_server, timeout=30) as client:
        assert client.call_tool("echo", {"text": text}).text == text
