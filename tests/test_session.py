"""The thread engine, both ends in one process over the in-memory transport.

These drive two bare Sessions (no MCP client or server on top), so each
test is about one mechanism: correlation, errors, cancellation, progress,
batches, and the end of the stream.
"""

import queue
import signal
import threading
import time

import pytest

from minimcp.engine.session import Session
from minimcp.errors import ConnectionClosed, RPCError, Timeout
from minimcp.protocol import jsonrpc
from minimcp.transports import memory


@pytest.fixture
def pair():
    """Two started sessions, ``a`` and ``b``, joined by a memory pipe; closed after."""
    end_a, end_b = memory.pair()
    a = Session(end_a, name="a", timeout=5)
    b = Session(end_b, name="b", timeout=5)
    a.start()
    b.start()
    yield a, b
    a.close()
    b.close()


def test_requests_go_both_ways(pair):
    a, b = pair
    a.handlers["whoami"] = lambda params, ctx: {"me": "a", "got": params}
    b.handlers["whoami"] = lambda params, ctx: {"me": "b", "got": params}
    assert a.request("whoami", {"x": 1}) == {"me": "b", "got": {"x": 1}}
    assert b.request("whoami") == {"me": "a", "got": {}}


def test_ping_is_answered_by_both_sides(pair):
    """spec basic/utilities/ping: the receiver MUST respond promptly with an empty result."""
    a, b = pair
    assert a.request("ping") == {} and b.request("ping") == {}


def test_errors_come_back_as_rpc_errors_and_the_session_lives_on(pair):
    a, b = pair

    def refuse(params, ctx):
        raise RPCError(jsonrpc.INVALID_PARAMS, "bad thing", {"field": "x"})

    b.handlers["refuse"] = refuse
    b.handlers["crash"] = lambda params, ctx: 1 / 0
    b.handlers["not_json"] = lambda params, ctx: {"value": object()}
    b.handlers["nan"] = lambda params, ctx: {"value": float("nan")}
    circular = {}
    circular["self"] = circular
    b.handlers["circular"] = lambda params, ctx: circular
    with pytest.raises(RPCError) as info:
        a.request("refuse")
    assert (info.value.code, info.value.message, info.value.data) == (-32602, "bad thing", {"field": "x"})
    with pytest.raises(RPCError) as info:
        a.request("crash")
    assert info.value.code == jsonrpc.INTERNAL_ERROR and "division by zero" in info.value.message
    for method in ("not_json", "nan", "circular"):
        with pytest.raises(RPCError) as info:
            a.request(method)
        assert info.value.code == jsonrpc.INTERNAL_ERROR
    with pytest.raises(RPCError) as info:
        a.request("no/such/method")
    assert info.value.code == jsonrpc.METHOD_NOT_FOUND
    assert a.request("ping") == {}


def test_a_session_that_masks_errors_tells_its_peer_a_reference_and_logs_the_rest(pair, caplog):
    """CWE-209: with masks_errors (a server's sessions), an unexpected exception's text stays in
    the answering side's log, under the reference its peer is told."""
    a, b = pair
    b.masks_errors = True
    b.handlers["crash"] = lambda params, ctx: open("/srv-private/secret.txt")
    with pytest.raises(RPCError) as info:
        a.request("crash")
    message = info.value.message
    assert info.value.code == jsonrpc.INTERNAL_ERROR and "srv-private" not in message and "(ref " in message
    ref = message.split("(ref ", 1)[1].split(")", 1)[0]
    logged = [r for r in caplog.records if ref in r.getMessage()]
    assert logged and "srv-private" in str(logged[0].exc_info[1])
    assert a.request("ping") == {}  # and the session lives on


def test_a_handler_can_call_back_into_the_peer(pair):
    """The sampling shape: while answering, a handler asks the other side something."""
    a, b = pair
    a.handlers["question"] = lambda params, ctx: {"answer": 42}
    b.handlers["work"] = lambda params, ctx: {"peer said": ctx.session.request("question")["answer"]}
    assert a.request("work") == {"peer said": 42}


def test_many_handlers_blocked_in_callbacks_do_not_block_the_reader(pair):
    a, b = pair
    release = threading.Event()
    a.handlers["hold"] = lambda params, ctx: {"held": release.wait(10)}
    b.handlers["ask"] = lambda params, ctx: ctx.session.request("hold")
    results = []
    askers = [threading.Thread(target=lambda: results.append(a.request("ask"))) for _ in range(5)]
    for t in askers:
        t.start()
    assert b.request("ping") == {}  # the readers are free while five handlers wait
    release.set()
    for t in askers:
        t.join(10)
    assert results == [{"held": True}] * 5


def test_notifications_run_in_arrival_order(pair):
    a, b = pair
    seen = []
    done = threading.Event()

    def note(params):
        seen.append(params["n"])
        if params["n"] == 99:
            done.set()

    b.notification_handlers["notifications/n"] = note
    for n in range(100):
        a.notify("notifications/n", {"n": n})
    assert done.wait(5)
    assert seen == list(range(100))


def test_progress_reaches_the_callback_and_can_extend_the_timeout(pair):
    """spec basic/utilities/progress: progressToken in _meta; progress notifications reference it."""
    a, b = pair

    def slow(params, ctx):
        for i in range(6):
            ctx.cancelled.wait(0.15)  # a slow job that keeps reporting
            ctx.report_progress(i + 1, 6, f"step {i + 1}")
        return {"done": True, "token": ctx.progress_token}

    b.handlers["slow"] = slow
    reports = []
    result = a.request("slow", timeout=0.5, max_timeout=10, on_progress=lambda *r: reports.append(r))
    assert result["done"] and result["token"] is not None
    with pytest.raises(Timeout):
        a.request("slow", timeout=0.5)  # no max_timeout: progress does not extend it
    a.close()
    assert reports == [(i, 6, f"step {i}") for i in range(1, 7)]


def test_a_paused_timeout_stops_while_we_answer_the_peers_question_and_goes_on_after(pair):
    """Session.timeout_paused: a request's clock stops while this side answers the peer's
    question about it (a person at an elicitation), and goes on from there after."""
    a, b = pair
    person = threading.Event()  # set at the end: till then, waiting on it is a person slower than the timeout
    pausing = {}  # the id of the request a's question handler pauses ("all": every one; None: none)

    def question(params, ctx):
        request_id = pausing.get("id")
        if request_id is None:
            person.wait(0.6)
        else:
            with a.timeout_paused() if request_id == "all" else a.timeout_paused(request_id):
                person.wait(0.6)
        return {"name": "Ada"}

    def job(params, ctx):
        answer = b.request("question", timeout=10)
        if params.get("then_hang"):
            ctx.cancelled.wait(10)
        return {"got": answer}

    a.handlers["question"] = question
    b.handlers["job"] = job
    pausing["id"] = request_id = a.new_request_id()
    assert a.request("job", timeout=0.4, request_id=request_id) == {"got": {"name": "Ada"}}
    pausing["id"] = "all"  # none named: every request waiting now
    assert a.request("job", timeout=0.4) == {"got": {"name": "Ada"}}

    pausing["id"] = request_id = a.new_request_id()  # after the pause, the rest of its time
    started = time.monotonic()
    with pytest.raises(Timeout):
        a.request("job", {"then_hang": True}, timeout=0.4, request_id=request_id)
    assert time.monotonic() - started >= 0.6 + 0.4

    pausing["id"] = None  # not paused: the person's 0.6 s outlast the request's timeout
    with pytest.raises(Timeout):
        a.request("job", timeout=0.4)
    person.set()  # (the person answers at last: b's handler ends before the sessions close)
    with a.timeout_paused(12345):  # an unknown id: nothing to pause
        pass


def test_a_pause_of_every_request_covers_those_sent_during_it_and_max_timeout_bounds_it(pair):
    a, b = pair
    arrived, gate = threading.Event(), threading.Event()

    def slow(params, ctx):
        arrived.set()
        gate.wait(10)
        return {"ok": True}

    b.handlers["slow"] = slow
    answers = []
    with a.timeout_paused():  # (none in flight yet: the request below is sent during the pause)
        sender = threading.Thread(target=lambda: answers.append(a.request("slow", timeout=0.5)))
        sender.start()
        assert arrived.wait(5)
        threading.Event().wait(0.8)  # the pause outlasts the request's timeout
    gate.set()
    sender.join(10)
    assert answers == [{"ok": True}]

    arrived.clear()
    gate.clear()
    request_id = a.new_request_id()
    failed = []

    def bounded():
        try:
            a.request("slow", timeout=0.3, max_timeout=0.6, request_id=request_id)
        except Timeout as exc:
            failed.append(exc)

    sender = threading.Thread(target=bounded)
    started = time.monotonic()
    sender.start()
    assert arrived.wait(5)
    with a.timeout_paused(request_id):  # a pause longer than max_timeout: max_timeout ends it
        sender.join(10)
    assert failed and time.monotonic() - started < 5
    gate.set()


def test_a_pause_after_progress_stops_the_progress_clock_too_and_a_pause_is_entered_once(pair):
    a, b = pair
    person = threading.Event()  # set at the end: till then, waiting on it is a person

    def question(params, ctx):
        with a.timeout_paused():
            person.wait(0.8)  # longer than the timeout
        return {"name": "Ada"}

    def job(params, ctx):
        for step in range(4):  # progress keeps the call alive past its timeout ...
            ctx.report_progress(step + 1, 4)
            ctx.cancelled.wait(0.2)
        return {"got": b.request("question", timeout=10)}  # ... then the person's pause stops that clock

    a.handlers["question"] = question
    b.handlers["job"] = job
    assert a.request("job", timeout=0.5, max_timeout=10, on_progress=lambda *report: None) == {"got": {"name": "Ada"}}
    person.set()
    paused = a.timeout_paused()
    with paused:
        with pytest.raises(RuntimeError, match="running already"):
            paused.__enter__()


def test_report_progress_without_a_token_sends_nothing(pair):
    a, b = pair
    b.handlers["quiet"] = lambda params, ctx: (ctx.report_progress(1, 2), {"token": ctx.progress_token})[1]
    seen = []
    a.notification_handlers["notifications/progress"] = seen.append
    assert a.request("quiet") == {"token": None}
    a.close()
    assert seen == []


def test_timeout_cancels_at_the_peer_and_the_late_answer_is_dropped(pair):
    """spec basic/utilities/cancellation: the receiver stops, and sends no response."""
    a, b = pair
    started, cancelled = threading.Event(), threading.Event()

    def wait(params, ctx):
        started.set()
        if ctx.cancelled.wait(10):
            cancelled.set()
        return {"late": True}

    b.handlers["wait"] = wait
    with pytest.raises(Timeout, match="wait"):
        a.request("wait", timeout=0.2)
    assert started.is_set() and cancelled.wait(5)
    assert a.request("ping") == {}


def test_ctrl_c_while_waiting_cancels_at_the_peer(pair, ctrl_c):
    a, b = pair
    started, cancelled, interrupted = threading.Event(), threading.Event(), threading.Event()

    def wait(params, ctx):
        started.set()
        if ctx.cancelled.wait(10):
            cancelled.set()
        return {}

    def on_ctrl_c(signum, frame):  # one KeyboardInterrupt, however many presses
        if not interrupted.is_set():
            interrupted.set()
            raise KeyboardInterrupt

    def press_ctrl_c():
        # A signal that lands just before the main thread blocks waits until the
        # wait ends (CPython handles signals between bytecodes; only a signal during
        # a wait interrupts it): so press again until it takes, as a user would.
        started.wait(5)
        for _ in range(50):
            signal.pthread_kill(main, signal.SIGINT)
            if interrupted.wait(0.1):
                return

    b.handlers["wait"] = wait
    signal.signal(signal.SIGINT, on_ctrl_c)  # (the ctrl_c fixture puts the old handler back)
    main = threading.get_ident()
    interrupter = threading.Thread(target=press_ctrl_c)
    interrupter.start()
    with pytest.raises(KeyboardInterrupt):
        a.request("wait", timeout=10)
    interrupter.join()
    assert cancelled.wait(5)


def test_end_of_stream_fails_pending_requests_at_once(pair):
    a, b = pair
    entered = threading.Event()
    b.handlers["hang"] = lambda params, ctx: entered.set() or ctx.cancelled.wait(10) and {}
    failure = []
    caller = threading.Thread(target=lambda: failure.append(pytest.raises(ConnectionClosed, a.request, "hang")))
    caller.start()
    assert entered.wait(5)
    b.close()  # the peer goes away while a waits
    caller.join(5)
    assert not caller.is_alive() and failure
    with pytest.raises(ConnectionClosed):
        a.request("ping")


def test_close_is_idempotent_and_fails_new_requests(pair):
    a, _ = pair
    a.close()
    a.close()
    with pytest.raises(ConnectionClosed):
        a.request("ping")
    with pytest.raises(ConnectionClosed):
        a.notify("notifications/anything")


def test_duplicate_in_flight_id_is_refused():
    """spec basic/index: a request id MUST NOT be reused while it is in flight."""
    end, peer_end = memory.pair()
    release = threading.Event()
    session = Session(peer_end)
    session.handlers["hold"] = lambda params, ctx: {"released": release.wait(5)}
    session.start()
    try:
        end.write(jsonrpc.Request(1, "hold"))
        end.write(jsonrpc.Request(1, "hold"))
        first = end.read()
        assert type(first) is jsonrpc.ErrorResponse and first.code == jsonrpc.INVALID_REQUEST
        release.set()
        assert end.read().result == {"released": True}
    finally:
        end.close()
        session.close()


def test_batches_are_refused_unless_allowed():
    """spec 2025-03-26 basic/index: batches MUST be accepted; other versions have none."""
    end, peer_end = memory.pair()
    allowed = []
    session = Session(peer_end, batches=lambda: bool(allowed))
    session.handlers["echo"] = lambda params, ctx: params
    session.start()
    try:
        end.write([jsonrpc.Request(1, "echo", {"n": 1})])
        refused = end.read()
        assert type(refused) is jsonrpc.ErrorResponse and refused.code == jsonrpc.INVALID_REQUEST
        allowed.append(True)
        end.write([jsonrpc.Request(1, "echo", {"n": 1}), jsonrpc.Notification("notifications/x"),
                   jsonrpc.Request(2, "nope"), jsonrpc.Request(3, "echo", {"n": 3})])
        replies = end.read()
        assert type(replies) is list
        assert sorted((r.id, getattr(r, "result", None) or r.code) for r in replies) == [
            (1, {"n": 1}), (2, jsonrpc.METHOD_NOT_FOUND), (3, {"n": 3})]
        end.write([jsonrpc.Notification("notifications/only")])  # nothing to answer
        end.write(jsonrpc.Request(4, "ping"))
        assert end.read().id == 4
    finally:
        end.close()
        session.close()


def test_session_repr_says_what_it_is(pair):
    a, _ = pair
    assert "Session a open" in repr(a)
    a.close()
    assert "closed" in repr(a)


def test_no_thread_survives_close(pair):
    a, b = pair
    a.handlers["x"] = lambda params, ctx: {}
    b.request("x")
    a.notify("notifications/y")
    names = {t.name.split("-")[1] for t in threading.enumerate() if t.name.startswith("minimcp-")}
    assert {"reader", "handler"} <= names
    a.close()
    b.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("minimcp-")]


@pytest.mark.parametrize("note", [
    {"method": "notifications/cancelled", "params": {"requestId": [1]}},
    {"method": "notifications/cancelled", "params": {"requestId": {}}},
    {"method": "notifications/progress", "params": {"progressToken": [1], "progress": 1}},
])
def test_a_notification_naming_an_unhashable_id_is_ignored_and_the_session_lives_on(pair, note):
    """A request id read from the wire may be any JSON value; a bad one must not kill the reader."""
    a, b = pair
    b.handlers["echo"] = lambda params, ctx: params
    a.transport.write(jsonrpc.Notification(note["method"], note["params"]))
    assert a.request("echo", {"n": 1}) == {"n": 1}
    assert not b.closed


def test_a_batch_whose_one_result_is_not_json_still_gets_every_answer():
    """The batch's array is sent by its last answer; a bad result must spoil its own answer only."""
    end, peer_end = memory.pair()
    session = Session(peer_end, batches=lambda: True)
    session.handlers["bad"] = lambda params, ctx: {"value": object()}
    session.handlers["echo"] = lambda params, ctx: params
    session.start()
    try:
        for batch in ([jsonrpc.Request(1, "bad")], [jsonrpc.Request(1, "bad"), jsonrpc.Request(2, "echo", {"n": 2})]):
            end.write(batch)
            replies = end.read()
            assert type(replies) is list and len(replies) == len(batch)
            by_id = {r.id: r for r in replies}
            assert by_id[1].code == jsonrpc.INTERNAL_ERROR and "JSON" in by_id[1].message
            if 2 in by_id:
                assert by_id[2].result == {"n": 2}
    finally:
        end.close()
        session.close()


def test_notifications_sent_before_an_answer_have_run_before_the_call_returns(pair):
    """What the peer sent before its answer (progress, logs) reaches its callbacks, and they
    have returned, before the request that the answer is for returns."""
    a, b = pair

    def chatty(params, ctx):
        for i in range(5):
            ctx.report_progress(i + 1, 5)
            ctx.session.notify("notifications/message", {"data": i})
        return {}

    b.handlers["chatty"] = chatty
    logs, progress = [], []

    def slow_log(params):
        time.sleep(0.001)  # (a callback with some work to do: the reader outruns it)
        logs.append(params["data"])

    a.notification_handlers["notifications/message"] = slow_log
    for call in range(30):
        assert a.request("chatty", on_progress=lambda p, t, m: progress.append(p)) == {}
        assert logs[-5:] == list(range(5)) and len(logs) == 5 * (call + 1), f"call {call}: {logs}"
        assert progress[-5:] == [1, 2, 3, 4, 5] and len(progress) == 5 * (call + 1), f"call {call}"


def test_a_callback_may_wait_for_an_answer_read_behind_other_notifications(pair):
    """A notification callback that makes a request (and so waits on the dispatcher's own
    thread) gets its answer: it does not wait for the callbacks queued behind itself."""
    a, b = pair
    answers = queue.Queue()
    b.handlers["poke"] = lambda params, ctx: (ctx.session.notify("notifications/poked"),
                                              ctx.session.notify("notifications/later"), {})[2]
    a.notification_handlers["notifications/poked"] = lambda params: answers.put(a.request("ping", timeout=5))
    a.notification_handlers["notifications/later"] = lambda params: None
    assert a.request("poke") == {}
    assert answers.get(timeout=10) == {}


def test_a_request_id_reused_right_after_its_answer_is_served():
    """A peer that reuses an id once it has its answer (some clients always send id 1)
    is served, even while the old request's answer is still being written."""

    class SlowToFinishWrites(memory.MemoryTransport):
        """A real memory end whose writes return only once the session has taken in the next
        message (it reads again): the window between an answer leaving and its request being
        over, held open."""

        def __init__(self, inbox, outbox):
            super().__init__(inbox, outbox)
            self.next_read = threading.Event()

        def read(self):
            self.next_read.set()
            message = super().read()
            if message is None:  # the end of the stream lets the last write return too
                self.next_read.set()
            return message

        def write(self, message, related_to=None):
            self.next_read.clear()
            super().write(message, related_to)
            self.next_read.wait(5)

    end, plain = memory.pair()
    slow = SlowToFinishWrites(plain._inbox, plain._outbox)
    session = Session(slow)
    session.handlers["echo"] = lambda params, ctx: params
    session.start()
    try:
        for n in range(3):
            end.write(jsonrpc.Request(1, "echo", {"n": n}))
            reply = end.read()
            assert type(reply) is jsonrpc.Response and reply.result == {"n": n}, reply
    finally:
        end.close()
        session.close()
