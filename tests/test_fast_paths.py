"""The performance fast paths keep the behaviour of the paths they skip (issue 14).

- a stdio server whose tools have builtin hints starts, and runs to its exit, without importing
  ``typing``, ``signal.py`` or ``queue.py``, and with what start-up made frozen out of the collector;
- the HTTP client's direct POST (``http.client`` beside requests) keeps a cookie the server
  sets and sends it from then on, as requests would;
- the lock hand-off that replaced a Future: an answer, an error, a timeout, a cancel;
- a request answered in its POST's own body, with no response stream (``server.http.app.answers_here``:
  a 2026-07-28 one, a sessionless app's, a handshake-era session's) answers as the stream would,
  only requests that can neither stream nor be cancelled take that way, and it still takes its id;
- a tools/call on each path of ServerTool.call and of jsonrpc's read and write answers as before.
"""

import json
import logging
import socket
import subprocess
import threading

import pytest
import requests

import minimcp
from minimcp import Context, Server
from minimcp.engine.session import Session
from minimcp.errors import ConnectionClosed, RPCError, Timeout
from minimcp.protocol.jsonrpc import Request
from minimcp.protocol.stateless import RequestMeta
from minimcp.server.http.app import answers_here, runs_here
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.transports.memory import pair

from conftest import PY

STDIO_SERVER = """
import sys
from minimcp import Server
server = Server("plain")

@server.tool()
def echo(text: str, times: int = 1, loud: bool = False, ratio: float = 1.0) -> str:
    '''Return the text.'''
    return text * times

import minimcp.server.running, minimcp.transports.stdio  # what run() loads for stdio
tool = server.get_tool("echo")
print(sorted(tool.input_schema["properties"]), tool.input_schema["required"], "typing" in sys.modules)
"""


def test_a_stdio_server_with_builtin_hints_starts_without_typing():
    out = subprocess.run([PY, "-I", "-c", STDIO_SERVER], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["['loud',", "'ratio',", "'text',", "'times']", "['text']", "False"]


STDIO_RUN = """
import atexit, gc, sys
LATE = ('typing', 'signal', 'queue', 'minimcp.server.stateless', 'minimcp.transports.child')
atexit.register(lambda: sys.stderr.write(f"loaded: {sorted(m for m in LATE if m in sys.modules)}\\n"))
atexit.register(lambda: sys.stderr.write(f"frozen: {gc.get_freeze_count() > 0}\\n"))
from minimcp import Server
server = Server("plain")

@server.tool()
def echo(text: str) -> str:
    '''Return the text.'''
    return text

server.run()
"""


def test_a_stdio_server_runs_to_its_exit_without_typing_signal_or_queue():
    """Start, initialize, list, call, end of stdin, exit: none of it loads typing (a server with
    no tasks must not import the tasks modules to close them, as it once did at exit), nor
    signal.py or queue.py (their C modules do the work: signal.py makes three IntEnums as it
    loads, queue.py loads heapq), nor what only a 2026-07-28 request or a client needs
    (server/stateless.py, transports/child.py)."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}]
    out = subprocess.run([PY, "-I", "-c", STDIO_RUN], input="".join(json.dumps(m) + "\n" for m in lines),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3] and answers[2]["result"]["content"][0]["text"] == "hi"
    assert "loaded: []" in out.stderr, out.stderr
    assert "frozen: True" in out.stderr, out.stderr  # run() froze what start-up made (gc.freeze)


def test_hints_typing_must_resolve_still_give_the_same_schema():
    from typing import Optional

    server = Server("hints")

    @server.tool()
    def pick(name: "str", count: Optional[int] = None) -> "int":
        """Pick."""
        return count or 0

    schema = server.get_tool("pick").input_schema
    assert schema["properties"]["name"] == {"type": "string"}
    assert schema["required"] == ["name"]
    assert server.get_tool("pick").definition["outputSchema"]["properties"]["result"] == {"type": "integer"}


def test_the_direct_post_keeps_a_cookie_the_server_sets():
    server = Server("cookies")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    app = server.wsgi_app(sessions=False)
    seen = []

    def with_cookie(environ, start_response):  # a sticky load balancer in front of the server
        seen.append(environ.get("HTTP_COOKIE"))

        def start(status, headers, exc_info=None):
            return start_response(status, headers + [("Set-Cookie", "lb=node-7; Path=/")], exc_info)
        return app(environ, start)

    with BackgroundServer(with_cookie) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25") as client:
            assert client.call_tool("echo", {"text": "one"}).text == "one"
            assert client.call_tool("echo", {"text": "two"}).text == "two"
    assert seen[0] is None
    assert seen[-1] == "lb=node-7"


def test_a_pending_request_gets_its_answer_error_timeout_or_cancel():
    a_end, b_end = pair()
    a, b = Session(a_end), Session(b_end)
    release, started = threading.Event(), threading.Event()

    def hold(params, ctx):
        started.set()
        return {"held": release.wait(10)}
    b.handlers["answer"] = lambda params, ctx: {"got": params["x"]}
    b.handlers["refuse"] = lambda params, ctx: (_ for _ in ()).throw(RPCError(-32000, "no"))
    b.handlers["hold"] = hold
    a.start()
    b.start()
    try:
        assert a.request("answer", {"x": 1}) == {"got": 1}
        try:
            a.request("refuse")
            raise AssertionError("no error")
        except RPCError as exc:
            assert exc.code == -32000
        try:
            a.request("hold", timeout=0.2)
            raise AssertionError("no timeout")
        except Timeout:
            pass
        request_id = a.new_request_id()
        result = []

        def call():
            try:
                a.request("hold", request_id=request_id)
            except ConnectionClosed as exc:
                result.append(exc)

        started.clear()
        caller = threading.Thread(target=call)
        caller.start()
        assert started.wait(10)  # the peer runs it: it is in flight
        a.cancel(request_id, "changed my mind")
        caller.join(10)
        assert result and "changed my mind" in str(result[0])
    finally:
        release.set()
        a.close()
        b.close()


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}


def stateless_server(cancelled: threading.Event) -> Server:
    server = Server("at-once")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def chatty(text: str) -> str:
        """Log through Python's logging (forwarded to a client that asked for logs), then return."""
        logging.getLogger("chatty").warning("about %s", text)
        return text

    @server.tool()
    def fails(text: str) -> str:
        """Fail."""
        raise ValueError(f"no {text}")

    @server.tool()
    def wait_for_cancel(ctx: Context) -> str:
        """Wait until the client cancels (it closes the stream)."""
        if ctx.cancelled.wait(20):
            cancelled.set()
        return "cancelled"

    @server.tool(task="optional")
    def as_task(text: str) -> str:
        """A task tool."""
        return text

    return server


def call(name: str, arguments: dict, meta: dict = META, request_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}


def post(url: str, body: dict) -> requests.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": body["method"]}
    if body["method"] == "tools/call":
        headers["Mcp-Name"] = body["params"]["name"]
    return requests.post(url + "/mcp", data=json.dumps(body), headers=headers, timeout=10)


def test_only_requests_that_can_neither_stream_nor_be_cancelled_skip_the_session():
    server = stateless_server(threading.Event())

    def at_once(message: Request) -> bool:
        tool = server.get_tool(message.params.get("name") or "") if message.method == "tools/call" else None
        return runs_here(server, message, tool) and answers_here(server, tool, RequestMeta(message.params).log_level)

    with_logs = dict(META, **{"io.modelcontextprotocol/logLevel": "info"})
    assert at_once(Request(1, "tools/call", call("echo", {"text": "a"})["params"]))
    assert at_once(Request(1, "tools/list", {"_meta": META}))
    assert not at_once(Request(1, "tools/call", call("wait_for_cancel", {})["params"]))  # a ctx: cancellable
    assert not at_once(Request(1, "tools/call", call("echo", {"text": "a"}, with_logs)["params"]))  # may log
    assert not at_once(Request(1, "tools/call", call("as_task", {"text": "a"})["params"]))  # outlives the request
    assert not at_once(Request(1, "tools/call", call("nope", {})["params"]))  # the session's -32602
    assert not at_once(Request(1, "resources/read", {"uri": "x://y", "_meta": META}))  # user code may wait
    echo = server.get_tool("echo")
    assert answers_here(server, echo, None)
    assert not answers_here(server, echo, "info")
    server.trace = True  # the session prints every message
    assert not at_once(Request(1, "tools/call", call("echo", {"text": "a"})["params"]))


def test_a_request_answered_at_once_answers_as_the_session_would():
    cancelled = threading.Event()
    server = stateless_server(cancelled)
    for app in (server.wsgi_app(), server.wsgi_app(sessions=False)):
        with BackgroundServer(app) as running:
            ok = post(running.url, call("echo", {"text": "hi"}, request_id=7))
            assert ok.status_code == 200 and ok.headers["Content-Type"].startswith("application/json")
            assert ok.json() == {"jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": "hi"}], "isError": False, "resultType": "complete"}}
            failed = post(running.url, call("fails", {"text": "luck"})).json()["result"]
            assert failed["isError"] and "no luck" in failed["content"][0]["text"]
            bad = post(running.url, call("echo", {"text": 3})).json()["result"]
            assert bad["isError"] and "Invalid arguments" in bad["content"][0]["text"]
            refused = post(running.url, {"jsonrpc": "2.0", "id": 9, "method": "tools/list",
                                         "params": {"cursor": 5, "_meta": META}})
            assert refused.status_code == 400 and refused.json()["id"] == 9
            assert refused.json()["error"]["code"] == -32602
            listed = post(running.url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}})
            assert listed.json()["result"]["resultType"] == "complete"
            assert "echo" in [tool["name"] for tool in listed.json()["result"]["tools"]]


def test_a_request_that_asks_for_logs_still_gets_them_on_a_stream():
    server = stateless_server(threading.Event())
    with BackgroundServer(server.wsgi_app(sessions=False)) as running:
        quiet = post(running.url, call("chatty", {"text": "x"}))
        assert quiet.headers["Content-Type"].startswith("application/json")
        loud = post(running.url, call("chatty", {"text": "x"}, dict(META, **{
            "io.modelcontextprotocol/logLevel": "info"})))
        assert loud.headers["Content-Type"].startswith("text/event-stream")
        events = [json.loads(line[5:]) for line in loud.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        assert events[0]["method"] == "notifications/message" and "about x" in events[0]["params"]["data"]
        assert events[-1]["result"]["content"][0]["text"] == "x"


def test_a_stateless_request_with_a_ctx_is_still_cancellable():
    cancelled = threading.Event()
    server = stateless_server(cancelled)
    with BackgroundServer(server.wsgi_app(sessions=False)) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2026-07-28") as client:
            try:
                client.call_tool("wait_for_cancel", timeout=0.5)
                raise AssertionError("no timeout")
            except Timeout:
                pass
            assert cancelled.wait(10)  # the client closed the stream: the handler saw the cancel
            assert client.call_tool("echo", {"text": "after"}).text == "after"


def test_the_built_in_server_reads_each_header_once_and_as_before():
    """wsgiserver's one pass over the parsed headers: repeated ones joined with a comma, the first
    Content-Type and Content-Length are the ones, and neither appears as an HTTP_ variable."""
    seen = {}

    def app(environ, start_response):
        seen.update({k: v for k, v in environ.items() if k.startswith(("HTTP_", "CONTENT_"))})
        body = environ["wsgi.input"].read(int(environ["CONTENT_LENGTH"] or 0))
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    with BackgroundServer(app) as running:
        with socket.create_connection(running.httpd.server_address[:2], timeout=10) as sock:
            sock.sendall(b"POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Tag: one\r\nContent-Type: text/a\r\n"
                         b"x-tag: two\r\nContent-Type: text/b\r\nContent-Length: 2\r\nMcp-Name: \xe9t\xe9\r\n\r\nok")
            reply = b""
            while not reply.endswith(b"ok"):  # bounded: the server answers once, then the timeout
                chunk = sock.recv(4096)
                assert chunk, reply
                reply += chunk
    assert seen["HTTP_X_TAG"] == "one,two" and seen["CONTENT_TYPE"] == "text/a" and seen["CONTENT_LENGTH"] == "2"
    assert seen["HTTP_MCP_NAME"] == "\xe9t\xe9"  # latin-1, as headers.items() gave it
    assert "HTTP_CONTENT_TYPE" not in seen and "HTTP_CONTENT_LENGTH" not in seen and seen["HTTP_HOST"] == "127.0.0.1"


def handshake_post(url: str, body: dict, version: str = "2025-11-25") -> requests.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if version:
        headers["MCP-Protocol-Version"] = version
    return requests.post(url + "/mcp", data=json.dumps(body), headers=headers, timeout=10)


def test_a_sessionless_app_answers_a_handshake_era_request_at_once_as_before():
    server = stateless_server(threading.Event())
    with BackgroundServer(server.wsgi_app(sessions=False)) as running:
        ok = handshake_post(running.url, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                       "params": {"name": "echo", "arguments": {"text": "hi"}}})
        assert ok.status_code == 200 and "Mcp-Session-Id" not in ok.headers
        assert ok.json() == {"jsonrpc": "2.0", "id": 4, "result": {
            "content": [{"type": "text", "text": "hi"}], "isError": False}}  # no resultType: not 2026-07-28
        listed = handshake_post(running.url, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, version="")
        assert "echo" in [tool["name"] for tool in listed.json()["result"]["tools"]]  # (no header: 2025-03-26)
        ping = handshake_post(running.url, {"jsonrpc": "2.0", "id": 6, "method": "ping"}).json()
        assert ping == {"jsonrpc": "2.0", "id": 6, "result": {}}
        bad = handshake_post(running.url, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, version="1999-01-01")
        assert bad.status_code == 400 and "unsupported MCP-Protocol-Version" in bad.text
        refused = handshake_post(running.url, {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"cursor": 5}})
        assert refused.status_code == 200 and refused.json()["error"]["code"] == -32602
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25") as client:  # the handshake still works
            assert client.call_tool("echo", {"text": "via client"}).text == "via client"


def test_a_sessionless_app_with_a_default_log_level_still_streams_the_logs():
    server = stateless_server(threading.Event())
    server.log_level = "info"  # every client gets info and above: the request needs its stream
    with BackgroundServer(server.wsgi_app(sessions=False)) as running:
        loud = handshake_post(running.url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": "chatty", "arguments": {"text": "y"}}})
        assert loud.headers["Content-Type"].startswith("text/event-stream")
        events = [json.loads(line[5:]) for line in loud.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        assert events[0]["method"] == "notifications/message" and "about y" in events[0]["params"]["data"]
        assert events[-1]["result"]["content"][0]["text"] == "y"


TOOLS_RUN = """
from typing import Tuple
from minimcp import Context, Server
server = Server("paths")

@server.tool()
def echo(text: str) -> str:
    return text

@server.tool()
def with_ctx(text: str, ctx: Context) -> str:
    return f"{text} {ctx.request_id}"

@server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
def custom_with_ctx(ctx: Context, **arguments) -> str:
    return f"{arguments['text']} {ctx.request_id}"

@server.tool()
def converted(point: Tuple[int, int]) -> str:
    return type(point).__name__

@server.tool()
def number(text: str) -> int:
    return len(text)

@server.tool()
async def later(text: str) -> str:
    return text.upper()

server.run()
"""


@pytest.mark.parametrize("version", ["2025-11-25", "2024-11-05"])
def test_a_tool_call_on_each_path_answers_as_before(version):
    """The shortcuts of ServerTool.call (arguments passed as given, a str result sent as its
    text block at once) and of jsonrpc (a line read by the scanner alone, the C encoder called
    directly) are taken only where they change nothing: ctx, converted arguments, a non-str
    result, a coroutine, odd whitespace and trailing data each still get what they got before."""
    def call(i, name, arguments):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}}) + "\n"

    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = [json.dumps(init) + "\n", '{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
             call(1, "echo", {"text": "hi\u2028"}), "  " + call(2, "with_ctx", {"text": "a"}),
             call(3, "custom_with_ctx", {"text": "b"}).rstrip("\n") + " \t\r\n", call(4, "converted", {"point": [1, 2]}),
             call(5, "number", {"text": "four"}), call(6, "later", {"text": "up"}),
             call(7, "echo", {"text": 5}), call(8, "echo", {"text": "x"}).rstrip("\n") + "\x0c\n",
             call(9, "echo", {"text": "x"}).rstrip("\n") + " {}\n",
             call(10, "echo", {"text": "x", "deep": [[1]]}),
             call(11, "echo", {"text": "x", "deep": "DEEP"}).replace('"DEEP"', "[" * 150 + "]" * 150)]
    out = subprocess.run([PY, "-I", "-c", TOOLS_RUN], input="".join(lines), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "\u2028" not in out.stdout and "\\u2028" in out.stdout  # a line break in JSON text is escaped
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    by_id = {a["id"]: a for a in answers}
    text = {i: by_id[i]["result"]["content"][0]["text"] for i in range(1, 8)}
    assert text == {1: "hi\u2028", 2: "a 2", 3: "b 3", 4: "tuple", 5: "4", 6: "UP",
                    7: text[7]} and "argument 'text'" in text[7] and by_id[7]["result"]["isError"] is True
    assert all(by_id[i]["result"]["isError"] is False for i in range(1, 7))
    assert by_id[1]["result"] == {"content": [{"type": "text", "text": "hi\u2028"}], "isError": False}
    structured = {"structuredContent": {"result": 4}} if version == "2025-11-25" else {}
    assert by_id[5]["result"] == {"content": [{"type": "text", "text": "4"}], **structured, "isError": False}
    # "\x0c" is whitespace to str.isspace() but not to JSON; nor is a second value after the first
    errors = [a for a in answers if a.get("id") is None]
    assert [e["error"]["code"] for e in errors] == [-32700, -32700], answers
    assert "Extra data" in errors[0]["error"]["message"] and 8 not in by_id and 9 not in by_id
    # arguments nested deeper than server.connection.MAX_DEPTH behind a flat one are still refused
    assert "argument" in by_id[10]["result"]["content"][0]["text"]  # shallow: the tool's own check
    assert by_id[11]["error"]["code"] == -32602 and "nested deeper" in by_id[11]["error"]["message"]


def session_post(url: str, session_id: str, body: dict) -> requests.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": session_id}
    return requests.post(url + "/mcp", data=json.dumps(body), headers=headers, timeout=10)


def test_a_session_request_answered_in_its_own_post_answers_as_the_stream_would():
    """A handshake-era session's request that can neither stream nor be cancelled is answered in
    its POST's body with no response stream (server.http.app.answers_here): the same answers
    as on a stream, its id taken while it runs and free after, an answer even when a cancel
    comes while it runs, and logs still streamed once the client asks."""
    server = stateless_server(threading.Event())
    started, release = threading.Event(), threading.Event()
    plain_started, plain_release = threading.Event(), threading.Event()

    @server.tool()
    def hold(ctx: Context) -> str:
        """Wait until the test says (a ctx: it runs on a worker, on a stream)."""
        started.set()
        release.wait(10)
        return "held"

    @server.tool()
    def wait_plain(text: str) -> str:
        """Wait until the test says (no ctx: it runs on the HTTP thread, answered in the POST)."""
        plain_started.set()
        plain_release.wait(10)
        return text

    app = server.wsgi_app()
    with BackgroundServer(app) as running:
        init = handshake_post(running.url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        sid = init.headers["Mcp-Session-Id"]
        assert session_post(running.url, sid, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        streams = app.sessions[sid].session.transport.by_stream_id
        opened = len(streams)
        ok = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                             "params": {"name": "echo", "arguments": {"text": "hi"}}})
        assert ok.status_code == 200 and ok.headers["Content-Type"].startswith("application/json")
        assert ok.json() == {"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "hi"}], "isError": False}}
        failed = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                                 "params": {"name": "fails", "arguments": {"text": "luck"}}})
        assert failed.json()["result"]["isError"] and "no luck" in failed.json()["result"]["content"][0]["text"]
        refused = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                                                  "params": {"cursor": 5}})
        assert refused.status_code == 200 and refused.json()["error"]["code"] == -32602
        assert session_post(running.url, sid, {"jsonrpc": "2.0", "id": 6, "method": "ping"}).json()["result"] == {}
        again = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                "params": {"name": "echo", "arguments": {"text": "again"}}})
        assert again.json()["result"]["content"][0]["text"] == "again"  # its id was freed with its answer
        assert len(streams) == opened  # no response stream was opened for any of them

        waited = {}
        waiter = threading.Thread(target=lambda: waited.update(answer=session_post(running.url, sid, {
            "jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "wait_plain", "arguments": {"text": "w"}}})))
        waiter.start()
        try:
            assert plain_started.wait(10)
            cancel = session_post(running.url, sid, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                     "params": {"requestId": 10}})
            assert cancel.status_code == 202
        finally:
            plain_release.set()
            waiter.join(10)
        assert waited["answer"].status_code == 200  # a POST with a request gets JSON or SSE, never a bare 202
        assert waited["answer"].json()["result"]["content"][0]["text"] == "w"

        answers = {}
        holder = threading.Thread(target=lambda: answers.update(held=session_post(running.url, sid, {
            "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hold", "arguments": {}}})))
        holder.start()
        try:
            assert started.wait(10)
            twin = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                                   "params": {"name": "echo", "arguments": {"text": "twin"}}})
            assert twin.json()["error"]["code"] == -32600 and "already in use" in twin.json()["error"]["message"]
        finally:
            release.set()
            holder.join(10)
        assert '"held"' in answers["held"].text

        assert session_post(running.url, sid, {"jsonrpc": "2.0", "id": 8, "method": "logging/setLevel",
                                               "params": {"level": "info"}}).json()["result"] == {}
        loud = session_post(running.url, sid, {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                               "params": {"name": "chatty", "arguments": {"text": "z"}}})
        assert loud.headers["Content-Type"].startswith("text/event-stream")
        events = [json.loads(line[5:]) for line in loud.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        assert events[0]["method"] == "notifications/message" and "about z" in events[0]["params"]["data"]
        assert events[-1]["result"]["content"][0]["text"] == "z"


def test_a_one_post_connection_used_again_carries_nothing_from_the_post_before():
    """A stateless-era POST, or a sessionless app's, answered in its body leaves its connection
    for the next such POST (MCPApp._spare): each request still sees its own principal (a
    middleware reads it), the version its own POST said, and a connection with something in
    flight is never used again."""
    server = stateless_server(threading.Event())
    seen = []
    server.add_middleware(lambda request, call_next: (seen.append((request.principal, request.protocol_version)),
                                                      call_next(request))[1])
    for sessions in (True, False):
        seen.clear()
        app = server.wsgi_app(sessions=sessions, auth=lambda headers: headers.get("x-user") or None)
        with BackgroundServer(app) as running:
            for n, user in enumerate(["ann", "bob", "ann", "cy"]):
                headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo",
                           "X-User": user}
                answer = requests.post(running.url + "/mcp", data=json.dumps(call("echo", {"text": user}, request_id=n)),
                                       headers=headers, timeout=10)
                assert answer.json()["result"]["content"][0]["text"] == user
            if not sessions:
                for version in ("2025-06-18", "2025-11-25"):
                    answer = requests.post(running.url + "/mcp", headers={
                        "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                        "MCP-Protocol-Version": version, "X-User": "dee"}, timeout=10,
                        data=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
                    assert answer.status_code == 200 and answer.json()["result"]["tools"]
            assert len(app._spares) == 1  # one at a time: the same connection each time
            spare = app._spares[0]
        assert [principal for principal, _ in seen[:4]] == ["ann", "bob", "ann", "cy"]
        assert all(version == "2026-07-28" for _, version in seen[:4])
        if not sessions:
            assert seen[4:] == [("dee", "2025-06-18"), ("dee", "2025-11-25")]
        assert spare.session.closed  # the app's close() closes its spares too
