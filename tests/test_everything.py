"""minimcp's client against a server this project did not write: the reference
``@modelcontextprotocol/server-everything`` from npm, run with Node over stdio.

The fixture installs the version below into ~/.cache/minimcp-tests (once, and again when
the cache holds another); the tests are skipped, saying why, only when Node/npm is missing
or the npm registry cannot be reached.
"""

import os

import pytest

import minimcp

from conftest import TEST_CACHE, Wire, npm_package, pressing_ctrl_c

#: The release the tests are written against (its tasks: simulate-research-query, issue 28).
VERSION = "2026.8.31"
CACHE = os.path.join(TEST_CACHE, "server-everything")
BIN = os.path.join(CACHE, "node_modules", ".bin", "mcp-server-everything")


@pytest.fixture(scope="module")
def everything():
    """The command that starts server-everything :data:`VERSION` over stdio."""
    node = npm_package(CACHE, "@modelcontextprotocol/server-everything", VERSION)
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


# -- tasks (spec 2025-11-25 basic/utilities/tasks): simulate-research-query requires one ----------

RESEARCH = "simulate-research-query"


def test_a_tool_that_requires_a_task_just_works_from_call_tool(everything):
    """spec 2025-11-25 tasks "Tool-Level Negotiation": taskSupport "required" MUST be called as a task;
    its question comes during tasks/result with related-task metadata ("Input Required Status")."""
    asked, progress, wire = [], [], Wire()

    def clarify(params):
        asked.append(params)
        return {"action": "accept", "content": {"interpretation": "snake"}}

    with connect(everything, elicitation_handler=clarify, middleware=[wire]) as client:
        assert client.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        result = client.call_tool(RESEARCH, {"topic": "python", "ambiguous": True},
                                  on_progress=lambda *report: progress.append(report))
        assert not result.is_error and "# Research Report: python (snake)" in result.text  # our answer got there
        task_id = wire.task_id()
        assert client.request("tasks/get", {"taskId": task_id})["status"] == "completed"
        # plain tools, even of a server that runs tasks, are called as before
        supports = {tool.name: tool.task_support for tool in client.tools}
        assert supports[RESEARCH] == "required" and supports["echo"] == "forbidden"
        assert client.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        answerers = client.session._workers.threads  # (the thread that answered the question)
    # The child outlives its stdin by two seconds (its task store's timers), which takes all of
    # Session.close()'s straggler budget: the idle worker is told to stop, but joined within 0 s.
    for worker in answerers:
        worker.join(5)
    calls = [params for method, params in wire.sent if method == "tools/call"]
    assert calls[0]["task"] == {} and "task" not in calls[1]  # asked for a task; echo not
    assert {"tools/list", "tasks/get", "tasks/result"} <= set(wire.methods())
    assert asked and asked[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    # its progress is its status messages (it sends no notifications/progress), each new one once, in order
    messages = [message for _, _, message in progress]
    assert messages[0] == "Gathering sources..." and "Generating report..." in messages
    assert any("multiple interpretations" in message for message in messages)
    assert [number for number, _, _ in progress] == list(range(1, len(progress) + 1))


def test_start_task_returns_the_servers_task(everything):
    wire = Wire()
    with connect(everything, middleware=[wire]) as client:
        task = client.start_task(RESEARCH, {"topic": "tides"})
        assert task.task_id and task.task_id == wire.task_id() and task.era == "handshake"
        assert task.status in ("working", "input_required") and not task.done and task.poll_interval == 1.0
        assert client.task(task.task_id).refresh() in ("working", "input_required")  # the server knows it
        result = task.wait(30)
        assert task.status == "completed" and "# Research Report: tides" in result.text
        assert wire.methods()[-1] == "tasks/result"
        # a tool the server does not run as a task: said before anything is sent
        sent = len(wire.sent)
        with pytest.raises(minimcp.CapabilityError) as refused:
            client.start_task("echo", {"message": "hi"})
        assert "'echo'" in str(refused.value) and "call_tool()" in str(refused.value)
        assert len(wire.sent) == sent


def test_timeout_cancels_the_task(everything):
    wire = Wire()
    with connect(everything, middleware=[wire]) as client:
        with pytest.raises(minimcp.Timeout):
            client.call_tool(RESEARCH, {"topic": "slow"}, timeout=1.5)  # it takes four seconds
        assert "tasks/cancel" in wire.methods()
        assert client.request("tasks/get", {"taskId": wire.task_id()})["status"] == "cancelled"


def test_ctrl_c_cancels_the_task(everything, ctrl_c):
    wire = Wire()
    with connect(everything, middleware=[wire]) as client:
        with pressing_ctrl_c(after=wire.answered):  # once the task is being polled; again until it takes
            with pytest.raises(KeyboardInterrupt):
                client.call_tool(RESEARCH, {"topic": "interrupted"})
        assert "tasks/cancel" in wire.methods()
        assert client.request("tasks/get", {"taskId": wire.task_id()})["status"] == "cancelled"
