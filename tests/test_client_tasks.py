"""The client's side of tasks (client/tasks.py): call_tool() of a tool that runs as a task makes
the task, follows it, answers its questions, passes its progress on, cancels it on timeout and
Ctrl-C, and returns a plain result; start_task() returns the server's task or says why not.

Two servers, one per era (tests/test_everything.py runs the same against the reference server):

- minimcp's own (``make_server()``), whose tasks are the 2026-07-28 extension
  (``io.modelcontextprotocol/tasks``): a child over stdio, or in this process over HTTP;
- a 2025-11-25 server with tasks (``serve_core_tasks()``, spec 2025-11-25
  basic/utilities/tasks), written out message by message: it does what minimcp's server does
  not (handshake-era tasks, progress after the ``CreateTaskResult``) and what no good server
  does (answers that are neither a task nor a tool result).

Both run as this file: ``python test_client_tasks.py stateless`` or ``... core``.
"""

import contextlib
import json
import os
import sys
import threading
import time

import pytest

import minimcp
from minimcp import Context, ProtocolError, RPCError, Server, Timeout
from minimcp.client.tasks import TaskCancelled
from minimcp.server.tasks import TaskRunner, starts_task_later

from conftest import Wire, pressing_ctrl_c

HERE = os.path.abspath(__file__)
PY = sys.executable

#: Set when ``stall`` saw its task cancelled (read by the tests that run the server in this process).
STALL_CANCELLED = threading.Event()


def make_server() -> Server:
    """minimcp's server, with tools that run as tasks (the 2026-07-28 extension)."""
    server = Server("client-tasks", version="0.0.1")
    server.tasks = TaskRunner(poll_interval_ms=20)

    @server.tool(task="required")
    def survey(ctx: Context) -> str:
        """Two steps, with a question between them."""
        ctx.report_progress(1, 2, "step 1")
        answer = ctx.elicit("Go on?", {"type": "object", "properties": {"go": {"type": "boolean"}}})
        ctx.report_progress(2, 2, "step 2")
        return f"surveyed: {answer['action']} go={answer.get('content', {}).get('go')}"

    @server.tool(task="required")
    def stall(ctx: Context) -> str:
        """Wait until the task is cancelled."""
        if ctx.cancelled.wait(60):
            STALL_CANCELLED.set()
            print("stall saw the cancel", file=sys.stderr, flush=True)
            return "stopped"
        return "never cancelled"

    @server.tool(task="optional")
    @starts_task_later
    def quick(ctx: Context) -> str:
        """Answered at once: it never starts its task."""
        return "at once"

    @server.tool()
    def plain(text: str) -> str:
        """Never a task."""
        return text

    return server


def go_on(params: dict) -> dict:
    return {"action": "accept", "content": {"go": True}}


class Stderr:
    """The server's stderr lines; ``saw(text)`` waits (bounded) until one holds it."""

    def __init__(self):
        self.lines, self._changed = [], threading.Condition()

    def __call__(self, line: str) -> None:
        with self._changed:
            self.lines.append(line)
            self._changed.notify_all()

    def saw(self, text: str, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: any(text in line for line in self.lines), timeout)


@contextlib.contextmanager
def stateless(transport: str, **handlers):
    """A client of :func:`make_server` over ``transport``; yields (client, saw_cancel())."""
    if transport == "stdio":
        stderr = Stderr()
        with minimcp.connect([PY, HERE, "stateless"], timeout=20, on_stderr=stderr, **handlers) as client:
            yield client, lambda: stderr.saw("stall saw the cancel")
        return
    from minimcp.server.http.wsgiserver import BackgroundServer

    STALL_CANCELLED.clear()
    server = make_server()
    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running:
            with minimcp.connect(running.url + "/mcp", timeout=20, **handlers) as client:
                yield client, lambda: STALL_CANCELLED.wait(10)
    finally:
        server.tasks.close()
        app.close()


def core(**handlers):
    """A client of the scripted 2025-11-25 server (:func:`serve_core_tasks`)."""
    return minimcp.connect([PY, HERE, "core"], timeout=20, **handlers)


# -- 2026-07-28: minimcp's own server, the tasks extension ------------------------------------------

TRANSPORTS = ["stdio", "http"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_required_task_tool_just_works_from_call_tool(transport):
    progress, wire = [], Wire()
    with stateless(transport, elicitation_handler=go_on, middleware=[wire]) as (client, _):
        assert client.era == "stateless"
        result = client.call_tool("survey", on_progress=lambda *report: progress.append(report))
        assert result.text == "surveyed: accept go=True" and not result.is_error
        assert client.call_tool("plain", {"text": "still plain"}).text == "still plain"
    # its question answered in tasks/update; its ctx.report_progress() arrives as the status messages
    assert {"tasks/get", "tasks/update"} <= set(wire.methods()) and "tasks/result" not in wire.methods()
    assert progress == [(1, None, "1/2 step 1"), (2, None, "2/2 step 2")]
    assert all("task" not in params for params in wire.calls())  # the extension: the server decides


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_timeout_cancels_the_task(transport):
    wire = Wire()
    with stateless(transport, middleware=[wire]) as (client, saw_cancel):
        started = time.monotonic()
        with pytest.raises(Timeout) as caught:
            client.call_tool("stall", timeout=0.5)
        assert time.monotonic() - started < 5  # the whole call, task included, within its timeout (+ the cancel)
        assert "did not end within 0.5s" in str(caught.value)
        assert wire.methods()[-1] == "tasks/cancel" and saw_cancel()
        task_id = [answer for method, answer in wire.answers if method == "tools/call"][0]["taskId"]
        assert client.task(task_id).refresh() == "cancelled"


def test_ctrl_c_cancels_the_task(ctrl_c):
    wire = Wire()
    with stateless("stdio", middleware=[wire]) as (client, saw_cancel):
        with pressing_ctrl_c(after=wire.answered):
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("stall")
        assert "tasks/cancel" in wire.methods() and saw_cancel()
        assert client.call_tool("plain", {"text": "alive"}).text == "alive"


def test_start_task_holds_the_servers_task_or_its_result():
    with stateless("stdio", elicitation_handler=go_on) as (client, _):
        task = client.start_task("survey")
        assert task.task_id and task.era == "stateless" and not task.done
        assert task.wait(10).text == "surveyed: accept go=True" and task.status == "completed"
        # the server may answer at once (the extension: its choice, per request): no task, the result
        at_once = client.start_task("quick")
        assert at_once.task_id is None and at_once.done and at_once.result().text == "at once"
        assert at_once.refresh() == "completed" and at_once.wait(1).text == "at once"
        at_once.cancel()  # nothing to cancel


def test_start_task_on_a_server_without_tasks_says_so():
    server = Server("no-tasks")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    with minimcp.connect("memory", server=server) as client:
        assert client.era == "stateless"
        with pytest.raises(minimcp.CapabilityError) as refused:
            client.start_task("echo", {"text": "x"})
        assert "io.modelcontextprotocol/tasks" in str(refused.value) and "call_tool()" in str(refused.value)
        assert client.call_tool("echo", {"text": "x"}).text == "x"


# -- 2025-11-25: tasks in the handshake era ----------------------------------------------------------------


def test_core_required_tool_is_called_as_a_task_with_its_progress():
    """spec 2025-11-25 tasks "Task Progress Notifications": the call's progressToken stays valid
    until the task ends, past the answer to tools/call."""
    progress, wire = [], Wire()
    with core(middleware=[wire]) as client:
        assert client.era == "handshake"
        result = client.call_tool("steps", on_progress=lambda *report: progress.append(report))
        assert result.text == "three steps"
    assert progress == [(1, 3, "one"), (2, 3, "two"), (3, 3, "three")]
    # the tool list was fetched to learn it requires a task; the call asked for one, with a token
    methods = wire.methods()
    assert methods[methods.index("initialize") + 1:][:2] == ["tools/list", "tools/call"]
    (call,) = wire.calls()
    assert call["task"] == {} and call["_meta"]["progressToken"].startswith("minimcp-task-")
    assert wire.methods()[-1] == "tasks/result"


def test_core_optional_tool_stays_a_plain_call_and_start_task_asks_for_a_task():
    wire = Wire()
    with core(middleware=[wire]) as client:
        assert client.call_tool("maybe").text == "plain maybe"
        task = client.start_task("maybe")
        assert task.task_id and task.era == "handshake"
        assert task.wait(10).text == "task maybe"
        task.cancel()  # ended: the server refuses with -32602, which is harmless
        with pytest.raises(RPCError) as unknown:
            client.task("no-such-task").cancel()
        assert unknown.value.code == -32602
        with pytest.raises(minimcp.CapabilityError):
            client.start_task("never")  # listed without taskSupport
    first, second = wire.calls()
    assert "task" not in first and second["task"] == {}


def test_core_failures_come_back_as_a_plain_call_would():
    with core() as client:
        failed = client.call_tool("fails")  # a tool error: the task "failed", its result has isError
        assert failed.is_error and failed.text == "it broke"
        with pytest.raises(RPCError) as caught:  # tasks/result answers the call's JSON-RPC error
            client.call_tool("errs")
        assert caught.value.code == -32603 and "backend down" in str(caught.value)
        task = client.start_task("stalls")
        task.cancel()
        assert task.status == "cancelled"  # (2025-11-25 answers tasks/cancel with the task)
        with pytest.raises(TaskCancelled):
            task.wait(5)


def test_core_answers_that_are_no_task_and_no_result_fail_loudly():
    """Never a task with an empty id: an answer to a call that asked for a task must hold the
    server's task or be a tool result."""
    with core() as client:
        with pytest.raises(ProtocolError) as caught:
            client.call_tool("garbage")
        assert "neither a task nor a tool result" in str(caught.value)
        with pytest.raises(ProtocolError) as caught:
            client.start_task("garbage")
        assert "neither a task nor a tool result" in str(caught.value)
        with pytest.raises(ProtocolError) as caught:
            client.start_task("nameless")
        assert "no taskId" in str(caught.value)
        assert client.call_tool("maybe").text == "plain maybe"  # the connection is fine


def test_core_timeout_with_progress_extends_up_to_max_timeout():
    with core() as client:
        ticks = []
        # a tick every 0.1 s for 1.5 s: each pushes the 0.8 s timeout on (up to max_timeout)
        assert client.call_tool("ticks", timeout=0.8, max_timeout=20,
                                on_progress=lambda *report: ticks.append(report)).text == "15 ticks"
        assert [tick[0] for tick in ticks] == list(range(1, 16))
        with pytest.raises(Timeout):
            client.call_tool("ticks", timeout=0.8)  # without max_timeout: 0.8 s in all
        assert client.request("tasks/list")["tasks"][-1]["status"] == "cancelled"


def test_core_ctrl_c_cancels_the_task(ctrl_c):
    wire = Wire()
    with core(middleware=[wire]) as client:
        with pressing_ctrl_c(after=wire.answered):
            with pytest.raises(KeyboardInterrupt):
                client.call_tool("stalls")
        assert wire.methods()[-1] == "tasks/cancel"
        assert client.request("tasks/list")["tasks"][-1]["status"] == "cancelled"


# -- the 2025-11-25 server, message by message --------------------------------------------------------------

#: name -> its execution.taskSupport (None: not said, so "forbidden")
CORE_TOOLS = {"steps": "required", "ticks": "required", "fails": "required", "errs": "required",
              "stalls": "required", "garbage": "required", "asks": "required", "nameless": "optional",
              "maybe": "optional", "never": None}


def serve_core_tasks() -> None:  # pragma: no cover (a child process)
    """A 2025-11-25 server with tasks on stdin/stdout (spec 2025-11-25 basic/utilities/tasks)."""
    import uuid

    out = threading.Lock()
    tasks = {}  # task id -> {"task": Task, "result": ..., "error": ...}
    changed = threading.Condition()

    def send(message):
        with out:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def answer(request_id, result=None, error=None):
        send({"jsonrpc": "2.0", "id": request_id, **({"error": error} if error else {"result": result})})

    def now():
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def update(task_id, status, result=None, error=None):
        with changed:
            entry = tasks[task_id]
            if entry["task"]["status"] in ("completed", "failed", "cancelled"):
                return False
            entry["task"].update(status=status, lastUpdatedAt=now())
            entry.update(result=result, error=error)
            changed.notify_all()
            task = dict(entry["task"])
        send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task})
        return True

    def cancelled(task_id):
        return tasks[task_id]["task"]["status"] == "cancelled"

    questions = {}  # the id of a request this server sent -> [answered, the answer message]

    def ask(task_id, method, params):
        question_id = f"q-{len(questions) + 1}"
        entry = questions[question_id] = [threading.Event(), None]
        meta = {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
        send({"jsonrpc": "2.0", "id": question_id, "method": method, "params": dict(params, _meta=meta)})
        entry[0].wait(30)
        return entry[1] or {"error": {"message": "no answer in 30 s"}}

    def progress(token, value, total=None, message=None):
        if token is not None:
            params = {"progressToken": token, "progress": value, "total": total, "message": message}
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    def run(task_id, name, token):
        text = lambda value: {"content": [{"type": "text", "text": value}]}  # noqa: E731
        if name == "steps":
            for number, word in enumerate(("one", "two", "three"), 1):
                progress(token, number, 3, word)
            update(task_id, "completed", text("three steps"))
        elif name == "ticks":
            for number in range(1, 16):
                time.sleep(0.1)  # (the work: this peer's pace, not a test's synchronisation)
                if cancelled(task_id):
                    return
                progress(token, number)
            update(task_id, "completed", text("15 ticks"))
        elif name == "fails":  # 2025-11-25: a result with isError makes the task "failed"
            update(task_id, "failed", dict(text("it broke"), isError=True))
        elif name == "errs":
            update(task_id, "failed", error={"code": -32603, "message": "backend down"})
        elif name == "maybe":
            update(task_id, "completed", text("task maybe"))
        elif name == "asks":  # spec 2025-11-25 tasks "Input Required Status"; a refused question: an isError result
            update(task_id, "input_required")
            reply = ask(task_id, "elicitation/create", {"message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}})
            if "error" in reply:
                update(task_id, "failed", dict(text(f"elicitation failed: {reply['error'].get('message')}"),
                                               isError=True))
            else:
                update(task_id, "completed", text(f"user said {reply['result']['content']['name']}"))
        # "stalls" works until it is cancelled

    def call_tool(request_id, params):
        name = params.get("name")
        if name not in CORE_TOOLS:
            return answer(request_id, error={"code": -32602, "message": f"unknown tool {name}"})
        if name == "garbage":
            return answer(request_id, {"hello": "world"})
        if name == "nameless":
            return answer(request_id, {"task": {"status": "working", "createdAt": now()}})
        if "task" not in params:
            if CORE_TOOLS[name] == "required":  # (as the reference server does: a tool error)
                return answer(request_id, {"content": [{"type": "text", "text": "requires a task"}], "isError": True})
            return answer(request_id, {"content": [{"type": "text", "text": f"plain {name}"}]})
        task_id = uuid.uuid4().hex
        task = {"taskId": task_id, "status": "working", "createdAt": now(), "lastUpdatedAt": now(),
                "ttl": 60000, "pollInterval": 50}
        with changed:
            tasks[task_id] = {"task": task, "result": None, "error": None}
        answer(request_id, {"task": dict(task)})
        token = (params.get("_meta") or {}).get("progressToken")
        threading.Thread(target=run, args=(task_id, name, token), daemon=True).start()

    def task_result(request_id, task_id):  # blocks until the task ends (spec "Result Retrieval")
        with changed:
            changed.wait_for(lambda: tasks[task_id]["task"]["status"] in ("completed", "failed", "cancelled"))
            entry = dict(tasks[task_id])
        if entry["error"]:
            return answer(request_id, error=entry["error"])
        if entry["task"]["status"] == "cancelled":
            return answer(request_id, error={"code": -32603, "message": "the task was cancelled"})
        result = dict(entry["result"], _meta={"io.modelcontextprotocol/related-task": {"taskId": task_id}})
        answer(request_id, result)

    capabilities = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    tools = [dict({"name": name, "inputSchema": {"type": "object"}},
                  **({"execution": {"taskSupport": support}} if support else {}))
             for name, support in CORE_TOOLS.items()]
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        message = json.loads(line)
        method, request_id, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method is None and request_id in questions:  # the answer to a question of ours
            questions[request_id][1] = message
            questions[request_id][0].set()
            continue
        if method is None or request_id is None:
            continue  # notifications (initialized, cancelled) and answers: nothing to do
        task_id = params.get("taskId")
        if method == "initialize":
            answer(request_id, {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                                "serverInfo": {"name": "core-tasks", "version": "0"}})
        elif method == "tools/list":
            answer(request_id, {"tools": tools})
        elif method == "tools/call":
            call_tool(request_id, params)
        elif method == "tasks/list":
            with changed:
                answer(request_id, {"tasks": [dict(entry["task"]) for entry in tasks.values()]})
        elif method in ("tasks/get", "tasks/result", "tasks/cancel") and task_id not in tasks:
            answer(request_id, error={"code": -32602, "message": f"Failed to retrieve task: no task {task_id}"})
        elif method == "tasks/get":
            with changed:
                answer(request_id, dict(tasks[task_id]["task"]))
        elif method == "tasks/result":
            threading.Thread(target=task_result, args=(request_id, task_id), daemon=True).start()
        elif method == "tasks/cancel":
            if update(task_id, "cancelled"):
                with changed:
                    answer(request_id, dict(tasks[task_id]["task"]))
            else:
                status = tasks[task_id]["task"]["status"]
                answer(request_id, error={"code": -32602, "message": f"Cannot cancel task in terminal status: {status}"})
        else:  # server/discover (the era probe) included: this is a 2025-11-25 server
            answer(request_id, error={"code": -32601, "message": "Method not found"})


if __name__ == "__main__":
    if sys.argv[1:] == ["core"]:
        serve_core_tasks()
    else:
        make_server().run()
