"""Middleware: one seam that every request passes exactly once, whatever carries it.

A server's middleware is counted over every transport (stdio in a child process, in memory,
WebSocket, Streamable HTTP of both eras with a tool that takes no ``ctx`` and one that does,
a sessionless app, the 2024-11-05 HTTP+SSE endpoints); a client's, over its outgoing calls and
the server's requests it answers. What a middleware returns or raises is what the peer gets.
"""

import collections
import textwrap
import threading

import pytest

import minimcp
from minimcp import Context, Server
from minimcp.errors import RPCError
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY


def counted_server():
    """A server whose middleware counts each request it answers or sends, by (method, outgoing)."""
    seen = collections.Counter()
    lock = threading.Lock()

    def count(request, call_next):
        with lock:
            seen[(request.method, request.outgoing)] += 1
        return call_next(request)

    server = Server("counted", middleware=[count])

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def echo_ctx(text: str, ctx: Context) -> str:
        ctx.report_progress(1, 1)
        return text

    return server, seen


def calls(client):
    assert client.call_tool("echo", {"text": "a"}).text == "a"
    assert client.call_tool("echo", {"text": "b"}).text == "b"
    assert client.call_tool("echo_ctx", {"text": "c"}).text == "c"
    assert client.list_tools()


def test_in_memory_each_request_passes_once():
    server, seen = counted_server()
    with minimcp.connect("memory", server=server) as client:
        calls(client)
    assert seen[("tools/call", False)] == 3
    assert seen[("tools/list", False)] >= 1


@pytest.mark.parametrize("protocol, stateless", [("2025-11-25", False), ("2025-11-25", True), ("2026-07-28", False)])
def test_streamable_http_each_request_passes_once(protocol, stateless):
    server, seen = counted_server()
    with BackgroundServer(server.wsgi_app(sessions=not stateless)) as running:
        with minimcp.connect(running.url + "/mcp", protocol=protocol) as client:
            calls(client)
    assert seen[("tools/call", False)] == 3, seen


def test_http_plus_sse_and_websocket_each_request_passes_once():
    server, seen = counted_server()
    with BackgroundServer(server.wsgi_app(), websockets={"/ws": server}) as running:
        with minimcp.connect(running.url + "/sse") as client:
            calls(client)
        assert seen[("tools/call", False)] == 3, seen
        with minimcp.connect(running.url.replace("http://", "ws://") + "/ws") as client:
            calls(client)
    assert seen[("tools/call", False)] == 6, seen


STDIO_SERVER = textwrap.dedent("""
    import collections
    from minimcp import Context, Server

    seen = collections.Counter()

    def count(request, call_next):
        seen[request.method] += 1
        return call_next(request)

    server = Server("counted", middleware=[count])

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def echo_ctx(text: str, ctx: Context) -> str:
        return text

    @server.tool()
    def seen_calls() -> int:
        '''How many tools/call the middleware saw, this one included.'''
        return seen["tools/call"]

    server.run()
""")


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_stdio_each_request_passes_once(tmp_path, protocol):
    script = tmp_path / "counted.py"
    script.write_text(STDIO_SERVER)
    with minimcp.connect([PY, str(script)], protocol=protocol) as client:
        for n in range(20):  # the quick ones run on the reading thread: still once each
            client.call_tool("echo", {"text": str(n)})
        client.call_tool("echo_ctx", {"text": "x"})
        assert client.call_tool("seen_calls").structured == {"result": 22}


def test_a_server_request_to_the_client_passes_both_sides_once():
    """ctx.sample() is a request the server sends (its middleware sees it outgoing) and the
    client answers (the client's sees it incoming); the client's call is outgoing on its side."""
    server, seen = counted_server()

    @server.tool()
    def ask(ctx: Context) -> str:
        return ctx.sample("hi", max_tokens=5)["content"]["text"]

    client_seen = collections.Counter()

    def client_count(request, call_next):
        client_seen[(request.method, request.outgoing)] += 1
        return call_next(request)

    def sampling(params):
        return {"role": "assistant", "model": "m", "content": {"type": "text", "text": "yo"}}

    with minimcp.connect("memory", server=server, sampling_handler=sampling, protocol="2025-11-25",
                         middleware=[client_count]) as client:
        assert client.call_tool("ask").text == "yo"
    assert seen[("tools/call", False)] == 1 and seen[("sampling/createMessage", True)] == 1
    assert client_seen[("tools/call", True)] == 1 and client_seen[("sampling/createMessage", False)] == 1
    assert client_seen[("initialize", True)] == 1


def test_middleware_runs_outermost_first_and_what_it_does_is_what_the_peer_gets():
    order = []
    server = Server("wrapped")

    @server.add_middleware
    def outer(request, call_next):
        order.append("outer")
        result = call_next(request)
        if request.method == "tools/call":
            result["content"][0]["text"] += "!"
        return result

    @server.add_middleware
    def inner(request, call_next):
        order.append("inner")
        if request.method == "tools/call" and request.params.get("name") == "forbidden":
            raise RPCError(-32001, "not today")
        return call_next(request)

    @server.tool()
    def echo(text: str) -> str:
        order.append("tool")
        return text

    @server.tool()
    def forbidden() -> str:
        raise AssertionError("the middleware refused it first")

    def add_meta(request, call_next):  # a client middleware may change what it sends
        if request.method == "tools/call" and "text" in request.params.get("arguments", {}):
            request.params["arguments"]["text"] += "?"
        return call_next(request)

    with minimcp.connect("memory", server=server, middleware=[add_meta]) as client:
        order.clear()
        assert client.call_tool("echo", {"text": "hi"}).text == "hi?!"
        assert order == ["outer", "inner", "tool"]
        with pytest.raises(RPCError) as refused:
            client.call_tool("forbidden")
        assert refused.value.code == -32001 and refused.value.message == "not today"
        assert client.call_tool("echo", {"text": "on"}).text == "on?!"  # the session lives on


def test_a_failing_middleware_is_answered_as_an_internal_error():
    server = Server("broken")

    @server.add_middleware
    def broken(request, call_next):
        if request.method == "tools/call":
            raise ValueError("bug in middleware")
        return call_next(request)

    @server.tool()
    def echo(text: str) -> str:
        return text

    with minimcp.connect("memory", server=server) as client:
        with pytest.raises(RPCError) as failed:
            client.call_tool("echo", {"text": "x"})
        assert failed.value.code == -32603 and "(ref " in failed.value.message  # its text is in the log only
        assert "bug in middleware" not in failed.value.message
        assert client.list_tools()


def test_every_request_a_middleware_sends_goes_out_with_an_id_of_its_own():
    # spec basic "Requests": an id is never reused within a session. A middleware that retries
    # (calls call_next twice) or builds the request afresh still sends distinct ids, and the
    # id a tracer reads before call_next is the one the first sending used.
    seen = []
    server = Server("ids")

    @server.add_middleware
    def record(request, call_next):
        if request.method == "tools/call":
            seen.append(request.request_id)
        return call_next(request)

    server.tool()(lambda: "ok")
    read_before = []

    def retry(request, call_next):
        if request.method != "tools/call":
            return call_next(request)
        read_before.append(request.request_id)
        call_next(request)
        return call_next(request)  # (a retry: the same OutgoingRequest again)

    def rebuild(request, call_next):
        return call_next(type(request)(request.session, request.method, dict(request.params)))

    with minimcp.connect("memory", server=server, middleware=[retry]) as client:
        assert client.call_tool("<lambda>").text == "ok"
    assert len(seen) == 2 and seen[0] != seen[1] and read_before == [seen[0]]
    seen.clear()
    with minimcp.connect("memory", server=server, middleware=[rebuild]) as client:
        calls = [threading.Thread(target=client.call_tool, args=("<lambda>",)) for _ in range(3)]
        for call in calls:
            call.start()
        for call in calls:
            call.join(10)
        assert client.call_tool("<lambda>").text == "ok"
    assert len(seen) == 4 and len(set(seen)) == 4
