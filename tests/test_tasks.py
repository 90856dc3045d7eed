"""The tasks extension (io.modelcontextprotocol/tasks, SEP-2663), both sides, over stdio and
Streamable HTTP: a tool run as a task, polled, answered, cancelled, expired, and bad input.

The server is tests/servers/tasks_server.py: a child process over stdio, in this process
over HTTP (there the clock of its task store is injected, to expire tasks without waiting).
"""

import contextlib
import os
import sys
import threading
import time

import pytest

import minimcp
from minimcp import RPCError
from minimcp.client.tasks import TaskCancelled
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "servers"))
import tasks_server  # noqa: E402

TASKS_SERVER = os.path.join(ROOT, "tests", "servers", "tasks_server.py")
TRANSPORTS = ["stdio", "http"]


def accept(params: dict) -> dict:
    return {"action": "accept", "content": {"ok": True}}


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1.8e9

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def connected(transport: str, ttl_ms=3600000, clock=time.time, **handlers):
    """A client of the tasks server over ``transport``; yields (client, url or None)."""
    if transport == "stdio":
        os.environ["TASKS_TTL_MS"] = str(ttl_ms)
        try:
            with minimcp.connect([PY, TASKS_SERVER], timeout=20, **handlers) as client:
                yield client, None
        finally:
            del os.environ["TASKS_TTL_MS"]
        return
    server = tasks_server.make_server(ttl_ms=ttl_ms, clock=clock)
    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running:
            url = running.url + "/mcp"
            with minimcp.connect(url, timeout=20, **handlers) as client:
                yield client, url
    finally:
        server.tasks.close()
        app.close()


def until(client, task_id: str, status: str, limit: float = 10.0) -> dict:
    """Poll tasks/get (raw: nothing answered) until the task has ``status``; bounded."""
    deadline = time.monotonic() + limit
    pause = threading.Event()
    while True:
        task = client.request("tasks/get", {"taskId": task_id})
        if task["status"] == status or time.monotonic() > deadline:
            assert task["status"] == status, task
            return task
        pause.wait(0.01)


def created(client, name: str, arguments: dict) -> dict:
    """A raw tools/call that the server answers with a CreateTaskResult."""
    result = client.request("tools/call", {"name": name, "arguments": arguments})
    assert result["resultType"] == "task", result
    return result


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_lifecycle(transport):
    with connected(transport, elicitation_handler=accept) as (client, _):
        assert client.server_capabilities["extensions"] == {"io.modelcontextprotocol/tasks": {}}
        task = client.start_task("work", {"seconds": 0.05, "tag": "one"})
        assert task.task_id and task.status == "working" and set(task.task) >= {
            "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
        assert task.wait(10).text == "worked one"
        assert task.done and task.status == "completed" and task.status_message == "1/1 done"
        assert client.task(task.task_id).refresh() == "completed"  # a fresh handle, by id
        # a plain call_tool of a task tool waits for the task, transparently
        assert client.call_tool("work", {"seconds": 0.01, "tag": "two"}).text == "worked two"
        assert client.call_tool("confirm", {"filename": "a.txt"}).text == "accept a.txt ok=True"
        assert client.call_tool("plain", {"text": "sync"}).text == "sync"  # never a task
        # asks over input_required rounds first, then becomes a task that runs the tool again, answered
        # (the client answers the round itself: what comes back is the task, without requestState)
        task = client.request("tools/call", {"name": "book", "arguments": {}})
        assert task["resultType"] == "task" and "requestState" not in task and "inputRequests" not in task
        assert client.task(task["taskId"]).wait(10).text == "booked ok=True task=TaskContext"
        assert client.call_tool("book").text == "booked ok=True task=TaskContext"


def test_handshake_client_gets_plain_results():
    with minimcp.connect([PY, TASKS_SERVER], protocol="2025-11-25", timeout=20) as client:
        assert client.era == "handshake"  # no per-request capabilities, so no tasks: the tool runs as a plain call
        assert client.call_tool("work", {"seconds": 0, "tag": "old"}).text == "worked old"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancel_during_work(transport):
    tasks_server.SAW_CANCEL.clear()
    tasks_server.WORK_STARTED.clear()
    with connected(transport) as (client, _):
        task = client.start_task("work", {"seconds": 60})
        if transport == "http":  # (in this process) cancel once the tool runs, or it never runs to see it
            assert tasks_server.WORK_STARTED.wait(10)
        task.cancel()
        task.cancel()  # idempotent
        assert task.refresh() == "cancelled"
        with pytest.raises(TaskCancelled):
            task.result()
        client.task(task.task_id).cancel()  # still an empty ack once ended
        assert client.call_tool("plain", {"text": "alive"}).text == "alive"
    if transport == "http":
        assert tasks_server.SAW_CANCEL.wait(10)  # the tool saw ctx.cancelled (on its own thread: maybe not yet)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancel_during_input(transport):
    with connected(transport, elicitation_handler=accept) as (client, _):
        task_id = created(client, "confirm", {"filename": "b.txt"})["taskId"]
        waiting = until(client, task_id, "input_required")
        (key, request), = waiting["inputRequests"].items()
        assert request["method"] == "elicitation/create" and "b.txt" in request["params"]["message"]
        assert client.request("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
        ended = until(client, task_id, "cancelled")
        assert "inputRequests" not in ended and "result" not in ended
        # an answer after the cancel is ignored: the task stays cancelled
        client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: accept({})}})
        assert client.request("tasks/get", {"taskId": task_id})["status"] == "cancelled"


def test_ttl_expiry_http():
    clock = FakeClock()
    with connected("http", ttl_ms=60000, clock=clock) as (client, _):
        task = client.start_task("work", {"seconds": 0, "tag": "ttl"})
        assert task.wait(10).text == "worked ttl"
        clock.now += 59.999  # just before the TTL: still there
        assert client.task(task.task_id).refresh() == "completed"
        clock.now += 0.002
        with pytest.raises(RPCError) as caught:
            client.task(task.task_id).refresh()
        assert caught.value.code == -32602 and "expired" in str(caught.value)
        running = client.start_task("work", {"seconds": 60})
        clock.now += 3600  # a task still running is never dropped
        assert client.task(running.task_id).refresh() == "working"
        running.cancel()


def test_ttl_expiry_stdio():
    with connected("stdio", ttl_ms=1) as (client, _):  # 1 ms: gone as soon as it ends
        task_id = created(client, "work", {"seconds": 0.02})["taskId"]
        deadline = time.monotonic() + 10
        with pytest.raises(RPCError) as caught:
            while time.monotonic() < deadline:
                assert client.request("tasks/get", {"taskId": task_id})["status"] == "working"
        assert caught.value.code == -32602
        assert client.call_tool("plain", {"text": "alive"}).text == "alive"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tool_that_raises(transport):
    with connected(transport) as (client, _):
        result = client.start_task("broken").wait(10)
        assert result.is_error and "it broke" in result.text  # a tool error: completed, isError
        task = client.start_task("backend_down")
        with pytest.raises(RPCError) as caught:
            task.wait(10)
        assert caught.value.code == -32603 and task.status == "failed"  # a protocol error: failed
        assert "result" not in task.task and task.task["error"]["message"] == "backend down"


def test_client_disconnects_and_comes_back_http():
    with connected("http", elicitation_handler=accept) as (first, url):
        task_id = created(first, "confirm", {"filename": "c.txt"})["taskId"]
        until(first, task_id, "input_required")
        first.close()  # the first client goes away mid-task
        with minimcp.connect(url, timeout=20, elicitation_handler=accept) as second:
            assert second.task(task_id).wait(10).text == "accept c.txt ok=True"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_hundred_tasks_at_once(transport):
    with connected(transport) as (client, _):
        tasks = [client.start_task("work", {"seconds": 0.01, "tag": str(i)}) for i in range(100)]
        assert len({task.task_id for task in tasks}) == 100
        assert [task.wait(30).text for task in tasks] == [f"worked {i}" for i in range(100)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_bad_input_gets_an_error_and_the_task_lives_on(transport):
    with connected(transport, elicitation_handler=accept) as (client, _):
        for method, params in (("tasks/get", {"taskId": "nope"}), ("tasks/cancel", {"taskId": "nope"}),
                               ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
                               ("tasks/get", {"taskId": 42}), ("tasks/get", {})):
            with pytest.raises(RPCError) as caught:
                client.request(method, params)
            # (over HTTP a taskId that is no string cannot match its Mcp-Name header: -32020 first)
            good = (-32602, -32020) if transport == "http" and not isinstance(params.get("taskId"), str) else (-32602,)
            assert caught.value.code in good, (method, params)
        for method in ("tasks/result", "tasks/list"):
            with pytest.raises(RPCError) as caught:
                client.request(method, {"taskId": "nope"})
            assert caught.value.code == -32601
        working = created(client, "work", {"seconds": 0.2, "tag": "w"})["taskId"]
        # an update for a task not waiting: ignored (the extension: keys not outstanding are ignored)
        assert client.request("tasks/update", {"taskId": working, "inputResponses": {"x": accept({})}}) == {
            "resultType": "complete"}
        task_id = created(client, "confirm", {"filename": "d.txt"})["taskId"]
        (key, _), = until(client, task_id, "input_required")["inputRequests"].items()
        for garbage in (None, [], "yes", {key: 12345}, {key: {"action": "maybe"}}):
            with pytest.raises(RPCError) as caught:
                client.request("tasks/update", {"taskId": task_id, "inputResponses": garbage})
            assert caught.value.code == -32602
        assert client.request("tasks/get", {"taskId": task_id})["inputRequests"] == {key: _}
        client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: accept({})}})
        assert client.task(task_id).wait(10).text == "accept d.txt ok=True"
        assert client.task(working).wait(10).text == "worked w"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_status_notifications_on_listen(transport):
    from minimcp.client.stateless import Listener

    seen, ended = [], threading.Event()

    def on_notification(method, params):
        if method == "notifications/tasks":
            seen.append(params)
            if params["status"] == "completed":
                ended.set()

    with connected(transport, on_notification=on_notification, elicitation_handler=accept) as (client, _):
        task_id = created(client, "confirm", {"filename": "e.txt"})["taskId"]  # it waits for our answer
        (key, _), = until(client, task_id, "input_required")["inputRequests"].items()
        listener = client.stateless.listener = Listener(client.session, {"taskIds": [task_id, "not-mine"]})
        listener.open(client.stateless.meta())
        assert listener.acknowledged == {"taskIds": [task_id]}  # only the tasks it may see
        client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: accept({})}})
        assert ended.wait(10)
        listener.close()
    assert [note["status"] for note in seen] == ["working", "completed"]
    assert seen[-1]["taskId"] == task_id and seen[-1]["result"]["content"][0]["text"] == "accept e.txt ok=True"


def test_a_task_runs_in_the_context_of_the_request_that_made_it():
    # Context variables (a trace's current span, a request id a middleware set) go with the task
    # to its own thread, so a tool run as a task sees what the same tool sees when run plain.
    import contextvars

    import minimcp
    from minimcp import Server

    current = contextvars.ContextVar("current", default="none")
    server = Server("ctxvars")

    @server.add_middleware
    def mark(request, call_next):
        token = current.set(f"set by {request.method}")
        try:
            return call_next(request)
        finally:
            current.reset(token)

    @server.tool(task="required")
    def which() -> str:
        """Say what the context holds."""
        return current.get()

    with minimcp.connect("memory", server=server, protocol="2026-07-28") as client:
        assert client.call_tool("which").text == "set by tools/call"
    server.tasks.close()
