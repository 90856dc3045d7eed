"""minimcp's client against a server this project did not write: the reference
``@modelcontextprotocol/server-everything`` from npm, run with Node over stdio.

The fixture installs it into ~/.cache/minimcp-tests (once); the tests are skipped,
saying why, only when Node/npm is missing or the npm registry cannot be reached.
"""

import os
import shutil
import subprocess

import pytest

import minimcp

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "minimcp-tests", "server-everything")
BIN = os.path.join(CACHE, "node_modules", ".bin", "mcp-server-everything")


@pytest.fixture(scope="module")
def everything():
    """The command that starts server-everything over stdio."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("Node.js and npm are needed to run @modelcontextprotocol/server-everything")
    if not os.path.exists(BIN):
        os.makedirs(CACHE, exist_ok=True)
        with open(os.path.join(CACHE, "package.json"), "w") as f:
            f.write('{"private": true}')
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error",
                               "@modelcontextprotocol/server-everything"], cwd=CACHE, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"could not install server-everything from the npm registry: {done.stderr[-300:]}")
    return [node, BIN, "stdio"]


def connect(command, **handlers):
    return minimcp.connect(command, timeout=30, on_stderr=lambda line: None, **handlers)


def test_handshake_and_tools(everything):
    with connect(everything) as client:
        assert client.protocol_version == "2025-11-25"  # it has no 2026-07-28 yet: the probe fell back
        assert client.server_info["name"] == "mcp-servers/everything"
        names = [tool.name for tool in client.list_tools()]
        assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(names)
        assert client.call_tool("echo", {"message": "hello"}).text == "Echo: hello"
        assert "5" in client.call_tool("get-sum", {"a": 2, "b": 3}).text
        image = client.call_tool("get-tiny-image")
        assert any(block["type"] == "image" and block["mimeType"] == "image/png" for block in image.content)
        structured = client.call_tool("get-structured-content", {"location": "Chicago"})
        assert isinstance(structured.structured, dict) and not structured.is_error
        client.ping()


def test_resources_prompts_and_completion(everything):
    with connect(everything) as client:
        resources = client.list_resources()
        assert resources and all(r.uri for r in resources)
        read = client.read_resource(resources[0].uri)
        assert read.contents and read.contents[0]["uri"] == resources[0].uri
        templates = [t.uri_template for t in client.list_resource_templates()]
        assert "demo://resource/dynamic/text/{resourceId}" in templates
        assert client.read_resource("demo://resource/dynamic/text/1").text
        prompt = client.get_prompt("args-prompt", {"city": "Kraków"})
        assert "Kraków" in prompt.messages[0]["content"]["text"]
        with pytest.raises(minimcp.RPCError) as info:
            client.get_prompt("args-prompt", {})
        assert info.value.code == -32602
        completion = client.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "")
        assert completion.values


def test_its_sampling_request_reaches_our_handler(everything):
    asked = []

    def sampler(params):
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "from minimcp"}, "model": "stand-in"}

    with connect(everything, sampling_handler=sampler) as client:
        result = client.call_tool("trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
    assert asked and asked[0]["messages"][0]["content"]["text"].endswith("say hi")
    assert "from minimcp" in result.text


def test_progress_from_a_long_running_tool(everything):
    progress = []
    with connect(everything) as client:
        result = client.call_tool("trigger-long-running-operation", {"duration": 0.3, "steps": 3},
                                  on_progress=lambda *p: progress.append(p))
    assert not result.is_error
    assert [p[0] for p in progress] == [1, 2, 3] and all(p[1] == 3 for p in progress)
