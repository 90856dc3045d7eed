"""The client survives a malformed peer: odd results raise ProtocolError, odd notifications
are ignored, and the handshake and SSE streams keep their time limits.

The peers are bare sessions over memory pipes (they answer whatever the test says) and,
for HTTP, a tiny raw server written here, so nothing of minimcp's own server is trusted.
"""

import http.server
import json
import logging
import queue
import threading
import time

import pytest

import minimcp
from minimcp.client.client import Client
from minimcp.engine.session import Session
from minimcp.errors import ProtocolError, Timeout
from minimcp.transports import memory

CAPABILITIES = {"tools": {}, "resources": {"subscribe": True}, "prompts": {}, "logging": {}, "completions": {}}
GOOD_INIT = {"protocolVersion": "2025-06-18", "capabilities": CAPABILITIES, "serverInfo": {"name": "evil", "version": "0"}}


class EvilServer:
    """A bare session that answers each method with ``answers[method]``, whatever it is."""

    def __init__(self, answers=None, silent=False) -> None:
        self.answers = dict(answers or {})
        methods = ["initialize", "server/discover", "tools/list", "tools/call", "resources/list",
                   "resources/templates/list", "resources/read", "prompts/list", "prompts/get",
                   "completion/complete", "logging/setLevel", "resources/subscribe"]
        self.client_end, server_end = memory.pair()
        if silent:  # nobody reads: every request goes unanswered
            return
        self.session = Session(server_end, {method: self._answer(method) for method in methods}, name="evil")
        self.session.start()
        self.client_end.on_close = self.session.close

    def _answer(self, method):
        def answer(params, ctx):
            if method == "initialize":
                return self.answers.get("initialize", GOOD_INIT)
            if method == "server/discover":
                return self.answers.get(method, {"error": "no"})  # not a 2026-07-28 server
            return self.answers[method]
        return answer


@pytest.fixture
def evil():
    server = EvilServer()
    seen = queue.Queue()
    client = Client(server.client_end, timeout=5, on_log=lambda p: seen.put(("log", p)),
                    on_progress=lambda p: seen.put(("progress", p)),
                    on_resource_updated=lambda uri: seen.put(("updated", uri)),
                    on_tools_changed=lambda: seen.put(("tools", None)),
                    on_notification=lambda m, p: seen.put(("any", m)))
    client.initialize()
    client.seen = seen
    yield server, client
    client.close()


CALLS = {
    "tools/list": lambda c: c.list_tools(),
    "tools/call": lambda c: c.call_tool("x", {}),
    "resources/list": lambda c: c.list_resources(),
    "resources/templates/list": lambda c: c.list_resource_templates(),
    "resources/read": lambda c: c.read_resource("a://b").blob,
    "prompts/list": lambda c: c.list_prompts(),
    "prompts/get": lambda c: c.get_prompt("p"),
    "completion/complete": lambda c: c.complete({"type": "ref/prompt", "name": "p"}, "a", "b"),
}
#: method -> malformed answers, and what the error must say
MALFORMED = {
    "tools/list": [("str", "not an object"), ({"tools": 5}, "'tools'"), ({"tools": [5]}, "tools[0]"),
                   ({"tools": [{"name": 5}]}, "'name'"), ({"tools": [], "nextCursor": [1]}, "nextCursor")],
    "tools/call": [("str", "not an object"), ({"content": "x"}, "'content'"), ({"content": [5]}, "content[0]"),
                   ({"content": [{"type": "text", "text": 5}]}, "'text'"), ({"isError": "x"}, "isError")],
    "resources/list": [([1], "not an object"), ({"resources": [5]}, "resources[0]")],
    "resources/templates/list": [({"resourceTemplates": [{"uriTemplate": 5}]}, "uriTemplate")],
    "resources/read": [(5, "not an object"), ({"contents": [5]}, "contents[0]"),
                       ({"contents": [{"blob": 5}]}, "'blob'"), ({"contents": [{"uri": "a://b", "blob": "!!"}]}, "base64")],
    "prompts/list": [({"prompts": [{"name": "p", "arguments": 5}]}, "'arguments'")],
    "prompts/get": [("str", "not an object"), ({"messages": 5}, "'messages'")],
    "completion/complete": [({"completion": 5}, "'completion'"), ({"completion": {"values": [5]}}, "values")],
}


@pytest.mark.parametrize("method", list(MALFORMED))
def test_a_malformed_result_is_a_protocol_error_that_says_what_was_wrong(evil, method):
    server, client = evil
    for answer, named in MALFORMED[method]:
        server.answers[method] = answer
        with pytest.raises(ProtocolError) as info:
            CALLS[method](client)
        assert named in str(info.value) and method.split("/")[0] in str(info.value), (answer, str(info.value))
    server.answers["tools/list"] = {"tools": [{"name": "ok", "inputSchema": {"type": "object"}}]}
    assert [tool.name for tool in client.list_tools()] == ["ok"]  # and the client lives on


@pytest.mark.parametrize("answer,named", [("str", "not an object"), ({"protocolVersion": 5}, "protocolVersion"),
                                          (dict(GOOD_INIT, capabilities=[1]), "capabilities"),
                                          (dict(GOOD_INIT, serverInfo="x"), "serverInfo"),
                                          (dict(GOOD_INIT, instructions=5), "instructions")])
def test_a_malformed_initialize_result_is_a_protocol_error(answer, named):
    server = EvilServer({"initialize": answer})
    client = Client(server.client_end, timeout=5)
    try:
        with pytest.raises(ProtocolError) as info:
            client.initialize()
        assert named in str(info.value) and "initialize" in str(info.value)
    finally:
        client.close()


def test_a_malformed_discover_result_is_a_protocol_error():
    server = EvilServer({"server/discover": {"supportedVersions": ["2026-07-28"], "capabilities": {}, "_meta": 5}})
    client = Client(server.client_end, timeout=5)
    try:
        with pytest.raises(ProtocolError) as info:
            client.initialize()
        assert "_meta" in str(info.value) and "server/discover" in str(info.value)
    finally:
        client.close()


#: notifications whose fields have types the spec does not allow: none may reach a callback
BAD_NOTES = [
    ("notifications/progress", {"progressToken": [1], "progress": 1}),
    ("notifications/progress", {"progressToken": "t", "progress": "half"}),
    ("notifications/resources/updated", {"uri": 5}),
    ("notifications/resources/updated", {}),
    ("notifications/message", {"level": [], "data": "x"}),
    ("notifications/message", {"level": "loud", "data": "x"}),
    ("notifications/message", {"level": "info", "data": "x", "logger": 5}),
    ("notifications/tools/list_changed", {"_meta": 5}),
    ("notifications/tools/list_changed", {"_meta": [1]}),
    ("notifications/resources/list_changed", {"_meta": "x"}),
    ("notifications/subscriptions/acknowledged", {"notifications": 5}),
]


def test_malformed_notifications_are_ignored_and_the_client_lives_on(evil, caplog):
    server, client = evil
    with caplog.at_level(logging.DEBUG, logger="minimcp"):
        for method, params in BAD_NOTES:
            server.session.notify(method, params)
        server.session.notify("notifications/resources/updated", {"uri": "a://fine"})  # a good one, last
        assert client.seen.get(timeout=5) == ("updated", "a://fine")  # in order: nothing bad came before
    assert client.seen.get(timeout=5) == ("any", "notifications/resources/updated")
    assert client.seen.empty()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING and "callback" in r.getMessage()]
    assert sum("ignored notifications/" in r.getMessage() for r in caplog.records) == len(BAD_NOTES)
    server.answers["tools/list"] = {"tools": []}
    assert client.list_tools() == []


def test_a_progress_callback_only_sees_numbers(evil):
    server, client = evil
    reports = queue.Queue()
    proceed = threading.Event()

    def slow_tool(params, ctx):
        token = params["_meta"]["progressToken"]
        for progress, total in (("half", None), (1, [2]), (2, 4)):
            server.session.notify("notifications/progress", {"progressToken": token, "progress": progress,
                                                             "total": total})
        proceed.wait(5)
        return {"content": []}

    server.session.handlers["tools/call"] = slow_tool
    call = threading.Thread(target=lambda: reports.put(client.call_tool(
        "slow", {}, on_progress=lambda p, t, m: (reports.put((p, t)), proceed.set()))))
    call.start()
    assert reports.get(timeout=5) == (2, 4)  # the two malformed reports never came through
    call.join(5)
    assert reports.get(timeout=5).content == []


def test_the_timeout_bounds_the_whole_handshake():
    """connect(timeout=2) to a server that never answers gives up after about 2 s, not 2 s per step."""
    server = EvilServer(silent=True)
    client = Client(server.client_end, timeout=2.0)
    started = time.monotonic()
    try:
        with pytest.raises(Timeout, match=r"the handshake got no answer in 2\.0s \(server/discover, then initialize\)"):
            client.initialize()  # the whole wait is named, not initialize's half of it
    finally:
        client.close()
    # before: the probe's 2 s, then initialize's 2 s; 1.5 s to spare for a loaded machine
    assert time.monotonic() - started < 3.5


# -- SSE ended by the server closing the connection ------------------------------------------


class CloseDelimitedSSE(http.server.BaseHTTPRequestHandler):
    """An MCP server as raw as it gets: tools/call answers with an SSE body that ends when the
    connection closes (no Content-Length, no chunking: legal in HTTP/1.1), and asks for a
    sampling message in the middle of it."""

    protocol_version = "HTTP/1.1"
    answers: "queue.Queue" = queue.Queue()

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self):
        self.do_GET()

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method = message.get("method")
        if method == "initialize":
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": GOOD_INIT}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "s1")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif method == "tools/call":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            ask = {"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                   "params": {"messages": [], "maxTokens": 5}}
            self.wfile.write(f"event: message\ndata: {json.dumps(ask)}\n\n".encode())
            self.wfile.flush()
            answer = self.answers.get(timeout=10)  # the client's answer, POSTed on another connection
            done = {"jsonrpc": "2.0", "id": message["id"],
                    "result": {"content": [{"type": "text", "text": answer["result"]["model"]}]}}
            self.wfile.write(f"event: message\ndata: {json.dumps(done)}\n\n".encode())
            self.wfile.flush()
            self.close_connection = True
        else:  # notifications and the client's responses
            if "result" in message:
                self.answers.put(message)
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()


def test_an_sse_response_ended_by_closing_the_connection_is_read_as_it_arrives():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CloseDelimitedSSE)
    httpd.daemon_threads = True
    serving = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    try:
        sampler = lambda params: {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m-1"}
        with minimcp.connect(f"http://127.0.0.1:{httpd.server_address[1]}/mcp", protocol="2025-06-18",
                             timeout=5, sampling_handler=sampler) as client:
            started = time.monotonic()
            assert client.call_tool("ask", {}).text == "m-1"
            assert time.monotonic() - started < 3  # before: stuck until the call timed out
    finally:
        httpd.shutdown()
        httpd.server_close()
        serving.join(5)
