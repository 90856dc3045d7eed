"""The server's method table and its one era guard (minimcp/server/methods.py), on the wire.

Each method is answered in the eras that have it and refused, with the right
code, in the others: -32601 for a method the request's era lacks, -32600 for
a handshake request before initialize. Batches (2025-03-26 only) are checked
over stdio-like memory pipes and over real HTTP, with and without sessions.
"""

import pytest
import requests

from minimcp import Server
from minimcp.engine.session import Session
from minimcp.errors import RPCError
from minimcp.protocol import jsonrpc
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.server.methods import BOTH, HANDSHAKE, METHODS, STATELESS
from minimcp.transports import memory

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
INIT = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
ACCEPT = "application/json, text/event-stream"


def make_server() -> Server:
    server = Server("methods-test")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.resource("docs://readme")
    def readme() -> str:
        return "read me"

    @server.prompt()
    def hello(who: str) -> str:
        return f"Say hello to {who}."

    return server


@pytest.fixture
def raw():
    """A bare session talking to a fresh server over memory."""
    client_end, server_end = memory.pair()
    served = make_server().serve(server_end)
    client_end.on_close = served.session.close
    session = Session(client_end, timeout=10)
    session.start()
    yield session
    session.close()


def code_of(session, method, params):
    with pytest.raises(RPCError) as info:
        session.request(method, params)
    return info.value.code


def test_the_table_lists_every_method_once_with_its_era():
    assert {era for _, era in METHODS.values()} == {HANDSHAKE, STATELESS, BOTH}
    assert METHODS["initialize"][1] == HANDSHAKE and METHODS["server/discover"][1] == STATELESS
    assert METHODS["tools/call"][1] == BOTH


@pytest.mark.parametrize("method", [m for m, (_, era) in METHODS.items() if era == HANDSHAKE])
def test_handshake_methods_are_not_found_in_the_stateless_era(raw, method):
    """spec 2026-07-28: initialize, ping, logging/setLevel and resources/(un)subscribe are gone."""
    with pytest.raises(RPCError) as info:
        raw.request(method, {"_meta": META})
    assert info.value.code == jsonrpc.METHOD_NOT_FOUND and "2026-07-28" in info.value.message


@pytest.mark.parametrize("method", [m for m, (_, era) in METHODS.items() if era == STATELESS])
def test_stateless_methods_are_not_found_in_the_handshake_era(raw, method):
    raw.request("initialize", INIT)
    assert code_of(raw, method, {}) == jsonrpc.METHOD_NOT_FOUND


@pytest.mark.parametrize("method", [m for m, (_, era) in METHODS.items()
                                    if era == BOTH or m in ("logging/setLevel", "resources/subscribe")])
def test_handshake_requests_before_initialize_are_invalid(raw, method):
    assert code_of(raw, method, {}) == jsonrpc.INVALID_REQUEST


def test_ping_and_initialize_come_first_and_then_everything_else(raw):
    assert raw.request("ping") == {}
    assert raw.request("initialize", INIT)["protocolVersion"] == "2025-03-26"
    assert [t["name"] for t in raw.request("tools/list")["tools"]] == ["echo"]
    assert raw.request("tools/list", {"_meta": META})["resultType"] == "complete"  # both eras on one connection


def test_a_bad_log_level_is_invalid_params_not_an_internal_error(raw):
    raw.request("initialize", INIT)
    assert code_of(raw, "logging/setLevel", {"level": ["debug"]}) == jsonrpc.INVALID_PARAMS


# -- batches: 2025-03-26 alone ----------------------------------------------------------------------


def _post(url, body, session_id=None, version=None):
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if session_id:
        headers["Mcp-Session-Id"] = session_id
    if version:
        headers["MCP-Protocol-Version"] = version
    return requests.post(url, json=body, headers=headers, timeout=10)


def _batch(*ids):
    return [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": f"n{i}"}}}
            for i in ids]


def test_http_batches_are_answered_as_one_array_under_2025_03_26_with_a_session():
    with BackgroundServer(make_server().wsgi_app()) as running:
        url = running.url + "/mcp"
        opened = _post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        session_id = opened.headers["Mcp-Session-Id"]
        _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)
        answered = _post(url, _batch(1, 2, 3), session_id)
        assert answered.status_code == 200
        replies = answered.json()
        assert sorted((r["id"], r["result"]["content"][0]["text"]) for r in replies) == [(1, "n1"), (2, "n2"), (3, "n3")]


def test_http_batches_are_refused_under_2025_11_25_and_allowed_stateless_under_2025_03_26():
    with BackgroundServer(make_server().wsgi_app()) as running:
        url = running.url + "/mcp"
        newer = dict(INIT, protocolVersion="2025-11-25")
        opened = _post(url, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": newer})
        refused = _post(url, _batch(1), opened.headers["Mcp-Session-Id"], "2025-11-25")
        assert refused.status_code == 400 and refused.json()["error"]["code"] == jsonrpc.INVALID_REQUEST
    with BackgroundServer(make_server().wsgi_app(sessions=False)) as running:
        answered = _post(running.url + "/mcp", _batch(4, 5), version="2025-03-26")
        assert answered.status_code == 200 and sorted(r["id"] for r in answered.json()) == [4, 5]


def test_initialize_in_a_batch_is_refused():
    """spec 2025-03-26 basic/lifecycle: initialize MUST NOT be part of a batch; the rest is answered."""
    client_end, server_end = memory.pair()
    served = make_server().serve(server_end)
    try:
        client_end.write(jsonrpc.Request(0, "initialize", INIT))
        assert client_end.read().result["protocolVersion"] == "2025-03-26"
        client_end.write([jsonrpc.Request(1, "initialize", INIT), jsonrpc.Request(2, "ping")])
        replies = client_end.read()
        assert sorted((r.id, getattr(r, "code", None)) for r in replies) == [(1, jsonrpc.INVALID_REQUEST), (2, None)]
        assert "batched" in next(r for r in replies if r.id == 1).message
    finally:
        client_end.close()
        served.session.close()


def test_a_batched_initialize_over_http_is_refused_and_opens_no_session():
    """spec 2025-03-26 basic/lifecycle: initialize MUST NOT be part of a batch; a session opened
    for one would be left behind, unusable, until it expired."""
    app = make_server().wsgi_app()
    with BackgroundServer(app) as running:
        url = running.url + "/mcp"
        for _ in range(3):
            refused = _post(url, [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}])
            assert refused.status_code == 400 and "initialize" in refused.json()["error"]["message"]
        assert "sessions=0" in repr(app) and not app.server.connections()
