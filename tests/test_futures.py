"""``Client.submit_tool_call``: a tool call as a standard ``concurrent.futures.Future``, against
real servers: a stdio child, Streamable HTTP (BackgroundServer) in this process.

The calls that must be in flight together meet at a barrier in the server, so a client that
sent them one at a time fails (the barrier breaks) instead of passing slowly. What the server
saw of a cancel, it says on its stderr (stdio) or sets an Event (in this process).
"""

import os
import subprocess
import sys
import threading
from concurrent.futures import CancelledError, Future, as_completed, wait

import pytest

import minimcp
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "servers"))
import tasks_server  # noqa: E402

TASKS_SERVER = os.path.join(ROOT, "tests", "servers", "tasks_server.py")
TEN = 10

SERVER = f'''
import sys, threading
from minimcp import Context, Server

server = Server("futures-test")
together = threading.Barrier({TEN}, timeout=20)


@server.tool()
def meet(i: int) -> str:
    """Wait until {TEN} calls are here at once."""
    together.wait()
    return f"met {{i}}"


@server.tool()
def slow(tag: str, ctx: Context) -> str:
    """Wait to be cancelled (60 s at most), saying so on stderr."""
    print(f"{{tag}} started", file=sys.stderr, flush=True)
    if ctx.cancelled.wait(60):
        print(f"{{tag}} saw the cancel", file=sys.stderr, flush=True)
        return "stopped"
    return "never cancelled"


go = threading.Event()


@server.tool()
def after_go(text: str) -> str:
    """Answer once the tool go was called (20 s at most)."""
    return text if go.wait(20) else "no go"


@server.tool(name="go")
def go_tool() -> str:
    """Let after_go answer."""
    go.set()
    return "went"


@server.tool()
def echo(text: str) -> str:
    """Say it back, and on stderr."""
    print(f"echo {{text}}", file=sys.stderr, flush=True)
    return text


server.run()
'''


class Stderr:
    """The server's stderr lines; ``wait_for(text)`` until one holds it (bounded)."""

    def __init__(self) -> None:
        self.lines = []
        self._changed = threading.Condition()

    def __call__(self, line: str) -> None:
        with self._changed:
            self.lines.append(line)
            self._changed.notify_all()

    def wait_for(self, text: str, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: any(text in line for line in self.lines), timeout)


@pytest.fixture
def server_file(tmp_path):
    path = tmp_path / "futures_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return str(path)


def connect(server_file, stderr=None, **options):
    return minimcp.connect([PY, server_file], timeout=20, on_stderr=stderr or Stderr(), **options)


def meet_server() -> minimcp.Server:
    server = minimcp.Server("futures-http")
    together = threading.Barrier(TEN, timeout=20)

    @server.tool()
    def meet(i: int) -> str:
        """Wait until ten calls are here at once."""
        together.wait()
        return f"met {i}"

    return server


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_ten_calls_at_once_to_a_stdio_server_come_back_through_as_completed(server_file, protocol):
    with connect(server_file, protocol=protocol) as client:
        submitted = {client.submit_tool_call("meet", {"i": i}): i for i in range(TEN)}
        assert all(isinstance(future, Future) for future in submitted)
        texts = {submitted[future]: future.result().text for future in as_completed(submitted, timeout=30)}
    assert texts == {i: f"met {i}" for i in range(TEN)}


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_ten_calls_at_once_over_http(protocol):
    app = meet_server().wsgi_app()
    try:
        with BackgroundServer(app) as running, minimcp.connect(running.url + "/mcp", timeout=20,
                                                               protocol=protocol) as client:
            submitted = [client.submit_tool_call("meet", {"i": i}) for i in range(TEN)]
            done, not_done = wait(submitted, timeout=30)
            assert not not_done
            assert sorted(future.result().text for future in done) == sorted(f"met {i}" for i in range(TEN))
    finally:
        app.close()


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_cancel_of_a_call_in_flight_reaches_the_tool(server_file, protocol):
    """spec basic/utilities/cancellation: the receiver of notifications/cancelled stops the work."""
    stderr = Stderr()
    with connect(server_file, stderr, protocol=protocol) as client:
        future = client.submit_tool_call("slow", {"tag": "one"})
        assert stderr.wait_for("one started")
        assert not future.running()  # (in flight, yet cancellable: see ToolCallFuture)
        assert future.cancel() is True
        assert future.cancelled() and future.done()
        assert list(as_completed([future], timeout=5)) == [future]
        with pytest.raises(CancelledError):
            future.result(timeout=5)
        assert stderr.wait_for("one saw the cancel")
        assert future.cancel() is True  # again: still cancelled
        assert client.call_tool("echo", {"text": "alive"}).text == "alive"


def test_cancel_over_http_reaches_the_tool():
    """spec basic/utilities/cancellation over Streamable HTTP (a session: 2025-11-25). A 2026-07-28
    call answered in its POST's own body has no stream to close: the how-to says so."""
    started, saw = threading.Event(), threading.Event()
    server = minimcp.Server("cancel-http")

    @server.tool()
    def slow(ctx: minimcp.Context) -> str:
        """Wait to be cancelled."""
        started.set()
        if ctx.cancelled.wait(30):
            saw.set()
        return "stopped"

    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running, minimcp.connect(running.url + "/mcp", timeout=20,
                                                               protocol="2025-11-25") as client:
            future = client.submit_tool_call("slow")
            assert started.wait(10)
            assert future.cancel() and future.cancelled()
            assert saw.wait(10)
    finally:
        app.close()


def test_a_call_cancelled_before_its_turn_is_never_sent(server_file, monkeypatch):
    from minimcp.client import futures

    monkeypatch.setattr(futures, "CALL_THREADS", 1)  # one call in flight; the next waits its turn
    stderr = Stderr()
    with connect(server_file, stderr) as client:
        running = client.submit_tool_call("slow", {"tag": "first"})
        queued = client.submit_tool_call("echo", {"text": "queued"})
        assert stderr.wait_for("first started")
        assert queued.cancel() and queued.cancelled()
        assert running.cancel()
        assert stderr.wait_for("first saw the cancel")
        assert client.call_tool("echo", {"text": "after"}).text == "after"
    assert not any("echo queued" in line for line in stderr.lines)


def test_a_timeout_fails_the_future_and_cancels_at_the_server(server_file):
    """spec basic/lifecycle "Timeouts": a request given up on is cancelled."""
    stderr = Stderr()
    with connect(server_file, stderr) as client:
        future = client.submit_tool_call("slow", {"tag": "late"}, timeout=0.5)
        assert isinstance(future.exception(timeout=20), minimcp.Timeout)
        assert not future.cancelled()
        assert stderr.wait_for("late saw the cancel")


def test_closing_the_client_fails_the_pending_futures(server_file, monkeypatch):
    from minimcp.client import futures

    monkeypatch.setattr(futures, "CALL_THREADS", 2)  # two in flight, one queued
    stderr = Stderr()
    client = connect(server_file, stderr)
    try:
        pending = [client.submit_tool_call("slow", {"tag": f"c{i}"}) for i in range(3)]
        assert stderr.wait_for("c0 started") and stderr.wait_for("c1 started")
    finally:
        client.close()
    for future in pending:
        assert isinstance(future.exception(timeout=10), minimcp.ConnectionClosed)
    late = client.submit_tool_call("echo", {"text": "too late"})
    assert isinstance(late.exception(timeout=0), minimcp.ConnectionClosed)
    assert not [t for t in threading.enumerate() if t.name.startswith("minimcp-")]  # every call thread joined


def test_done_callbacks_run_when_the_answer_comes_and_when_cancelled(server_file):
    seen = []
    called = threading.Event()

    def done(future):
        outcome = "cancelled" if future.cancelled() else future.result().text
        seen.append((outcome, threading.current_thread().name.startswith("minimcp-")))
        called.set()

    with connect(server_file) as client:
        future = client.submit_tool_call("after_go", {"text": "hello"})
        future.add_done_callback(done)
        assert client.call_tool("go").text == "went"
        assert called.wait(10)
        assert seen == [("hello", True)]  # on the call thread that read the answer
        after = []
        future.add_done_callback(after.append)  # added once done: runs at once, here
        assert after == [future]
        seen.clear()
        called.clear()
        slow = client.submit_tool_call("slow", {"tag": "cb"})
        slow.add_done_callback(done)
        slow.cancel()
        assert called.wait(10) and seen == [("cancelled", False)]  # on the thread that cancelled


def test_cancelling_a_call_the_server_runs_as_a_task_cancels_the_task():
    """The tasks extension (SEP-2663): a Future cancelled while its call is a task sends tasks/cancel."""
    tasks_server.SAW_CANCEL.clear()
    tasks_server.WORK_STARTED.clear()
    polling = threading.Event()

    def watch(request, call_next):  # the call polls its task: the client holds the task's id
        if request.outgoing and request.method == "tasks/get":
            polling.set()
        return call_next(request)

    server = tasks_server.make_server()
    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running, minimcp.connect(running.url + "/mcp", timeout=20,
                                                               middleware=[watch]) as client:
            future = client.submit_tool_call("work", {"seconds": 60})
            assert tasks_server.WORK_STARTED.wait(10) and polling.wait(10)
            assert future.cancel()
            assert tasks_server.SAW_CANCEL.wait(10)
    finally:
        server.tasks.close()
        app.close()


def test_concurrent_futures_is_imported_only_by_the_first_submitted_call(server_file):
    code = f"""
import sys
import minimcp
client = minimcp.connect([sys.executable, {server_file!r}])
assert client.call_tool("echo", {{"text": "x"}}).text == "x"
before = "concurrent.futures" in sys.modules
assert client.submit_tool_call("echo", {{"text": "y"}}).result(10).text == "y"
print(before, "concurrent.futures" in sys.modules)
client.close()
"""
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_every_submitted_call_finishes_however_many_wait(tmp_path):
    """The script's own calls are queued, never dropped: more than a server's pool would queue
    (WorkerPool's default bound) all finish once the tool lets them."""
    from minimcp.engine.threads import MAX_QUEUED

    release = threading.Event()
    server = minimcp.Server("many")

    @server.tool()
    def hold(n: int) -> int:
        """Wait for the test, then return n."""
        release.wait(30)
        return n

    with minimcp.connect("memory", server=server) as client:
        futures = [client.submit_tool_call("hold", {"n": n}) for n in range(MAX_QUEUED + 100)]
        release.set()
        done, not_done = wait(futures, timeout=60)
        assert not not_done
        assert sorted(int(f.result().text) for f in done) == list(range(MAX_QUEUED + 100))
