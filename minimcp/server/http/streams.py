"""Server-Sent Events for the HTTP server: the wire format, streams, and the event store.

spec basic/transports "Streamable HTTP" (2025-03-26 on; resumption in the handshake era): a POST
that carries a request is answered with JSON or with an SSE stream that
carries messages about that request and then its response; a GET opens a
standalone stream for everything else. Each message on a stream is an SSE
event with an ``id``; a client whose connection dropped sends
``Last-Event-ID`` on a GET and the events after it are replayed (2025-11-25
"resumability"), then the stream goes on live.

An :class:`OutStream` is one *logical* stream: messages are pushed to it by
the session, whichever HTTP connection (the POST's, or a resuming GET's)
happens to be attached. In SSE mode every message is stored in the
:class:`EventStore` as it is pushed, so a connection reads "everything after
the last id I sent" whether the event is new or replayed. A connection attached
to the stream gets each new event from the stream itself, not from the store,
so the store's bounds (which may drop an event, or not keep one too big) cost
only resumption, never a live client a message. What waits for one connection is
bounded too (``OutStream.max_queue_bytes``): a client that reads more slowly than
the server writes has its connection ended, and resumes with ``Last-Event-ID``
from what the store still has (or gets the 404 a replay with a gap would be).
"""

import collections
import os
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from ...engine.transport import Transport
from ...logs import get_logger
from ...protocol import jsonrpc
from ...protocol.jsonrpc import ErrorResponse, Response

if TYPE_CHECKING:
    from logging import Logger

    from ...protocol.jsonrpc import RequestId

log: "Logger" = get_logger(__name__)

# Stream ids: 64 random bits, as in secrets.token_hex(8), but from a generator of our own, seeded
# from os.urandom once (and again in a forked worker): no os.urandom() system call, which lets the GIL
# go, a POST. Not the shared `random` generator: a tool's random.seed() would repeat the ids, and the
# event store (one per app) would mix two sessions' events under one.
_STREAM_IDS = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_STREAM_IDS.seed)

#: Seconds between ``: keepalive`` comments on an idle stream; writing them is
#: also how a vanished client is noticed, so its thread is freed.
KEEPALIVE_SECONDS = 15.0
#: What a GET stream with no event to send at once starts with, so its headers go out now: the
#: built-in server, like any WSGI server (PEP 3333), sends them with the first non-empty bytes.
OPENING = b": stream open\n\n"
#: Seconds a second GET waits for the one holding the standalone stream to find its client gone.
TAKEOVER_WAIT = 1.0
#: Seconds the events a POST's SSE answer starts with wait for that POST's connection to take
#: them (``OutStream.switch_to_sse``): it does so as soon as its headers are written, so this
#: only bounds what is held for a client that left at once (the store still has them).
HANDOFF_SECONDS = 10.0
#: Seconds between two looks at an idle stream's socket, where the server lends it (``gone``):
#: a client that left frees its thread within this, and a stopping server is not held for
#: the next keepalive (one poll each, no write).
GONE_POLL_SECONDS = 1.0


def format_event(data: bytes, event_id: Optional[str] = None, event: str = "message",
                 retry_ms: Optional[int] = None) -> bytes:
    """One SSE event, ready to write.

    ``data`` is one line of UTF-8: a message as ``jsonrpc.encode`` made it
    (never re-encoded here, so what stdio would send is what goes out).
    """
    fields = []
    if event_id is not None:
        fields.append(f"id: {event_id}\n")
    if retry_ms is not None:
        fields.append(f"retry: {retry_ms}\n")
    if event:
        fields.append(f"event: {event}\n")
    return "".join(fields).encode("utf-8") + b"data: " + data + b"\n\n"


class EventStore:
    """Where SSE events are kept for resumption. Subclass it to keep them elsewhere (Redis, say).

    Event ids name their stream, so ``events_after(last_id)`` can tell which
    stream to replay: only that one (spec: never replay other streams' messages).
    An event's data is the bytes of one message as ``jsonrpc.encode`` made it,
    or ``b""`` for the mark a stream starts after.

    The store is for *resumption* only: a connection that is attached to a stream gets each
    event from the stream itself, so a store may drop events (to stay in its bounds) without
    a live client missing any.
    """

    def store(self, stream_id: str, data: bytes) -> str:
        """Keep one event of ``stream_id`` and return its new, unique event id."""
        raise NotImplementedError

    def events_after(self, event_id: str) -> Optional[Tuple[str, List[Tuple[str, bytes]]]]:
        """The stream ``event_id`` belongs to and *all* its events after it, or ``None`` if the
        stream is unknown or some event after ``event_id`` is no longer kept (a replay with a
        gap would lose a message silently; ``None`` makes the resuming GET a 404)."""
        raise NotImplementedError

    def forget(self, stream_id: str) -> None:
        """Drop a stream's events (its session ended)."""

    def bind(self, stream_id: str, session: str) -> None:
        """Say that ``stream_id`` belongs to ``session`` (an opaque key), before its first event,
        so a store can bound what one session keeps. The default ignores it."""


#: The default bounds of a :class:`MemoryEventStore`, in bytes of event data.
MAX_STORE_BYTES = 64 * 1024 * 1024
MAX_SESSION_BYTES = 8 * 1024 * 1024
#: Bytes of events one connection may have waiting (not yet written to its client) where the
#: event store has no ``max_session_bytes`` to go by (see ``OutStream.max_queue_bytes``).
MAX_QUEUE_BYTES = 8 * 1024 * 1024


class _Group:
    """The events one session keeps in a :class:`MemoryEventStore`, oldest first."""

    __slots__ = ("key", "bytes", "order", "streams")

    def __init__(self, key: Optional[str]) -> None:
        self.key = key  # None: a stream bound to no session is a group of its own
        self.bytes = 0
        self.order: collections.OrderedDict[Tuple[str, int], int] = collections.OrderedDict()
        self.streams = 0


class _Kept:
    """One stream's events in a :class:`MemoryEventStore`."""

    __slots__ = ("events", "seq", "dropped", "group")

    def __init__(self, group: _Group) -> None:
        self.events: Deque[Tuple[int, bytes]] = collections.deque()
        self.seq = 0  # the last event's number
        self.dropped = 0  # the newest event number no longer kept (0: none)
        self.group = group


class MemoryEventStore(EventStore):
    """A bounded in-memory :class:`EventStore`, bounded by count and by bytes.

    Past a bound the oldest events go first. A resuming client whose ``Last-Event-ID``
    is followed by an event no longer kept gets ``None`` from :meth:`events_after` (the
    app answers 404): never a replay with a hole in it. An event larger than a byte bound
    is not kept at all (a connection attached to its stream still gets it).

    Args:
        max_events: events kept per stream.
        max_streams: streams kept (the least recently written go first).
        max_bytes: bytes of event data kept in all.
        max_session_bytes: bytes of event data kept for one session (see :meth:`bind`;
            a stream bound to none is bounded alone). It also bounds what one connection
            may have waiting, unsent (``OutStream.max_queue_bytes``).

    ``held_bytes`` is the event data kept now, in bytes.
    """

    def __init__(self, max_events: int = 1000, max_streams: int = 10_000, *, max_bytes: int = MAX_STORE_BYTES,
                 max_session_bytes: int = MAX_SESSION_BYTES) -> None:
        self.max_events = max_events
        self.max_streams = max_streams
        self.max_bytes = max_bytes
        self.max_session_bytes = max_session_bytes
        #: Bytes of event data held now (the sum of every kept event's length).
        self.held_bytes: int = 0
        self._streams: collections.OrderedDict[str, _Kept] = collections.OrderedDict()
        self._groups: Dict[str, _Group] = {}
        # Every kept non-empty event, oldest first: what max_bytes evicts. (Empty events, the
        # marks streams start after, cost no bytes and go by the count bounds alone.)
        self._order: collections.OrderedDict[Tuple[str, int], int] = collections.OrderedDict()
        self._lock = threading.Lock()

    def bind(self, stream_id: str, session: str) -> None:
        """Count ``stream_id``'s events in ``session``'s bytes (``max_session_bytes``)."""
        with self._lock:
            if stream_id in self._streams:
                return  # it has events already: it stays bounded alone
            group = self._groups.get(session)
            if group is None:
                group = self._groups[session] = _Group(session)
            self._open(stream_id, group)

    def store(self, stream_id: str, data: bytes) -> str:
        """Keep one event; evict the oldest events or streams past the bounds."""
        size = len(data)
        with self._lock:
            kept = self._streams.get(stream_id)
            if kept is None:
                kept = self._open(stream_id, _Group(None))
            else:
                self._streams.move_to_end(stream_id)
            kept.seq += 1
            seq = kept.seq
            if size > self.max_session_bytes or size > self.max_bytes:
                kept.dropped = seq  # never kept: a resume from before it is refused, not a gap
                return f"{stream_id}-{seq}"
            kept.events.append((seq, data))
            group = kept.group
            if size:
                key = (stream_id, seq)
                self._order[key] = group.order[key] = size
                group.bytes += size
                self.held_bytes += size
            if len(kept.events) > self.max_events:
                self._evict(stream_id, kept.events[0][0])
            while group.bytes > self.max_session_bytes:  # (ends: the new event fits alone)
                self._evict(*next(iter(group.order)))
            while self.held_bytes > self.max_bytes:
                self._evict(*next(iter(self._order)))
        return f"{stream_id}-{seq}"

    def events_after(self, event_id: str) -> Optional[Tuple[str, List[Tuple[str, bytes]]]]:
        """Replay what came after ``event_id`` on its own stream; ``None`` if that is not all kept."""
        stream_id, _, seq_text = event_id.rpartition("-")
        if not (seq_text.isascii() and seq_text.isdigit()):  # ("²".isdigit(), but int() refuses it)
            return None
        seq = int(seq_text)
        with self._lock:
            kept = self._streams.get(stream_id)
            if kept is None or seq < kept.dropped:
                return None
            return stream_id, [(f"{stream_id}-{n}", data) for n, data in kept.events if n > seq]

    def forget(self, stream_id: str) -> None:
        """Drop a stream's events."""
        with self._lock:
            if stream_id in self._streams:
                self._drop_stream(stream_id)

    def _open(self, stream_id: str, group: _Group) -> _Kept:
        kept = self._streams[stream_id] = _Kept(group)
        group.streams += 1
        while len(self._streams) > self.max_streams:
            self._drop_stream(next(iter(self._streams)))
        return kept

    def _drop_stream(self, stream_id: str) -> None:
        kept = self._streams.pop(stream_id)
        group = kept.group
        for seq, data in kept.events:
            if data:
                self._uncount((stream_id, seq), len(data), group)
        group.streams -= 1
        if not group.streams and group.key is not None:
            del self._groups[group.key]

    def _evict(self, stream_id: str, seq: int) -> None:
        """Drop event ``seq`` of ``stream_id`` and the (empty) ones before it, oldest first."""
        kept = self._streams[stream_id]
        events = kept.events
        while events and events[0][0] <= seq:
            n, data = events.popleft()
            if data:
                self._uncount((stream_id, n), len(data), kept.group)
        kept.dropped = max(kept.dropped, seq)

    def _uncount(self, key: Tuple[str, int], size: int, group: _Group) -> None:
        del self._order[key]
        del group.order[key]
        group.bytes -= size
        self.held_bytes -= size


class _Queue:
    """The events waiting for one connection attached to an :class:`OutStream`, and their bytes."""

    __slots__ = ("events", "bytes", "cut")

    def __init__(self, events: Iterable[Tuple[str, bytes]] = ()) -> None:
        self.events: Deque[Tuple[str, bytes]] = collections.deque(events)
        self.bytes = sum([len(data) for _, data in self.events])
        self.cut = False  # fell more than max_queue_bytes behind: its connection ends

    def put_back(self, events: List[Tuple[str, bytes]]) -> None:
        """Return events taken but not sent to the front, in order."""
        self.events.extendleft(reversed(events))
        self.bytes += sum([len(data) for _, data in events])


class OutStream:
    """One logical stream of messages to the client: a POST's, or the standalone GET stream.

    Until the first message it is *undecided*: messages wait in memory, and
    the POST's thread picks JSON (the first message is the only response)
    or SSE. In SSE mode every message goes to the event store as it comes.

    Args:
        store: where events are kept.
        expected: the ids of the responses that end the stream (empty for
            the standalone stream, which never ends by itself).
        session: the key of the session the stream belongs to, given to
            ``store.bind`` before its first event (the store's per-session bound).

    Each attached connection reads new events from a queue of its own. ``max_queue_bytes``
    bounds what waits there: the store's ``max_session_bytes`` if it has one, else
    :data:`MAX_QUEUE_BYTES`. A connection that has more than that waiting when another
    event comes (its client reads more slowly than the server writes) is ended, its queue
    dropped, and a warning logged; its client resumes with ``Last-Event-ID``. One event
    larger than the bound still reaches a connection that keeps up.
    """

    def __init__(self, store: EventStore, expected: Optional[Set["RequestId"]] = None,
                 session: Optional[str] = None) -> None:
        self.id: str = f"{_STREAM_IDS.getrandbits(64):016x}"
        self.store: EventStore = store
        bound = getattr(store, "max_session_bytes", None)  # (a custom store may have no such bound)
        #: Bytes of events one connection may have waiting before it is ended (see above).
        self.max_queue_bytes: int = bound if isinstance(bound, int) and bound > 0 else MAX_QUEUE_BYTES
        self._session = session  # bound in the store at the first event (most streams never store one)
        self.expected: Set[RequestId] = set(expected or ())
        self.standalone: bool = not self.expected
        #: True once every expected response was pushed (never, for the standalone stream).
        self.done: bool = False
        self.sse: bool = self.standalone
        self.pending: List[Tuple[bytes, bool]] = []  # (data, is_response) before the decision
        self.closed_by_server: bool = False  # asked to end the HTTP response while undecided...
        self.close_index: int = 0  # ...after this many of the pending messages
        self.close_after: Optional[str] = None  # in SSE mode: end the response after this event
        self.abandoned: bool = False  # the request was cancelled: nothing more will come
        self.cond: threading.Condition = threading.Condition()
        self.last_id: Optional[str] = None
        # Set by wake() and kept until the streaming thread looks: a wake that comes while it
        # is writing (not waiting) would otherwise be lost, and the GET taking over get a 409.
        self.woken: bool = False
        # One queue per attached connection (events()): each new event goes to each, so a live
        # client never depends on what the store kept. The handoff: a queue filled for a
        # connection still to come, (start id, queue, deadline), until it takes it: the POST's
        # own (switch_to_sse), or the one resuming after the server closed the response.
        self._readers: List[_Queue] = []
        self._handoff: Optional[Tuple[str, _Queue, float]] = None

    @property
    def queued_bytes(self) -> int:
        """Bytes of events waiting, not yet written, in the queues of the connections attached."""
        with self.cond:
            return sum([queue.bytes for queue in self._readers])

    def mark(self) -> str:
        """Store an empty event (a mark a connection starts after) and return its id."""
        with self.cond:
            return self._keep(b"")

    def _keep(self, data: bytes) -> str:
        """Store one event (the caller holds ``cond``) and hand it to each attached connection."""
        if self._session is not None:
            self.store.bind(self.id, self._session)
            self._session = None  # (once: before the stream's first event)
        event_id = self.store.store(self.id, data)
        size = len(data)
        behind = False
        for queue in self._readers:
            if size and queue.bytes > self.max_queue_bytes:
                queue.cut = behind = True
            else:
                queue.events.append((event_id, data))
                queue.bytes += size
        if behind:
            self._cut()
        if self._handoff is not None and time.monotonic() > self._handoff[2]:
            self._detach(self._handoff[1])  # the connection it waited for never came: the store has them
        return event_id

    def _cut(self) -> None:
        """End the connections whose queues are marked ``cut`` (the caller holds ``cond``): their
        memory is freed now, their ``events()`` ends at its next look, and each client resumes
        with Last-Event-ID (spec 2025-11-25 basic/transports "Resumability and Redelivery")."""
        for queue in [queue for queue in self._readers if queue.cut]:
            # Logged here, under cond: minimcp's own records never reach a client (logbridge),
            # so this cannot come back to push() on this stream.
            log.warning("SSE stream %s: more than %d bytes waited unsent for one connection (its client reads "
                        "more slowly than the server writes, or has not come back): the connection is ended "
                        "and its client may resume with Last-Event-ID from what the event store kept. Raise "
                        "the store's max_session_bytes to let clients fall further behind.",
                        self.id, self.max_queue_bytes)
            queue.events.clear()
            queue.bytes = 0
            self._detach(queue)
        self.cond.notify_all()

    def _detach(self, queue: _Queue) -> None:
        self._readers = [other for other in self._readers if other is not queue]
        if self._handoff is not None and self._handoff[1] is queue:
            self._handoff = None

    def push(self, data: bytes, response_id: object = None) -> None:
        """Add one message (as ``jsonrpc.encode`` made it); ``response_id`` is set when it is
        the response to a request."""
        with self.cond:
            is_response = response_id is not None and response_id in self.expected
            if is_response:
                self.expected.discard(response_id)
                self.done = not self.expected
            if self.sse:
                self.last_id = self._keep(data)
            else:
                self.pending.append((data, is_response))
            self.cond.notify_all()

    def first_messages(self, timeout: Optional[float] = None) -> List[Tuple[bytes, bool]]:
        """Wait for the first message(s) of an undecided stream and return them."""
        with self.cond:
            if not (self.pending or self.abandoned or self.closed_by_server):  # (usually there already)
                deadline = None if timeout is None else time.monotonic() + timeout
                while not (self.pending or self.abandoned or self.closed_by_server):
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    self.cond.wait(left)
            return list(self.pending)

    def switch_to_sse(self) -> str:
        """Decide SSE: store what waited, return the id the stream starts after.

        What waited, and what comes next, is also queued for the connection that streams
        ``events(after=<that id>)`` (the POST's own), so it gets every event even where the
        store keeps none: one too big for it, say.
        """
        with self.cond:
            start = self._keep(b"")  # the priming event's id (spec 2025-11-25)
            queue = _Queue()
            self._readers.append(queue)
            self._handoff = (start, queue, time.monotonic() + HANDOFF_SECONDS)
            if self.closed_by_server and self.close_index == 0:
                self.close_after = start
            for index, (data, _) in enumerate(self.pending, start=1):
                self.last_id = self._keep(data)
                if self.closed_by_server and index == self.close_index:
                    self.close_after = self.last_id
            self.pending = []
            self.sse = True
            return start

    def close_by_server(self) -> None:
        """End the HTTP response now; the client resumes with GET + Last-Event-ID (2025-11-25 polling)."""
        with self.cond:
            self.closed_by_server = True
            if self.sse:
                self.close_after = self.last_id
            else:
                self.close_index = len(self.pending)
            self.cond.notify_all()

    def abandon(self) -> None:
        """Nothing more will come (the request was cancelled, or the session ended)."""
        with self.cond:
            self.abandoned = True
            self.cond.notify_all()

    def wake(self) -> None:
        """Wake the connection streaming this (it checks whether its client is still there)."""
        with self.cond:
            self.woken = True
            self.cond.notify_all()

    def events(self, after: str, keepalive: float = KEEPALIVE_SECONDS,
               gone: Optional[Callable[[], bool]] = None) -> Iterator[bytes]:
        """Yield SSE bytes for everything after event ``after``, live, until the stream ends.

        Yields a ``: keepalive`` comment when idle, so a client that went
        away is noticed by the failed write and its thread freed. Ends when
        every expected response was sent, when the server closes the stream
        (the client resumes later), when it is abandoned, or when ``gone()``
        (asked on each wake, and every :data:`GONE_POLL_SECONDS` while idle)
        says the client closed its connection, or when its client fell more than
        :attr:`max_queue_bytes` behind (it resumes with Last-Event-ID).
        """
        queue = self._attach(after)
        if queue is None:
            return  # the store forgot this stream, or an event after `after`: nothing to resume
        handed_over = False
        try:
            last = after
            wait = keepalive if gone is None else min(keepalive, GONE_POLL_SECONDS)
            quiet = 0.0  # seconds waited since the last bytes went out
            while True:
                with self.cond:
                    batch = list(queue.events)  # (none, if _keep ended this connection: seen below)
                    queue.events.clear()
                    queue.bytes = 0
                for index, (event_id, data) in enumerate(batch):
                    last = event_id
                    if data:  # the priming event is empty: never resend it
                        yield format_event(data, event_id)
                    if event_id == self.close_after:
                        with self.cond:  # (not ours to drop, if the close is not taken here after all)
                            if not queue.cut:
                                queue.put_back(batch[index + 1:])
                        break
                with self.cond:  # never yield while holding it
                    if queue.cut:
                        return  # too far behind: _keep dropped its queue (and logged it)
                    if self.close_after is not None and self.close_after == last:
                        self.close_after = None  # the server closed it here; the resuming connection goes on
                        self.closed_by_server = False
                        # What came after the close waits in this queue for the connection that
                        # resumes after it (as the POST's own does): the store may have dropped it.
                        if self._handoff is not None:
                            self._detach(self._handoff[1])  # (one at a time; its client never came)
                        self._handoff = (last, queue, time.monotonic() + HANDOFF_SECONDS)
                        handed_over = True
                        return
                    if queue.events:
                        continue  # more came while we were writing
                    if self.done or self.abandoned:
                        return
                    woke = self.woken or self.cond.wait(wait)
                    self.woken = False
                if gone is not None and gone():
                    return  # the client left: free the stream now, not after two failed keepalives
                quiet = 0.0 if woke else quiet + wait
                if quiet >= keepalive:
                    quiet = 0.0
                    yield b": keepalive\n\n"
        finally:
            if not handed_over:
                with self.cond:
                    self._detach(queue)

    def holds_after(self, event_id: str) -> bool:
        """True if what came after ``event_id`` waits here for the connection that resumes after
        it (the server ended the response there, or the POST's own connection has not come),
        so a resume needs nothing from the store."""
        with self.cond:
            return self._handoff is not None and self._handoff[0] == event_id

    def _attach(self, after: str) -> Optional[_Queue]:
        """The queue a new connection reads: the handoff, if it starts where that does, else the
        store's replay after ``after`` (None if the store cannot give all of it), then live events."""
        with self.cond:
            if self._handoff is not None and self._handoff[0] == after:
                queue = self._handoff[1]
                self._handoff = None
                return queue
            replay = self.store.events_after(after)
            if replay is None:
                return None
            queue = _Queue(replay[1])
            self._readers.append(queue)
            return queue


class HTTPSessionTransport(Transport):
    """The server end of one HTTP session: sends each outgoing message to the right stream.

    Messages come in through POSTs (``Session.receive``), so ``read()`` is
    never used. A response goes to the stream of the POST that asked; a
    message ``related_to`` a request goes there too; the rest go to the
    standalone GET stream.
    """

    def __init__(self, store: EventStore, standalone: bool = True) -> None:
        self.store = store
        #: The ``Mcp-Session-Id`` of the HTTP session it serves (set by the app), or None.
        self.session_id: Optional[str] = None
        # The key the store bounds this session's events by (EventStore.bind): never sent anywhere.
        # A one-POST connection has one stream, bounded alone (and a POST spends no draw on it).
        self.session_key: Optional[str] = f"{_STREAM_IDS.getrandbits(64):016x}" if standalone else None
        self.streams: Dict[Any, OutStream] = {}
        self.by_stream_id: Dict[str, OutStream] = {}
        self.standalone: Optional[OutStream] = OutStream(store, session=self.session_key) if standalone else None
        self._listening = False  # a GET is attached to the standalone stream
        # The first GET gets what was sent before it came (the client opens it
        # right after initialize, but a notification may be quicker).
        self._first_start = self.standalone.mark() if self.standalone else None
        self._lock = threading.Lock()
        # Only a session's transport has a standalone stream to hand over (and a Condition is the
        # costly part to make: not made for a POST's own session, which never needs it).
        self._detached = threading.Condition(self._lock) if standalone else None

    @property
    def listening(self) -> bool:
        """True while a GET holds the standalone stream (so the client is still there)."""
        return self._listening

    def attach_standalone(self, probe: bool = False) -> Optional[str]:
        """Give the standalone stream to a GET: the event id to stream after, or None when
        another GET holds it already (one at a time, or messages would be split between them).

        With ``probe``, the holding GET is woken first to check its client (its
        ``events(gone=...)``), and given :data:`TAKEOVER_WAIT` to let go: a client
        whose stream dropped gets a new one at once, not a 409 until a keepalive fails.
        """
        if self.standalone is None:
            return None
        if probe and self._listening:
            self.standalone.wake()
        with self._lock:
            if probe and self._listening and self._detached is not None:  # (not None: a standalone)
                self._detached.wait_for(lambda: not self._listening, TAKEOVER_WAIT)
            if self._listening:
                return None
            self._listening = True
            start, self._first_start = self._first_start, None
        return start if start is not None else self.standalone.mark()

    def detach_standalone(self) -> None:
        """The GET holding the standalone stream ended; the next one may attach."""
        with self._lock:
            self._listening = False
            if self._detached is not None:
                self._detached.notify_all()

    def resumable(self, stream_id: str) -> Optional[OutStream]:
        """The stream a ``Last-Event-ID`` of ``stream_id`` resumes, or None if it is not (or no
        longer) ours."""
        with self._lock:
            stream = self.by_stream_id.get(stream_id)
        if stream is None and self.standalone is not None and stream_id == self.standalone.id:
            stream = self.standalone
        return stream

    def handed_over(self, event_id: str) -> Optional[OutStream]:
        """The stream of this session whose events after ``event_id`` wait for the connection that
        resumes there (:meth:`OutStream.holds_after`), or None: a resume the store can no longer
        replay may still be served whole."""
        with self._lock:
            streams = list(self.by_stream_id.values())
        for stream in streams:
            if stream.holds_after(event_id):
                return stream
        return None

    def read(self) -> None:
        """Never called: messages arrive by POST."""
        return None

    def open_stream(self, request_ids: Set["RequestId"]) -> OutStream:
        """Register the stream that will carry the answers to these requests."""
        stream = OutStream(self.store, request_ids, self.session_key)
        with self._lock:
            for request_id in request_ids:
                self.streams[request_id] = stream
            self.by_stream_id[stream.id] = stream
            while len(self.by_stream_id) > 1000:  # keep recent streams resumable, not all forever
                self.by_stream_id.pop(next(iter(self.by_stream_id)))
        return stream

    def answered(self, stream: OutStream) -> bool:
        """Forget ``stream``, whose answers went out as one JSON body (nothing of it is in the
        store, and nothing more can come); True if no other stream waits for an answer, so a
        one-POST connection may serve another POST (see ``MCPApp._spare``)."""
        with self._lock:
            self.by_stream_id.pop(stream.id, None)
            return not self.streams

    def write(self, message: Any, related_to: Any = None) -> None:
        """Route one outgoing message to its stream (dropped if there is none)."""
        data = jsonrpc.encode(message)  # the bytes stdio would send: a lone surrogate escaped
        kind = type(message)
        with self._lock:
            if kind is Response or kind is ErrorResponse:
                stream = self.streams.pop(message.id, None)
            else:
                stream = self.streams.get(related_to) if related_to is not None else None
                stream = stream or self.standalone
        if stream is None:
            log.debug("no stream for %r; dropped", data[:200])
        elif kind is Response or kind is ErrorResponse:
            stream.push(data, message.id)
        else:
            stream.push(data)

    def discard(self, request_id: Any) -> None:
        """The request was cancelled: end its stream, nothing more will come."""
        with self._lock:
            stream = self.streams.pop(request_id, None)
        if stream is not None:
            stream.abandon()

    def close_stream(self, request_id: Any) -> None:
        """End the HTTP response of the stream carrying ``request_id`` (the client resumes)."""
        with self._lock:
            stream = self.streams.get(request_id)
        if stream is not None:
            stream.close_by_server()

    def close(self) -> None:
        """End every stream: nothing more will be sent."""
        with self._lock:
            streams = set(self.streams.values()) | set(self.by_stream_id.values())
            if self.standalone is not None:
                streams.add(self.standalone)
            self.streams = {}
        for stream in streams:
            stream.abandon()
            self.store.forget(stream.id)


class SSEServerTransport(Transport):
    """The server end of a 2024-11-05 HTTP+SSE connection: every message goes down the GET stream."""

    def __init__(self) -> None:
        self._stream = OutStream(MemoryEventStore(max_events=1000, max_streams=1))
        # Marked now: the client may POST (and be answered) before the GET body starts.
        self._start = self._stream.mark()

    def read(self) -> None:
        """Never called: messages arrive by POST."""
        return None

    def write(self, message: Any, related_to: Any = None) -> None:
        """Queue one message for the stream."""
        self._stream.push(jsonrpc.encode(message))

    def events(self, gone: Optional[Callable[[], bool]] = None) -> Iterable[bytes]:
        """The stream's SSE bytes, live (no ids: 2024-11-05 has no resumption), until
        the stream ends or ``gone()`` says the client left."""
        for chunk in self._stream.events(after=self._start, gone=gone):
            if chunk.startswith(b"id: "):
                chunk = chunk.split(b"\n", 1)[1]
            yield chunk

    def close(self) -> None:
        """End the stream."""
        self._stream.abandon()
