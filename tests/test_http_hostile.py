"""The HTTP server against hostile or unusual clients: real sockets on 127.0.0.1.

Raw ``socket`` and ``http.client`` send what ``requests`` refuses to (a
negative Content-Length, HTTP/1.0, a body past the cap with no reading of
the answer until it is all sent). spec basic/transports "Security Warning"
and "Session Management"; RFC 9112 for the HTTP framing.
"""

import io
import json
import logging
import socket
import struct
import sys
import threading
import time
from http.client import HTTPConnection

import pytest
import requests
from test_http import ACCEPT, INIT, Raw, call, make_server

import minimcp
from minimcp.server.http import streams
from minimcp.server.http.handler import RequestHandler
from minimcp.server.http.request import ENVIRON_KEY, HEADER_NAME, NameCache, read_fields, read_request_line
from minimcp.server.http.sockets import TimedReads, kernel_timeouts
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import shared_server

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}


def two_users(headers):
    """An auth hook with two principals."""
    return TOKENS.get(headers.get("authorization", ""))


def port_of(running):
    return int(running.url.rsplit(":", 1)[1])


def read_response(sock, limit=1 << 20):
    """Everything the server sends until it closes the connection (bounded by ``limit`` bytes)."""
    data = b""
    while len(data) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    raise AssertionError("the server kept sending")


@pytest.fixture(scope="module")
def http():
    """One server for the module: each test's hostile requests leave it serving the next test's."""
    server = make_server()
    with shared_server(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


@pytest.fixture
def own_http():
    """A server of the test's own, for a test that opens GET streams: a stream's thread sees its
    client gone only at its next keep-alive tick (up to 1 s), and a server's stop ends it at once."""
    server = make_server()
    with BackgroundServer(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


# -- 7: Origin: null -----------------------------------------------------------------------------


def test_origin_null_is_refused_on_post(http):
    """A sandboxed iframe or a file:// page sends ``Origin: null``: it may not drive the tools."""
    refused = requests.post(http.url + "/mcp", data=json.dumps(INIT), timeout=10, headers={
        "Accept": ACCEPT, "Content-Type": "application/json", "Origin": "null"})
    assert refused.status_code == 403 and "null" in refused.json()["error"]["message"]


def test_origin_null_is_refused_on_the_websocket_upgrade(http):
    with socket.create_connection(("127.0.0.1", port_of(http)), timeout=10) as sock:
        sock.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     b"Origin: null\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 403")


def test_origin_null_may_be_allowed_explicitly():
    server = make_server()
    with BackgroundServer(server.wsgi_app(allowed_origins=["null"])) as running:
        answer = requests.post(running.url + "/mcp", data=json.dumps(INIT), timeout=10, headers={
            "Accept": ACCEPT, "Content-Type": "application/json", "Origin": "null"})
        assert answer.status_code == 200


# -- 8: a session answers only the principal that opened it ------------------------------------


class As(Raw):
    """A raw session opened with a bearer token."""

    def __init__(self, base, token, version="2025-11-25"):
        self.token = token
        super().__init__(base, version)

    def post(self, body, **kwargs):
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return super().post(body, headers=headers, **kwargs)


def test_a_session_answers_only_the_principal_that_opened_it():
    server = make_server()
    with BackgroundServer(server.wsgi_app(auth=two_users)) as running:
        alice = As(running.url, "alice-token")
        stolen = {**alice.headers, "Authorization": "Bearer bob-token"}
        try:
            as_bob = requests.post(alice.url, data=json.dumps(call(1, "echo", {"text": "x"})), headers=stolen,
                                   timeout=10)
            assert as_bob.status_code == 403 and "session" in as_bob.json()["error"]["message"]
            get = requests.get(alice.url, headers={**stolen, "Accept": "text/event-stream"}, timeout=10)
            assert get.status_code == 403
            assert requests.delete(alice.url, headers=stolen, timeout=10).status_code == 403
            # alice's session lives on, untouched
            assert alice.post(call(2, "echo", {"text": "mine"})).json()["result"]["content"][0]["text"] == "mine"
        finally:
            alice.close()


def test_a_legacy_session_answers_only_the_principal_that_opened_it():
    server = make_server()
    with BackgroundServer(server.wsgi_app(auth=two_users)) as running:
        with requests.get(running.url + "/sse", stream=True, timeout=10, headers={
                "Accept": "text/event-stream", "Authorization": "Bearer alice-token"}) as sse:
            lines = sse.iter_lines()
            endpoint = next(line for line in lines if line.startswith(b"data: "))[6:].decode()
            as_bob = requests.post(running.url + endpoint, data=json.dumps(INIT), timeout=10, headers={
                "Content-Type": "application/json", "Authorization": "Bearer bob-token"})
            assert as_bob.status_code == 403
            as_alice = requests.post(running.url + endpoint, data=json.dumps(INIT), timeout=10, headers={
                "Content-Type": "application/json", "Authorization": "Bearer alice-token"})
            assert as_alice.status_code == 202
            data = next(line for line in lines if line.startswith(b"data: "))
            assert json.loads(data[6:])["id"] == 0  # alice's answer, on alice's stream


# -- 9: Content-Length ---------------------------------------------------------------------------


@pytest.mark.parametrize("length", ["-1", "abc", "1_0", "+5", "5, 6"])
def test_an_invalid_content_length_is_400_and_closes(http, length):
    with socket.create_connection(("127.0.0.1", port_of(http)), timeout=10) as sock:
        sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Accept: {ACCEPT}\r\nContent-Length: {length}\r\n\r\n{{}}".encode())
        answer = read_response(sock)  # ends: the server closes, it does not wait for more
    assert answer.startswith(b"HTTP/1.1 400") and b"Connection: close" in answer


def test_two_content_lengths_are_400(http):
    with socket.create_connection(("127.0.0.1", port_of(http)), timeout=10) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}")
        assert read_response(sock).startswith(b"HTTP/1.1 400")


def test_a_body_past_the_cap_gets_a_413_the_client_can_read(http):
    """``http.client`` sends the whole body before it reads: the 413 must still reach it."""
    body = b"[" + b"1," * (2 * 1024 * 1024 + 10) + b"1]"  # just over 4 MiB
    conn = HTTPConnection("127.0.0.1", port_of(http), timeout=10)
    try:
        conn.request("POST", "/mcp", body=body, headers={"Content-Type": "application/json", "Accept": ACCEPT})
        answer = conn.getresponse()
        assert answer.status == 413 and json.loads(answer.read())["error"]["message"].startswith("Payload Too Large")
    finally:
        conn.close()


# -- the request head (minimcp.server.http.request: RFC 9112 §3, §5) -------------------------------------

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}}})


def post_with(fields, request_line="POST /mcp HTTP/1.1"):
    """A 2026-07-28 tools/list with the given header lines (one byte a character, as sent on the
    wire): nothing before it is needed."""
    return (f"{request_line}\r\nHost: 127.0.0.1\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\n"
            f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n{fields}Content-Length: {len(LIST)}\r\n\r\n"
            f"{LIST}").encode("latin-1")


def exchange(running, data):
    """Send ``data`` on a new connection; return all the server sends until it closes it."""
    with socket.create_connection(("127.0.0.1", port_of(running)), timeout=10) as sock:
        sock.sendall(data)
        return read_response(sock)


@pytest.mark.parametrize("fields, status", [
    pytest.param("X-Folded: a\r\n  continued\r\n", b"400", id="obs-fold"),
    pytest.param("Host : 127.0.0.1\r\n", b"400", id="space-before-colon"),
    pytest.param("no colon here\r\n", b"400", id="no-colon"),
    pytest.param(": no name\r\n", b"400", id="no-name"),
    pytest.param("Foo Bar: 1\r\n", b"400", id="space-in-name"),
    pytest.param("Transfer-Encoding\x0b: chunked\r\n", b"400", id="control-in-name"),
    pytest.param("Mcp-Se\xdfion-Id: abc\r\n", b"400", id="non-ascii-name"),
    pytest.param("X-A: a\rInjected: 1\r\n", b"400", id="cr-in-value"),
    pytest.param("X-A: a\x00b\r\n", b"400", id="nul-in-value"),
    pytest.param("Transfer-Encoding: gzip, chunked\r\n", b"411", id="any-transfer-coding"),
    pytest.param("X-Long: " + "a" * 70000 + "\r\n", b"431", id="line-too-long"),
    pytest.param("".join(f"X-{i}: {i}\r\n" for i in range(101)), b"431", id="too-many-fields"),
])
def test_a_header_field_a_server_must_refuse_is_refused_and_the_server_serves_on(http, fields, status):
    answer = exchange(http, post_with(fields))
    assert answer.startswith(b"HTTP/1.1 " + status) and b"Connection: close" in answer, answer[:200]
    assert exchange(http, post_with("Connection: close\r\n")).startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("request_line, status", [
    pytest.param("POST /mcp HTTP/2.0", b"505", id="http-2"),
    pytest.param("POST /mcp HTTX/1.1", b"400", id="not-http"),
    pytest.param("POST /mcp HTTP/1.1 extra", b"400", id="four-words"),
    pytest.param("GET /mcp", b"400", id="http-0.9"),
    pytest.param("POST /mcp HTTP/\xb2.1", b"400", id="unicode-digit-major"),
    pytest.param("POST /mcp HTTP/1.\xb2", b"400", id="unicode-digit-minor"),
    pytest.param("POST /" + "a" * 70000 + " HTTP/1.1", b"414", id="request-line-too-long"),
])
def test_a_bad_request_line_gets_its_status_line(http, request_line, status):
    """Each answered with a status line (a 400 for a bad version had none from http.server)."""
    assert exchange(http, post_with("", request_line)).startswith(b"HTTP/1.1 " + status)


def test_fields_match_any_case_and_100_continue_is_answered(http):
    """Names match whatever their case (``mcp-protocol-version``), values lose their outer
    whitespace, ``Expect: 100-continue`` gets its interim answer, and the connection stays open."""
    head = (f"POST /mcp HTTP/1.1\r\nhost:127.0.0.1\r\naccept:   {ACCEPT}  \r\ncontent-type: application/json\r\n"
            f"mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\nExpect: 100-continue\r\nContent-Length: {len(LIST)}\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port_of(http)), timeout=10) as sock:
        sock.sendall(head.encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(LIST.encode())
        sock.sendall(post_with("Connection: close\r\n"))  # the same connection: a second request
        answers = read_response(sock)
    assert answers.count(b"HTTP/1.1 200") == 2 and answers.count(b'"result":') == 2, answers
    fields = read_fields(io.BytesIO(b"Accept: \t a, b \t\r\nX-Twice: 1\r\nx-twice: 2\r\n\r\n"))
    assert fields.get("ACCEPT") == "a, b" and fields.get("x-TWICE") == "1" and fields.get_all("X-Twice") == ["1", "2"]
    once = read_fields(io.BytesIO(b"Content-Length: 5\r\nX-Once: 1\r\n\r\n"))  # no name twice: the short way
    assert once.get_all("content-length") == ["5"] and once.get_all("X-Twice") is None


def test_the_usual_request_line_and_a_double_slash_read_as_before():
    assert read_request_line("POST /mcp?x=1 HTTP/1.1") == ("POST", "/mcp?x=1", "HTTP/1.1", (1, 1))
    assert read_request_line("POST //mcp HTTP/1.1") == ("POST", "/mcp", "HTTP/1.1", (1, 1))
    assert read_request_line("GET / HTTP/1.0") == ("GET", "/", "HTTP/1.0", (1, 0))


def test_name_caches_convert_as_before_and_made_up_names_do_not_grow_them():
    cache = NameCache(str.upper, limit=3, longest=8)
    assert [cache[n] for n in ("a", "b", "a", "c")] == ["A", "B", "A", "C"] and sorted(cache) == ["a", "b", "c"]
    assert cache["d"] == "D" and sorted(cache) == ["d"]  # full: it starts again, with the names in use now
    assert cache["x" * 9] == "X" * 9 and sorted(cache) == ["d"]  # a long name is converted, not kept
    assert ENVIRON_KEY["Mcp-Session-Id"] == "HTTP_MCP_SESSION_ID" and ENVIRON_KEY["Content_Length"] is None
    assert HEADER_NAME["HTTP_MCP_SESSION_ID"] == "mcp-session-id" and HEADER_NAME["wsgi.input"] is None
    assert HEADER_NAME.limit == ENVIRON_KEY.limit == 256


# -- 10: HTTP/1.0 --------------------------------------------------------------------------------


def test_an_http_10_client_gets_an_unchunked_sse_answer(http):
    """HTTP/1.0 has no chunked encoding: the stream is close-delimited instead."""
    raw = Raw(http.url)
    try:
        raw.post({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}})
        body = json.dumps(call(2, "steps", {"n": 2})).encode()
        with socket.create_connection(("127.0.0.1", port_of(http)), timeout=10) as sock:
            sock.sendall(f"POST /mcp HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: {ACCEPT}\r\n"
                         f"Content-Type: application/json\r\nMcp-Session-Id: {raw.session_id}\r\n"
                         f"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            answer = read_response(sock)
    finally:
        raw.close()
    head, _, stream = answer.partition(b"\r\n\r\n")
    assert b"text/event-stream" in head and b"Connection: close" in head
    assert b"Transfer-Encoding" not in head
    datas = [line[6:] for line in stream.split(b"\n") if line.startswith(b"data: ") and len(line) > 6]
    assert json.loads(datas[-1])["result"]["content"][0]["text"] == "2 steps"


# -- 11: the standalone GET stream -----------------------------------------------------------------


def get_stream(raw, **headers):
    """Open the GET stream of a raw session; its headers must come within 3 s."""
    return raw.http.get(raw.url, headers={**raw.headers, "Accept": "text/event-stream", **headers},
                        stream=True, timeout=(3, 3))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_the_get_stream_answers_at_once(own_http, version):
    """The status line and headers go out before the first event (which may be 15 s away)."""
    raw = Raw(own_http.url, version=version)
    try:
        started = time.monotonic()
        with get_stream(raw) as stream:
            assert stream.status_code == 200 and stream.headers["Content-Type"] == "text/event-stream"
        assert time.monotonic() - started < 3
    finally:
        raw.close()


def test_a_resuming_get_answers_at_once(own_http):
    raw = Raw(own_http.url)
    try:
        with get_stream(raw) as stream:
            priming = next(line for line in stream.iter_lines() if line.startswith(b"id: "))[4:].decode()
        with get_stream(raw, **{"Last-Event-ID": priming}) as resumed:
            assert resumed.status_code == 200
    finally:
        raw.close()


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_new_get_after_a_dropped_one_is_served(own_http, version):
    """A client whose GET stream dropped opens another: it gets the stream, not 409 for 15-30 s."""
    raw = Raw(own_http.url, version=version)
    try:
        for _ in range(3):
            with get_stream(raw) as stream:
                assert stream.status_code == 200
                stream.raw.read(1)  # headers and a first byte: the server is writing to this one
    finally:
        raw.close()


def test_a_wake_while_the_stream_is_writing_is_not_lost(monkeypatch):
    """The takeover's wake can come while the holder writes, not waits: it must still look at
    its client at once (else the new GET gets 409 after TAKEOVER_WAIT, as CI once saw)."""
    monkeypatch.setattr(streams, "GONE_POLL_SECONDS", 60.0)  # a lost wake would wait a minute
    store = streams.MemoryEventStore()
    stream = streams.OutStream(store)
    start = store.store(stream.id, b"")
    looked = []
    events = stream.events(after=start, keepalive=60.0, gone=lambda: looked.append(1) or True)
    stream.wake()  # before the stream waits: nobody is there to be notified
    finished = threading.Thread(target=lambda: list(events))
    finished.start()
    finished.join(10)
    assert not finished.is_alive() and looked == [1]


def test_two_live_get_streams_still_conflict(own_http):
    raw = Raw(own_http.url)
    try:
        with get_stream(raw) as first:
            assert first.status_code == 200
            first.raw.read(1)
            second = requests.get(raw.url, headers={**raw.headers, "Accept": "text/event-stream"}, timeout=10)
            assert second.status_code == 409
    finally:
        raw.close()


# -- 12: caps on connections and sessions ----------------------------------------------------------


def test_at_the_connection_cap_idle_connections_go_first():
    """8 idle sockets fill the cap: a real request still gets in, closing the longest-idle one."""
    server = make_server()
    with BackgroundServer(server.wsgi_app(), max_connections=8) as running:
        idle = [socket.create_connection(("127.0.0.1", port_of(running)), timeout=10) for _ in range(8)]
        try:
            raw = Raw(running.url)  # would wait on a 9th thread forever-ish (or there would be 9)
            assert raw.post(call(1, "echo", {"text": "in"})).json()["result"]["content"][0]["text"] == "in"
            raw.close()
            assert idle[0].recv(1) == b""  # the first idle one was closed for it
        finally:
            for sock in idle:
                sock.close()


def test_past_the_connection_cap_with_none_idle_a_readable_503():
    server = make_server()
    with BackgroundServer(server.wsgi_app(), max_connections=2) as running:
        busy = []
        try:
            for _ in range(2):  # two 2024-11-05 streams, open: neither connection is idle
                busy.append(requests.get(running.url + "/sse", headers={"Accept": "text/event-stream"},
                                         stream=True, timeout=10))
                assert busy[-1].raw.read(1)
            started = time.monotonic()
            conn = HTTPConnection("127.0.0.1", port_of(running), timeout=10)
            conn.request("POST", "/mcp", body=json.dumps(INIT), headers={"Content-Type": "application/json",
                                                                        "Accept": ACCEPT})
            refused = conn.getresponse()
            assert refused.status == 503 and refused.getheader("Retry-After") == "1"
            assert "too many connections" in json.loads(refused.read())["error"]["message"]
            assert time.monotonic() - started < 5
            conn.close()
        finally:
            for stream in busy:
                stream.close()


def test_at_the_session_cap_idle_sessions_go_first_then_503():
    server = make_server()
    with BackgroundServer(server.wsgi_app(max_sessions=2)) as running:
        first, second = Raw(running.url), Raw(running.url)
        third = Raw(running.url)  # at the cap: the least recently used idle session ends for it
        try:
            assert first.post(call(1, "echo", {"text": "x"})).status_code == 404
            assert second.post(call(2, "echo", {"text": "x"})).status_code == 200
            with get_stream(second) as s2, get_stream(third) as s3:  # both busy: a GET stream each
                assert s2.status_code == s3.status_code == 200
                refused = requests.post(running.url + "/mcp", data=json.dumps(INIT), timeout=10,
                                        headers={"Accept": ACCEPT, "Content-Type": "application/json"})
                assert refused.status_code == 503 and refused.headers["Retry-After"] == "1"
                assert "sessions" in refused.json()["error"]["message"]
                legacy = requests.get(running.url + "/sse", headers={"Accept": "text/event-stream"}, timeout=10)
                assert legacy.status_code == 503
            assert third.post(call(3, "echo", {"text": "x"})).status_code == 200
        finally:
            for raw in (first, second, third):
                raw.close()


def test_run_http_passes_max_connections_to_the_built_in_server():
    """``server.run("http", max_connections=1)``: the cap is the server's, not an unknown app option."""
    import os
    import subprocess

    from conftest import EXAMPLES, PY, free_port, wait_until_listening

    port = free_port()
    code = (f"import sys; sys.path.insert(0, {EXAMPLES!r}); from weather_server import server; "
            f"server.run('http', port={port}, max_connections=1)")
    proc = subprocess.Popen([PY, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=os.path.dirname(EXAMPLES)))
    try:
        wait_until_listening(proc, port)
        for _ in range(20):  # the probe's connection may still hold the one place a moment: 503, again
            busy = requests.get(f"http://127.0.0.1:{port}/sse", headers={"Accept": "text/event-stream"},
                                stream=True, timeout=10)
            if busy.status_code == 200:
                break
            busy.close()
        with busy:  # the one connection, not idle
            assert busy.status_code == 200 and busy.raw.read(1)
            refused = requests.post(f"http://127.0.0.1:{port}/mcp", data=json.dumps(INIT), timeout=10,
                                    headers={"Accept": ACCEPT, "Content-Type": "application/json"})
            assert refused.status_code == 503
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
        proc.stderr.close()


def test_a_field_name_with_an_underscore_is_not_taken_for_its_dashed_twin(http):
    """``Content_Length: 5`` would be CONTENT_LENGTH in the environ while the body is framed by
    the real Content-Length: dropped, as gunicorn and nginx drop such names."""
    answer = exchange(http, post_with("Content_Length: 5\r\nConnection: close\r\n"))
    assert answer.startswith(b"HTTP/1.1 200") and b'"tools":' in answer, answer[:300]


# -- 12: connections that wait too long -----------------------------------------------------------


@pytest.fixture
def quick_timeout_http(monkeypatch):
    """A server whose connections may wait 0.3 s for the client (120 s by default)."""
    monkeypatch.setattr(RequestHandler, "timeout", 0.3)
    server = make_server()
    with BackgroundServer(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


ANSWERED = post_with("")  # a whole request: answered, then the connection is kept alive
STALLED_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"
STALLED_BODY = ANSWERED.replace(f"Content-Length: {len(LIST)}".encode(), f"Content-Length: {len(LIST) + 50}".encode())


@pytest.mark.parametrize("sent, answer", [
    pytest.param(ANSWERED, b"HTTP/1.1 200", id="idle-after-an-answer"),
    pytest.param(STALLED_HEAD, b"HTTP/1.1 408", id="head-stalled"),
    pytest.param(STALLED_BODY, b"HTTP/1.1 408", id="body-stalled"),
])
def test_a_connection_that_keeps_the_server_waiting_is_closed_and_the_server_serves_on(
        quick_timeout_http, sent, answer, caplog):
    """An idle keep-alive connection, or a client that stops in the middle of its request, is
    closed once the timeout passes (the thread it held is freed; a head or body cut short is told
    so with a 408); the server serves on."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port_of(quick_timeout_http)), timeout=10) as sock:
        sock.sendall(sent)
        got = read_response(sock)  # (until the server closes: a socket.timeout after 10 s if it never does)
    assert got.startswith(answer), got[:300]
    assert time.monotonic() - started < 5.0
    assert exchange(quick_timeout_http, post_with("Connection: close\r\n")).startswith(b"HTTP/1.1 200")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # a client's slowness: no traceback


def test_a_websocket_session_is_not_held_to_the_http_timeout(quick_timeout_http):
    """Upgraded, the connection is a session: its reader may wait on a quiet client past the
    HTTP timeout (here while ``hold`` runs 0.6 s: twice the server's 0.3 s)."""
    with minimcp.connect(quick_timeout_http.url.replace("http://", "ws://") + "/ws") as client:
        assert client.call_tool("hold", {"seconds": 0.6}).text == "done"
        assert client.call_tool("echo", {"text": "still here"}).text == "still here"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kernel timeouts are used on Linux only")
def test_the_kernel_times_a_connection_and_a_timed_out_read_is_not_waited_for_twice(quick_timeout_http):
    """On Linux a connection's socket stays blocking (no poll before each recv and send: see
    sockets.kernel_timeouts) with the timeout set in the kernel; a read past it raises
    socket.timeout, and a read after that fails at once, as after settimeout()'s."""
    with socket.create_connection(("127.0.0.1", port_of(quick_timeout_http)), timeout=10) as sock:
        sock.sendall(ANSWERED)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        served = list(quick_timeout_http.httpd._connections.values())  # (the server's end of it)
        assert [s.gettimeout() for s in served] == [None]
        assert struct.unpack("ll", served[0].getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16)) == (0, 300000)
    a, b = socket.socketpair()
    with a, b:
        assert kernel_timeouts(a, 0.05)
        reader = io.BufferedReader(TimedReads(a, "rb"))
        started = time.monotonic()
        with pytest.raises(socket.timeout):
            reader.read(1)
        waited = time.monotonic() - started
        with pytest.raises(OSError):
            reader.read(1)
        assert waited >= 0.04 and time.monotonic() - started < waited + 0.04


def test_stream_ids_do_not_repeat_when_a_tool_seeds_random():
    """The event store is one per app, keyed by stream id: two sessions' streams must never share
    one, whatever a tool does to the `random` module's generator."""
    import random

    store = streams.MemoryEventStore()
    random.seed(7)
    first = streams.OutStream(store, {1}).id
    random.seed(7)
    assert streams.OutStream(store, {1}).id != first
    assert len(first) == 16 and int(first, 16) >= 0


def test_a_request_id_in_flight_is_refused_and_the_first_request_keeps_its_answer():
    """A client that reuses the id of a request still in flight (ids are unique in a session) gets
    -32600 for the second request, and the first still gets its answer. The refusal used to go
    out on a stream of its own that took the id's place, so the first POST's answer was lost and
    it waited out its timeout. Both requests here have a ctx: both take the stream path."""
    server = minimcp.Server("ids")
    started, release = threading.Event(), threading.Event()

    @server.tool()
    def hold(ctx: minimcp.Context) -> str:
        """Wait until the test says."""
        started.set()
        release.wait(10)
        return "held"

    @server.tool()
    def other(ctx: minimcp.Context) -> str:
        """Answer at once."""
        return "other"

    with BackgroundServer(server.wsgi_app()) as running:
        raw = Raw(running.url)
        answers = {}
        holder = threading.Thread(target=lambda: answers.update(held=raw.post(call(7, "hold", {}))))
        holder.start()
        try:
            assert started.wait(10)
            with requests.Session() as second:  # (another connection, the same session)
                twin = second.post(raw.url, data=json.dumps(call(7, "other", {})), headers=raw.headers, timeout=10)
            assert twin.status_code == 200 and twin.json()["error"]["code"] == -32600
            assert "already in use" in twin.json()["error"]["message"]
        finally:
            release.set()
            holder.join(15)
        assert '"held"' in answers["held"].text
        again = raw.post(call(7, "other", {}))  # answered: the id is free again
        assert '"other"' in again.text
        raw.close()
