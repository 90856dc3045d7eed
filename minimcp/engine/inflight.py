"""Requests in flight, both ways: what a handler knows about the request it answers, and
what a caller waits on for the request it sent.

:class:`RequestContext` is the engine-level part of an incoming request (id,
params, its handler, cancellation, progress); the server's :class:`minimcp.Context` adds
what the client negotiated and the requests a handler can make of it.
:class:`Incoming` is the table of those being handled, by request id.
``_Pending`` is an outgoing request: its answer once it comes (a lock hand-off) and its
progress callback; :class:`Outgoing` is the table of them, by request id. :class:`Batch` gathers the replies to one incoming JSON-RPC
batch, so they leave as one array.
"""

from __future__ import annotations

import itertools
import threading
import time

from ..errors import ConnectionClosed, RPCError
from ..protocol.jsonrpc import INTERNAL_ERROR, Request, Response

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from ..protocol.jsonrpc import RequestId
    from .session import Handler, Session

    #: ``callback(progress, total, message)`` for ``notifications/progress`` about a request.
    ProgressCallback = Callable[[float, Optional[float], Optional[str]], None]


def __getattr__(name: str) -> Any:
    """``ProgressCallback``, made when first asked for at run time (it needs ``typing``, which a
    stdio server otherwise never imports)."""
    if name != "ProgressCallback":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Callable, Optional

    alias = globals()["ProgressCallback"] = Callable[[float, Optional[float], Optional[str]], None]
    return alias

_event_lock = threading.Lock()

#: The most requests one session holds open for its peer at once (``RequestContext.held_open``:
#: each costs no thread, but memory, and a look on every notification fanned out); past it a new
#: one is refused with -32603.
MAX_HELD = 1000


class _HeldOpen:
    """The type of :data:`HELD_OPEN`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HELD_OPEN"


#: What a handler returns for a request it holds open (``return ctx.held_open()``): no answer now.
HELD_OPEN = _HeldOpen()


class RequestContext:
    """What a request handler knows about the request it is answering.

    Attributes:
        session: the :class:`Session` the request came in on.
        request_id: the JSON-RPC id of the request.
        method: the request's method name.
        params: the request's params (``{}`` when it had none).
        handler: the function that answers it (from the session's table).
        batch: the :class:`Batch` it came in, or ``None``.
        progress_token: ``params._meta.progressToken``, or ``None`` when the
            caller did not ask for progress.
        answered: True once its answer is on its way (from then on the peer may reuse its id).
        kind: what a stdio server's reading times as one kind of request (the method).
    """

    __slots__ = ("session", "request_id", "method", "params", "progress_token", "handler", "batch", "answered",
                 "kind", "_cancelled")

    #: False: the peer sent it, this side answers it (middleware tells the two kinds apart by it).
    outgoing = False
    #: What a stdio server's reading times as one kind of request (set as it is made).
    kind: Any

    def __init__(self, session: Session, request: Request, handler: Any = None, batch: Optional[Batch] = None) -> None:
        self.session: Session = session
        #: The function that answers it: ``handler(params, ctx)``.
        self.handler: Handler = handler
        #: The batch the request came in, whose array its answer joins; None for a lone request.
        self.batch: Optional[Batch] = batch
        self.request_id: RequestId = request.id
        self.method: str = request.method
        self.params: Dict[str, Any] = request.params or {}
        meta = self.params.get("_meta")
        self.progress_token: Optional[RequestId] = meta.get("progressToken") if type(meta) is dict else None
        self.answered: bool = False
        #: What a stdio server's reading remembers as "the same kind of request" (was its last one
        #: quick?): the method; a server's context adds what the method names (the tool).
        self.kind = request.method
        self._cancelled: Optional[threading.Event] = None  # made on first use: most requests never need it

    @property
    def cancelled(self) -> threading.Event:
        """An Event set when the peer cancels this request or the connection ends.

        A long-running handler should check ``ctx.cancelled.is_set()`` (or
        wait on it) and stop early; its answer is dropped either way.
        """
        event = self._cancelled
        if event is None:
            with _event_lock:
                if self._cancelled is None:
                    self._cancelled = threading.Event()
                event = self._cancelled
        return event

    def held_open(self, on_end: Optional[Callable[[], None]] = None) -> Any:
        """Keep this request open for the peer, with no thread: ``return ctx.held_open(on_end)``.

        For a request that stays open only to carry notifications to its peer (2026-07-28
        ``subscriptions/listen``, spec basic/patterns/subscriptions). The handler returns what
        this returns (:data:`HELD_OPEN`): no answer is sent now, the thread goes back to work, and
        the request stays in flight (its id taken) until the peer cancels it or the session
        ends. Then ``on_end()`` runs (say, to stop sending it notifications) and the request ends
        unanswered, as a cancelled one does. A middleware sees it once, with ``HELD_OPEN`` as its
        result; one that returns something else instead answers the request, which then ends.

        Raises:
            RPCError: -32603 when :data:`MAX_HELD` requests are held open on this connection
                already (the peer cancels one first).
        """
        return self.session.hold(self, on_end)

    @property
    def is_cancelled(self) -> bool:
        """True once the request was cancelled (cheaper than ``cancelled.is_set()``)."""
        return self._cancelled is not None and self._cancelled.is_set()

    def report_progress(self, progress: float, total: Optional[float] = None,
                        message: Optional[str] = None) -> None:
        """Send ``notifications/progress`` for this request, if the caller asked for it.

        ``progress`` must grow with every call (spec basic/utilities/progress).
        Does nothing when the request carried no ``progressToken``.
        """
        if self.progress_token is None or self.is_cancelled:
            return
        params: Dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.session.notify("notifications/progress", params, related_to=self.request_id)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.request_id!r} method={self.method!r}>"


class Incoming:
    """The peer's requests being handled now, by id: each a :class:`RequestContext`.

    A request leaves the table once its answer is sent (not when its handler
    returns), so :meth:`drain` waits for the answers themselves: a session
    that closes its transport after the drain loses none.
    """

    def __init__(self) -> None:
        #: request id -> its context (read it, never change it, from outside: add() and done() do).
        self.contexts: Dict[Any, RequestContext] = {}
        self._lock = threading.Lock()
        # Made by the first drain(): most sessions of an HTTP server live for one request and
        # end with nothing in flight, and a Condition is costly to make.
        self._finished: Optional[threading.Condition] = None
        self._draining = False  # someone waits in drain(): tell it when a request finishes
        #: Requests held open for the peer alone (``RequestContext.held_open``), each with its
        #: ``on_end``. (Read it, never change it, from outside.)
        self.held: Dict[RequestContext, Optional[Callable[[], None]]] = {}
        self._holding = True  # False once the session ends: no request is held open any more

    def __len__(self) -> int:
        return len(self.contexts)

    def add(self, ctx: RequestContext) -> bool:
        """Register a request as being handled; False if its id is in use already."""
        # setdefault is one step under the GIL, so two threads adding one id cannot both win.
        old = self.contexts.setdefault(ctx.request_id, ctx)
        if old is ctx:
            return True
        if old.answered:  # only the write of its answer is left: the peer may reuse the id
            self.contexts[ctx.request_id] = ctx
            return True
        return False

    def get(self, request_id: Any) -> Optional[RequestContext]:
        """The context of a request being handled, or None (unknown ids are normal: it finished)."""
        return self.contexts.get(request_id) if type(request_id) in (int, str) else None

    def done(self, ctx: RequestContext) -> None:
        """The request is over: its answer is sent (or it gets none)."""
        gone = self.contexts.pop(ctx.request_id, None)  # (one step under the GIL: no lock on the hot path)
        if gone is not ctx and gone is not None:  # a new request reusing the id took its place: keep it
            self.contexts.setdefault(gone.request_id, gone)
        if self._draining:  # drain() sets it before it looks, so it cannot miss this one
            with self._lock:
                # the checker cannot know that drain() makes _finished before it sets _draining
                self._finished.notify_all()  # type: ignore[union-attr]

    def drain(self, grace: float, stop: Optional[Callable[[], bool]] = None) -> List[RequestContext]:
        """Wait up to ``grace`` seconds for every request to finish; return those still running.

        ``stop()`` is asked every 0.1 s: True ends the wait early (a signal handler
        may set what it reads, and cannot notify a condition).
        """
        deadline = time.monotonic() + grace
        with self._lock:
            if not self.contexts:
                return []
            if self._finished is None:
                self._finished = threading.Condition(self._lock)
            self._draining = True
            while self.contexts and not (stop is not None and stop()):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._finished.wait(left if stop is None else min(left, 0.1))
            return list(self.contexts.values())

    def hold(self, ctx: RequestContext, on_end: Optional[Callable[[], None]]) -> bool:
        """Note a request held open for the peer alone (``on_end`` runs when it ends); False if
        it must end now instead (the session is ending, or the peer cancelled it already).

        Raises:
            RPCError: -32603, :data:`MAX_HELD` requests are held open already.
        """
        with self._lock:  # (cancel() sets the flag under it: a cancel is seen here, or sees the entry)
            if not self._holding or ctx.is_cancelled:
                return False
            if len(self.held) >= MAX_HELD:
                raise RPCError(INTERNAL_ERROR, f"Internal error: {MAX_HELD} requests are held open on this "
                                               f"connection already (such as subscriptions/listen); cancel "
                                               f"one before opening another")
            self.held[ctx] = on_end
            return True

    def cancel(self, ctx: RequestContext) -> Tuple[bool, Optional[Callable[[], None]]]:
        """Set ``ctx.cancelled``; if the request was held open, take it out: (True, its
        ``on_end``), for the caller to end it. (False, None) for one a handler runs."""
        with self._lock:
            ctx.cancelled.set()
            if ctx in self.held:
                return True, self.held.pop(ctx)
        return False, None

    def unhold(self, ctx: RequestContext) -> Optional[Callable[[], None]]:
        """Take a held request out without cancelling it (it is answered after all); its
        ``on_end``, or None (also when it was not held)."""
        with self._lock:
            return self.held.pop(ctx, None)

    def cancel_held(self) -> List[Tuple[RequestContext, Optional[Callable[[], None]]]]:
        """The session ends: cancel every request held open for the peer, now and from now on;
        return them with their ``on_end``, for the caller to end."""
        if not self._holding:  # (done already: the end of the stream and close() both call it)
            return []
        with self._lock:
            self._holding = False
            held, self.held = self.held, {}
        for ctx in held:
            ctx.cancelled.set()
        return list(held.items())


def with_progress_token(params: Optional[Dict[str, Any]], token: Any) -> Dict[str, Any]:
    """A copy of a request's ``params`` with ``_meta.progressToken`` set (spec basic/utilities/progress)."""
    params = dict(params or {})
    meta = dict(params.get("_meta") or {})
    meta["progressToken"] = token
    params["_meta"] = meta
    return params


class NoAnswer(Exception):
    """:meth:`_Pending.wait` ran out of time (the caller gives up on the request)."""


#: Seconds between two looks at a paused request's clock (its waiter is not woken when the pause ends).
PAUSE_LOOK = 0.25


class _PauseClock:
    """The pauses of one request's clock: how many are on now, since when, and how long the
    ended ones lasted in all (changed under :class:`Outgoing`'s lock only)."""

    __slots__ = ("count", "since", "total", "at_progress")

    def __init__(self) -> None:
        self.count: int = 0
        self.since: float = 0.0
        self.total: float = 0.0
        #: ``total`` when the last progress report came (a pause then on counted up to it): the
        #: progress clock stops only for the pauses after it.
        self.at_progress: float = 0.0

    def start(self, now: float) -> None:
        if not self.count:
            self.since = now
        self.count += 1

    def progressed(self, now: float) -> None:
        self.at_progress = self.total + (now - self.since if self.count else 0.0)

    def stop(self, now: float) -> None:
        if self.count == 1:
            self.total += now - self.since  # (first: a waiter that sees count 0 sees the new total)
        self.count -= 1


class Pause:
    """What :meth:`Outgoing.pause` paused, for :meth:`Outgoing.resume`: the records, and whether
    it pauses every request (then also those opened while it lasts)."""

    __slots__ = ("records", "every")

    def __init__(self, records: List[_Pending], every: bool) -> None:
        self.records: List[_Pending] = records
        self.every: bool = every


class PausedClocks:
    """``with session.timeout_paused(...)``: the clocks of the requests named (none: of every
    request) stop on entering the block and go on when it ends (:meth:`Outgoing.pause`). A
    plain class: the engine imports no ``contextlib`` for it."""

    __slots__ = ("_outgoing", "_request_ids", "_pause")

    def __init__(self, outgoing: Outgoing, request_ids: Tuple[Any, ...]) -> None:
        self._outgoing = outgoing
        self._request_ids = request_ids
        self._pause: Optional[Pause] = None

    def __enter__(self) -> None:
        if self._pause is not None:  # (entered twice, the first pause would never end)
            raise RuntimeError("this timeout_paused() block is running already: make another")
        self._pause = self._outgoing.pause(self._request_ids)

    def __exit__(self, *exc_info: Any) -> None:
        pause, self._pause = self._pause, None
        if pause is not None:
            self._outgoing.resume(pause)


class _Pending:
    """One outgoing request waiting for its answer: its result or error, once.

    A ``concurrent.futures.Future`` would do, but costs a condition, a waiters list and
    ``concurrent.futures`` (and so ``logging``) imported: here a lock, taken when the
    request is made and released by whoever completes it, is the whole hand-off.
    """

    __slots__ = ("method", "on_progress", "last_progress", "cancellable", "mark", "unanswered", "pause",
                 "_done", "_result", "_error")

    def __init__(self, method: str, on_progress: Optional[ProgressCallback], cancellable: bool = True) -> None:
        self.method: str = method
        self.cancellable: bool = cancellable
        self.on_progress: Optional[ProgressCallback] = on_progress
        self.last_progress: Optional[float] = None
        #: When its answer was read with notifications still queued ahead of it: how many
        #: callbacks the dispatcher must have run before the caller may go on (else None).
        self.mark: Optional[int] = None
        #: Its clock's pauses while we answer the peer's questions about it (:meth:`Outgoing.pause`);
        #: None until it is first paused.
        self.pause: Optional[_PauseClock] = None
        self._result: Any = None
        self._error: Optional[BaseException] = None
        self._done = threading.Lock()
        self._done.acquire()  # held until the answer is in
        #: ``unanswered()``: True until the answer (or an error) is in. (Also for the moment a
        #: ``settle()`` or ``wait()`` holds the lock; only the caller's own thread asks, never
        #: from inside those.) The lock's own bound method: a caller reading its answer asks it
        #: with no Python frame.
        self.unanswered: Callable[[], bool] = self._done.locked

    def set_result(self, result: Any) -> None:
        """Complete it with the peer's result (once: its table pops it first, under a lock)."""
        self._result = result
        self._done.release()

    def set_exception(self, error: BaseException) -> None:
        """Complete it with an error: the peer's, a timeout's, the end of the connection."""
        self._error = error
        self._done.release()

    def settle(self, timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for the answer (or an error); True once it is in."""
        if self._done.acquire(True, max(0.0, timeout)):
            self._done.release()  # (it stays complete)
            return True
        return False

    def wait(self, timeout: float, max_timeout: Optional[float], started: Optional[float] = None) -> Any:
        """Wait for the answer and return it (or raise the peer's error).

        Each progress report restarts the ``timeout`` clock, up to ``max_timeout``
        seconds in all, when that is given. The clocks run from ``started``
        (a ``time.monotonic()``; by default, now). While the request is paused
        (:meth:`Outgoing.pause`) its clock stops, and goes on from there when the pause
        ends; ``max_timeout``, when given, bounds the pauses too.

        Raises:
            NoAnswer: no answer in time (the caller gives up on it).
        """
        done = self._done
        if done.locked():  # not in yet (a stdio caller that read its own answer skips the clocks)
            if started is None:
                started = time.monotonic()
            limit = None if max_timeout is None else started + max_timeout
            deadline = started + timeout
            while not done.acquire(True, max(0.0, deadline - time.monotonic())):
                now, pause = time.monotonic(), self.pause
                if pause is not None and pause.count and (limit is None or now < limit):
                    # (look again soon: a pause that ends leaves its clock little time, maybe)
                    deadline = now + min(timeout, PAUSE_LOOK)
                    if limit is not None:
                        deadline = min(deadline, limit)
                    continue
                extended = started + timeout + (0.0 if pause is None else pause.total)
                if limit is not None:
                    if self.last_progress is not None:
                        after = 0.0 if pause is None else pause.total - pause.at_progress
                        extended = max(extended, self.last_progress + timeout + after)
                    extended = min(extended, limit)
                if extended <= now:
                    raise NoAnswer()
                deadline = extended
            done.release()  # (it stays complete)
        if self._error is not None:
            raise self._error
        return self._result


def _paused(record: _Pending, now: float) -> None:
    """Stop a request's clock once more (under :class:`Outgoing`'s lock)."""
    clock = record.pause
    if clock is None:
        clock = record.pause = _PauseClock()
    clock.start(now)


class Outgoing:
    """The requests we sent and still wait on, by id: each a :class:`_Pending`.

    The reader resolves them as answers come; when the connection ends,
    :meth:`close` fails every one at once, and no new one is accepted.
    """

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        #: request id -> its pending record (read it, never change it, from outside).
        self.pending: Dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._refusing = False
        #: Why the connection ended (set once, by :meth:`close`); None while it is open.
        self.closed_error: Optional[ConnectionClosed] = None
        self._pauses: List[Pause] = []  # pauses of every request, now on (:meth:`pause`)

    def __len__(self) -> int:
        return len(self.pending)

    def new_id(self) -> int:
        """A fresh request id (our ids are unique, so they also make good progress tokens)."""
        return next(self._ids)

    def open(self, method: str, on_progress: Optional[ProgressCallback], cancellable: bool,
             request_id: Optional[int] = None) -> Tuple[int, _Pending]:
        """Record a request about to be sent; return its id and record.

        Raises:
            ConnectionClosed: the connection ended, or is closing.
        """
        pending = _Pending(method, on_progress, cancellable)
        with self._lock:
            refusal = self.closed_error or (ConnectionClosed("the session is closed") if self._refusing else None)
            if refusal is not None:
                raise refusal
            if request_id is None:
                request_id = next(self._ids)
            self.pending[request_id] = pending
            if self._pauses:  # (sent while every request is paused: paused with them)
                now = time.monotonic()
                for pause in self._pauses:
                    _paused(pending, now)
                    pause.records.append(pending)
        return request_id, pending

    def get(self, request_id: Any) -> Optional[_Pending]:
        """The record of a request still waiting, or None (for any id the peer names, even a bad one)."""
        return self.pending.get(request_id) if type(request_id) in (int, str) else None

    def pause(self, request_ids: Tuple[Any, ...]) -> Pause:
        """Stop the clocks of the requests ``request_ids`` that still wait (none named: of every
        request waiting now, and of those opened until :meth:`resume`). Unknown ids are
        ignored. See :meth:`Session.timeout_paused`."""
        now = time.monotonic()
        with self._lock:
            if request_ids:
                records = [record for record in map(self.get, request_ids) if record is not None]
            else:
                records = list(self.pending.values())
            pause = Pause(records, not request_ids)
            for record in records:
                _paused(record, now)
            if pause.every:
                self._pauses.append(pause)
        return pause

    def resume(self, pause: Pause) -> None:
        """Start the clocks :meth:`pause` stopped again, each from where it stopped."""
        now = time.monotonic()
        with self._lock:
            if pause.every:
                self._pauses.remove(pause)
            for record in pause.records:
                clock = record.pause
                if clock is not None:
                    clock.stop(now)

    def progressed(self, pending: _Pending) -> None:
        """A progress report for a request: its progress clock restarts now (see :meth:`_Pending.wait`)."""
        now = time.monotonic()
        pending.last_progress = now
        if pending.pause is not None:
            with self._lock:
                pending.pause.progressed(now)

    def still_waiting(self, requests: List[Tuple[Any, _Pending]]) -> List[Tuple[Any, _Pending]]:
        """Those of ``(request_id, record)`` that still wait for their answer."""
        table = self.pending
        return [(request_id, pending) for request_id, pending in requests if table.get(request_id) is pending]

    def pop(self, request_id: Any) -> Optional[_Pending]:
        """Stop tracking a request; its record if it was still waiting (its answer had not come)."""
        with self._lock:
            return self.pending.pop(request_id, None)

    def fail(self, request_id: Any, error: Exception) -> None:
        """Fail one request now (it could not be sent), if it still waits."""
        pending = self.pop(request_id)
        if pending is not None:
            pending.set_exception(error)

    def resolve(self, response: Any, mark: Optional[int] = None) -> bool:
        """Complete the request a response (or error response) answers; False if none waits for it.

        ``mark``: the dispatcher's count of callbacks handed in when the response
        was read, if some had not run yet (see :meth:`Session._wait`).
        """
        with self._lock:
            pending = self.pending.pop(response.id, None)  # (what pop() does)
        if pending is None:
            return False
        pending.mark = mark  # (before it completes: the caller reads it once woken)
        if type(response) is Response:
            pending._result = response.result  # (what set_result() does)
            pending._done.release()
        else:
            pending.set_exception(RPCError(response.code, response.message, response.data))
        return True

    def refuse_new(self) -> None:
        """Accept no new request (the session is closing); those waiting go on waiting."""
        self._refusing = True  # (one store: the error is made only if a request comes)

    def close(self, error: ConnectionClosed) -> ConnectionClosed:
        """The connection ended: fail every waiting request at once with ``error`` (the first
        reason given wins) and accept no new one. Returns the reason that stands."""
        with self._lock:
            if self.closed_error is None:
                self.closed_error = error
            error = self.closed_error
            pending, self.pending = self.pending, {}
        for item in pending.values():
            item.set_exception(error)
        return error


class Batch:
    """The replies to one incoming JSON-RPC batch, sent together as one array once all are in.

    MCP allows batches in protocol version 2025-03-26 alone. ``expected`` is
    how many of the batch's messages get a reply (its requests and malformed
    entries; notifications and responses get none).
    """

    __slots__ = ("_waiting", "_replies", "_lock")

    def __init__(self, expected: int) -> None:
        self._waiting = expected
        self._replies: List[Any] = []
        self._lock = threading.Lock()

    def add(self, reply: Any) -> Optional[List[Any]]:
        """Count one reply in (``None``: that request gets none, it was cancelled). Return the
        array to send once the last one is in, if it holds anything; else ``None``."""
        with self._lock:
            if reply is not None:
                self._replies.append(reply)
            self._waiting -= 1
            if self._waiting > 0:
                return None
            if self._waiting < 0:  # (a reply too many: the array went already)
                return None
            return self._replies or None

    def __repr__(self) -> str:
        return f"<Batch waiting={self._waiting} replies={len(self._replies)}>"
