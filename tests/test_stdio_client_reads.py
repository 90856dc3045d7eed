"""A stdio client's callers read their own answers (``engine.reading.SharedReading``): real child
processes, real pipes.

A caller that finds nobody reading reads until its answer comes, so a call costs no wake-up
of the reader thread; the reader thread reads for callers that gave the reading up, and
between calls. These tests check each of those turns, and that nothing is lost at a turn.
"""

import os
import queue
import signal
import sys
import textwrap
import threading

import pytest

import minimcp
from minimcp.engine import reading

from conftest import PY, TESTING_SERVER


def start_testing_server(*args, **kwargs):
    return minimcp.connect([PY, TESTING_SERVER, *args], **kwargs)


def voluntary_switches(threads):
    """How often ``threads`` have blocked so far, in all (Linux: their /proc status)."""
    total = 0
    for thread in threads:
        with open(f"/proc/self/task/{thread.native_id}/status") as status:
            total += next(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches:"))
    return total


def wait_for_line(lines, start):
    """Take stderr lines from ``lines`` until one starts with ``start`` (bounded)."""
    for _ in range(100):
        if lines.get(timeout=10).startswith(start):
            return
    raise AssertionError(f"no stderr line starting {start!r}")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="per-thread counts are read from Linux's /proc")
@pytest.mark.parametrize("listening", [False, True], ids=["plain", "a-listen-held-open"])
def test_sequential_calls_do_not_wake_the_reader_thread(listening):
    """The hand-off this saves: a reader thread that read every answer blocked once per call
    (it waited in a read, and was woken by each answer). Now no other thread is woken per
    call (the reader thread only looks, a tick apart), and a request that waits all along
    (the 2026-07-28 listen a list_changed callback holds open, on a thread of its own) does
    not change that: its thread does not read for the calls either."""
    calls = 300
    with start_testing_server(on_tools_changed=(lambda: None) if listening else None) as client:
        # Warm up past CALLER_WAIT: until then the listen is a call that may still be answered
        # soon, and if it found the reading taken, the reader thread reads for it.
        warm_until = reading.time.monotonic() + 3 * reading.CALLER_WAIT
        for _ in range(5000):
            client.call_tool("echo", {"text": "warm"})
            if reading.time.monotonic() > warm_until:
                break
        others = [thread for thread in threading.enumerate() if thread is not threading.current_thread()]
        before = voluntary_switches(others)
        started = reading.time.monotonic()
        for i in range(calls):
            assert client.call_tool("echo", {"text": str(i)}).text == str(i)
        elapsed = reading.time.monotonic() - started
        woken = voluntary_switches(others) - before
    # One wake-up per tick at most, and a third of the old one per call to spare: the bound
    # grows with a slow machine's ticks, and still fails a reader woken by every answer.
    assert woken < calls / 3 + elapsed / reading.TICK, (woken, elapsed)


def test_a_caller_that_found_the_reading_taken_gets_its_answer_read_once_the_reader_goes(monkeypatch):
    """A caller reads (for its 0.5 s call, CALLER_WAIT raised so it never gives up); a second
    call, made meanwhile, finds the reading taken and waits. Its answer comes after the
    first's, when the first caller has stopped reading: with the reader thread's tick an hour,
    only the wake the first caller gives as it goes can get it read."""
    monkeypatch.setattr(reading, "CALLER_WAIT", 30.0)
    monkeypatch.setattr(reading, "TICK", 3600.0)
    lines: queue.Queue = queue.Queue()
    with start_testing_server(on_stderr=lines.put, timeout=15) as client:
        first = queue.Queue()
        reader = threading.Thread(target=lambda: first.put(
            client.call_tool("wait_for_cancel", {"seconds": 0.5}).text))
        reader.start()
        wait_for_line(lines, "waiting ")  # the first call runs
        assert client.call_tool("wait_for_cancel", {"seconds": 1.0}).text == "finished"
        reader.join(15)
        assert first.get(timeout=1) == "finished"


def test_a_caller_reads_the_answers_of_the_others_while_it_waits_for_its_own(monkeypatch):
    """wait_for_echo answers only once the echo sent behind it has run: its caller, reading
    (CALLER_WAIT raised, so it never gives up; the reader thread's tick an hour, so only a
    caller reads), reads the echo's answer first and hands it to the other caller."""
    monkeypatch.setattr(reading, "CALLER_WAIT", 30.0)
    monkeypatch.setattr(reading, "TICK", 3600.0)
    lines: queue.Queue = queue.Queue()
    with start_testing_server(on_stderr=lines.put) as client:
        slow = queue.Queue()
        waiter = threading.Thread(target=lambda: slow.put(
            client.call_tool("wait_for_echo", {"text": "behind"}, timeout=20).text))
        waiter.start()
        wait_for_line(lines, "waiting for behind")  # the waiter's call runs: it holds the reading
        assert client.call_tool("echo", {"text": "behind"}, timeout=20).text == "behind"
        waiter.join(20)
        assert slow.get(timeout=1) == "seen"


def test_a_notification_between_calls_reaches_its_callback():
    """Nobody calls after add_tool_later: the reader thread's looks between calls read the
    notifications/tools/list_changed that comes 50 ms after the answer."""
    changed = threading.Event()
    with start_testing_server(on_tools_changed=changed.set) as client:
        assert client.call_tool("add_tool_later", {"name": "late", "ms": 50}).text == "later"
        assert changed.wait(10)
        assert "late" in [tool.name for tool in client.list_tools()]


HALVES_SERVER = textwrap.dedent('''
    import json, sys, time
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "halves", "version": "1"}}
        else:
            result = {"content": [{"type": "text", "text": "x" * 1000}], "isError": False}
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode() + b"\\n"
        if message["method"] == "tools/call":  # half now, half once the caller has given up
            sys.stdout.buffer.write(data[:500])
            sys.stdout.flush()
            time.sleep(float(sys.argv[1]))
            data = data[500:]
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
''')


def test_half_a_message_read_by_a_caller_that_gives_up_is_kept(tmp_path):
    """The server writes half an answer, then the rest after CALLER_WAIT: the caller reads the
    half and gives up the reading; the reader thread reads the rest, and the answer is whole."""
    script = tmp_path / "halves.py"
    script.write_text(HALVES_SERVER)
    with minimcp.connect([PY, str(script), str(reading.CALLER_WAIT * 5)], timeout=10) as client:
        for _ in range(2):
            assert client.call_tool("any", {}).text == "x" * 1000


@pytest.mark.skipif(sys.platform == "win32", reason="pthread_kill")
def test_ctrl_c_while_a_caller_reads_cancels_the_call_and_the_client_lives_on(ctrl_c, monkeypatch):
    """A KeyboardInterrupt in the middle of the caller's read (CALLER_WAIT raised, so it is
    still reading): the call is cancelled at the server, the reading is let go, and the next
    call is answered."""
    monkeypatch.setattr(reading, "CALLER_WAIT", 30.0)
    lines: queue.Queue = queue.Queue()
    interrupted = threading.Event()

    def on_ctrl_c(signum, frame):  # one KeyboardInterrupt, however many presses
        if not interrupted.is_set():
            interrupted.set()
            raise KeyboardInterrupt

    main = threading.get_ident()

    def press_ctrl_c():
        # Once the call runs at the server, its caller is reading. A signal that lands just
        # before the caller blocks waits until it blocks no more (CPython handles signals
        # between bytecodes): so press until it takes, as a user would.
        wait_for_line(lines, "waiting ")
        for _ in range(100):
            signal.pthread_kill(main, signal.SIGINT)
            if interrupted.wait(0.1):
                return

    with start_testing_server(on_stderr=lines.put) as client:
        signal.signal(signal.SIGINT, on_ctrl_c)  # (the ctrl_c fixture puts the old handler back)
        interrupter = threading.Thread(target=press_ctrl_c)
        interrupter.start()
        with pytest.raises(KeyboardInterrupt):
            client.call_tool("wait_for_cancel", {"seconds": 30}, timeout=30)
        interrupter.join()
        wait_for_line(lines, "cancelled ")
        assert client.call_tool("echo", {"text": "alive"}).text == "alive"


CLOSES_STDOUT_SERVER = textwrap.dedent('''
    import json, os, sys, time
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "tools/call":  # close stdout, and live on
            sys.stdout.close()
            os.close(1)
            time.sleep(30)
        if message["method"] == "initialize":
            answer = {"result": {"protocolVersion": message["params"]["protocolVersion"],
                                 "capabilities": {"tools": {}}, "serverInfo": {"name": "closes-stdout", "version": "1"}}}
        else:
            answer = {"error": {"code": -32601, "message": "Method not found"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}) + "\\n")
        sys.stdout.flush()
''')


def test_a_server_that_closes_its_stdout_and_lives_on_holds_no_call_past_its_timeout(tmp_path):
    """The caller reads the end of the stream; waiting for the child's exit (to say how it
    ended) is the reader thread's, so the call still ends at its timeout."""
    script = tmp_path / "closes_stdout.py"
    script.write_text(CLOSES_STDOUT_SERVER)
    with minimcp.connect([PY, str(script)], timeout=10) as client:
        started = reading.time.monotonic()
        with pytest.raises((minimcp.Timeout, minimcp.ConnectionClosed)):
            client.call_tool("any", {}, timeout=0.5)
        assert reading.time.monotonic() - started < 1.5  # (the exit wait alone is 1 s)
