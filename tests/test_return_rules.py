"""The return rules of docs/return-values.md, from a client's side: a real stdio server, each
protocol version that changes what is sent, and a ToolHub naming tools as the model calls them."""

import os

import pytest

import minimcp
from minimcp.protocol.versions import knows

from conftest import PY, ROOT

RETURNS = os.path.join(ROOT, "tests", "servers", "returns_server.py")


@pytest.fixture(params=["2025-11-25", "2025-03-26"])
def client(request):
    with minimcp.connect([PY, RETURNS], protocol=request.param) as connected:
        yield connected


def test_a_list_may_mix_strings_and_content_helpers(client):
    for tool in ("chart", "chart_unannotated"):
        result = client.call_tool(tool, {"title": "the chart"})
        assert not result.is_error, result.text
        kinds = [block["type"] for block in result.content]
        assert sorted(kinds) == ["image", "resource", "text"] if tool == "chart" else kinds == ["image", "text"]
        assert result.structured is None
    result = client.call_tool("chart", {"title": "the chart"})
    assert result.content[0] == {"type": "text", "text": "Here is the chart:"}
    assert result.content[1]["mimeType"] == "image/png"
    assert result.content[2]["resource"] == {"uri": "file:///data.csv", "mimeType": "text/csv", "text": "x,y\n1,2\n"}


def test_optional_str_is_text_when_there_and_nothing_when_none(client):
    tool = {t.name: t for t in client.list_tools()}["lookup"]
    assert tool.output_schema is None  # as for -> str: plain text, not {"result": ...}
    found = client.call_tool("lookup", {"key": "greeting"})
    assert found.content == [{"type": "text", "text": "hello"}] and found.structured is None
    missing = client.call_tool("lookup", {"key": "nope"})
    assert missing.content == [] and not missing.is_error and missing.structured is None


def test_optional_dict_declares_no_schema_and_is_structured_when_there(client):
    """No outputSchema: one would oblige structuredContent in every result, and None has none."""
    tool = {t.name: t for t in client.list_tools()}["find"]
    assert tool.output_schema is None
    found = client.call_tool("find", {"key": "greeting"})
    assert found.text == '{"key": "greeting", "note": "hello"}'
    if knows(client.protocol_version, "structured_content"):
        assert found.structured == {"key": "greeting", "note": "hello"}
    missing = client.call_tool("find", {"key": "nope"})
    assert missing.content == [] and not missing.is_error and missing.structured is None


def test_a_none_default_on_a_list_accepts_an_explicit_null(client):
    schema = {t.name: t for t in client.list_tools()}["stats"].input_schema
    assert schema["properties"]["tags"] == {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                                      {"type": "null"}], "default": None}
    result = client.call_tool("stats", {"values": [1, 2.5], "tags": None})
    assert not result.is_error, result.text
    assert '"sum": 3.5' in result.text
    assert client.call_tool("stats", {"values": [1], "tags": ["a"]}).text == '{"sum": 1, "tags": ["a"]}'


def test_hub_errors_name_the_tool_the_model_called():
    from minimcp.integrations.hub import ToolHub

    with ToolHub({"typed": [PY, RETURNS]}) as hub:
        assert "typed__stats" in [tool.name for tool in hub.tools]
        result = hub.call_tool("typed__stats", {"values": "not a list"})
        assert result.is_error
        assert "'typed__stats'" in result.text and "'stats'" not in result.text, result.text
        assert hub.call_tool("typed__stats", {"values": [2]}).structured == {"sum": 2, "tags": []}
