"""The resumption event store is bounded in bytes, per session and in all, oldest first (issue 29).

A resume whose events were dropped is refused with 404 (spec 2025-11-25 basic/transports
"Resumability and Redelivery": the server MAY replay; it never replays with a hole), and a
connection attached to a stream gets every event whatever the store kept.
"""

import json
import threading

import requests

from minimcp import Context, Server
from minimcp.server.http import MemoryEventStore
from minimcp.server.http.streams import HTTPSessionTransport
from minimcp.server.http.wsgiserver import BackgroundServer

ACCEPT = "application/json, text/event-stream"
MiB = 1024 * 1024


def make_server() -> Server:
    server = Server("event-store-test")

    @server.tool()
    def big(size: int, ctx: Context) -> str:
        """Log a line (so the answer is an SSE stream), then return `size` bytes of text."""
        ctx.log("info", "working")
        return "x" * size

    return server


class Session:
    """A 2025-11-25 session driven with requests, to see the SSE events and their ids."""

    def __init__(self, url: str) -> None:
        self.url = url + "/mcp"
        self.headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        first = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        self.headers.update({"Mcp-Session-Id": first.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.post({"jsonrpc": "2.0", "id": -1, "method": "logging/setLevel", "params": {"level": "info"}})

    def post(self, message: dict) -> requests.Response:
        return requests.post(self.url, data=json.dumps(message), headers=self.headers, timeout=30)

    def call_big(self, request_id: int, size: int):
        """tools/call big over SSE: (the priming event's id, the result's text)."""
        answer = self.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                            "params": {"name": "big", "arguments": {"size": size}}})
        assert answer.headers["Content-Type"] == "text/event-stream"
        return events(answer.content)

    def resume(self, last_event_id: str) -> requests.Response:
        return requests.get(self.url, headers={**self.headers, "Accept": "text/event-stream",
                                               "Last-Event-ID": last_event_id}, timeout=30)


def events(body: bytes):
    """(the first event id, the text of the tools/call result) of an SSE body."""
    first_id, text = None, None
    for block in body.split(b"\n\n"):
        fields = dict(line.split(b": ", 1) for line in block.split(b"\n") if b": " in line)
        if b"id" in fields and first_id is None:
            first_id = fields[b"id"].decode()
        if fields.get(b"data"):
            message = json.loads(fields[b"data"])
            if "result" in message:
                text = message["result"]["content"][0]["text"]
    return first_id, text


def test_fifty_1mb_results_on_one_session_stay_under_its_8mib_cap():
    """Was: all 50 MB kept for the session's life (+54.5 MiB RSS). Now: at most 8 MiB; the
    newest results resume, the evicted ones get a 404 at once, and ending the session frees all."""
    app = make_server().wsgi_app()
    with BackgroundServer(app) as running:
        session = Session(running.url)
        starts = []
        for request_id in range(1, 51):
            start, text = session.call_big(request_id, MiB)
            assert text == "x" * MiB  # the live stream got it whole
            assert 0 < app.store.held_bytes <= 8 * MiB
            starts.append(start)
        newest = session.resume(starts[-1])  # the client lost the last stream after its priming event
        assert newest.status_code == 200 and events(newest.content)[1] == "x" * MiB
        oldest = session.resume(starts[0])  # its result went to make room
        assert oldest.status_code == 404
        error = oldest.json()["error"]
        assert error["code"] == -32600 and error["message"].startswith("Not Found: no stream to resume")
        odd = session.resume(starts[-1].rsplit("-", 1)[0] + "-\u00b2")  # a digit int() refuses: not a 500
        assert odd.status_code == 404
        assert requests.delete(session.url, headers=session.headers, timeout=30).status_code == 200
        assert app.store.held_bytes == 0


def test_a_result_larger_than_the_cap_reaches_the_live_client_but_is_not_kept():
    app = make_server().wsgi_app(event_store=MemoryEventStore(max_session_bytes=64 * 1024))
    with BackgroundServer(app) as running:
        session = Session(running.url)
        start, text = session.call_big(1, 200_000)
        assert text == "x" * 200_000
        assert app.store.held_bytes <= 64 * 1024
        assert session.resume(start).status_code == 404  # refused, not replayed without its answer


def test_the_total_cap_spans_sessions_and_evicts_the_oldest_first():
    store = MemoryEventStore(max_bytes=1000, max_session_bytes=400)
    ids = {}
    for session in ("s1", "s2", "s3"):
        for n in range(2):
            stream = f"{session}{n}"
            store.bind(stream, session)
            ids[stream] = [store.store(stream, b""), store.store(stream, b"a" * 100), store.store(stream, b"b" * 100)]
            assert store.held_bytes <= 1000
    assert store.held_bytes == 1000  # 12 events of 100 bytes: the 2 oldest (s1's first stream) went
    assert store.events_after(ids["s10"][0]) is None
    assert store.events_after(ids["s11"][0])[1] == [(ids["s11"][1], b"a" * 100), (ids["s11"][2], b"b" * 100)]
    store.store("s31", b"c" * 300)  # s3's cap (400): its three oldest events go, s1's are untouched
    assert store.events_after(ids["s30"][0]) is None and store.events_after(ids["s31"][0]) is None
    # A client that had the evicted "a" resumes after it: what it lacks is all there.
    assert store.events_after(ids["s31"][1])[1] == [(ids["s31"][2], b"b" * 100), ("s31-4", b"c" * 300)]
    assert store.events_after(ids["s11"][0]) is not None  # another session's: untouched
    assert store.held_bytes == 1000 - 300 + 300
    for stream in ids:
        store.forget(stream)
    assert store.held_bytes == 0


def test_a_stream_bound_to_no_session_is_bounded_alone():
    store = MemoryEventStore(max_session_bytes=250)
    for stream in ("a", "b"):
        for _ in range(5):
            store.store(stream, b"z" * 100)
    assert store.held_bytes == 400  # two events of each stream


def test_a_resume_past_the_count_bound_is_refused_not_replayed_with_a_gap():
    store = MemoryEventStore(max_events=3)
    ids = [store.store("s", b"%d" % n) for n in range(5)]
    assert store.events_after(ids[0]) is None  # event 2 is gone: the client would miss it
    assert store.events_after(ids[1]) == ("s", [(ids[2], b"2"), (ids[3], b"3"), (ids[4], b"4")])


def test_the_posts_own_connection_gets_events_the_store_dropped_before_it_attached():
    """The events that waited for the JSON-or-SSE decision, and those pushed before the POST's
    body starts, reach its connection even when the store drops them (evicted, or too big), as
    long as what waits stays within the connection's bound (the store's 300 bytes, plus one event)."""
    store = MemoryEventStore(max_session_bytes=300)
    transport = HTTPSessionTransport(store)  # a session's: its streams share max_session_bytes
    mine = transport.open_stream({1})
    mine.push(b"n" * 200)
    start = mine.switch_to_sse()
    other = transport.open_stream({2})
    other.push(b"o" * 200, response_id=2)
    other.switch_to_sse()  # the session's 400 bytes: "n" * 200 is evicted
    mine.push(b"too big to keep " * 30, response_id=1)  # 480 bytes: never kept
    chunks = list(mine.events(after=start))
    assert [chunk.split(b"data: ")[1] for chunk in chunks] == [b"n" * 200 + b"\n\n",
                                                               b"too big to keep " * 30 + b"\n\n"]
    assert store.held_bytes <= 300 and store.events_after(start) is None
    transport.close()
    assert store.held_bytes == 0


# -- What waits for one connection is bounded too (the queue of a client that reads slowly) -------------


def data_of(chunks):
    """The data of each SSE event among ``chunks``."""
    return [chunk.split(b"data: ", 1)[1][:-2] for chunk in chunks if b"data: " in chunk]


def test_a_connection_that_stops_reading_is_ended_once_its_queue_passes_the_bound(caplog):
    """Was: every event went on into the queue of a connection that had stopped reading (100 KiB here,
    no bound at all). Now: at most the bound plus one event waits, then the connection is ended (its
    events() stops), the warning names the stream once, and its queue's memory is freed."""
    store = MemoryEventStore(max_session_bytes=4096)
    stream = HTTPSessionTransport(store).open_stream({1})
    stream.push(b"first")
    start = stream.switch_to_sse()
    reader = stream.events(after=start)  # the POST's own connection: reads one event, then stalls
    assert data_of([next(reader)]) == [b"first"]
    with caplog.at_level("WARNING", logger="minimcp.server.http.streams"):
        for n in range(100):
            stream.push(b"%04d" % n + b"x" * 1020)  # 1 KiB each
            assert stream.queued_bytes <= 4096 + 1024
        stream.push(b"the answer", response_id=1)
    assert list(reader) == []  # ended: what it missed is the store's to replay (here: evicted, a 404)
    assert stream.queued_bytes == 0 and store.events_after(start) is None
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and stream.id in warnings[0] and "max_session_bytes" in warnings[0]


def test_a_posts_stream_never_read_is_dropped_past_the_bound_and_its_connection_replays_from_the_store():
    """The POST's own queue, filled before its connection reads a byte, is bounded the same way; the
    connection that comes later reads the store (which kept what fits), not an unbounded queue."""
    store = MemoryEventStore(max_session_bytes=4096)
    stream = HTTPSessionTransport(store).open_stream({1})
    stream.push(b"first")
    start = stream.switch_to_sse()
    for n in range(100):
        stream.push(b"%04d" % n + b"x" * 1020)
    stream.push(b"the answer", response_id=1)
    assert list(stream.events(after=start)) == []  # the store dropped "first": refused, not a gap
    assert stream.queued_bytes == 0
    seq = int(stream.last_id.rsplit("-", 1)[1])  # the answer's; the store kept 0097 to it (4 KiB)
    resumed = stream.events(after=f"{stream.id}-{seq - 3}")  # a client that had 0097
    assert data_of(list(resumed)) == [b"0098" + b"x" * 1020, b"0099" + b"x" * 1020, b"the answer"]


def test_an_http_client_that_stops_reading_has_its_stream_ended_and_a_404_to_resume(caplog):
    """Over real sockets: the client reads the headers of a POST's SSE answer and stops; the tool
    logs 16 MiB. Was: the server queued it all for that client (and sent it all, then the result).
    Now: the stream ends once more than 256 KiB wait unsent; the client, reading again, finds the
    end of the body (no gap in it, no result), and its resume is a 404 (the store has moved on)."""
    bound = 256 * 1024
    flooded = threading.Event()
    server = Server("slow-reader")

    @server.tool()
    def flood(count: int, ctx: Context) -> str:
        """Log `count` lines of 1 KiB, then answer."""
        for n in range(count):
            ctx.log("info", "%06d" % n + "y" * 1018)
        flooded.set()
        return "all sent"

    app = server.wsgi_app(event_store=MemoryEventStore(max_session_bytes=bound))
    with caplog.at_level("WARNING", logger="minimcp.server.http.streams"), BackgroundServer(app) as running:
        session = Session(running.url)
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "flood", "arguments": {"count": 16 * 1024}}}
        answer = requests.post(session.url, data=json.dumps(message), headers=session.headers,
                               timeout=30, stream=True)
        try:
            assert answer.headers["Content-Type"] == "text/event-stream"
            assert flooded.wait(30)  # (the client has read nothing but the headers)
            body = answer.raw.read()  # to the end of the body: it ends, without the result
        finally:
            answer.close()
        ids = [line[4:].decode() for line in body.split(b"\n") if line.startswith(b"id: ")]
        assert b"all sent" not in body and len(body) < 16 * MiB
        stream_id = ids[0].rsplit("-", 1)[0]
        assert ids == [f"{stream_id}-{n}" for n in range(1, len(ids) + 1)]  # what came, came whole
        assert session.resume(ids[-1]).status_code == 404
        warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
        assert len([text for text in warnings if stream_id in text]) == 1


# -- The server ends a response itself: what came after waits for the connection that resumes -----------


def close_after_eviction():
    """A POST's stream the server ends after "b" (ctx.close_sse_stream()) while its connection is
    writing "a"; "c" and the answer come after, and the store evicts "a" to "c" (300 bytes a session).
    Returns (transport, stream, what the closed connection sent, the id it ended after)."""
    store = MemoryEventStore(max_session_bytes=300)
    transport = HTTPSessionTransport(store)
    stream = transport.open_stream({1})
    stream.push(b"a" * 10)
    start = stream.switch_to_sse()
    reader = stream.events(after=start)
    sent = [next(reader)]  # it writes this while the rest comes
    stream.push(b"b" * 10)
    closed_at = stream.last_id
    stream.close_by_server()
    stream.push(b"c" * 100)
    other = transport.open_stream({2})
    other.push(b"o" * 300, response_id=2)
    other.switch_to_sse()  # the session's 300 bytes: a, b and c are evicted
    stream.push(b"r" * 10, response_id=1)
    sent += list(reader)
    assert store.events_after(closed_at) is None  # the store cannot replay "c"
    return transport, stream, sent, closed_at


def test_events_after_a_server_close_reach_the_resuming_connection_though_the_store_dropped_them():
    """Was: the events queued after close_after were dropped with the closed connection's queue, so
    the resume got them from the store or not at all (here: evicted, nothing). Now they are handed
    to the connection that resumes after the close, as the POST's own connection's are."""
    transport, stream, sent, closed_at = close_after_eviction()
    assert data_of(sent) == [b"a" * 10, b"b" * 10]  # the response ends after "b"
    assert data_of(list(stream.events(after=closed_at))) == [b"c" * 100, b"r" * 10]
    assert stream.queued_bytes == 0
    transport.close()


def test_the_session_names_the_stream_holding_events_after_a_close_for_the_resuming_get():
    """What the app's GET asks when the store refuses a Last-Event-ID (the handoff is taken once)."""
    transport, stream, _, closed_at = close_after_eviction()
    assert transport.handed_over(closed_at) is stream and transport.handed_over("elsewhere-1") is None
    list(stream.events(after=closed_at))
    assert transport.handed_over(closed_at) is None
    transport.close()
