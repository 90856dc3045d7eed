"""Every field a server reads from the wire is type-checked where it is read.

By property: each method gets garbage in each of its fields (None, numbers, booleans,
strings, lists, objects), in both protocol eras, over memory pipes and over real HTTP
(the built-in server). A value of the wrong type is -32602 (or -32600) with a message
naming the field; a value of the right type is a result or one of the method's own
errors; nothing is -32603, and the next valid request on the same connection is answered.
"""

import json

import pytest
import requests

from minimcp import Server
from minimcp.engine.session import Session
from minimcp.errors import RPCError
from minimcp.protocol import jsonrpc
from minimcp.transports import memory

from conftest import shared_server

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
ACCEPT = "application/json, text/event-stream"
GARBAGE = [None, 0, -1, 1.5, True, "", "x", [], [1], {}, {"a": [1]}]
#: What a garbage value may get back when its type is right: the method's own refusals.
REFUSALS = (jsonrpc.INVALID_PARAMS, jsonrpc.INVALID_REQUEST, jsonrpc.RESOURCE_NOT_FOUND)
STRING, OBJECT = (str,), (dict,)
OPTIONAL_STRING, OPTIONAL_OBJECT = (str, type(None)), (dict, type(None))

#: method -> (valid params, {field: the types the spec allows}); every method also has _meta.
CASES = {
    "tools/list": ({}, {"cursor": OPTIONAL_STRING}),
    "resources/list": ({}, {"cursor": OPTIONAL_STRING}),
    "resources/templates/list": ({}, {"cursor": OPTIONAL_STRING}),
    "prompts/list": ({}, {"cursor": OPTIONAL_STRING}),
    "tools/call": ({"name": "echo", "arguments": {"text": "hi"}}, {"name": STRING, "arguments": OPTIONAL_OBJECT}),
    "resources/read": ({"uri": "docs://readme"}, {"uri": STRING}),
    "resources/subscribe": ({"uri": "docs://readme"}, {"uri": STRING}),
    "resources/unsubscribe": ({"uri": "docs://readme"}, {"uri": STRING}),
    "prompts/get": ({"name": "hello", "arguments": {"who": "x"}}, {"name": STRING, "arguments": OPTIONAL_OBJECT}),
    "completion/complete": ({"ref": {"type": "ref/prompt", "name": "hello"}, "argument": {"name": "who", "value": "a"},
                             "context": {"arguments": {}}},
                            {"ref": OBJECT, "argument": OBJECT, "context": OPTIONAL_OBJECT}),
    "logging/setLevel": ({"level": "debug"}, {"level": STRING}),
    "ping": ({}, {}),
}
HANDSHAKE_ONLY = ("resources/subscribe", "resources/unsubscribe", "logging/setLevel", "ping")
#: Fields inside the 2026-07-28 request that only that era reads.
STATELESS_FIELDS = {"requestState": OPTIONAL_STRING, "inputResponses": OPTIONAL_OBJECT}


def make_server() -> Server:
    server = Server("wire-fields")

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

    @server.completion(prompt="hello", argument="who")
    def people(value: str) -> list:
        return ["ann", "bob"]

    return server


def fields_of(method, era):
    _, fields = CASES[method]
    fields = dict(fields, _meta=OPTIONAL_OBJECT)
    if era == "stateless":
        fields.pop("_meta")  # replacing the whole _meta makes it a handshake request: see test_meta_fields
        if method in ("tools/call", "prompts/get", "resources/read"):
            fields.update(STATELESS_FIELDS)
    return fields


def params_for(method, era, field, value):
    params = dict(CASES[method][0])
    if era == "stateless":
        params["_meta"] = dict(META)
    params[field] = value
    return params


class MemoryPeer:
    """A raw session talking to a fresh server over in-memory pipes."""

    def __init__(self) -> None:
        client_end, server_end = memory.pair()
        served = make_server().serve(server_end)
        client_end.on_close = served.session.close
        self.session = Session(client_end, timeout=10)
        self.session.start()
        self.session.request("initialize", INIT)
        self.session.notify("notifications/initialized")

    def ask(self, method, params):
        """(error code or None, result)."""
        try:
            return None, self.session.request(method, params)
        except RPCError as exc:
            return exc.code, exc.message

    def close(self) -> None:
        self.session.close()


class HTTPPeer:
    """Raw JSON-RPC posts to a real HTTP server, one MCP session (and one keep-alive connection)."""

    def __init__(self, url: str) -> None:
        self.url, self.http, self.next_id = url, requests.Session(), 0
        self.headers = {"Accept": ACCEPT}
        reply = self.http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
                               headers=self.headers, timeout=10)
        self.headers.update({"Mcp-Session-Id": reply.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                       headers=self.headers, timeout=10)

    def ask(self, method, params):
        self.next_id += 1
        headers = self.headers
        if "_meta" in params and isinstance(params["_meta"], dict) and "io.modelcontextprotocol/protocolVersion" in \
                params["_meta"]:  # 2026-07-28: no session; the headers mirror the body
            headers = {"Accept": ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
            name = params.get("uri" if method == "resources/read" else "name")
            if isinstance(name, str):
                headers["Mcp-Name"] = name
        reply = self.http.post(self.url, json={"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                               "params": params}, headers=headers, timeout=10)
        assert reply.status_code < 500, reply.text
        body = reply.json() if reply.headers["Content-Type"].startswith("application/json") else _last_event(reply.text)
        assert body["id"] == self.next_id
        if "error" in body:
            return body["error"]["code"], body["error"]["message"]
        return None, body["result"]

    def close(self) -> None:
        self.http.delete(self.url, headers=self.headers, timeout=10)  # end the session, as a client does
        self.http.close()


def _last_event(text):
    data = [line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1])


@pytest.fixture(scope="module")
def http_server():
    """One server for the module: each test's peer is a session of its own, and only reads."""
    with shared_server(make_server().wsgi_app()) as running:
        yield running


@pytest.fixture(params=["memory", "http"])
def peer(request):
    if request.param == "memory":
        made = MemoryPeer()
    else:
        made = HTTPPeer(request.getfixturevalue("http_server").url + "/mcp")
    yield made
    made.close()


def still_serves(peer):
    code, result = peer.ask("tools/call", {"name": "echo", "arguments": {"text": "still here"}})
    assert code is None and result["content"][0]["text"] == "still here"


def check(peer, method, era, field, allowed, refusals=REFUSALS):
    for value in GARBAGE:
        code, answer = peer.ask(method, params_for(method, era, field, value))
        what = f"{method} {field}={value!r} ({era}) -> {code} {answer!r:.200}"
        if isinstance(value, allowed):
            assert code is None or code in refusals, what
        else:
            assert code in refusals, what
            if code == jsonrpc.INVALID_PARAMS and "Unknown" not in answer:
                assert field in answer, what  # the message names the field
        still_serves(peer)


@pytest.mark.parametrize("method", list(CASES))
def test_handshake_fields(peer, method):
    for field, allowed in fields_of(method, "handshake").items():
        check(peer, method, "handshake", field, allowed)


@pytest.mark.parametrize("method", [m for m in CASES if m not in HANDSHAKE_ONLY])
def test_stateless_fields(peer, method):
    # Over 2026-07-28 HTTP a name that no header can mirror is a header mismatch (-32020) first.
    for field, allowed in fields_of(method, "stateless").items():
        check(peer, method, "stateless", field, allowed, REFUSALS + (jsonrpc.HEADER_MISMATCH,))


def test_meta_fields(peer):
    """The 2026-07-28 _meta: wrong types are -32602 (clientInfo is optional and never trusted)."""
    for key in ("io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/logLevel",
                "io.modelcontextprotocol/clientInfo"):
        for value in GARBAGE:
            params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": dict(META, **{key: value})}
            code, answer = peer.ask("tools/call", params)
            if key.endswith("clientInfo") or (key.endswith("logLevel") and value is None) or (
                    key.endswith("clientCapabilities") and type(value) is dict):
                assert code is None, (key, value, answer)
            else:
                assert code == jsonrpc.INVALID_PARAMS and key in answer, (key, value, answer)
            still_serves(peer)
    for capability in ("sampling", "elicitation", "roots"):  # each capability read is an object
        for value in (5, [1], "x", True):
            meta = dict(META, **{"io.modelcontextprotocol/clientCapabilities": {capability: value}})
            code, answer = peer.ask("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta})
            assert code == jsonrpc.INVALID_PARAMS and capability in answer, answer


@pytest.mark.parametrize("field,value", [("capabilities", 5), ("capabilities", {"sampling": [1]}),
                                         ("clientInfo", "x"), ("clientInfo", [1])])
def test_initialize_checks_capabilities_and_client_info(field, value):
    client_end, server_end = memory.pair()
    served = make_server().serve(server_end)
    client_end.on_close = served.session.close
    session = Session(client_end, timeout=10)
    session.start()
    try:
        with pytest.raises(RPCError) as info:
            session.request("initialize", dict(INIT, **{field: value}))
        assert info.value.code == jsonrpc.INVALID_PARAMS and field in info.value.message
        assert session.request("initialize", INIT)["protocolVersion"] == "2025-11-25"  # it may try again
    finally:
        session.close()


#: (method, params, what the -32602 message must name): values inside the fields, or of odd kinds.
INSIDE = [("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": token}},
           "progressToken") for token in ([1], {}, 1.5, True)] + [
    ("completion/complete", dict(CASES["completion/complete"][0], **{where: value}), where) for where, value in (
        ("ref", {"type": "ref/prompt", "name": [1]}), ("ref", {"type": "ref/resource", "uri": {}}),
        ("ref", {"type": [1], "name": "hello"}), ("argument", {"name": "who", "value": [1]}),
        ("context", {"arguments": [1]}), ("context", {"arguments": {"a": [1]}}))] + [
    ("prompts/get", {"name": "hello", "arguments": {"who": value}}, "arguments.who")
    for value in (5, None, [1], {"a": 1})] + [
    ("logging/setLevel", {"level": level}, "level") for level in (["debug"], 5, {})]


def test_fields_inside_fields(peer):
    """progressToken in _meta, the parts of a completion's ref/argument/context, prompt argument
    values, a log level in a list: each is -32602 naming what is wrong."""
    for method, params, named in INSIDE:
        code, answer = peer.ask(method, params)
        assert code == jsonrpc.INVALID_PARAMS and named in answer, (method, params, answer)
        still_serves(peer)


def test_arguments_nested_500_deep_are_invalid_params(peer):
    deep: dict = {}
    inner = deep
    for _ in range(500):
        inner["a"] = {}
        inner = inner["a"]
    code, answer = peer.ask("tools/call", {"name": "echo", "arguments": {"text": "x", "more": deep}})
    assert code == jsonrpc.INVALID_PARAMS and "arguments" in answer and "deeper" in answer
    still_serves(peer)


@pytest.mark.parametrize("filters", [5, "x", [1], {"toolsListChanged": [1]}, {"promptsListChanged": "yes"},
                                     {"resourceSubscriptions": 5}, {"resourceSubscriptions": [[1]]}])
def test_listen_checks_its_filters(filters):
    """A listen request with bad filters is refused at once (not held open, not broken at notify time)."""
    peer = MemoryPeer()
    try:
        with pytest.raises(RPCError) as info:
            peer.session.request("subscriptions/listen", {"notifications": filters, "_meta": META}, timeout=5)
        assert info.value.code == jsonrpc.INVALID_PARAMS and "notifications" in info.value.message
        still_serves(peer)
    finally:
        peer.close()
