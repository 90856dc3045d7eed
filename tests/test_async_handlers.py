"""``async def`` tools, resources, prompts and completers: run to the end on their worker
thread, cancelled when the request is, mixed with plain functions on one server
(minimcp/server/coroutines.py). A real stdio server process, a real coroutine."""

import json
import os
import subprocess
import threading

import pytest

import minimcp

from conftest import PY, ROOT

ASYNC_SERVER = os.path.join(ROOT, "tests", "servers", "async_server.py")


@pytest.fixture
def client():
    with minimcp.connect([PY, ASYNC_SERVER], protocol="2025-11-25") as connected:
        yield connected


def test_async_tool_resource_prompt_and_completer_answer_like_plain_ones(client):
    result = client.call_tool("fetch", {"city": "Oslo"})
    assert not result.is_error, result.text
    assert result.structured == {"city": "Oslo", "sky": "sunny", "celsius": 21}
    tools = {tool.name: tool for tool in client.list_tools()}
    assert tools["fetch"].input_schema["properties"]["city"] == {"type": "string"}  # the schema as for a def
    assert client.read_resource("async://today").raw["contents"][0]["text"] == "note today"
    assert client.get_prompt("explain", {"topic": "asyncio"}).messages[0]["content"]["text"] == "Explain asyncio."
    completion = client.complete({"type": "ref/prompt", "name": "explain"}, "topic", "t")
    assert completion.values == ["threads", "trio"]


def test_async_and_plain_tools_run_at_once_on_one_server(client):
    results = {}

    def call(city):
        results[city] = client.call_tool("fetch", {"city": city, "delay": 0.2}).structured["city"]

    threads = [threading.Thread(target=call, args=(f"c{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    assert client.call_tool("was_cancelled", {"within": 0}).structured == {"result": False}  # a plain one, meanwhile
    for thread in threads:
        thread.join(30)
    assert results == {f"c{i}": f"c{i}" for i in range(4)}


def test_cancelling_the_request_cancels_the_coroutine(client):
    with pytest.raises(minimcp.Timeout):
        client.call_tool("wait_forever", {}, timeout=0.5)  # the client sends notifications/cancelled
    assert client.call_tool("was_cancelled", {"within": 10}).structured == {"result": True}
    assert client.call_tool("fetch", {"city": "Rome"}).structured["city"] == "Rome"  # and the server lives on


def test_async_tool_over_http():
    import sys

    from minimcp.server.http.wsgiserver import BackgroundServer

    sys.path.insert(0, os.path.dirname(ASYNC_SERVER))
    from async_server import server

    with BackgroundServer(server.wsgi_app()) as running, minimcp.connect(running.url + "/mcp") as http_client:
        assert http_client.call_tool("fetch", {"city": "Lima"}).structured["sky"] == "sunny"


SYNC_ONLY = """
import sys
import minimcp
from minimcp import Server
server = Server("plain")

@server.tool()
def add(a: int, b: int) -> int:
    return a + b

@server.resource("plain://x")
def x() -> str:
    return "x"

with minimcp.connect("memory", server=server) as client:
    assert client.call_tool("add", {"a": 1, "b": 2}).structured == {"result": 3}
    client.read_resource("plain://x")
print(__import__("json").dumps("asyncio" in sys.modules))
"""


def test_a_server_of_plain_functions_never_imports_asyncio():
    out = subprocess.run([PY, "-c", SYNC_ONLY], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) is False
    with_async = SYNC_ONLY.replace("def add(", "async def add(")
    out = subprocess.run([PY, "-c", with_async], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) is True
