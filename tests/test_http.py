"""Streamable HTTP, the legacy HTTP+SSE transport and WebSocket: real sockets on 127.0.0.1.

The raw tests speak HTTP with ``requests`` to pin the wire (spec 2025-11-25
basic/transports "Streamable HTTP"); the others drive minimcp's client.
"""

import json
import os
import socket
import subprocess
import threading
import time

import pytest
import requests

import minimcp
from minimcp import Context, Server
from minimcp.protocol.jsonrpc import SESSION_NOT_FOUND
from minimcp.server.http import bearer_token_auth
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT, example, free_port, shared_server, wait_until_listening

ACCEPT = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def make_server() -> Server:
    server = Server("http-test")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool()
    def steps(n: int, ctx: Context) -> str:
        """Log n lines, then answer."""
        for i in range(n):
            ctx.log("info", f"step {i}")
        return f"{n} steps"

    @server.tool()
    def polling(ctx: Context) -> str:
        """Close the SSE stream mid-call; the client resumes (2025-11-25 polling)."""
        ctx.log("info", "before the break")
        ctx.close_sse_stream()
        ctx.log("info", "after the break")
        return "resumed"

    @server.tool()
    def hold(seconds: float, ctx: Context) -> str:
        """Wait until cancelled or `seconds` pass."""
        return "cancelled" if ctx.cancelled.wait(seconds) else "done"

    @server.tool()
    def ask_later(ctx: Context) -> str:
        """Ask the client for a sample from a thread that belongs to no request (the GET stream)."""
        answer = {}
        connection = ctx.connection

        def background():
            answer.update(connection.request("sampling/createMessage", {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}, 10))

        thread = threading.Thread(target=background)
        thread.start()
        thread.join(15)
        return answer["content"]["text"]

    return server


@pytest.fixture(scope="module")
def http():
    """One server for the module's tests: each opens sessions of its own on it (its tools keep no state)."""
    server = make_server()
    with shared_server(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


class Raw:
    """A raw Streamable HTTP session, for pinning the wire."""

    def __init__(self, base: str, version: str = "2025-11-25") -> None:
        self.url = base + "/mcp"
        self.http = requests.Session()
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        init = self.post(dict(INIT, params=dict(INIT["params"], protocolVersion=version)))
        assert init.status_code == 200
        self.session_id = init.headers["Mcp-Session-Id"]
        self.headers.update({"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": version})
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202

    def post(self, body, **kwargs):
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return self.http.post(self.url, data=data, headers={**self.headers, **kwargs.pop("headers", {})},
                              timeout=10, **kwargs)

    def close(self):
        self.http.close()


@pytest.fixture
def raw(http):
    session = Raw(http.url)
    yield session
    session.close()


def sse_events(text):
    """Parse an SSE body into dicts of fields."""
    events = []
    for block in text.strip().split("\n\n"):
        fields = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            fields[name] = value
        events.append(fields)
    return events


def call(id, name, arguments, **params):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments, **params}}


# -- the wire ---------------------------------------------------------------------------------


def test_session_lifecycle(http):
    """spec basic/transports "Session Management": visible-ASCII id, 404 after DELETE."""
    raw = Raw(http.url)
    assert all(0x21 <= ord(c) <= 0x7E for c in raw.session_id) and len(raw.session_id) >= 16
    assert raw.post(call(1, "echo", {"text": "hi"})).json()["result"]["content"][0]["text"] == "hi"
    assert raw.http.delete(raw.url, headers=raw.headers, timeout=10).status_code == 200
    gone = raw.post(call(2, "echo", {"text": "hi"}))
    assert gone.status_code == 404 and gone.json()["error"]["message"].startswith("Session not found")
    raw.close()


def test_json_when_the_handler_sends_nothing_first_sse_when_it_does(raw):
    plain = raw.post(call(1, "echo", {"text": "json"}))
    assert plain.headers["Content-Type"] == "application/json"
    raw.post({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}})
    streamed = raw.post(call(3, "steps", {"n": 2}))
    assert streamed.headers["Content-Type"] == "text/event-stream"
    events = sse_events(streamed.text)
    assert events[0]["data"] == "" and "id" in events[0] and events[0]["retry"] == "1000"  # priming (2025-11-25)
    messages = [json.loads(e["data"]) for e in events[1:]]
    assert [m.get("params", {}).get("data") for m in messages[:2]] == ["step 0", "step 1"]
    assert messages[2]["id"] == 3 and messages[2]["result"]["content"][0]["text"] == "2 steps"
    assert len({e["id"] for e in events}) == len(events)  # every event id unique


def test_older_versions_get_no_priming_event(http):
    raw = Raw(http.url, version="2025-06-18")
    raw.post({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}})
    events = sse_events(raw.post(call(2, "steps", {"n": 1})).text)
    assert all(e.get("data") for e in events)
    raw.close()


def test_resumption_after_a_server_closed_stream(raw):
    """spec 2025-11-25 basic/transports "Resumability": GET with Last-Event-ID replays and goes on."""
    raw.post({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}})
    first = sse_events(raw.post(call(2, "polling", {})).text)
    assert json.loads(first[-1]["data"])["params"]["data"] == "before the break"
    resumed = raw.http.get(raw.url, headers={**raw.headers, "Accept": "text/event-stream",
                                             "Last-Event-ID": first[-1]["id"]}, timeout=10)
    rest = [json.loads(e["data"]) for e in sse_events(resumed.text)]
    assert rest[0]["params"]["data"] == "after the break"
    assert rest[1] == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "resumed"}],
                                                             "isError": False}}


def test_the_client_resumes_by_itself(http):
    logs = []
    with minimcp.connect(http.url + "/mcp", on_log=logs.append, protocol="2025-11-25") as client:
        client.set_logging_level("info")
        assert client.call_tool("polling").text == "resumed"
    assert [entry["data"] for entry in logs] == ["before the break", "after the break"]


def test_get_stream_carries_requests_outside_any_call(http):
    seen = []

    def sampler(params):
        seen.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "from the GET stream"}, "model": "m"}

    with minimcp.connect(http.url + "/mcp", sampling_handler=sampler, protocol="2025-11-25") as client:
        assert client.call_tool("ask_later").text == "from the GET stream"
    assert seen[0]["maxTokens"] == 5


@pytest.mark.parametrize("change, status, code", [
    ({"data": b"{oops"}, 400, -32700),
    ({"data": b'{"jsonrpc": "1.0"}'}, 400, -32600),
    ({"headers": {"Content-Type": "text/plain"}}, 415, -32600),
    ({"headers": {"Accept": "application/json"}}, 406, -32600),
    ({"headers": {"Mcp-Session-Id": "no-such-session"}}, 404, -32001),
    ({"headers": {"Mcp-Session-Id": ""}}, 400, -32600),
    ({"headers": {"Origin": "http://evil.example"}}, 403, -32600),
    ({"headers": {"Host": "evil.example"}}, 421, -32600),
    ({"headers": {"MCP-Protocol-Version": "1999-01-01"}}, 400, -32600),
    ({"data": b"[" + b"1," * 3_000_000 + b"1]"}, 413, -32600),
])
def test_bad_requests_get_a_clear_error_and_the_session_lives_on(raw, change, status, code):
    """spec basic/transports: 400/403/404/406/415 with a JSON-RPC error body; the server keeps serving."""
    body = change.get("data", json.dumps(call(1, "echo", {"text": "x"})))
    response = raw.http.post(raw.url, data=body, headers={**raw.headers, **change.get("headers", {})}, timeout=10)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert raw.post(call(2, "echo", {"text": "still fine"})).json()["result"]["content"][0]["text"] == "still fine"


def test_get_and_delete_need_a_session(http):
    for method in ("GET", "DELETE"):
        response = requests.request(method, http.url + "/mcp", headers={"Accept": "text/event-stream"}, timeout=10)
        assert response.status_code == 400 and "Mcp-Session-Id" in response.json()["error"]["message"]
    assert requests.put(http.url + "/mcp", timeout=10).status_code == 405


def test_session_ids_of_the_two_http_transports_never_mix(http):
    """A 2024-11-05 stream's id is no Mcp-Session-Id: 404 "Session not found", not a crash."""
    with requests.get(http.url + "/sse", headers={"Accept": "text/event-stream"}, stream=True, timeout=10) as sse:
        endpoint = next(line for line in sse.iter_lines() if line.startswith(b"data: "))[6:].decode()
        session_id = endpoint.split("session_id=")[1]
        for key in (session_id, "sse:" + session_id):
            wrong = requests.post(http.url + "/mcp", json=call(1, "echo", {"text": "hi"}), timeout=10, headers={
                "Accept": ACCEPT, "Mcp-Session-Id": key, "MCP-Protocol-Version": "2024-11-05"})
            assert wrong.status_code == 404 and wrong.json()["error"]["code"] == SESSION_NOT_FOUND
        gone = requests.post(http.url + "/messages/?session_id=nope", json=call(2, "echo", {"text": "hi"}), timeout=10)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == SESSION_NOT_FOUND


def test_a_client_that_disconnects_mid_stream_frees_the_server_thread(raw, http):
    raw.post({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}})
    with socket.create_connection(("127.0.0.1", int(http.url.rsplit(":", 1)[1]))) as sock:
        body = json.dumps(call(9, "polling", {})).encode()
        head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\n"
                f"Mcp-Session-Id: {raw.session_id}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
        sock.sendall(head + body)
        assert b"text/event-stream" in sock.recv(4096)
    # the connection is gone; the session still answers
    assert raw.post(call(2, "echo", {"text": "after"})).json()["result"]["content"][0]["text"] == "after"


def test_auth_hook_demands_a_bearer_token():
    server = make_server()
    with BackgroundServer(server.wsgi_app(auth=bearer_token_auth("s3cret"))) as running:
        refused = requests.post(running.url + "/mcp", data=json.dumps(INIT), timeout=10,
                                headers={"Accept": ACCEPT, "Content-Type": "application/json"})
        assert refused.status_code == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer")
        with pytest.raises(minimcp.RPCError, match="401"):
            minimcp.connect(running.url + "/mcp")
        with minimcp.connect(running.url + "/mcp", headers={"Authorization": "Bearer s3cret"}) as client:
            assert client.call_tool("echo", {"text": "in"}).text == "in"


def test_stateless_mode(http):
    server = make_server()
    with BackgroundServer(server.wsgi_app(sessions=False)) as running:
        init = requests.post(running.url + "/mcp", data=json.dumps(INIT), timeout=10,
                             headers={"Accept": ACCEPT, "Content-Type": "application/json"})
        assert init.status_code == 200 and "Mcp-Session-Id" not in init.headers
        assert requests.get(running.url + "/mcp", headers={"Accept": "text/event-stream"},
                            timeout=10).status_code == 405
        with minimcp.connect(running.url + "/mcp") as client:
            assert client.call_tool("echo", {"text": "no session"}).text == "no session"


def test_a_sessionless_apps_connection_used_again_forgets_the_client_before():
    """A sessionless app keeps a one-POST connection for the next POST (MCPApp._spare): the
    next POST's client must not be taken for the one before, neither what it declared in
    initialize (its capabilities, who it said it was) nor its log level, nor that it ran
    initialize; the spare is as a new connection is."""
    server = make_server()

    @server.tool()
    def who(ctx: Context) -> dict:
        """What this request's client declared."""
        return {"capabilities": ctx.client_capabilities, "info": ctx.client_info,
                "initialized": ctx.session.owner.initialized}

    app = server.wsgi_app(sessions=False)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"}

    def post(message):
        answer = requests.post(running.url + "/mcp", data=json.dumps(message), headers=headers, timeout=10)
        assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/json", answer.text
        return answer.json()

    try:
        with BackgroundServer(app) as running:
            declared = {"sampling": {}, "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}
            first = post(dict(INIT, params=dict(INIT["params"], capabilities=declared,
                                                clientInfo={"name": "client A", "version": "1"})))
            assert first["result"]["protocolVersion"] == "2025-11-25"
            assert "error" not in post({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                                        "params": {"level": "debug"}})
            for n in range(3):  # client B, on the connection client A's POSTs left
                seen = post({"jsonrpc": "2.0", "id": 2 + n, "method": "tools/call",
                             "params": {"name": "who", "arguments": {}}})["result"]["structuredContent"]
                assert seen == {"capabilities": {}, "info": {}, "initialized": False}
            assert len(app._spares) == 1
            (spare,), fresh = app._spares, app._new_connection(None, session=False)
            try:
                per_client = {name: value for name, value in vars(fresh).items()
                              if name not in ("server", "session", "_lock")}
                assert per_client and {name: vars(spare)[name] for name in per_client} == per_client
            finally:
                fresh.session.close()
    finally:
        app.close()


# -- the client ----------------------------------------------------------------------------


def test_many_threads_on_one_http_client(http):
    """32 threads × 25 calls on one client: every answer belongs to its request (800 calls in flight
    together on 2 cores interleave as much as 3200 did)."""
    with minimcp.connect(http.url + "/mcp") as client:
        wrong = []

        def worker(n):
            for i in range(25):
                if client.call_tool("echo", {"text": f"{n}-{i}"}).text != f"{n}-{i}":
                    wrong.append((n, i))

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads) and wrong == []


def test_timeout_cancels_the_call_over_http(http):
    with minimcp.connect(http.url + "/mcp") as client:
        started = time.monotonic()
        with pytest.raises(minimcp.Timeout):
            client.call_tool("hold", {"seconds": 30}, timeout=0.3)
        assert time.monotonic() - started < 5
        assert client.call_tool("echo", {"text": "alive"}).text == "alive"


def test_stop_ends_the_accept_loop_at_once_whatever_its_poll_interval():
    """socketserver's loop looks for a shutdown every poll_interval; ours is woken by stop()."""
    from minimcp.engine.threads import start_thread
    running = BackgroundServer(lambda environ, start_response: [])
    loop = start_thread(lambda: running.httpd.serve_forever(poll_interval=60), "http-accept")
    running.httpd.stop()
    loop.join(10)  # socketserver's own loop would still be in its 60 s wait
    assert not loop.is_alive()


def test_a_stop_before_the_accept_loop_starts_keeps_it_from_starting():
    """On a busy machine stop() can come before the accept thread runs: the loop must not
    then start on the closed socket (it died with "Invalid file descriptor: -1")."""
    running = BackgroundServer(lambda environ, start_response: [])
    running.httpd.stop()  # (its socket is closed now)
    running.httpd.serve_forever()  # what the late accept thread runs: returns at once, no error


def test_a_restarted_server_means_a_new_session_transparently():
    port = BackgroundServer(lambda e, s: []).httpd.server_address[1]  # reserve a free port number
    first = BackgroundServer(make_server().wsgi_app(), port=port).start()
    client = minimcp.connect(first.url + "/mcp", protocol="2025-11-25")  # sessions are a handshake-era thing
    try:
        assert client.call_tool("echo", {"text": "one"}).text == "one"
        old_session = client.session.transport.session_id
        first.stop()
        with BackgroundServer(make_server().wsgi_app(), port=port):
            assert client.call_tool("echo", {"text": "two"}).text == "two"
            assert client.session.transport.session_id != old_session
    finally:
        client.close()


def test_an_unreachable_server_fails_fast():
    with pytest.raises(minimcp.ConnectionClosed, match="cannot reach"):
        minimcp.connect("http://127.0.0.1:9/mcp", timeout=5)


def test_legacy_fallback_when_post_is_refused():
    """spec basic/transports "Backwards Compatibility": 4xx to POST initialize -> try HTTP+SSE."""
    server = make_server()
    with BackgroundServer(server.wsgi_app(path="/new", sse_path="/old")) as running:
        with minimcp.connect(running.url + "/old") as client:
            assert type(client.session.transport).__name__ == "SSETransport"
            assert client.call_tool("echo", {"text": "old way"}).text == "old way"


def test_websocket_both_ways(http):
    with minimcp.connect(http.url.replace("http://", "ws://") + "/ws") as client:
        assert client.call_tool("echo", {"text": "ws"}).text == "ws"
        progress = []
        assert client.call_tool("steps", {"n": 1}, on_progress=lambda *p: progress.append(p)).text == "1 steps"


def test_our_websocket_client_against_the_websockets_package():
    """The client against a WebSocket server this project did not write (the `websockets` package)."""
    from websockets.sync.server import serve

    from minimcp.protocol import jsonrpc
    from minimcp.transports import Transport

    class Bridge(Transport):  # our MCP server over their WebSocket connection
        def __init__(self, ws):
            self.ws = ws

        def read(self):
            try:
                return jsonrpc.parse(self.ws.recv())
            except Exception:
                return None

        def write(self, message, related_to=None):
            self.ws.send(jsonrpc.dumps(message))

        def close(self):
            self.ws.close()

    server = make_server()
    served = threading.Event()  # websockets < 17 (on Python 3.9, 3.10): shutdown() does not wait for handlers

    def handler(ws):
        try:
            server.serve(Bridge(ws), background=False)
        finally:
            served.set()

    with serve(handler, "127.0.0.1", 0, subprotocols=["mcp"]) as ws_server:
        thread = threading.Thread(target=ws_server.serve_forever)
        thread.start()
        try:
            port = ws_server.socket.getsockname()[1]
            with minimcp.connect(f"ws://127.0.0.1:{port}") as client:
                assert client.call_tool("echo", {"text": "theirs"}).text == "theirs"
        finally:
            ws_server.shutdown()
            thread.join(10)
    assert served.wait(10)


def test_an_oversized_websocket_message_closes_with_1009(http):
    import websocket

    ws = websocket.create_connection(http.url.replace("http://", "ws://") + "/ws", subprotocols=["mcp"], timeout=10)
    try:
        ws.send("x" * (17 * 1024 * 1024))
        opcode, frame = ws.recv_data()
        assert opcode == websocket.ABNF.OPCODE_CLOSE and frame[:2] == (1009).to_bytes(2, "big")
    finally:
        ws.close()


# -- real WSGI servers ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["gunicorn", "waitress"])
def test_the_same_app_under_gunicorn_and_waitress(command):
    """The sessionless app behind 2 gunicorn workers (any worker answers any request), and waitress."""
    port = free_port()
    argv = {
        "gunicorn": [PY, "-m", "gunicorn", "-k", "gthread", "-w", "2", "--threads", "4",
                     "-b", f"127.0.0.1:{port}", "examples.http_server:sessionless_app"],
        "waitress": [PY, "-m", "waitress", "--listen", f"127.0.0.1:{port}", "examples.http_server:sessionless_app"],
    }[command]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    try:
        wait_until_listening(proc, port)
        with minimcp.connect(f"http://127.0.0.1:{port}/mcp") as client:
            for i in range(20):
                assert client.call_tool("get_weather", {"city": f"City{i}"}).text == f"City{i}: 22°C, sunny"
    finally:
        proc.terminate()
        proc.wait(20)
        proc.stderr.close()


def test_run_http_serves_until_sigterm_and_releases_the_port():
    port = free_port()
    proc = subprocess.Popen([PY, example("http_server.py")], env=dict(os.environ, PORT=str(port)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until_listening(proc, port)
        with minimcp.connect(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.call_tool("get_weather", {"city": "Oslo"}).text == "Oslo: 22°C, sunny"
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
        proc.stderr.close()
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))  # released


def test_websocket_obeys_the_http_apps_auth():
    server = make_server()
    with BackgroundServer(server.wsgi_app(auth=bearer_token_auth("s3cret")), websockets={"/ws": server}) as running:
        url = running.url.replace("http://", "ws://") + "/ws"
        with pytest.raises(minimcp.ConnectionClosed, match="401"):
            minimcp.connect(url)
        with minimcp.connect(url, headers={"Authorization": "Bearer s3cret"}) as client:
            assert client.call_tool("echo", {"text": "through"}).text == "through"


def test_json_response_mode_answers_a_cancelled_call_instead_of_hanging():
    server = make_server()
    with BackgroundServer(server.wsgi_app(json_response=True)) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25") as client:
            started = time.monotonic()
            with pytest.raises(minimcp.Timeout):
                client.call_tool("hold", {"seconds": 30}, timeout=0.5)
            assert client.call_tool("echo", {"text": "next"}).text == "next"
            assert time.monotonic() - started < 10


def test_idle_sessions_end_and_their_clients_start_again():
    """A client that vanished without DELETE does not keep its session forever (session_ttl)."""
    server = make_server()
    with BackgroundServer(server.wsgi_app(session_ttl=0)) as running:  # 0: idle at once
        old = Raw(running.url)
        assert old.post(call(1, "echo", {"text": "hi"})).status_code == 200
        new = Raw(running.url)  # a new session sweeps the idle ones
        assert old.post(call(2, "echo", {"text": "hi"})).status_code == 404
        assert new.post(call(3, "echo", {"text": "hi"})).status_code == 200
        old.close()
        new.close()
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25") as client:
            session_id = client.session.transport.session_id
            Raw(running.url).close()  # a sweep: but an open GET stream means the client is alive
            assert client.call_tool("echo", {"text": "again"}).text == "again"
            assert client.session.transport.session_id == session_id


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_a_closed_client_leaves_no_connection_open(version):
    """close() closes the client's kept-alive connections at once, not when the garbage
    collector comes (urllib3 2.8 drops its pools unclosed): each held a server thread."""
    import gc

    server = make_server()
    with BackgroundServer(server.wsgi_app()) as running:
        gc.disable()  # what is left open must be closed by close(), not collected
        try:
            client = minimcp.connect(running.url + "/mcp", protocol=version)
            with pytest.raises(minimcp.Timeout):  # a timed-out call: its traceback makes a cycle
                client.call_tool("hold", {"seconds": 5}, timeout=0.2)
            assert client.call_tool("echo", {"text": "x"}).text == "x"
            serving = [t for t in threading.enumerate()
                       if t.name.startswith("minimcp-http-") and not t.name.startswith("minimcp-http-accept")]
            assert serving
            client.close()
            for thread in serving:  # each ends when its client's socket closes
                thread.join(10)
            assert [t.name for t in serving if t.is_alive()] == []
        finally:
            gc.enable()
