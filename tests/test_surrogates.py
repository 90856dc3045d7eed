"""A lone surrogate (``"x\\ud800y"``) crosses every transport the way it crosses stdio.

Such a string is legal in Python and in JSON (``"\\ud800"``) but cannot be
UTF-8. ``jsonrpc.encode`` then falls back to ASCII escapes, so the peer reads
back the very same Python string. Every transport must send the bytes that
``jsonrpc.encode`` made, not encode text itself (which raised
``UnicodeEncodeError`` on HTTP and WebSocket). Each test compares with what
stdio delivers: a real subprocess server.

Run as a script, this file is that stdio server.
"""

import sys
import threading

import minimcp
from minimcp import Context, Server

LONE = "x\ud800y"


def make_server() -> Server:
    """A server whose tools hand back the lone surrogate, answered with JSON or with SSE."""
    server = Server("surrogates")

    @server.tool()
    def lone() -> str:
        """Return a string with a lone surrogate (no ctx: a plain JSON answer over HTTP)."""
        return LONE

    @server.tool()
    def echo(text: str) -> str:
        """Return the text the client sent (the surrogate goes both ways)."""
        return text

    @server.tool()
    def streamed(ctx: Context) -> str:
        """Log the surrogate, then return it: over HTTP the log comes first, so the answer is SSE."""
        ctx.log("info", LONE)
        return LONE

    return server


if __name__ == "__main__":
    make_server().run()
    sys.exit(0)


import pytest  # noqa: E402  (the server above needs none of the test machinery)
import requests  # noqa: E402

from minimcp.server.http.wsgiserver import BackgroundServer  # noqa: E402

from conftest import PY  # noqa: E402

ACCEPT = "application/json, text/event-stream"


def exchange(client: minimcp.Client, log_expected: bool = True) -> dict:
    """Everything the surrogate tools deliver over one client: results and the log's data.

    The log is handled on the client's dispatcher thread, which may run after
    the call returned: wait for it (bounded) when this transport carries it.
    """
    logs: list = []
    logged = threading.Event()
    client.on_log = lambda params: (logs.append(params["data"]), logged.set())
    client.set_logging_level("info")
    result = {"lone": client.call_tool("lone").text,
              "echo": client.call_tool("echo", {"text": LONE}).text,
              "streamed": client.call_tool("streamed").text}
    if log_expected:
        logged.wait(10)
    return dict(result, logs=logs)


@pytest.fixture(scope="module")
def over_stdio() -> dict:
    """What a real stdio server delivers: the reference every other transport must match."""
    with minimcp.connect([PY, __file__], timeout=20) as client:
        return exchange(client)


def test_stdio_delivers_the_surrogate_intact(over_stdio):
    assert over_stdio == {"lone": LONE, "echo": LONE, "streamed": LONE, "logs": [LONE]}


def test_memory(over_stdio):
    with minimcp.connect("memory", server=make_server()) as client:
        assert exchange(client) == over_stdio


@pytest.fixture
def http():
    server = make_server()
    with BackgroundServer(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


@pytest.mark.parametrize("protocol", ["2025-11-25", "2025-03-26", "2026-07-28"])
def test_streamable_http(http, over_stdio, protocol):
    with minimcp.connect(http.url + "/mcp", protocol=protocol, timeout=20) as client:
        assert exchange(client) == over_stdio


def test_streamable_http_json_response_mode(over_stdio):
    with BackgroundServer(make_server().wsgi_app(json_response=True)) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25", timeout=20) as client:
            result = exchange(client, log_expected=False)
    assert result == dict(over_stdio, logs=[])  # JSON only: the log sent during the call is dropped


def test_streamable_http_stateless(over_stdio):
    with BackgroundServer(make_server().wsgi_app(sessions=False)) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25", timeout=20) as client:
            result = exchange(client, log_expected=False)
    assert result == dict(over_stdio, logs=[])  # no session keeps the log level between POSTs


def test_the_wire_is_ascii_escaped_json_and_sse(http):
    """The bytes themselves: a JSON body and an SSE event that carry ``\\ud800`` as an escape."""
    url = http.url + "/mcp"
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    with requests.Session() as web:
        init = web.post(url, headers=headers, timeout=10, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        headers.update({"Mcp-Session-Id": init.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
        web.post(url, headers=headers, timeout=10, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        web.post(url, headers=headers, timeout=10,
                 json={"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}})
        plain = web.post(url, headers=headers, timeout=10, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "lone", "arguments": {}}})
        streamed = web.post(url, headers=headers, timeout=10, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "streamed", "arguments": {}}})
        web.delete(url, headers=headers, timeout=10)
    assert plain.status_code == 200 and plain.headers["Content-Type"] == "application/json"
    assert b'"text":"x\\ud800y"' in plain.content
    assert plain.json()["result"]["content"][0]["text"] == LONE
    assert streamed.status_code == 200 and streamed.headers["Content-Type"] == "text/event-stream"
    assert streamed.content.count(b"x\\ud800y") == 2  # the log, then the answer


def test_legacy_http_with_sse(http, over_stdio):
    with minimcp.connect(http.url + "/sse", timeout=20) as client:
        assert type(client.session.transport).__name__ == "SSETransport"
        assert exchange(client) == over_stdio


def test_websocket(http, over_stdio):
    with minimcp.connect(http.url.replace("http://", "ws://") + "/ws", timeout=20) as client:
        assert exchange(client) == over_stdio
