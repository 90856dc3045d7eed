"""The stateless protocol, 2026-07-28: the era probe, per-request metadata, input-required
rounds and their signed state, subscriptions, and the HTTP header rules.

spec 2026-07-28 basic (digest base.md §9) and basic/transports (digest transports.md §3).
The feature tests themselves run in both eras in test_server_features.py.
"""

import json
import threading
import time

import pytest
import requests

import minimcp
from minimcp import Context, Server
from minimcp.engine.session import Session
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.server.state import StateSigner
from minimcp.transports import memory

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}


def make_server() -> Server:
    server = Server("modern-test", instructions="Try greet.", cache_ttl_ms=5000)

    @server.tool()
    def greet(ctx: Context) -> str:
        """Ask for a name, then greet."""
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}},
                            key="user_name")
        return f"Hello, {answer['content']['name']}!"

    @server.tool()
    def two_at_once(ctx: Context) -> str:
        """Ask two things in one round."""
        with ctx.inputs():
            name = ctx.elicit("Name?", {"type": "object"}, key="name")
            said = ctx.sample("Say hi", max_tokens=5, key="hi")
        return f"{name['content']['name']} / {said['content']['text']}"

    @server.tool()
    def log_some(ctx: Context) -> str:
        """Log at two levels."""
        ctx.log("debug", "fine detail")
        ctx.log("warning", "worth knowing")
        return "logged"

    @server.prompt()
    def hello(who: str) -> str:
        return f"Say hello to {who}."

    @server.completion(prompt="hello", argument="who")
    def complete_who(value: str, ctx=None) -> list:
        return ["world"]

    return server


@pytest.fixture
def raw():
    """A bare session talking to a fresh server over memory: the wire, with nothing in between."""
    client_end, server_end = memory.pair()
    server = make_server()
    served = server.serve(server_end)
    client_end.on_close = served.session.close
    session = Session(client_end, timeout=10)
    session.start()
    session.server = server
    yield session
    session.close()


def call(session, method, params=None, meta=META):
    return session.request(method, {**(params or {}), "_meta": meta})


# -- per-request metadata ------------------------------------------------------------------------


def test_discover_says_what_the_server_is(raw):
    """spec 2026-07-28 server/discover: versions, capabilities, serverInfo in _meta, cache hints."""
    result = call(raw, "server/discover")
    assert result["supportedVersions"][0] == "2026-07-28" and "2025-11-25" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "modern-test", "version": "0.1.0"}
    assert result["instructions"] == "Try greet." and "tools" in result["capabilities"]
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 5000, "public")


def test_every_result_has_a_result_type_and_lists_have_cache_hints(raw):
    listed = call(raw, "tools/list")
    assert listed["resultType"] == "complete" and listed["ttlMs"] == 5000 and listed["cacheScope"] == "public"
    completed = call(raw, "completion/complete", {"ref": {"type": "ref/prompt", "name": "hello"},
                                                   "argument": {"name": "who", "value": "w"}})
    assert completed["resultType"] == "complete" and "ttlMs" not in completed


@pytest.mark.parametrize("meta, code", [
    ({}, -32602),
    ({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, -32602),                  # no capabilities
    ({**META, "io.modelcontextprotocol/protocolVersion": "2031-01-01"}, -32022),
])
def test_bad_metadata(raw, meta, code):
    """spec 2026-07-28 basic: missing _meta fields are -32602; an unknown version -32022."""
    params = {"_meta": meta} if meta else {"_meta": {"io.modelcontextprotocol/protocolVersion": None}}
    if not meta:
        params = {"_meta": {"io.modelcontextprotocol/protocolVersion": 7}}
    with pytest.raises(minimcp.RPCError) as info:
        raw.request("tools/list", params)
    assert info.value.code == code
    if code == -32022:
        assert info.value.data["requested"] == "2031-01-01" and "2026-07-28" in info.value.data["supported"]


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe"])
def test_methods_removed_in_2026_are_not_found(raw, method):
    with pytest.raises(minimcp.RPCError) as info:
        call(raw, method, {"protocolVersion": "2025-11-25", "level": "info", "uri": "x://y"})
    assert info.value.code == -32601


def test_logs_are_request_scoped_and_follow_the_request_level(raw):
    """spec 2026-07-28 server/utilities/logging: no logLevel, no log messages."""
    seen = []
    raw.notification_handlers["notifications/message"] = seen.append
    call(raw, "tools/call", {"name": "log_some"})
    call(raw, "tools/call", {"name": "log_some"}, {**META, "io.modelcontextprotocol/logLevel": "info"})
    raw.close()
    assert [m["data"] for m in seen] == ["worth knowing"]


def test_a_legacy_and_a_modern_client_on_one_stdio_connection(raw):
    """Dual era: after initialize, modern requests on the same connection are still served statelessly."""
    raw.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}})
    legacy = raw.request("tools/call", {"name": "log_some"})
    modern = call(raw, "tools/call", {"name": "log_some"})
    assert "resultType" not in legacy and modern["resultType"] == "complete"


# -- input required (MRTR) --------------------------------------------------------------------------


def test_input_required_round_trip(raw):
    """spec 2026-07-28 basic/patterns/mrtr: input_required, then a retry with answers and the state."""
    first = call(raw, "tools/call", {"name": "greet"})
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    answers = {"user_name": {"action": "accept", "content": {"name": "Ada"}}, "unasked": {"x": 1}}
    final = call(raw, "tools/call", {"name": "greet", "inputResponses": answers, "requestState": first["requestState"]})
    assert final["content"][0]["text"] == "Hello, Ada!" and final["resultType"] == "complete"


def test_several_inputs_in_one_round(raw):
    first = call(raw, "tools/call", {"name": "two_at_once"})
    assert sorted(first["inputRequests"]) == ["hi", "name"]
    answers = {"name": {"action": "accept", "content": {"name": "Bo"}},
               "hi": {"role": "assistant", "content": {"type": "text", "text": "hi!"}, "model": "m"}}
    final = call(raw, "tools/call", {"name": "two_at_once", "inputResponses": answers,
                                     "requestState": first["requestState"]})
    assert final["content"][0]["text"] == "Bo / hi!"


def test_tampered_foreign_and_expired_state_are_refused(raw):
    state = call(raw, "tools/call", {"name": "greet"})["requestState"]
    answers = {"user_name": {"action": "accept", "content": {"name": "Eve"}}}
    tampered = state[:-4] + ("AAAA" if state[-4:] != "AAAA" else "BBBB")
    for bad, words in ((tampered, "altered"), ("not-even-base64!", "altered")):
        with pytest.raises(minimcp.RPCError, match=words) as info:
            call(raw, "tools/call", {"name": "greet", "inputResponses": answers, "requestState": bad})
        assert info.value.code == -32602
    with pytest.raises(minimcp.RPCError, match="another request"):  # a state moved to other params
        call(raw, "tools/call", {"name": "two_at_once", "inputResponses": answers, "requestState": state})
    expired = StateSigner(raw.server.state_signer.secret, ttl=-1).sign(
        "tools/call", {"name": "greet"}, {}, ["user_name"])
    with pytest.raises(minimcp.RPCError, match="expired"):
        call(raw, "tools/call", {"name": "greet", "inputResponses": answers, "requestState": expired})
    # replaying a good state for the same request gives the same answer: it is stateless by design
    again = call(raw, "tools/call", {"name": "greet", "inputResponses": answers, "requestState": state})
    assert again["content"][0]["text"] == "Hello, Eve!"


def test_a_client_that_never_retries_leaves_nothing_behind(raw):
    call(raw, "tools/call", {"name": "greet"})
    connection = raw.server.connections()[0]
    assert not connection.session.busy and raw.server.subscriptions == set()


def test_an_undeclared_capability_is_never_asked_for(raw):
    """spec 2026-07-28 basic/patterns/mrtr: never ask what the request did not declare (-32021)."""
    bare = {**META, "io.modelcontextprotocol/clientCapabilities": {}}
    with pytest.raises(minimcp.RPCError) as info:
        call(raw, "tools/call", {"name": "greet"}, bare)
    assert info.value.code == -32021 and info.value.data == {"requiredCapabilities": {"elicitation": {}}}


def test_the_client_answers_input_requests_by_itself():
    server = make_server()
    asked = []
    with minimcp.connect("memory", server=server, elicitation_handler=lambda p: asked.append(p) or {
            "action": "accept", "content": {"name": "Lin"}},
            sampling_handler=lambda p: {"role": "assistant", "content": {"type": "text", "text": "yo"},
                                        "model": "m"}) as client:
        assert client.era == "stateless" and client.protocol_version == "2026-07-28"
        assert client.call_tool("greet").text == "Hello, Lin!"
        assert client.call_tool("two_at_once").text == "Lin / yo"
    assert asked[0]["message"] == "Your name?"


# -- the era probe ----------------------------------------------------------------------------------


def fake_server(handlers):
    client_end, server_end = memory.pair()
    session = Session(server_end, handlers)
    session.start()
    return client_end, session


TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}


@pytest.mark.parametrize("discover, expected", [
    (lambda p, c: {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"},
     "2026-07-28"),                                                                     # modern only
    (None, "2025-11-25"),                                                                # legacy: method not found
    (lambda p, c: {"supportedVersions": "garbage"}, "2025-11-25"),                       # a garbage answer
    (lambda p, c: ["not", "an", "object"], "2025-11-25"),
])
def test_the_probe_picks_the_right_era(discover, expected):
    """spec 2026-07-28 basic/versioning: probe with server/discover, else initialize."""
    handlers = {"tools/list": lambda p, c: TOOLS,
                "initialize": lambda p, c: {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                            "serverInfo": {"name": "old", "version": "1"}}}
    if discover is not None:
        handlers["server/discover"] = discover
    client_end, fake = fake_server(handlers)
    client = minimcp.Client(client_end, timeout=5)
    try:
        client.initialize()
        assert client.protocol_version == expected
        assert [t.name for t in client.list_tools()] == ["t"]
    finally:
        client.close()
        fake.close()


def test_forcing_2026_on_a_legacy_server_is_a_clear_error():
    client_end, fake = fake_server({"initialize": lambda p, c: {"protocolVersion": "2025-11-25"}})
    client = minimcp.Client(client_end, timeout=5, protocol="2026-07-28")
    try:
        with pytest.raises(minimcp.ProtocolError, match="2026-07-28"):
            client.initialize()
    finally:
        client.close()
        fake.close()


def test_an_unknown_result_type_is_refused():
    """spec 2026-07-28 basic: an unrecognised resultType is invalid."""
    client_end, fake = fake_server({
        "server/discover": lambda p, c: {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}},
        "tools/call": lambda p, c: {"resultType": "deferred", "task": {}}})  # ("task": the tasks extension's)
    client = minimcp.Client(client_end, timeout=5)
    try:
        client.initialize()
        with pytest.raises(minimcp.ProtocolError, match="resultType"):
            client.call_tool("t")
    finally:
        client.close()
        fake.close()


# -- subscriptions ------------------------------------------------------------------------------------


def test_listen_acknowledges_tags_and_filters(raw):
    """spec 2026-07-28 basic/patterns/subscriptions."""
    notes = []
    acked, got = threading.Event(), threading.Event()

    def note(method, params):
        notes.append((method, params))
        if method == "notifications/subscriptions/acknowledged":
            acked.set()
        if method == "notifications/tools/list_changed":
            got.set()

    raw.notification_handlers["*"] = note
    listen_id = raw.new_request_id()
    listener = threading.Thread(target=lambda: pytest.raises(
        minimcp.ConnectionClosed, raw.request, "subscriptions/listen",
        {"notifications": {"toolsListChanged": True, "bogus": True}, "_meta": META}, request_id=listen_id))
    listener.start()
    assert acked.wait(5)  # the acknowledgement is the first thing the listener sends
    raw.server.add_prompt(lambda: "x", name="p")  # not asked for: must not be sent
    raw.server.add_tool(lambda: "x", name="new_tool")
    assert got.wait(5)
    raw.cancel(listen_id)
    listener.join(5)
    assert notes[0] == ("notifications/subscriptions/acknowledged",
                        {"notifications": {"toolsListChanged": True},
                         "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}})
    assert [m for m, _ in notes] == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]
    assert notes[1][1]["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen_id}
    raw.close()  # joins the server's threads: the listen handler has returned
    assert raw.server.subscriptions == set()


def test_the_client_listens_for_list_changes_and_updates():
    server = make_server()
    server.add_resource(lambda: "v1", "mem://doc")
    changed, updated = threading.Event(), []
    with minimcp.connect("memory", server=server, on_tools_changed=changed.set,
                         on_resource_updated=updated.append) as client:
        assert client.era == "stateless"
        client.subscribe_resource("mem://doc")
        server.add_tool(lambda: "x", name="late")
        assert changed.wait(5)
        arrived = threading.Event()
        client.on_resource_updated = lambda uri: (updated.append(uri), arrived.set())
        server.notify_resource_updated("mem://doc")
        assert arrived.wait(5) and updated == ["mem://doc"]
        assert "late" in [t.name for t in client.list_tools()]


# -- HTTP ---------------------------------------------------------------------------------------------


@pytest.fixture
def http():
    server = make_server()

    # A hand-written schema, the way to mark an argument for an Mcp-Param-* header.
    @server.tool(input_schema={"type": "object", "required": ["zone"],
                               "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}})
    def region(zone: str) -> str:
        """A tool whose argument is mirrored in a header (answered in the POST's body: no ctx)."""
        return f"zone={zone}"

    @server.tool()
    def slow(ctx: Context) -> str:
        return "cancelled" if ctx.cancelled.wait(20) else "done"

    with BackgroundServer(server.wsgi_app()) as running:
        running.server = server
        yield running


def post(http, body, **headers):
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": body.get("method", "")}
    return requests.post(http.url + "/mcp", data=json.dumps(body), headers={**base, **headers}, timeout=10)


def test_http_header_rules(http):
    """spec 2026-07-28 basic/transports: headers mirror the body; mismatches are 400 + -32020."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "region", "arguments": {"zone": "eu-1"}, "_meta": META}}
    ok = post(http, body, **{"Mcp-Name": "region", "Mcp-Param-Zone": "eu-1"})
    assert ok.status_code == 200 and ok.json()["result"]["content"][0]["text"] == "zone=eu-1"
    assert "Mcp-Session-Id" not in ok.headers
    encoded = post(http, body, **{"Mcp-Name": "=?base64?cmVnaW9u?=", "Mcp-Param-Zone": "eu-1"})
    assert encoded.status_code == 200
    for headers in ({"Mcp-Name": "other", "Mcp-Param-Zone": "eu-1"}, {"Mcp-Name": "region"},
                    {"Mcp-Name": "region", "Mcp-Param-Zone": "=?base64?!!!?="},
                    {"Mcp-Name": "region", "Mcp-Param-Zone": "eu-1", "Mcp-Method": "tools/list"},
                    {"Mcp-Name": "region", "Mcp-Param-Zone": "eu-1", "MCP-Protocol-Version": "2025-11-25"}):
        refused = post(http, body, **headers)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32020, headers


def test_http_status_codes(http):
    unknown = post(http, {"jsonrpc": "2.0", "id": 2, "method": "no/such", "params": {"_meta": META}})
    assert unknown.status_code == 404 and unknown.json() == {
        "jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found: no/such"}}
    bad = post(http, {"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32602
    for method in ("GET", "DELETE"):
        response = requests.request(method, http.url + "/mcp", timeout=10, headers={
            "Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28"})
        assert response.status_code == 405


def test_http_client_mirrors_headers_and_drops_invalid_tools(http):
    server = http.server
    server.add_tool(lambda x: x, name="broken", input_schema={
        "type": "object", "properties": {"x": {"type": "object", "x-mcp-header": "X"}}})
    with minimcp.connect(http.url + "/mcp") as client:
        assert client.protocol_version == "2026-07-28"
        names = [t.name for t in client.list_tools()]
        assert "broken" not in names and "region" in names
        assert client.call_tool("region", {"zone": "ü-2"}).text == "zone=ü-2"  # sent base64-encoded


def test_http_cancel_closes_the_stream_and_the_handler_sees_it(http):
    with minimcp.connect(http.url + "/mcp") as client:
        started = time.monotonic()
        with pytest.raises(minimcp.Timeout):
            client.call_tool("slow", timeout=0.5)
        assert time.monotonic() - started < 3
        assert client.call_tool("region", {"zone": "x"}).text == "zone=x"
    # the handler was cancelled (noticed within a keepalive), so stopping the server does not wait 20 s


def test_legacy_and_modern_clients_on_one_http_server(http):
    with minimcp.connect(http.url + "/mcp", protocol="2025-11-25") as old, \
            minimcp.connect(http.url + "/mcp") as new:
        assert (old.protocol_version, new.protocol_version) == ("2025-11-25", "2026-07-28")
        results = []
        threads = [threading.Thread(target=lambda c=c: results.append(c.call_tool("region", {"zone": "z"}).text))
                   for c in (old, new) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert results == ["zone=z"] * 20


# -- regressions found by the official conformance suite -----------------------------------------


def test_junk_after_the_state_padding_is_a_tamper(raw):
    """base64 decoders that stop at '=' must not let "state + junk" verify (SEP-2322 tampered state)."""
    state = call(raw, "tools/call", {"name": "greet"})["requestState"]
    answers = {"user_name": {"action": "accept", "content": {"name": "Eve"}}}
    with pytest.raises(minimcp.RPCError, match="altered"):
        call(raw, "tools/call", {"name": "greet", "inputResponses": answers, "requestState": state + "-TAMPERED"})


def test_a_malformed_input_response_is_asked_for_again(raw):
    """spec 2026-07-28 MRTR: servers SHOULD validate input responses (here: ask again)."""
    first = call(raw, "tools/call", {"name": "greet"})
    again = call(raw, "tools/call", {"name": "greet", "inputResponses": {"user_name": 12345},
                                     "requestState": first["requestState"]})
    assert again["resultType"] == "input_required" and "user_name" in again["inputRequests"]


def test_http_missing_meta_is_32602_with_the_request_id(http):
    body = {"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}
    response = post(http, body)
    assert response.status_code == 400
    assert response.json()["id"] == 101 and response.json()["error"]["code"] == -32602


def test_the_client_retries_discover_when_told_the_version_is_supported():
    attempts = []

    def discover(params, ctx):
        attempts.append(params)
        if len(attempts) == 1:
            raise minimcp.RPCError(-32022, "try again", {"supported": ["2026-07-28"], "requested": "x"})
        return {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}

    client_end, fake = fake_server({"server/discover": discover, "tools/list": lambda p, c: TOOLS})
    client = minimcp.Client(client_end, timeout=5)
    try:
        client.initialize()
        assert client.protocol_version == "2026-07-28" and len(attempts) == 2
    finally:
        client.close()
        fake.close()
