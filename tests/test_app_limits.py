"""The HTTP app at its limits: under ``json_response`` a request only a stream can answer
(``subscriptions/listen``) is refused at once, a slow call still gets its JSON, and neither
``close()`` nor a client that leaves waits on one without end; a POST past the worker pool's
queue (``max_queued``) is a 503 with ``Retry-After``.

Real servers on 127.0.0.1 (the built-in WSGI server), raw POSTs with ``requests`` or a socket.
"""

import json
import socket
import threading
import time

import pytest
import requests

from minimcp import Context, Server
from minimcp.server.http.wsgiserver import BackgroundServer

MODERN, HANDSHAKE = "2026-07-28", "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def modern_headers(method, name=None):
    """The headers a 2026-07-28 POST mirrors its body in (spec basic/transports)."""
    headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def modern_call(id, name, progress=None):
    meta = dict(META, progressToken=progress) if progress is not None else META
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": {}, "_meta": meta}}


def legacy_session(url):
    """Open a 2025-11-25 session; the headers its later POSTs carry."""
    opened = requests.post(url, headers=ACCEPT, timeout=5, json={
        "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    assert opened.status_code == 200, opened.text
    headers = {**ACCEPT, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"], "MCP-Protocol-Version": HANDSHAKE}
    requests.post(url, headers=headers, timeout=5, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def slow_server():
    """A server with ``slow``: a ctx tool (so it runs on a worker) that reports progress, then
    waits for ``release`` or its cancel; ``started`` and ``cancelled`` say what it saw."""
    server = Server("limits")
    server.add_resource(lambda: "v1", "mem://doc")
    server.started, server.release, server.cancelled = threading.Event(), threading.Event(), threading.Event()

    @server.tool()
    def slow(ctx: Context) -> str:
        ctx.report_progress(1, 2, "half way")  # not a response: JSON forced drops it
        server.started.set()
        for _ in range(600):  # bounded: 30 s of looks at both events
            if server.release.is_set():
                return "done"
            if ctx.cancelled.wait(0.05):
                server.cancelled.set()
                return "cancelled"
        return "gave up"

    return server


# -- 1. json_response: what only a stream can answer, and the JSON-forced wait ------------------

def test_a_listen_to_a_json_response_app_is_refused_at_once():
    """Before: the POST got no answer (a thread waited for ever, the subscription leaked, and
    close() took 10 s). Now: 404 with -32601 that says why, at once, and nothing is kept."""
    server = slow_server()
    with BackgroundServer(server.wsgi_app(json_response=True)) as running:
        listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                  "params": {"notifications": {"resourceSubscriptions": ["mem://doc"]}, "_meta": META}}
        refused = requests.post(running.url + "/mcp", json=listen, timeout=3,
                                headers=modern_headers("subscriptions/listen"))
        assert refused.status_code == 404 and refused.headers["Content-Type"] == "application/json"
        body = refused.json()
        assert body["id"] == 1 and body["error"]["code"] == -32601, body
        assert "json_response" in body["error"]["message"], body
        assert len(server.subscriptions) == 0
        discover = requests.post(running.url + "/mcp", timeout=5, headers=modern_headers("server/discover"),
                                 json={"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": META}})
        assert discover.json()["result"]["resultType"] == "complete"


@pytest.mark.parametrize("era", [MODERN, HANDSHAKE])
def test_a_slow_ctx_tool_under_json_response_still_gets_its_json_answer(era):
    """The JSON-forced wait, now in slices, still ends with the answer (its progress dropped)."""
    server = slow_server()
    answers = []
    with BackgroundServer(server.wsgi_app(json_response=True, sse_after=0.0)) as running:
        url = running.url + "/mcp"
        if era == MODERN:
            headers, message = modern_headers("tools/call", "slow"), modern_call(7, "slow", progress="p")
        else:
            headers = legacy_session(url)
            message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                       "params": {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}}
        poster = threading.Thread(target=lambda: answers.append(requests.post(url, json=message, headers=headers,
                                                                              timeout=10)))
        poster.start()
        try:
            assert server.started.wait(5)
        finally:
            server.release.set()
            poster.join(10)
        assert not poster.is_alive() and len(answers) == 1
        answer = answers[0]
        assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/json", answer.text
        assert answer.json()["id"] == 7 and answer.json()["result"]["content"][0]["text"] == "done"


@pytest.mark.parametrize("sessions", [False, True], ids=["one-post", "session"])
def test_close_with_a_json_forced_call_in_flight_returns_within_seconds(sessions):
    """Before: a one-POST connection (2026-07-28, or a sessionless app's) waiting for its JSON
    answer was never ended by close(): the tool ran on, close() waited 5 s for the pool and the
    POST's thread until the tool ended. Now close() cancels it, and the POST gets 503."""
    server = slow_server()
    app = server.wsgi_app(json_response=True, sse_after=0.0, sessions=sessions)
    running = BackgroundServer(app).start()
    answers, poster = [], None
    try:
        url = running.url + "/mcp"
        if sessions:
            headers = legacy_session(url)
            message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}
        else:
            headers, message = modern_headers("tools/call", "slow"), modern_call(3, "slow")

        def post():
            try:
                answers.append(requests.post(url, json=message, headers=headers, timeout=10))
            except requests.RequestException as exc:  # the server may close first: also an answer
                answers.append(exc)

        poster = threading.Thread(target=post)
        poster.start()
        assert server.started.wait(5)
        began = time.monotonic()
        running.stop()
        took = time.monotonic() - began
        poster.join(5)
        assert took < 3.0, f"close took {took:.1f}s"
        assert server.cancelled.is_set()
        assert not poster.is_alive() and len(answers) == 1
        if isinstance(answers[0], requests.Response):
            assert answers[0].status_code in (202, 503), answers[0].text
    finally:
        server.release.set()
        running.stop()
        if poster is not None:
            poster.join(10)


def test_a_modern_client_that_leaves_a_json_forced_call_cancels_it():
    """2026-07-28: closing the connection is the cancel (spec basic/transports "Cancellation").
    Before: under json_response nobody looked, and the tool ran on until it ended."""
    server = slow_server()
    with BackgroundServer(server.wsgi_app(json_response=True, sse_after=0.0)) as running:
        host, port = running.url[len("http://"):].split(":")
        body = json.dumps(modern_call(4, "slow")).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in modern_headers("tools/call", "slow").items())
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
                         .encode() + body)
            assert server.started.wait(5)
        assert server.cancelled.wait(5), "the tool was not cancelled when its client left"


# -- 2. a POST past the worker pool's queue: 503 + Retry-After ------------------------------------

@pytest.mark.parametrize("era", [MODERN, HANDSHAKE])
def test_a_post_past_the_queue_is_a_503_with_retry_after_and_the_busy_error(era):
    """Before: 200 with the -32603 body, which a proxy or a client's retry logic takes for an
    answer. Now: 503 + Retry-After: 1, the same body; the two let in are answered once freed."""
    server = Server("busy")
    started, release = threading.Event(), threading.Event()

    @server.tool()
    def block(ctx: Context) -> str:
        started.set()
        return "freed" if release.wait(10) else "timed out"

    streams = []
    with BackgroundServer(server.wsgi_app(max_workers=1, max_queued=1)) as running:
        url = running.url + "/mcp"
        if era == MODERN:
            headers = modern_headers("tools/call", "block")
            message = lambda id: modern_call(id, "block")  # noqa: E731
        else:
            headers = legacy_session(url)
            message = lambda id: {"jsonrpc": "2.0", "id": id, "method": "tools/call",  # noqa: E731
                                  "params": {"name": "block", "arguments": {}}}
        try:
            # one runs (waited for: else the second could find the worker not yet started), one waits
            for id in (1, 2):
                stream = requests.post(url, json=message(id), headers=headers, stream=True, timeout=5)
                streams.append(stream)
                assert stream.status_code == 200
                assert id == 2 or started.wait(5)
            busy = requests.post(url, json=message(3), headers=headers, timeout=5)
            assert busy.status_code == 503 and busy.headers["Retry-After"] == "1", (busy.status_code, busy.text)
            assert busy.headers["Content-Type"] == "application/json"
            error = busy.json()
            assert error["id"] == 3 and error["error"]["code"] == -32603, error
            assert "Server busy" in error["error"]["message"], error
            release.set()
            for id, stream in zip((1, 2), streams):
                events = [line for line in stream.iter_lines(decode_unicode=True) if line.startswith("data: {")]
                final = json.loads(events[-1][len("data: "):])
                assert final["id"] == id and final["result"]["content"][0]["text"] == "freed", final
        finally:
            release.set()
            for stream in streams:
                stream.close()
