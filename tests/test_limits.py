"""A message's size is capped on stdio and WebSocket, both ends (issue 29): a line without end
(or a frame past the limit) is dropped as it comes, never held whole, answered with an error
that says the limit and how to raise it, and the connection (stdio) or the server (WebSocket)
serves on.

Real processes and sockets throughout; the server's memory is measured in the server process
itself (``VmHWM`` and ``VmRSS`` of ``/proc/self/status``), the client's with ``tracemalloc``.
"""

import json
import os
import subprocess
import sys
import threading
import tracemalloc

import pytest

import minimcp
from minimcp import RPCError, Server
from minimcp.errors import ConnectionClosed, ProtocolError
from minimcp.transports.stdio import SERVER_MAX_MESSAGE

from conftest import PY, ROOT, TESTING_SERVER

MiB = 1024 * 1024

#: A stdio server with an echo tool and one that reports its own memory, in kB.
SERVER = """
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


server.run()
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

    def __init__(self, script, env=None):
        self.proc = subprocess.Popen([PY, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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
        self.watchdog.cancel()
        self.proc.stdin.close()
        self.proc.stdout.close()
        assert self.proc.wait(10) == 0


# -- stdio, the server reading ---------------------------------------------------------------------


@linux_only
def test_a_line_without_end_is_dropped_and_the_server_serves_on(server_script):
    """64 MiB without a newline, then a request: the first gets -32600 with id null, saying the
    limit and how to raise it; the request gets its answer; the server's memory peak rises by
    far less than the line (it read a limit's worth at most) and its RSS comes back."""
    raw = Raw(server_script)
    try:
        raw.initialize()
        before = raw.memory(1)
        raw.send(b"x" * (64 * MiB) + b"\n")  # (the pipe takes it as fast as the server reads)
        raw.send(call(2, "echo", {"text": "still here"}))
        error = raw.recv()
        assert error["id"] is None and error["error"]["code"] == -32600
        message = error["error"]["message"]
        assert f"limit of {SERVER_MAX_MESSAGE} bytes (4 MiB)" in message and "MINIMCP_MAX_MESSAGE=" in message
        assert raw.recv() == {"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "still here"}], "isError": False}}
        after = raw.memory(3)
    finally:
        raw.close()
    grown_peak, grown_rss = after["peak_kb"] - before["peak_kb"], after["rss_kb"] - before["rss_kb"]
    print(f"server: peak {before['peak_kb']} -> {after['peak_kb']} kB, rss {before['rss_kb']} -> {after['rss_kb']} kB")
    assert grown_peak < 16 * 1024, (before, after)  # 64 MiB went by
    assert grown_rss < 8 * 1024, (before, after)


def test_a_request_over_the_limit_fails_at_once_and_the_limit_can_be_raised(server_script):
    """Through minimcp's client: a call whose request is over the server's limit fails at once
    with the error (the request's own id read from its first bytes), the next call is answered;
    a server started with MINIMCP_MAX_MESSAGE takes the same call."""
    text = "y" * (5 * MiB)
    with minimcp.connect([PY, server_script], env={"PYTHONPATH": ROOT}, timeout=30) as client:
        with pytest.raises(RPCError) as caught:
            client.call_tool("echo", {"text": text})
        assert caught.value.code == -32600 and "limit of 4194304 bytes" in caught.value.message
        assert client.call_tool("echo", {"text": "next"}).text == "next"
    with minimcp.connect([PY, server_script], env={"PYTHONPATH": ROOT, "MINIMCP_MAX_MESSAGE": str(8 * MiB)},
                         timeout=30) as client:
        assert client.call_tool("echo", {"text": text}).text == text


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


def test_a_bad_limit_in_the_environment_is_said_at_once(monkeypatch):
    monkeypatch.setenv("MINIMCP_MAX_MESSAGE", "lots")
    with pytest.raises(ValueError, match="MINIMCP_MAX_MESSAGE should be a number of bytes"):
        with minimcp.connect([PY, TESTING_SERVER], timeout=30):
            pass


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
