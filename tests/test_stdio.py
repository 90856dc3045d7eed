"""The stdio transport end to end: real child processes, real pipes.

spec basic/transports "stdio": one JSON-RPC message per line; the server
writes nothing but MCP messages to stdout; the client shuts a server down
by closing stdin, then SIGTERM, then SIGKILL.
"""

import json
import os
import queue
import subprocess
import threading
import time

import pytest

import minimcp

from conftest import PY, ROOT, TESTING_SERVER, RawServer


def start_testing_server(*args, **kwargs):
    return minimcp.connect([PY, TESTING_SERVER, *args], **kwargs)


@pytest.fixture
def raw():
    server = RawServer(TESTING_SERVER)
    yield server
    if server.proc.poll() is None:
        server.close()


def call(id, name, arguments):
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


# -- bad input to a stdio server -------------------------------------------------------


def test_malformed_json_gets_parse_error_and_the_next_request_is_answered(raw):
    """spec basic/index + JSON-RPC 2.0 §5.1: invalid JSON is answered with -32700 (id null)."""
    raw.initialize()
    raw.send("{this is not json")
    reply = raw.recv()
    assert reply["error"]["code"] == -32700 and reply["id"] is None
    raw.send(call(1, "echo", {"text": "still here"}))
    assert raw.recv()["result"]["content"][0]["text"] == "still here"


@pytest.mark.parametrize("message, id_back", [
    ({"id": 5, "method": "ping"}, 5),                                        # no "jsonrpc"
    ({"jsonrpc": "1.0", "id": 6, "method": "ping"}, 6),
    ({"jsonrpc": "2.0", "id": 7, "method": 42}, 7),
    ({"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1, 2]}, 8),
    ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),               # null id
    ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),               # bool id
    ([1, 2, 3], None),                                                      # batch, not 2025-03-26
    ("just a string", None),
])
def test_wrong_jsonrpc_shape_gets_invalid_request(raw, message, id_back):
    """spec basic/index: ids are strings or integers, never null; a wrong shape is -32600."""
    raw.initialize()
    raw.send(json.dumps(message))
    reply = raw.recv()
    assert reply["error"]["code"] == -32600
    assert reply["id"] == id_back
    raw.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert raw.recv() == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_unknown_method_gets_method_not_found(raw):
    raw.initialize()
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"})
    reply = raw.recv()
    assert reply["id"] == 1 and reply["error"]["code"] == -32601


def test_wrong_argument_types_give_an_is_error_result(raw):
    """spec 2025-11-25 server/tools "Error Handling": input validation errors are tool results."""
    raw.initialize()
    raw.send(call(1, "add", {"a": "one", "b": 2}))
    result = raw.recv()["result"]
    assert result["isError"] is True
    assert "'a'" in result["content"][0]["text"] and "expected integer" in result["content"][0]["text"]
    raw.send(call(2, "add", {"a": 1}))
    result = raw.recv()["result"]
    assert result["isError"] is True and "missing required argument 'b'" in result["content"][0]["text"]


def test_unknown_tool_is_a_protocol_error(raw):
    """spec server/tools "Error Handling": an unknown tool is a JSON-RPC error."""
    raw.initialize()
    raw.send(call(1, "nope", {}))
    assert raw.recv()["error"]["code"] == -32602


def test_request_before_initialize_gets_an_error(raw):
    """spec basic/lifecycle: the client sends initialize first; a legacy request before it is refused."""
    raw.send(call(1, "echo", {"text": "hi"}))
    reply = raw.recv()
    assert reply["id"] == 1 and reply["error"]["code"] == -32600
    assert "initialize" in reply["error"]["message"]
    assert raw.initialize()["result"]["protocolVersion"] == "2025-11-25"


def test_modern_requests_need_no_initialize(raw):
    """spec 2026-07-28 basic: a request with _meta version and capabilities is served on its own."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "stateless"}, "_meta": meta}})
    result = raw.recv()["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "stateless"
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
              "params": {"_meta": dict(meta, **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})}})
    error = raw.recv()["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                             "requested": "2099-01-01"}


def test_tool_that_raises_or_prints_leaves_the_stream_clean(raw):
    """spec basic/transports: the server MUST NOT write anything to stdout that is not an MCP message."""
    raw.initialize()
    raw.send(call(1, "noisy", {"text": "quiet"}))
    raw.send(call(2, "fail", {"message": "boom"}))
    raw.send(call(3, "refuse", {"message": "no way"}))
    replies = {r["id"]: r["result"] for r in (raw.recv(), raw.recv(), raw.recv())}
    assert replies[1]["content"][0]["text"] == "quiet" and replies[1]["isError"] is False
    assert replies[2]["isError"] is True and "boom" in replies[2]["content"][0]["text"]
    assert replies[3] == {"content": [{"type": "text", "text": "no way"}], "isError": True}
    code, rest = raw.close()
    assert code == 0 and rest == b""  # nothing but the three replies ever reached stdout


def test_server_exits_zero_on_stdin_eof_without_traceback():
    server = RawServer(TESTING_SERVER)
    server.initialize()
    server.proc.stdin.close()
    assert server.proc.wait(10) == 0
    err = server.proc.stderr.read()
    server.proc.stdout.close()
    server.proc.stderr.close()
    assert b"Traceback" not in err


def test_pipelined_requests_after_eof_are_all_answered():
    """A request already read when stdin closes still gets its answer before exit."""
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             call(1, "echo", {"text": "a"}), call(2, "echo", {"text": "b"})]
    out = subprocess.run([PY, TESTING_SERVER], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                         capture_output=True, timeout=20)
    replies = sorted((json.loads(line) for line in out.stdout.splitlines()), key=lambda r: r["id"])
    assert [r["id"] for r in replies] == [0, 1, 2]
    assert replies[2]["result"]["content"][0]["text"] == "b"
    assert out.returncode == 0


# -- the client side ------------------------------------------------------------------


def test_command_not_found_fails_at_once():
    started = time.monotonic()
    with pytest.raises(FileNotFoundError, match="no-such-mcp-server"):
        minimcp.connect(["no-such-mcp-server", "--stdio"])
    assert time.monotonic() - started < 2


def test_server_that_exits_before_the_handshake_reports_its_exit_code_and_stderr():
    code = "import sys; sys.stderr.write('config file missing\\n'); sys.exit(7)"
    with pytest.raises(minimcp.ConnectionClosed) as info:
        minimcp.connect([PY, "-c", code], timeout=10)
    assert info.value.exit_code == 7
    assert "config file missing" in info.value.stderr_tail
    assert "exited with code 7" in str(info.value)


def test_server_killed_mid_call_fails_every_caller_fast():
    with start_testing_server() as client:
        errors: queue.Queue = queue.Queue()

        def wait_forever():
            try:
                client.call_tool("wait_for_cancel", {"seconds": 30})
            except Exception as exc:
                errors.put(exc)

        waiters = [threading.Thread(target=wait_forever) for _ in range(3)]
        for t in waiters:
            t.start()
        started = time.monotonic()
        with pytest.raises(minimcp.ConnectionClosed) as info:
            client.call_tool("crash", {"code": 3})
        assert time.monotonic() - started < 10  # not the calls' 60 s timeout (a loaded machine is slow, not 60 s)
        for t in waiters:
            t.join(5)
        failures = [errors.get(timeout=1) for _ in waiters]
        assert all(isinstance(e, minimcp.ConnectionClosed) for e in failures)
        assert info.value.exit_code == 3 and "about to crash" in info.value.stderr_tail
        with pytest.raises(minimcp.ConnectionClosed):  # later calls fail at once too
            client.call_tool("echo", {"text": "anyone?"})


def test_concurrent_calls_from_many_threads_are_matched():
    """8 threads × 200 calls on one client: every answer belongs to its request."""
    with start_testing_server() as client:
        mismatches = []

        def worker(n):
            for i in range(200):
                text = f"{n}-{i}"
                if client.call_tool("echo", {"text": text}).text != text:
                    mismatches.append(text)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert mismatches == []


# -- the thread that reads a call runs it: the reading goes on all the same (engine.reading.Readers) --


@pytest.fixture
def all_quick():
    server = RawServer(TESTING_SERVER, "--all-quick")
    yield server
    if server.proc.poll() is None:
        server.close()


def test_a_tool_that_calls_sys_exit_is_answered_and_the_server_serves_on(all_quick):
    """Every request read is answered: sys.exit() on a handler thread would end the thread and
    leave the call unanswered (its client timing out). Twice: the first call of a kind is handed
    off, the next (every kind is quick: --all-quick) runs on the reading thread."""
    all_quick.initialize()
    for request_id in (1, 2):
        all_quick.send(call(request_id, "leave", {"code": 3}))
        error = all_quick.recv()["error"]
        assert error["code"] == -32603 and "sys.exit(3)" in error["message"], error
    all_quick.send(call(3, "echo", {"text": "still here"}))
    assert all_quick.recv()["result"]["content"][0]["text"] == "still here"
    code, rest = all_quick.close()
    assert code == 0 and rest == b""


def test_a_call_that_waits_for_the_next_line_gets_it_read(all_quick):
    """The reading thread runs a quick kind of call itself, keeping the reading; this one is
    quick at first (what it waits for came already), then slow once (it waits for the echo sent
    right behind it): the watch lets the reading go for it. (--all-quick: on a loaded machine
    even the quick ones may take longer than QUICK, and be handed off.)"""
    raw = all_quick
    raw.initialize()
    raw.send(call(1, "echo", {"text": "early"}))
    assert raw.recv()["id"] == 1
    for i in range(4):  # quick ones first: the kind is timed, and the watch is ticking by now
        raw.send(call(i + 2, "wait_for_echo", {"text": "early"}))
        assert raw.recv()["result"]["content"][0]["text"] == "seen"
    raw.send(call(10, "wait_for_echo", {"text": "right behind"}))
    raw.send(call(11, "echo", {"text": "right behind"}))
    replies = {reply["id"]: reply["result"]["content"][0]["text"] for reply in (raw.recv(), raw.recv())}
    assert replies == {10: "seen", 11: "right behind"}


def test_pipelined_calls_shorter_than_a_tick_still_run_at_once(raw):
    """Only quick kinds of request run on the reading thread: eight pipelined 4 ms naps (under
    the watch's tick, over QUICK) are each handed a reading thread, so they overlap; run on
    the reader one after another, as a queue of them once was, they never would."""
    raw.initialize()
    for i in range(3):  # the nap's kind is timed first (and the watch is ticking)
        raw.send(call(i + 1, "nap", {"ms": 4}))
        assert raw.recv()["id"] == i + 1
    for i in range(8):
        raw.send(call(10 + i, "nap", {"ms": 4}))
    most = max(raw.recv()["result"]["structuredContent"]["result"] for _ in range(8))
    assert most >= 2


def test_a_call_that_asks_the_client_lets_the_reading_go_at_once(tmp_path):
    """With the watch slowed to an hour, only let_go() can hand the reading on: a tool asking
    for the client's roots gets them, mid-call, and the next call is answered. (--all-quick: a
    round trip to the client may take longer than QUICK, and the call would be handed off. In
    2026-07-28 a tool asks by returning, and the client calls again with the answer.)"""
    with start_testing_server("--slow-watch", "--all-quick", roots=[str(tmp_path)],
                              protocol="2025-11-25") as client:
        for _ in range(3):
            assert client.call_tool("roots_count", {}, timeout=10).structured == {"result": 1}
        assert client.call_tool("echo", {"text": "still reading"}).text == "still reading"


def test_timeout_sends_cancelled_and_the_handler_sees_it():
    """spec basic/lifecycle "Timeouts": on timeout the sender SHOULD send notifications/cancelled."""
    lines: queue.Queue = queue.Queue()
    with start_testing_server(on_stderr=lines.put) as client:
        with pytest.raises(minimcp.Timeout):
            client.call_tool("wait_for_cancel", {"seconds": 30}, timeout=0.3)
        deadline = time.monotonic() + 10
        seen = []
        while time.monotonic() < deadline:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            seen.append(line)
            if line.startswith("cancelled "):
                break
        assert seen[-1].startswith("cancelled "), seen
        assert client.call_tool("echo", {"text": "alive"}).text == "alive"


def test_non_json_banner_on_stdout_is_skipped():
    with start_testing_server("--banner") as client:
        assert client.call_tool("echo", {"text": "after banner"}).text == "after banner"


def test_twenty_megabyte_result():
    with start_testing_server() as client:
        result = client.call_tool("big", {"size": 20_000_000}, timeout=60)
        assert len(result.text) == 20_000_000


def test_env_is_merged_over_ours_and_cwd_is_used(tmp_path):
    code = ("import os, sys; from minimcp import Server; s = Server('env');"
            "s.add_tool(lambda: os.environ.get('MY_VAR', '') + '|' + str(bool(os.environ.get('PATH'))) + '|' + os.getcwd(), name='info');"
            "s.run()")
    with minimcp.connect([PY, "-c", code], env={"MY_VAR": "hello", "PYTHONPATH": ROOT}, cwd=str(tmp_path)) as client:
        my_var, has_path, cwd = client.call_tool("info").text.split("|")
    assert (my_var, has_path, os.path.realpath(cwd)) == ("hello", "True", os.path.realpath(str(tmp_path)))


def test_progress_notifications_reach_the_callback():
    progress = []
    with start_testing_server() as client:
        result = client.call_tool("count", {"n": 5}, on_progress=lambda p, t, m: progress.append((p, t, m)))
        assert result.text == "counted 5"
    # Callbacks run on the dispatcher in arrival order; close() joined it, so all are in.
    assert progress == [(i, 5, f"step {i}") for i in range(1, 6)]


def test_every_progress_report_has_reached_the_callback_when_call_tool_returns():
    """The progress a server sent before its result runs its callback before the call returns."""
    with start_testing_server() as client:
        for call_number in range(30):
            progress = []
            client.call_tool("count", {"n": 5}, on_progress=lambda p, t, m: progress.append(p))  # noqa: B023 (used in this iteration)
            assert progress == [1, 2, 3, 4, 5], f"call {call_number}: {progress}"


def test_close_stops_a_server_that_ignores_stdin_eof():
    """spec basic/lifecycle "Shutdown": close stdin, wait, SIGTERM, then SIGKILL."""
    code = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
            "sys.stdin.close(); time.sleep(60)")
    from minimcp.transports.child import SubprocessTransport
    transport = SubprocessTransport([PY, "-c", code], shutdown_timeout=0.3)
    started = time.monotonic()
    transport.close()
    assert transport.process.returncode == -9  # SIGKILL was needed
    assert time.monotonic() - started < 5


def test_closing_takes_the_servers_own_children_with_it(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys; from minimcp import Server;"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            f"open({str(pid_file)!r}, 'w').write(str(p.pid));"
            "s = Server('parent'); s.add_tool(lambda: 'ok', name='ok'); s.run()")
    with minimcp.connect([PY, "-c", code], env={"PYTHONPATH": ROOT}) as client:
        assert client.call_tool("ok").text == "ok"
        grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.02)
    assert not _alive(grandchild)


def test_a_server_whose_parent_dies_exits_though_its_stdin_stays_open():
    """A client that dies without closing the server's stdin (here the test holds the pipe open)
    is noticed by its pid: the server exits within about a second, its stdout then ends."""
    import select
    import signal

    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    parent_code = ("import subprocess, sys; "
                   f"p = subprocess.Popen([sys.executable, {TESTING_SERVER!r}], stdin={stdin_r}, stdout={stdout_w}, "
                   f"pass_fds=({stdin_r}, {stdout_w})); print(p.pid, flush=True); sys.stdin.read()")
    parent = subprocess.Popen([PY, "-c", parent_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              pass_fds=(stdin_r, stdout_w))
    os.close(stdin_r)
    os.close(stdout_w)
    server_pid = int(parent.stdout.readline())
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        os.write(stdin_w, json.dumps(request).encode() + b"\n")
        answer = b""
        while b"\n" not in answer:  # serving (its watch has read the parent's pid): now orphan it
            assert select.select([stdout_r], [], [], 10)[0], "no answer to initialize"
            answer += os.read(stdout_r, 65536)
        assert json.loads(answer)["id"] == 1
        parent.kill()
        parent.wait(10)
        ended = False
        deadline = time.monotonic() + 10
        while not ended and time.monotonic() < deadline:  # (each read wakes on data or the end)
            if select.select([stdout_r], [], [], deadline - time.monotonic())[0]:
                ended = os.read(stdout_r, 65536) == b""
        assert ended, "the orphaned server did not exit"
    finally:
        os.close(stdin_w)
        os.close(stdout_r)
        parent.stdin.close()
        parent.stdout.close()
        if _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_trace_prints_every_message_with_its_direction(capfd):
    with start_testing_server(trace=True) as client:
        client.call_tool("echo", {"text": "traced"})
    err = capfd.readouterr().err
    assert 'client → testing_server.py  {"jsonrpc":"2.0","id":1,"method":"server/discover"' in err
    assert "client ← testing_server.py  " in err and '"traced"' in err


def test_writing_to_a_server_that_has_exited_says_how_it_ended():
    """A write that meets a broken pipe reports the exit code and stderr, as end of stream does:
    a server that dies at once loses the race to our first write (the handshake) often enough."""
    from minimcp.protocol import jsonrpc
    from minimcp.transports.child import SubprocessTransport

    code = "import sys; sys.stderr.write('config file missing\\n'); sys.exit(7)"
    transport = SubprocessTransport([PY, "-c", code])
    try:
        transport.process.wait(10)
        with pytest.raises(minimcp.ConnectionClosed) as info:
            for _ in range(100):  # the first write may still fit in the pipe's buffer
                transport.write(jsonrpc.Request(1, "ping"))
        assert info.value.exit_code == 7 and "config file missing" in info.value.stderr_tail
    finally:
        transport.close()
