"""Property tests of the wire (hypothesis): random JSON and bytes in every field of every
message kind, into a real stdio server, a real HTTP server and a real client. After each
example the peer is alive and answers the next valid request, and every request with a
readable id got exactly one answer.

One peer per test function (not per example) keeps it fast; ``derandomize`` keeps CI
deterministic. The strategies are in tests/fuzz/strategies.py (the by-hand fuzz run uses them too).
"""

import base64
import importlib.util
import json
import queue
import subprocess
import threading
from collections import Counter

import pytest
import requests
from fuzz.strategies import batches, expected_ids, message, raw_lines, wire_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minimcp.client.client import Client
from minimcp.errors import MCPError
from minimcp.protocol import jsonrpc
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.transports.child import SubprocessTransport

from conftest import PY, ROOT, TESTING_SERVER

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
WAIT = 30.0  # seconds: how long an answer may take before the peer counts as hung


def as_line(value) -> bytes:
    """One wire line for a JSON value (ASCII-escaped, so a lone surrogate still travels)."""
    return json.dumps(value).replace("\n", " ").encode()


class StdioPeer:
    """A real stdio server (tests/servers/testing_server.py) driven line by line; stdout is read
    on a thread so a missing answer is a bounded wait, and stderr is discarded so it never fills."""

    def __init__(self, version: str) -> None:
        self.proc = subprocess.Popen([PY, TESTING_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.lines: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, name="test-stdout", daemon=True)
        self.reader.start()
        self.probes = 0
        self.batches_allowed = version == "2025-03-26"
        self.send(as_line({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "prop", "version": "0"}}}))
        assert self.answers_until("init")[-1]["result"]["protocolVersion"] == version
        self.send(as_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answers_until(self, probe_id, also=()) -> list:
        """Every answer read until ``probe_id`` and each id in ``also`` are answered."""
        got, missing = [], {json.dumps(i) for i in (probe_id, *also)}
        while missing:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no answer for {missing} within {WAIT}s; got {got}") from None
            assert line is not None, f"server closed stdout; got {got}"
            answer = json.loads(line)
            answers = answer if isinstance(answer, list) else [answer]
            for one in answers:
                if "method" not in one:  # a response, not a log or progress notification
                    got.append(one)
                    missing.discard(json.dumps(one.get("id")))
        return got

    def check_after(self, line: bytes) -> None:
        """Send ``line``, then a valid call; the call is answered right, each id in the line exactly once."""
        self.send(line)
        self.probes += 1
        probe = f"probe-{self.probes}"
        self.send(as_line({"jsonrpc": "2.0", "id": probe, "method": "tools/call",
                           "params": {"name": "echo", "arguments": {"text": probe}}}))
        want = expected_ids(line, self.batches_allowed)
        got = self.answers_until(probe, want)
        assert [a["result"]["content"][0]["text"] for a in got if a.get("id") == probe] == [probe]
        counts = Counter(json.dumps(a.get("id")) for a in got)
        for request_id in set(json.dumps(i) for i in want):
            assert counts[request_id] == sum(json.dumps(i) == request_id for i in want), (line, got)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)
        self.reader.join(10)
        self.proc.stdout.close()
        assert self.proc.returncode == 0


@pytest.fixture(scope="module")
def stdio_server():
    peer = StdioPeer("2025-11-25")
    yield peer
    peer.close()


@pytest.fixture(scope="module")
def stdio_batch_server():
    peer = StdioPeer("2025-03-26")  # the one version that allows batches
    yield peer
    peer.close()


@pytest.fixture
def no_leaks():
    """Module-scoped peers outlive each test; their leak check is their own close()."""
    yield


@SETTINGS
@given(value=wire_values("server"))
def test_stdio_server_survives_random_messages(stdio_server, value):
    stdio_server.check_after(as_line(value))


@SETTINGS
@given(value=batches("server"))
def test_stdio_server_survives_random_batches(stdio_batch_server, value):
    stdio_batch_server.check_after(as_line(value))


@SETTINGS
@given(line=raw_lines)
def test_stdio_server_survives_raw_bytes(stdio_server, line):
    stdio_server.check_after(line)


# -- HTTP --------------------------------------------------------------------

def _load_testing_server():
    spec = importlib.util.spec_from_file_location("testing_server_http", TESTING_SERVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def _http_answers(reply: requests.Response) -> list:
    """The JSON-RPC responses in an HTTP reply: a JSON body, or the data of SSE events."""
    if reply.status_code == 202 or not reply.content:
        return []
    if reply.headers.get("Content-Type", "").startswith("text/event-stream"):
        values = [json.loads(line[5:]) for line in reply.text.splitlines() if line.startswith("data:")
                  and line[5:].strip()]
    else:
        values = [reply.json()]
    flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
    return [v for v in flat if "method" not in v]


class HttpPeer:
    """A real minimcp HTTP server (the built-in one) and one initialized session on it."""

    def __init__(self) -> None:
        self.running = BackgroundServer(_load_testing_server().wsgi_app()).start()
        self.url = self.running.url + "/mcp"
        self.http = requests.Session()
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        reply = self.post(as_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "prop", "version": "0"}}}))
        self.headers.update({"Mcp-Session-Id": reply.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
        self.post(as_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.probes = 0

    def post(self, body: bytes, headers=None) -> requests.Response:
        return self.http.post(self.url, data=body, headers=headers or self.headers, timeout=WAIT)

    def check_after(self, body: bytes, headers=None) -> None:
        reply = self.post(body, headers)
        assert reply.status_code < 500, (body, reply.status_code, reply.text)
        want = expected_ids(body, batches_allowed=False)
        if reply.status_code == 200 and want:
            counts = Counter(json.dumps(a.get("id")) for a in _http_answers(reply))
            for request_id in set(json.dumps(i) for i in want):
                assert counts[request_id] == sum(json.dumps(i) == request_id for i in want), (body, reply.text)
        self.probes += 1
        probe = f"probe-{self.probes}"
        answer = _http_answers(self.post(as_line({"jsonrpc": "2.0", "id": probe, "method": "tools/call",
                                                  "params": {"name": "echo", "arguments": {"text": probe}}})))
        assert [a["result"]["content"][0]["text"] for a in answer] == [probe]

    def close(self) -> None:
        self.http.close()
        self.running.stop()


@pytest.fixture(scope="module")
def http_server():
    peer = HttpPeer()
    yield peer
    peer.close()


@SETTINGS
@given(value=wire_values("server"))
def test_http_server_survives_random_messages(http_server, value):
    http_server.check_after(as_line(value))


@SETTINGS
@given(body=raw_lines, stateless=st.booleans())
def test_http_server_survives_raw_bytes_and_stateless(http_server, body, stateless):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    http_server.check_after(body, headers if stateless else None)  # without a session id too


# -- the client ---------------------------------------------------------------

#: A stdio peer playing server: it answers initialize and ping, writes the line a
#: ``tools/call inject`` carries (base64) before answering it, and on ``tools/call report``
#: says how many answers the client gave to each request id it injected. The report waits on a
#: thread of its own: the client may answer an injected request after it sent ``report`` (its
#: handlers run on workers), and that answer must still be read.
PEER = r'''
import base64, json, sys, threading
from minimcp.protocol import jsonrpc
answered, wanted, lock, writing = {}, set(), threading.Condition(), threading.Lock()
def out(obj):
    with writing:
        sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def report(request_id):
    with lock:
        lock.wait_for(lambda: all(k in answered for k in wanted), 20)  # (bounded; a loaded CI is slow)
        counts = {k: answered.get(k, 0) for k in wanted}; wanted.clear(); answered.clear()
    out({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": json.dumps(counts)}]}})
for line in sys.stdin:
    msg = json.loads(line)
    if "method" not in msg:
        with lock:
            key = json.dumps(msg.get("id")); answered[key] = answered.get(key, 0) + 1; lock.notify_all()
        continue
    if "id" not in msg:
        continue
    p = msg.get("params") or {}
    if msg["method"] == "initialize":
        out({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
             "capabilities": {"tools": {}}, "serverInfo": {"name": "peer", "version": "0"}}})
    elif msg["method"] == "tools/call" and p["name"] == "inject":
        raw = base64.b64decode(p["arguments"]["b64"])
        parsed = jsonrpc.parse(raw)
        if isinstance(parsed, jsonrpc.Request):  # a batch is refused whole on 2025-11-25
            wanted.add(json.dumps(parsed.id))
        with writing:
            sys.stdout.buffer.write(raw + b"\n"); sys.stdout.flush()
        out({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})
    elif msg["method"] == "tools/call":  # report, once the client answered every injected request
        threading.Thread(target=report, args=(msg["id"],), daemon=True).start()
    else:
        out({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
'''


@pytest.fixture(scope="module")
def client():
    transport = SubprocessTransport([PY, "-c", PEER], cwd=ROOT)
    client = Client(transport, timeout=WAIT, sampling_handler=lambda p: {
        "role": "assistant", "content": {"type": "text", "text": "s"}, "model": "m"},
        elicitation_handler=lambda p: {"action": "decline"}, roots=[], protocol="2025-11-25")
    client.initialize()
    yield client
    client.close()


def _client_check(client, line: bytes) -> None:
    try:
        client.call_tool("inject", {"b64": base64.b64encode(line).decode()})
    except MCPError:
        pass  # the injected line may itself be an answer to this call, under its id: refused, fine
    # The injected requests must each get one answer; a reused id (the client's own) is skipped.
    report = json.loads(client.call_tool("report", {}).content[0]["text"])
    assert all(count == 1 for count in report.values()), (line, report)
    client.ping()


@SETTINGS
@given(value=wire_values("client") | message("client"))
def test_client_survives_random_messages(client, value):
    _client_check(client, as_line(value))


@SETTINGS
@given(line=raw_lines)
def test_client_survives_raw_bytes(client, line):
    _client_check(client, line)


def test_the_check_notices_a_dead_server():
    """The property's check is not vacuous: a server that died mid-example fails it."""
    peer = StdioPeer("2025-11-25")
    with pytest.raises(AssertionError, match="closed stdout"):
        peer.check_after(as_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "crash", "arguments": {}}}))
    peer.proc.stdin.close()
    peer.proc.wait(10)
    peer.reader.join(10)
    peer.proc.stdout.close()


def test_wire_strategies_cover_every_kind():
    """The strategies do reach each kind the parser knows (else the properties prove little)."""
    seen = set()

    @settings(max_examples=300, derandomize=True, database=None, deadline=None)
    @given(value=wire_values("server"))
    def collect(value):
        parsed = jsonrpc.parse(as_line(value))
        for item in parsed if isinstance(parsed, list) else [parsed]:
            seen.add(type(item).__name__)

    collect()
    assert seen >= {"Request", "Notification", "Response", "ErrorResponse", "Malformed"}
