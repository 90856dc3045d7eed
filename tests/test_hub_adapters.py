"""ToolHub over real servers (in memory and as subprocesses), the LLM API shapes, and the agent-loop example."""

import base64
import json
import subprocess

import pytest

import minimcp
from minimcp import Image, Server, ToolError
from minimcp.client.results import ToolResult
from minimcp.integrations.adapters import (
    ToolCall,
    anthropic_result,
    handle_anthropic_call,
    handle_openai_chat_call,
    handle_openai_responses_call,
    openai_chat_result,
    openai_responses_result,
    parse_anthropic_call,
    parse_openai_chat_call,
    parse_openai_responses_call,
    to_anthropic_tools,
    to_openai_chat_tools,
    to_openai_responses_tools,
)
from minimcp.integrations.hub import MAX_NAME, ServerStartError, ToolHub, qualified_names
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, example

WEATHER = example("weather_server.py")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
PNG_B64 = base64.b64encode(PNG).decode()


def named_server(label: str) -> Server:
    """A server with a ``ping`` tool that says which server answered."""
    server = Server(label)

    @server.tool()
    def ping() -> str:
        """Say which server this is."""
        return f"pong from {label}"

    return server


def media_server() -> Server:
    """A server whose tools return each kind of result the adapters map."""
    server = Server("media")

    @server.tool()
    def chart(title: str):
        """Draw a chart."""
        return [{"type": "text", "text": f"chart: {title}"}, Image(PNG)]

    @server.tool()
    def broken() -> str:
        """Always fails."""
        raise ToolError("the disk is full")

    @server.tool()
    def stats(n: int = 2) -> dict:
        """Numbers."""
        return {"n": n}

    return server


# -- naming --------------------------------------------------------------------------------------


def test_qualified_names_are_safe_short_and_unique():
    long_tool = "t" * 80
    pairs = [("weather", "get_weather"), ("my.server", "read/file"), ("a", "b__c"), ("a__b", "c"),
             ("s", long_tool + "1"), ("s", long_tool + "2")]
    names = qualified_names(pairs)
    assert names[:2] == ["weather__get_weather", "my_server__read_file"]
    assert len(set(names)) == len(names)
    for name in names:
        assert len(name) <= MAX_NAME and all(c.isalnum() or c in "_-" for c in name)
    # "a__b__c" twice, and two names equal once cut to 64: all get a hash suffix.
    assert names[2].startswith("a__b__c_") and names[3].startswith("a__b__c_")
    assert names[4][:50] == names[5][:50] == ("s__" + long_tool)[:50]
    # Deterministic, and independent of the order the pairs come in.
    assert qualified_names(pairs[::-1]) == names[::-1]


def test_hub_routes_colliding_names_to_the_right_server():
    servers = {"my.srv": named_server("dotted"), "my_srv": named_server("underscored"),
               "other": named_server("other")}
    with ToolHub(servers) as hub:
        names = [tool.name for tool in hub.tools]
        assert len(names) == 3 and names[2] == "other__ping"
        assert names[0].startswith("my_srv__ping_") and names[1].startswith("my_srv__ping_")
        assert hub.resolve(names[0]) == ("my.srv", "ping")
        assert hub.resolve(names[1]) == ("my_srv", "ping")
        assert hub.call_tool(names[0]).text == "pong from dotted"
        assert hub.call_tool(names[1]).text == "pong from underscored"
        assert hub.call_tool("other__ping").text == "pong from other"
        with pytest.raises(minimcp.RPCError) as caught:
            hub.call_tool("other__pong")
        assert caught.value.code == -32602 and "other__pong" in caught.value.message


def test_hub_over_two_subprocesses_closes_them_all():
    with ToolHub({"north": [PY, WEATHER], "south": [PY, WEATHER]}) as hub:
        assert [tool.name for tool in hub.list_tools()] == [
            "north__get_weather", "north__get_forecast", "south__get_weather", "south__get_forecast"]
        assert hub.tools[0].description == "Get the current weather for a city."
        assert hub.call_tool("south__get_weather", {"city": "Tokyo"}).text == "Tokyo: 27°C, humid"
        clients = list(hub.clients.values())
        assert repr(hub) == "<ToolHub servers=['north', 'south']>"
    assert all(client.session.closed for client in clients)
    hub.close()  # idempotent; the autouse fixture checks both processes were reaped


def test_hub_skips_servers_without_tools_and_takes_clients_and_entries():
    docs = Server("docs")
    docs.add_resource(lambda: "hello", uri="mem://hello", name="hello")
    client = minimcp.connect("memory", server=named_server("given"))
    with ToolHub({"docs": docs, "given": client, "weather": {"command": PY, "args": [WEATHER]}}) as hub:
        assert [tool.name for tool in hub.tools] == ["given__ping", "weather__get_weather",
                                                     "weather__get_forecast"]
        assert hub.clients["docs"].read_resource("mem://hello").text == "hello"
    assert client.session.closed  # handed in, so closed with the hub


def test_hub_over_http_with_a_url_entry():
    """A {"url", "headers"} entry: Streamable HTTP, the entry's headers sent with every request."""
    seen = []

    def recording(app):
        def wrapped(environ, start_response):
            seen.append(environ.get("HTTP_AUTHORIZATION"))
            return app(environ, start_response)
        wrapped.close = app.close  # BackgroundServer.stop() closes the app's sessions through it
        return wrapped

    with BackgroundServer(recording(named_server("remote").wsgi_app())) as http:
        entry = {"type": "http", "url": http.url + "/mcp", "headers": {"Authorization": "Bearer t0ken"}}
        with ToolHub({"remote": entry, "local": named_server("local")}) as hub:
            assert hub.call_tool("remote__ping").text == "pong from remote"
            assert hub.call_tool("local__ping").text == "pong from local"
    assert seen and set(seen) == {"Bearer t0ken"}


def test_hub_reads_a_codex_entrys_token_from_the_variable_it_names(monkeypatch):
    # Codex's bearer_token_env_var names an environment variable: the token is read from it.
    seen = []

    def recording(app):
        def wrapped(environ, start_response):
            seen.append(environ.get("HTTP_AUTHORIZATION"))
            return app(environ, start_response)
        wrapped.close = app.close
        return wrapped

    monkeypatch.setenv("HUB_TEST_TOKEN", "s3cret")
    with BackgroundServer(recording(named_server("remote").wsgi_app())) as http:
        entry = {"url": http.url + "/mcp", "bearer_token_env_var": "HUB_TEST_TOKEN"}
        with ToolHub({"remote": entry}) as hub:
            assert hub.call_tool("remote__ping").text == "pong from remote"
    assert seen and set(seen) == {"Bearer s3cret"}


def test_hub_from_config_names(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"weather": {"command": PY, "args": [WEATHER]}}}))
    with ToolHub(["weather"], config=str(path)) as hub:
        assert hub.call_tool("weather__get_weather", {"city": "London"}).text == "London: 14°C, rain"
    with pytest.raises(ServerStartError, match="MCP server 'nope' failed to start: ServerNotFound"):
        ToolHub(["nope"], config=str(path))


def test_a_failing_server_closes_the_others():
    given = minimcp.connect("memory", server=named_server("given"))
    with pytest.raises(ServerStartError) as caught:
        ToolHub({"ok": [PY, WEATHER], "bad": [PY, "-c", "import sys; sys.exit(3)"],
                 "never": [PY, WEATHER], "given": given})
    assert caught.value.server == "bad"
    assert isinstance(caught.value.__cause__, minimcp.ConnectionClosed)
    assert caught.value.__cause__.exit_code == 3
    assert given.session.closed
    # The autouse no_leaks fixture checks the "ok" server's process was reaped.


def test_a_missing_command_names_the_server():
    with pytest.raises(ServerStartError, match="'ghost' failed to start: FileNotFoundError") as caught:
        ToolHub({"ok": [PY, WEATHER], "ghost": ["/nonexistent/minimcp-test-server"]})
    assert isinstance(caught.value.__cause__, FileNotFoundError)


def test_servers_given_twice_are_refused():
    with pytest.raises(ValueError, match="servers named more than once: a"):
        ToolHub(["a", "b", "a"])


# -- tool definitions, pinned ----------------------------------------------------------------------


WEATHER_SCHEMA = {"type": "object",
                  "properties": {"city": {"type": "string", "description": "City name"},
                                 "units": {"type": "string", "enum": ["c", "f"], "default": "c"}},
                  "required": ["city"], "additionalProperties": False}


@pytest.fixture
def weather_hub():
    with ToolHub({"weather": [PY, WEATHER]}) as hub:
        yield hub


def test_openai_chat_tool_shape(weather_hub):
    assert to_openai_chat_tools(weather_hub)[0] == {
        "type": "function",
        "function": {"name": "weather__get_weather", "description": "Get the current weather for a city.",
                     "parameters": WEATHER_SCHEMA}}


def test_openai_responses_tool_shape(weather_hub):
    assert to_openai_responses_tools(weather_hub.tools)[0] == {
        "type": "function", "name": "weather__get_weather", "description": "Get the current weather for a city.",
        "parameters": WEATHER_SCHEMA, "strict": False}


def test_anthropic_tool_shape(weather_hub):
    tools = to_anthropic_tools(weather_hub)
    assert tools[0] == {"name": "weather__get_weather", "description": "Get the current weather for a city.",
                        "input_schema": WEATHER_SCHEMA}
    tools[0]["input_schema"]["properties"].clear()  # a copy: the hub's tools are untouched
    assert to_anthropic_tools(weather_hub)[0]["input_schema"] == WEATHER_SCHEMA


def test_plain_clients_and_raw_dicts_work_too_unless_a_name_is_refused():
    assert to_anthropic_tools([{"name": "x", "inputSchema": {"type": "object"}}]) == [
        {"name": "x", "description": "", "input_schema": {"type": "object"}}]
    server = Server("dots")
    server.add_tool(lambda: "hi", name="ns.ping")
    with minimcp.connect("memory", server=server) as client:
        with pytest.raises(ValueError, match=r"'ns.ping' is not one LLM APIs accept.*ToolHub"):
            to_openai_chat_tools(client)


# -- reading calls ----------------------------------------------------------------------------------


def test_parsing_each_api_call():
    assert parse_openai_chat_call({"id": "call_1", "type": "function", "function": {
        "name": "weather__get_weather", "arguments": '{"city": "Tokyo"}'}}) == ToolCall(
        "call_1", "weather__get_weather", {"city": "Tokyo"})
    assert parse_openai_responses_call({"type": "function_call", "id": "fc_1", "call_id": "call_2",
                                        "name": "t", "arguments": "", "status": "completed"}) == ToolCall(
        "call_2", "t", {})
    assert parse_anthropic_call({"type": "tool_use", "id": "toolu_3", "name": "t", "input": {"a": 1}}) == ToolCall(
        "toolu_3", "t", {"a": 1})


def test_parsing_vendor_sdk_objects_by_attribute():
    class Obj:
        def __init__(self, **fields):
            self.__dict__.update(fields)

    call = Obj(id="call_9", type="function", function=Obj(name="t", arguments='{"x": 2}'))
    assert parse_openai_chat_call(call) == ToolCall("call_9", "t", {"x": 2})


def test_bad_arguments_become_an_error_for_the_model():
    call = parse_openai_chat_call({"id": "c", "function": {"name": "t", "arguments": '{"city": "Tok'}})
    assert call.arguments == {} and call.error.startswith("The arguments for tool 't' are not valid JSON (")
    call = parse_openai_responses_call({"type": "function_call", "call_id": "c", "name": "t",
                                        "arguments": "[1, 2]"})
    assert call.error == "The arguments for tool 't' must be a JSON object, not an array."
    with pytest.raises(ValueError, match="expected a 'tool_use' item, got type 'text'"):
        parse_anthropic_call({"type": "text", "text": "hi"})


# -- results, pinned ----------------------------------------------------------------------------------


def test_text_result_shapes():
    result = ToolResult({"content": [{"type": "text", "text": "Tokyo: 27°C"}], "isError": False})
    assert openai_chat_result("call_1", result) == {"role": "tool", "tool_call_id": "call_1",
                                                    "content": "Tokyo: 27°C"}
    assert openai_responses_result("call_1", result) == {"type": "function_call_output", "call_id": "call_1",
                                                         "output": "Tokyo: 27°C"}
    assert anthropic_result("toolu_1", result) == {"type": "tool_result", "tool_use_id": "toolu_1",
                                                   "content": [{"type": "text", "text": "Tokyo: 27°C"}],
                                                   "is_error": False}


def test_image_and_error_result_shapes():
    with minimcp.connect("memory", server=media_server()) as client:
        chart = client.call_tool("chart", {"title": "rain"})
        broken = client.call_tool("broken")
        stats = client.call_tool("stats")
    assert anthropic_result("t", chart)["content"] == [
        {"type": "text", "text": "chart: rain"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}]
    assert openai_responses_result("c", chart)["output"] == [
        {"type": "input_text", "text": "chart: rain"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"}]
    assert openai_chat_result("c", chart)["content"] == (
        "chart: rain\n[image/png image left out: Chat Completions tool messages carry text only]")
    assert anthropic_result("t", broken) == {"type": "tool_result", "tool_use_id": "t", "is_error": True,
                                             "content": [{"type": "text", "text": "the disk is full"}]}
    assert openai_chat_result("c", broken)["content"] == "Error: the disk is full"
    assert openai_responses_result("c", broken)["output"] == "Error: the disk is full"
    assert openai_chat_result("c", stats)["content"] == '{"n": 2}'


def test_other_blocks_become_notes_and_structured_only_results_become_json():
    result = ToolResult({"content": [
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "A"}},
        {"type": "resource_link", "uri": "file:///b.txt", "name": "b.txt"},
        {"type": "image", "data": "PHN2Zz4=", "mimeType": "image/svg+xml"}]})
    assert [block["text"] for block in anthropic_result("t", result)["content"]] == [
        "[audio content (audio/wav) left out: only text and images can be passed on]", "A",
        "[resource b.txt: file:///b.txt]",
        "[image content (image/svg+xml) left out: only text and images can be passed on]"]
    structured = ToolResult({"content": [], "structuredContent": {"ok": True}})
    assert anthropic_result("t", structured)["content"] == [{"type": "text", "text": '{"ok": true}'}]
    assert anthropic_result("t", ToolResult({"content": [{"type": "text", "text": ""}]}))["content"] == []


# -- the round trip -----------------------------------------------------------------------------------


def test_round_trip_through_each_api(weather_hub):
    chat = handle_openai_chat_call(weather_hub, {"id": "call_1", "type": "function", "function": {
        "name": "weather__get_weather", "arguments": '{"city": "London", "units": "f"}'}})
    assert chat == {"role": "tool", "tool_call_id": "call_1", "content": "London: 57°F, rain"}
    responses = handle_openai_responses_call(weather_hub, {
        "type": "function_call", "call_id": "call_2", "name": "weather__get_forecast",
        "arguments": '{"city": "Tokyo", "days": 1}'})
    assert responses == {"type": "function_call_output", "call_id": "call_2",
                         "output": '{"city": "Tokyo", "days": [{"day": 1, "celsius": 27, "sky": "humid"}]}'}
    anthropic = handle_anthropic_call(weather_hub, {"type": "tool_use", "id": "toolu_3",
                                                    "name": "weather__get_weather", "input": {"city": "Kraków"}})
    assert anthropic == {"type": "tool_result", "tool_use_id": "toolu_3",
                         "content": [{"type": "text", "text": "Kraków: 22°C, sunny"}], "is_error": False}


def test_what_the_model_gets_wrong_comes_back_as_an_error_result(weather_hub):
    bad_json = handle_anthropic_call(weather_hub, {"type": "tool_use", "id": "t1", "name": "weather__get_weather",
                                                   "input": ["Tokyo"]})
    assert bad_json["is_error"] and bad_json["content"] == [{"type": "text", "text": (
        "The arguments for tool 'weather__get_weather' must be a JSON object, not an array.")}]
    made_up = handle_openai_chat_call(weather_hub, {"id": "c", "function": {"name": "weather__lottery",
                                                                            "arguments": "{}"}})
    assert made_up["content"] == "Error: The call to tool 'weather__lottery' was refused: unknown tool: " \
                                 "'weather__lottery'"
    schema = handle_openai_responses_call(weather_hub, {"type": "function_call", "call_id": "c",
                                                        "name": "weather__get_weather", "arguments": "{}"})
    assert schema["output"].startswith("Error: Invalid arguments for tool 'weather__get_weather'")  # as called


def test_a_plain_client_works_as_the_target():
    with minimcp.connect("memory", server=named_server("solo")) as client:
        reply = handle_anthropic_call(client, {"type": "tool_use", "id": "t", "name": "ping", "input": {}})
        assert reply["content"] == [{"type": "text", "text": "pong from solo"}]
        unknown = handle_anthropic_call(client, {"type": "tool_use", "id": "t", "name": "nope", "input": {}})
        assert unknown["is_error"] and "was refused" in unknown["content"][0]["text"]


# -- the example ----------------------------------------------------------------------------------------


def test_agent_loop_example():
    out = subprocess.run([PY, example("agent_loop.py")], capture_output=True, text=True, encoding="utf-8",
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "tools: weather__get_weather, weather__get_forecast",
        'model -> tool_use weather__get_weather {"city": "Tokyo"}',
        'tool  -> {"type": "tool_result", "tool_use_id": "toolu_01", "content": [{"type": "text", '
        '"text": "Tokyo: 27°C, humid"}], "is_error": false}',
        "model -> The weather tool says: Tokyo: 27°C, humid.",
    ]
