"""Client and Server over the in-memory transport (and raw stdio where the wire matters)."""

import base64
import dataclasses
import enum
import json
import subprocess
import threading

import pytest

import minimcp
from minimcp import Context, Image, Server, ToolError
from minimcp.engine.session import Session
from minimcp.transports import memory

from conftest import PY, ROOT

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


def make_server(**kwargs):
    server = Server("test", version="9.9", instructions="Be nice.", **kwargs)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool(name="paint", title="Paint", annotations={"readOnlyHint": True})
    def paint_it(color: Color, at: Point) -> dict:
        """Paint a point."""
        return {"color": color.value, "x": at.x, "y": at.y, "types": [type(color).__name__, type(at).__name__]}

    @server.tool()
    def picture() -> Image:
        """A tiny PNG."""
        return Image(PNG)

    @server.tool()
    def numbers(n: int) -> list:
        """The first n numbers."""
        return list(range(n))

    @server.tool()
    def refuse() -> str:
        """Always refuses."""
        raise ToolError("not today")

    @server.tool()
    def whoami(ctx: Context) -> dict:
        """What the server knows about this client."""
        return {"version": ctx.protocol_version, "client": ctx.client_info.get("name"), "id": ctx.request_id}

    return server


@pytest.fixture
def client():
    with minimcp.connect("memory", server=make_server(), client_info={"name": "tester", "version": "1"},
                         protocol="2025-11-25") as c:
        yield c


def test_handshake_results(client):
    assert client.protocol_version == "2025-11-25"
    assert client.server_info == {"name": "test", "version": "9.9"}
    assert client.server_capabilities == {"logging": {}, "tools": {"listChanged": True}}
    assert client.instructions == "Be nice."
    client.ping()
    assert "server='test'" in repr(client) and "open" in repr(client)


def test_tools_list_and_definitions(client):
    tools = {tool.name: tool for tool in client.list_tools()}
    assert list(tools) == ["echo", "paint", "picture", "numbers", "refuse", "whoami"]
    assert tools["echo"].raw == {"name": "echo", "description": "Echo the text.",
                                 "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                                                 "required": ["text"], "additionalProperties": False}}
    assert tools["paint"].title == "Paint" and tools["paint"].annotations == {"readOnlyHint": True}
    assert tools["numbers"].output_schema == {"type": "object", "properties": {"result": {"type": "array"}},
                                              "required": ["result"]}
    assert tools["whoami"].input_schema["properties"] == {}  # ctx is not an argument


def test_call_results(client):
    painted = client.call_tool("paint", {"color": "blue", "at": {"x": 3}})
    assert painted.structured == {"color": "blue", "x": 3, "y": 0, "types": ["Color", "Point"]}
    assert json.loads(painted.text) == painted.structured
    picture = client.call_tool("picture")
    assert picture.content == [{"type": "image", "mimeType": "image/png",
                                "data": base64.b64encode(PNG).decode()}]
    assert client.call_tool("numbers", {"n": 3}).structured == {"result": [0, 1, 2]}
    refused = client.call_tool("refuse")
    assert refused.is_error and refused.text == "not today"
    me = client.call_tool("whoami").structured
    assert me["version"] == "2025-11-25" and me["client"] == "tester" and isinstance(me["id"], int)


def test_unknown_tool_raises_rpc_error(client):
    with pytest.raises(minimcp.RPCError) as info:
        client.call_tool("nope")
    assert info.value.code == -32602 and "nope" in info.value.message


def test_pagination_follows_next_cursor_and_rejects_bad_cursors():
    """spec server/utilities/pagination: nextCursor until the end; an invalid cursor is -32602."""
    server = Server("paged", page_size=2)
    for i in range(5):
        server.add_tool(lambda: "x", name=f"t{i}")
    with minimcp.connect("memory", server=server) as client:
        assert [t.name for t in client.list_tools()] == ["t0", "t1", "t2", "t3", "t4"]
        first = client.request("tools/list")
        assert len(first["tools"]) == 2 and isinstance(first["nextCursor"], str)
        with pytest.raises(minimcp.RPCError) as info:
            client.request("tools/list", {"cursor": "not-a-cursor"})
        assert info.value.code == -32602


def test_adding_a_tool_while_serving_notifies_list_changed():
    """spec server/tools "List Changed Notification"."""
    server = make_server()
    client = minimcp.connect("memory", server=server, protocol="2025-11-25")
    changed = threading.Event()
    client.session.notification_handlers["notifications/tools/list_changed"] = lambda params: changed.set()
    server.add_tool(lambda: "new", name="fresh")
    assert changed.wait(5)
    assert "fresh" in [t.name for t in client.list_tools()]
    changed.clear()
    server.remove_tool("fresh")
    assert changed.wait(5)
    assert "fresh" not in [t.name for t in client.list_tools()]
    client.close()


def test_client_refuses_a_version_it_does_not_speak():
    """spec basic/lifecycle "Version Negotiation": disconnect if the server's version is unsupported."""
    client_end, server_end = memory.pair()
    fake = Session(server_end, {"initialize": lambda p, ctx: {"protocolVersion": "1999-01-01",
                                                            "capabilities": {}, "serverInfo": {}}})
    fake.start()
    client = minimcp.Client(client_end)
    try:
        with pytest.raises(minimcp.ProtocolError, match="1999-01-01"):
            client.initialize()
    finally:
        client.close()
        fake.close()


@pytest.mark.parametrize("offered, agreed", [
    ("2024-11-05", "2024-11-05"), ("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"),
    ("2025-11-25", "2025-11-25"), ("2099-01-01", "2025-11-25"),
])
def test_server_negotiates_every_legacy_version(offered, agreed):
    """spec basic/lifecycle: the server answers with the same version if it supports it, else its latest."""
    client_end, server_end = memory.pair()
    served = make_server().serve(server_end)
    client_end.on_close = served.session.close
    session = Session(client_end)
    session.start()
    try:
        result = session.request("initialize", {"protocolVersion": offered, "capabilities": {},
                                                "clientInfo": {"name": "raw", "version": "0"}})
        assert result["protocolVersion"] == agreed
        session.notify("notifications/initialized")
        tools = {t["name"]: t for t in session.request("tools/list")["tools"]}
        painted = session.request("tools/call", {"name": "paint", "arguments": {"color": "red", "at": {"x": 1}}})
        with pytest.raises(minimcp.RPCError):  # only once per connection
            session.request("initialize", {"protocolVersion": offered})
    finally:
        session.close()
    # Fields a version does not know are left out (spec schema.ts of each version).
    assert ("annotations" in tools["paint"]) == (agreed >= "2025-03-26")
    assert ("title" in tools["paint"]) == (agreed >= "2025-06-18")
    assert ("outputSchema" in tools["numbers"]) == (agreed >= "2025-06-18")
    assert ("structuredContent" in painted) == (agreed >= "2025-06-18")
    assert painted["content"][0]["type"] == "text"


def test_batches_are_answered_under_2025_03_26_only():
    """spec 2025-03-26 basic/index: implementations MUST accept batches (later versions removed them)."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}],
    ]
    script = f"import sys; sys.path.insert(0, {ROOT!r}); sys.path.insert(0, {ROOT + '/tests'!r});" \
             "from test_client_server import make_server; make_server().run()"
    out = subprocess.run([PY, "-c", script], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                         capture_output=True, timeout=20)
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert replies[0]["result"]["protocolVersion"] == "2025-03-26"
    batch = replies[1]
    assert isinstance(batch, list)
    assert sorted(r["id"] for r in batch) == [1, 2]
    assert {r["id"]: r["result"] for r in batch}[2]["content"][0]["text"] == "hi"


def test_connect_refuses_targets_it_cannot_reach():
    with pytest.raises(ValueError, match="server="):
        minimcp.connect("memory")
    with pytest.raises(minimcp.ConnectionClosed, match="cannot reach"):
        minimcp.connect("http://127.0.0.1:1/mcp")
    with pytest.raises(LookupError, match="some-name"):
        minimcp.connect("some-name")


def test_registration_errors_are_clear():
    server = Server("bad")
    with pytest.raises(TypeError, match="parameter 'sock'"):
        @server.tool
        def uses_socket(sock: threading.Thread) -> str:
            return ""
    with pytest.raises(KeyError):
        server.remove_tool("never-added")


def test_reprs_help_in_a_debugger(client):
    server = make_server()
    assert repr(server) == "<Server 'test' 9.9 tools=6 resources=0 prompts=0>"
    assert repr(server.get_tool("echo")).startswith("<ServerTool 'echo'")
    tool = client.list_tools()[0]
    assert repr(tool) == "Tool(name='echo', description='Echo the text.')"
    assert repr(client.call_tool("echo", {"text": "hi"})) == "ToolResult(is_error=False, text='hi', blocks=1)"
