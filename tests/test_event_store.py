"""The resumption event store is bounded in bytes, per session and in all, oldest first (issue 29).

A resume whose events were dropped is refused with 404 (spec 2025-11-25 basic/transports
"Resumability and Redelivery": the server MAY replay; it never replays with a hole), and a
connection attached to a stream gets every event whatever the store kept.
"""

import json

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
    body starts, reach its connection even when the store drops them (evicted, or too big)."""
    store = MemoryEventStore(max_session_bytes=300)
    transport = HTTPSessionTransport(store)  # a session's: its streams share max_session_bytes
    mine = transport.open_stream({1})
    mine.push(b"too big to keep " * 30)  # 480 bytes: never kept
    start = mine.switch_to_sse()
    mine.push(b"n" * 200)
    other = transport.open_stream({2})
    other.push(b"o" * 200, response_id=2)
    other.switch_to_sse()  # the session's 400 bytes: "n" * 200 is evicted
    mine.push(b"r" * 10, response_id=1)
    chunks = list(mine.events(after=start))
    assert [chunk.split(b"data: ")[1] for chunk in chunks] == [b"too big to keep " * 30 + b"\n\n",
                                                               b"n" * 200 + b"\n\n", b"r" * 10 + b"\n\n"]
    assert store.held_bytes <= 300 and store.events_after(start) is None
    transport.close()
    assert store.held_bytes == 0
