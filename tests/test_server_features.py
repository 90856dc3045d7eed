"""Every server feature end to end: the knowledge-base example over a real stdio pipe,
driven by minimcp's client, plus the raw wire shapes for each negotiated version."""

import importlib.util
import json
import threading

import pytest

import minimcp
from minimcp import Audio, CapabilityError, Context, ResourceLink, Server
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, RawServer, example, shared_server

KB = example("knowledge_base.py")


def fresh_knowledge_base():
    """A new instance of the example module: its own Server and documents."""
    spec = importlib.util.spec_from_file_location("knowledge_base", KB)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shared_kb():
    """One in-process knowledge base (Streamable HTTP, HTTP+SSE and WebSocket) for the tests that
    leave its documents as they are; each test's clients are sessions of their own."""
    server = fresh_knowledge_base().server
    with shared_server(server.wsgi_app(), websockets={"/ws": server}) as running:
        yield running


@pytest.fixture(params=["stdio-2025", "stdio-2026", "http-2025", "http-2026", "sse-2025",
                        "websocket-2025", "websocket-2026"])
def kb(request):
    """Connect to the knowledge base over each transport, in each era: a stdio child, or an
    in-process HTTP server (Streamable HTTP, the 2024-11-05 HTTP+SSE endpoints, WebSocket),
    with the handshake (2025-11-25) or the stateless protocol (2026-07-28).

    ``kb(fresh=True)`` is a knowledge base of the test's own, for a test that changes documents."""
    transport, era = request.param.split("-")
    protocol = "2025-11-25" if era == "2025" else "2026-07-28"
    running = []

    def connect(fresh=False, **handlers):
        if transport == "stdio":  # a new child process each time: always fresh
            return minimcp.connect([PY, KB], timeout=20, protocol=protocol, **handlers)
        # An HTTP+SSE stream's thread sees its client gone only at its next keep-alive tick, up
        # to 1 s after the client closed it; stopping a server of its own ends it at once (0.5 s).
        if fresh or transport == "sse":
            server = fresh_knowledge_base().server
            http = BackgroundServer(server.wsgi_app(), websockets={"/ws": server}).start()
            running.append(http)
        else:
            http = request.getfixturevalue("shared_kb")
        url = {"http": http.url + "/mcp", "sse": http.url + "/sse",
               "websocket": http.url.replace("http://", "ws://") + "/ws"}[transport]
        return minimcp.connect(url, timeout=20, protocol=protocol, **handlers)

    connect.stateless = era == "2026"
    yield connect
    for http in running:
        http.stop()


def sampler(params):
    return {"role": "assistant", "content": {"type": "text", "text": f"summary of {len(params['messages'])}"},
            "model": "stand-in", "stopReason": "endTurn"}


# -- tools, with the client's handlers -------------------------------------------------------


def test_capabilities_and_instructions(kb):
    with kb() as client:
        assert client.server_capabilities == {
            "logging": {}, "prompts": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True},
            "tools": {"listChanged": True}, "completions": {}}
        assert client.instructions.startswith("Search the knowledge base")


def test_structured_tool_result_and_annotations(kb):
    with kb() as client:
        search = next(t for t in client.list_tools() if t.name == "search")
        assert search.annotations == {"readOnlyHint": True}
        assert search.output_schema["properties"]["result"]["items"]["required"] == ["doc_id", "title", "score"]
        result = client.call_tool("search", {"query": "threads"})
        assert result.structured == {"result": [{"doc_id": "threads", "title": "Threads", "score": 2},
                                                {"doc_id": "queues", "title": "Queues", "score": 1}]}
        assert json.loads(result.text) == result.structured["result"]


def test_logging_reaches_the_client_only_after_set_level(kb):
    """spec server/utilities/logging: the server sends messages at or above the level the client set."""
    logs = []
    with kb(on_log=logs.append, log_level="warning") as client:  # (on_log alone asks for info at once)
        client.call_tool("search", {"query": "mcp"})
        client.set_logging_level("info")
        client.call_tool("search", {"query": "futures"})
        if kb.stateless:  # 2026-07-28: the level rides on each request; the client checks it
            with pytest.raises(ValueError, match="loud"):
                client.set_logging_level("loud")
        else:
            with pytest.raises(minimcp.RPCError) as info:
                client.set_logging_level("loud")
            assert info.value.code == -32602
    assert logs == [{"level": "info", "logger": "kb", "data": "search 'futures': 1 hits"}]


def test_progress_then_cancellation_stops_the_tool_early(kb):
    progress, logs = [], []
    done = threading.Event()

    def on_log(params):
        logs.append(params["data"])
        done.set()

    with kb(on_log=on_log) as client:
        result = client.call_tool("reindex", {"seconds_per_doc": 0.01},
                                  on_progress=lambda *p: progress.append(p))
        assert result.text == "reindexed 4 documents"
        client.set_logging_level("warning")
        with pytest.raises(minimcp.Timeout):
            client.call_tool("reindex", {"seconds_per_doc": 30}, timeout=0.3)
        if not kb.stateless:  # 2026-07-28 logs are request-scoped: a cancelled request's never arrive
            assert done.wait(10)
        assert client.call_tool("search", {"query": "mcp"}).structured["result"][0]["doc_id"] == "mcp"
    assert progress == [(1, 4, "indexed threads"), (2, 4, "indexed queues"), (3, 4, "indexed futures"),
                        (4, 4, "indexed mcp")]
    assert logs == ([] if kb.stateless else ["reindex cancelled after 0 documents"])


def test_sampling_goes_to_the_clients_handler(kb):
    seen = []
    with kb(sampling_handler=lambda p: (seen.append(p), sampler(p))[1]) as client:
        assert client.call_tool("summarize", {"doc_id": "queues"}).text == "summary of 1"
    assert seen[0]["maxTokens"] == 100 and seen[0]["systemPrompt"] == "You write terse summaries."
    assert "queue.Queue" in seen[0]["messages"][0]["content"]["text"]


def test_without_sampling_the_tool_falls_back(kb):
    with kb() as client:
        assert client.call_tool("summarize", {"doc_id": "queues"}).text.startswith("queue.Queue hands work")


def test_a_failing_sampling_handler_is_an_error_not_a_hang(kb):
    def broken(params):
        raise RuntimeError("model offline")

    with kb(sampling_handler=broken) as client:
        if kb.stateless:  # the client answers input requests itself: its call fails, with the cause
            with pytest.raises(minimcp.MCPError, match="model offline"):
                client.call_tool("summarize", {"doc_id": "mcp"})
            return
        result = client.call_tool("summarize", {"doc_id": "mcp"})
    assert result.is_error and "model offline" in result.text


def test_elicitation_answers_and_schema_defaults(kb):
    """spec 2025-11-25 client/elicitation: defaults; decline is an answer too."""
    with kb(elicitation_handler=lambda p: {"action": "accept", "content": {"stars": 4}}) as client:
        assert client.call_tool("rate", {"doc_id": "mcp"}).text == "mcp: 4 stars"
    with kb(elicitation_handler=lambda p: {"action": "decline"}) as client:
        assert client.call_tool("rate", {"doc_id": "mcp"}).text == "no rating (decline)"


def test_roots_and_roots_list_changed(tmp_path, kb):
    with kb(roots=[str(tmp_path)]) as client:
        assert client.call_tool("workspace").structured == {"result": [f"file://{tmp_path}"]}
        client.set_roots(["file:///elsewhere"])
        assert client.call_tool("workspace").structured == {"result": ["file:///elsewhere"]}


def test_a_handler_blocked_in_sampling_does_not_block_other_requests(kb):
    release = threading.Event()
    results = []

    def slow_sampler(params):
        release.wait(20)
        return sampler(params)

    with kb(sampling_handler=slow_sampler) as client:
        waiter = threading.Thread(target=lambda: results.append(client.call_tool("summarize", {"doc_id": "mcp"})))
        waiter.start()
        for _ in range(20):
            assert client.call_tool("search", {"query": "thread"}).structured["result"][0]["doc_id"] == "threads"
        assert not results  # still waiting on the sampling answer
        release.set()
        waiter.join(20)
    assert results[0].text == "summary of 1"


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_context_requests_check_the_client_capability_first(protocol):
    """spec client/sampling: servers MUST NOT send requests the client did not declare;
    2026-07-28 basic: a request lacking a capability its handler needs gets -32021."""
    server = Server("caps")

    @server.tool()
    def needs_everything(ctx: Context) -> str:
        for ask in (lambda: ctx.sample("hi", max_tokens=5), lambda: ctx.elicit("?", {"type": "object"}),
                    lambda: ctx.list_roots(), lambda: ctx.elicit_url("go", "https://example.com")):
            with pytest.raises(CapabilityError, match="did not declare"):
                ask()
        return "refused before sending"

    @server.tool()
    def sample_unchecked(ctx: Context) -> str:
        return ctx.sample("hi", max_tokens=5)["content"]["text"]

    with minimcp.connect("memory", server=server, protocol=protocol) as client:
        assert client.call_tool("needs_everything").text == "refused before sending"
        if protocol == "2026-07-28":
            with pytest.raises(minimcp.RPCError) as info:
                client.call_tool("sample_unchecked")
            assert info.value.code == -32021 and info.value.data == {"requiredCapabilities": {"sampling": {}}}
            return
        result = client.call_tool("sample_unchecked")
    assert result.is_error and "did not declare the 'sampling' capability" in result.text


# -- resources --------------------------------------------------------------------------------


def test_resources_templates_and_reads(kb):
    with kb() as client:
        [index] = client.list_resources()
        assert index.raw == {"uri": "kb://index", "name": "index", "description": "Every document's id and title.",
                             "mimeType": "application/json"}
        [template] = client.list_resource_templates()
        assert template.raw == {"uriTemplate": "kb://docs/{doc_id}", "name": "document",
                                "description": "One document, as Markdown.", "mimeType": "text/markdown"}
        read = client.read_resource("kb://index")
        assert read.contents[0]["mimeType"] == "application/json"
        assert json.loads(read.text)["futures"] == "Futures"
        doc = client.read_resource("kb://docs/threads")
        assert doc.contents == [{"uri": "kb://docs/threads", "mimeType": "text/markdown",
                                 "text": "# Threads\nA thread runs code concurrently with other threads in one process."}]


@pytest.mark.parametrize("uri", ["kb://docs/nope", "kb://nothing", "kb://docs/a/b", "kb://index/extra"])
def test_unknown_resources_are_32002(uri, kb):
    """spec server/resources "Error Handling": resource not found is -32002."""
    with kb() as client:
        with pytest.raises(minimcp.RPCError) as info:
            client.read_resource(uri)
        # spec 2026-07-28 server/resources: not found is -32602 there
        assert info.value.code == (-32602 if kb.stateless else -32002) and info.value.data["uri"] == uri
        if uri != "kb://docs/nope" and not kb.stateless:  # a template's URI may be subscribed to before it exists
            with pytest.raises(minimcp.RPCError) as info:
                client.subscribe_resource(uri)
            assert info.value.code == -32002
        client.ping()


def test_subscriptions_reach_only_subscribed_clients(kb):
    updated, other = [], []
    done = threading.Event()
    with kb(fresh=True, on_resource_updated=lambda uri: (updated.append(uri), done.set())) as client:
        client.subscribe_resource("kb://docs/mcp")
        client.call_tool("update", {"doc_id": "queues", "text": "# Queues\nnot subscribed"})
        client.call_tool("update", {"doc_id": "mcp", "text": "# MCP\nnew text"})
        assert done.wait(10)
        assert client.read_resource("kb://docs/mcp").text == "# MCP\nnew text"
        client.unsubscribe_resource("kb://docs/mcp")
        client.call_tool("update", {"doc_id": "mcp", "text": "# MCP\nnewer"})
        client.ping()
    assert updated == ["kb://docs/mcp"]
    assert other == []


def test_list_changed_for_resources_and_prompts():
    server = Server("dynamic")
    server.add_resource(lambda: "a", "mem://a")
    changes = []
    both = threading.Event()

    def note(method, params):
        changes.append(method)
        if len(changes) == 2:
            both.set()

    with minimcp.connect("memory", server=server, on_notification=note, protocol="2025-11-25") as client:
        server.add_resource(lambda: "b", "mem://b")
        server.add_prompt(lambda: "hi", name="hello")
        assert both.wait(5)
        assert [r.uri for r in client.list_resources()] == ["mem://a", "mem://b"]
    assert changes == ["notifications/resources/list_changed", "notifications/prompts/list_changed"]


def test_template_variables_are_converted_to_the_annotated_type():
    server = Server("typed")

    @server.resource("users://{user_id}/posts/{+path}")
    def post(user_id: int, path: str) -> dict:
        return {"user_id": user_id, "path": path}

    with minimcp.connect("memory", server=server) as client:
        assert json.loads(client.read_resource("users://42/posts/2024/hello%20world").text) == {
            "user_id": 42, "path": "2024/hello world"}
        with pytest.raises(minimcp.RPCError) as info:
            client.read_resource("users://bob/posts/x")
        assert info.value.code == -32602 and "user_id" in info.value.message
        client.ping()


def test_binary_resources_are_base64_blobs():
    server = Server("bin")
    server.add_resource(lambda: b"\x00\x01\xff", "bin://raw", mime_type="application/x-raw")
    with minimcp.connect("memory", server=server) as client:
        read = client.read_resource("bin://raw")
    assert read.contents == [{"uri": "bin://raw", "mimeType": "application/x-raw", "blob": "AAH/"}]
    assert read.blob == b"\x00\x01\xff"


# -- prompts and completion -----------------------------------------------------------------------


def test_prompts_list_and_get(kb):
    with kb() as client:
        [ask] = client.list_prompts()
        assert ask.raw == {"name": "ask", "title": "Ask about a document",
                           "description": "Ask a question about one document.",
                           "arguments": [{"name": "question", "description": "What you want to know.", "required": True},
                                         {"name": "doc_id", "description": "Which document to ask about.",
                                          "required": False}]}
        got = client.get_prompt("ask", {"question": "What is it?", "doc_id": "futures"})
        assert got.messages[0] == {"role": "user", "content": {"type": "resource", "resource": {
            "uri": "kb://docs/futures", "mimeType": "text/markdown", "text": got.messages[0]["content"]["resource"]["text"]}}}
        assert got.messages[1] == {"role": "user", "content": {
            "type": "text", "text": "Using the document above, answer: What is it?"}}


@pytest.mark.parametrize("arguments, words", [
    ({}, "missing required argument(s) ['question']"),
    ({"question": "q", "colour": "red"}, "no argument(s) ['colour']"),
])
def test_prompt_argument_errors_are_32602(arguments, words, kb):
    """spec server/prompts "Error Handling": missing required arguments are -32602."""
    with kb() as client:
        with pytest.raises(minimcp.RPCError) as info:
            client.get_prompt("ask", arguments)
        assert info.value.code == -32602 and words in info.value.message
        with pytest.raises(minimcp.RPCError) as info:
            client.get_prompt("nope")
        assert info.value.code == -32602
        client.ping()


def test_completion_for_prompts_and_templates(kb):
    """spec server/utilities/completion: values, total, hasMore; unknown refs are -32602."""
    with kb() as client:
        assert client.complete({"type": "ref/prompt", "name": "ask"}, "doc_id", "f").values == ["futures"]
        template = client.complete({"type": "ref/resource", "uri": "kb://docs/{doc_id}"}, "doc_id", "")
        assert (template.values, template.total, template.has_more) == (["futures", "mcp", "queues", "threads"],
                                                                        4, False)
        assert client.complete({"type": "ref/prompt", "name": "ask"}, "question", "wh").values == []
        for ref in ({"type": "ref/prompt", "name": "nope"}, {"type": "ref/resource", "uri": "kb://nope/{x}"},
                    {"type": "ref/other"}):
            with pytest.raises(minimcp.RPCError) as info:
                client.complete(ref, "x", "")
            assert info.value.code == -32602


def test_completion_caps_at_100_and_sees_context():
    server = Server("many")
    server.add_prompt(lambda kind, name: f"{kind} {name}", name="pick")

    @server.completion(prompt="pick", argument="name")
    def names(value, context):
        return [f"{context.get('kind', 'x')}{i}" for i in range(250)]

    with minimcp.connect("memory", server=server) as client:
        got = client.complete({"type": "ref/prompt", "name": "pick"}, "name", "", context={"kind": "k"})
    assert len(got.values) == 100 and got.values[0] == "k0" and got.total == 250 and got.has_more


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"])
def test_invalid_cursor_is_32602(method, kb):
    """spec server/utilities/pagination: invalid cursors SHOULD be -32602."""
    with kb() as client:
        with pytest.raises(minimcp.RPCError) as info:
            client.request(method, {"cursor": "!!!"})
        assert info.value.code == -32602
        client.ping()


# -- the wire, per negotiated version ------------------------------------------------------------


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_wire_shapes_per_version(version):
    """Each version is sent only fields its schema.ts defines (title 2025-06-18, structuredContent
    2025-06-18, annotations 2025-03-26, completions capability 2025-03-26)."""
    raw = RawServer(KB)
    try:
        init = raw.initialize(version)["result"]
        assert init["protocolVersion"] == version and init["serverInfo"]["name"] == "knowledge-base"
        assert ("completions" in init["capabilities"]) == (version >= "2025-03-26")
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        tools = {t["name"]: t for t in raw.recv()["result"]["tools"]}
        assert all({"name", "inputSchema"} <= set(t) for t in tools.values())
        assert ("annotations" in tools["search"]) == (version >= "2025-03-26")
        assert ("outputSchema" in tools["search"]) == (version >= "2025-06-18")
        raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                  "params": {"name": "search", "arguments": {"query": "mcp"}}})
        call = raw.recv()["result"]
        assert call["content"][0]["type"] == "text"
        assert ("structuredContent" in call) == (version >= "2025-06-18")
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "prompts/list"})
        [prompt] = raw.recv()["result"]["prompts"]
        assert ("title" in prompt) == (version >= "2025-06-18")
        raw.send({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "kb://docs/mcp"}})
        assert set(raw.recv()["result"]["contents"][0]) == {"uri", "mimeType", "text"}
    finally:
        raw.close()


@pytest.mark.parametrize("version, kinds", [
    ("2024-11-05", ["text", "text"]), ("2025-03-26", ["audio", "text"]), ("2025-06-18", ["audio", "resource_link"]),
])
def test_content_an_old_version_lacks_becomes_text(version, kinds):
    server = Server("media")
    server.add_tool(lambda: [Audio(b"RIFF\x00\x00\x00\x00WAVEfmt "), ResourceLink("file:///a.txt", "a.txt")],
                    name="media")
    raw_end, server_end = __import__("minimcp.transports.memory", fromlist=["pair"]).pair()
    served = server.serve(server_end)
    raw_end.on_close = served.session.close
    from minimcp.engine.session import Session
    session = Session(raw_end)
    session.start()
    try:
        session.request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {}})
        content = session.request("tools/call", {"name": "media"})["content"]
    finally:
        session.close()
    assert [block["type"] for block in content] == kinds
    if version < "2025-06-18":
        assert content[1] == {"type": "text", "text": "a.txt: file:///a.txt"}
