"""The thread engine that client and server share.

A :class:`Session` turns a :class:`~minimcp.engine.transport.Transport` (a duplex
stream of JSON-RPC messages) into an outbound API — ``request()`` blocks
until the peer answers, ``notify()`` sends and forgets — and an inbound
pump: each message the peer sends goes through :meth:`Session.accept`, and
each request runs its handler from ``handlers[method]`` on a thread. Who
reads the stream is one of the ways in ``reading.py``.

It knows no MCP method beyond the utilities every version shares (ping,
cancellation, progress) and assumes no handshake; the client and the server
sit on top and give the methods meaning. Its threads, and the rules they keep
(no lock another request needs is held while user code runs, the stdio readers' read
lock aside, which the watch takes back within a tick; when the stream ends, every pending
request fails at once with ConnectionClosed), are drawn in ARCHITECTURE.md.
"""

from __future__ import annotations

import threading
import time

from ..errors import CapabilityError, ConnectionClosed, RPCError, Timeout
from ..logs import get_logger, reference
from ..protocol import jsonrpc
from ..protocol.jsonrpc import ErrorResponse, Malformed, Notification, Request, Response
from .inflight import (
    HELD_OPEN,
    Batch,
    Incoming,
    NoAnswer,
    Outgoing,
    PausedClocks,
    RequestContext,
    _Pending,
    with_progress_token,
)
from .reading import Exchanges, Readers, ReaderThread, SharedReading
from .threads import Dispatcher, WorkerPool
from .transport import Failed

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    from logging import Logger
    from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple, Type

    from .inflight import ProgressCallback
    from .middleware import Middleware, OutgoingRequest
    from .reading import Reading
    from .transport import Transport

    #: A request handler: gets the request's params (``{}`` when absent) and its
    #: context, returns the result dict or raises (``RPCError`` for a chosen code).
    Handler = Callable[[Dict[str, Any], RequestContext], Any]

log: Logger = get_logger(__name__)


def __getattr__(name: str) -> Any:
    """``Handler`` and ``ProgressCallback``, made when first asked for at run time (they need
    ``typing``, which a stdio server otherwise never imports)."""
    if name == "ProgressCallback":
        from . import inflight

        return inflight.ProgressCallback
    if name != "Handler":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Any, Callable, Dict

    alias = globals()["Handler"] = Callable[[Dict[str, Any], RequestContext], Any]
    return alias

#: The requests every session answers on the thread that read them, whatever its workers are doing:
#: ``ping`` (spec basic/utilities/ping: the receiver MUST respond promptly), and ``server/discover``,
#: which 2026-07-28 has in its place (it removed ping; a client checks that a server answers by
#: discovering it, as ``Client.ping()`` does). A session that has no handler for one answers -32601.
ALWAYS_INLINE = frozenset({"ping", "server/discover"})

#: Seconds the handlers cancelled at close get, in all, to return before they are left
#: behind (daemon threads): one that ignores ``ctx.cancelled`` must not keep the process alive.
STRAGGLERS = 1.0


#: Seconds between two warnings that requests were turned away (server busy): one line per period.
BUSY_LOG_EVERY = 10.0
_last_busy_log = -BUSY_LOG_EVERY  # (monotonic; module-wide: the pool may be shared by many sessions)


def _ping(params: Dict[str, Any], ctx: RequestContext) -> Dict[str, Any]:
    return {}


def dispatch(ctx: RequestContext) -> Any:
    """Answer an accepted request on this thread: the one way every request is answered, whatever
    read it (the stdio readers, a worker, an HTTP POST's thread). It runs the handler through the
    session's middleware (``engine/middleware.py``) and returns the reply: a Response, or an
    ErrorResponse (an ``RPCError`` keeps its code; any other exception is logged and becomes
    -32603, and so does a ``sys.exit()``: on a handler thread it would end the thread and leave
    the request unanswered), or None for a request the handler holds open (``ctx.held_open()``),
    which is answered by nobody now. Sending the reply is the caller's business."""
    session = ctx.session
    try:
        middleware = session.middleware
        if middleware:
            from .middleware import through  # (loaded once a middleware is added)

            result = through(middleware, ctx, _call_handler)
        else:
            result = ctx.handler(ctx.params, ctx)
        if result is HELD_OPEN:
            return None
        if session._incoming.held:  # (a request held open, then answered after all, by a middleware
            session.unhold(ctx)     # or its handler: it ends with that answer)
        return Response(ctx.request_id, {} if result is None else result)
    except RPCError as exc:
        session.unhold(ctx)  # (held open before it failed: the error is its answer)
        return ErrorResponse(ctx.request_id, exc.code, exc.message, exc.data)
    except CapabilityError as exc:  # minimcp's own words on what the peer did not declare: kept
        session.unhold(ctx)
        return ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR, f"Internal error: {exc}")
    except Exception as exc:
        session.unhold(ctx)
        if not session.masks_errors:
            log.exception("%s: handler for %r failed", session.name, ctx.method)
            return ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR, f"Internal error: {exc}")
        # Its text may name what the peer must not learn (a path, a host: CWE-209): the peer
        # gets a reference, and our log the traceback under the same reference.
        ref = reference()
        log.exception("%s: handler for %r failed (ref %s)", session.name, ctx.method, ref)
        return ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR, f"Internal error (ref {ref}): see the log "
                                                                     f"of {session.name}")
    except SystemExit as exc:
        session.unhold(ctx)
        log.warning("%s: the handler for %r called sys.exit(%r): that ends its call only (-32603)",
                    session.name, ctx.method, exc.code)
        return ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR,
                             f"Internal error: the handler called sys.exit({exc.code!r})")


def _call_handler(ctx: RequestContext) -> Any:
    # The innermost step of the middleware chain: the handler itself.
    return ctx.handler(ctx.params, ctx)


def not_json(ctx: RequestContext, exc: Exception, name: str) -> ErrorResponse:
    """The -32603 that replaces a result JSON cannot carry (``exc`` says why), logged."""
    log.error("%s: result of %r cannot be sent: %s", name, ctx.method, exc)
    return ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR,
                         f"Internal error: result is not JSON-serialisable: {exc}")


def id_in_use(request_id: Any) -> ErrorResponse:
    """The answer to a request whose id a request still in flight has (spec: ids are unique)."""
    return ErrorResponse(request_id, jsonrpc.INVALID_REQUEST, f"Request id {request_id!r} is already in use")


def _no_batches() -> bool:  # the default answer to "may the peer batch now?"
    return False


class Session:
    """One JSON-RPC connection, served by threads.

    Usage (what :class:`minimcp.Client` does under the hood)::

        session = Session(transport, handlers={"roots/list": list_roots})
        session.start()                    # starts the reader thread
        result = session.request("tools/list", {}, timeout=10)
        session.close()                    # joins every thread it started

    Args:
        transport: the connection to the peer.
        handlers: method name -> handler for requests the peer sends.
            ``ping`` is always answered.
        notification_handlers: method name -> ``callback(params)`` for
            notifications the peer sends, and ``"*"`` -> ``callback(method,
            params)`` for all of them; run in arrival order on one thread.
        owner: the object that owns this session (a Client, or a server's
            per-connection state); handlers reach it as ``ctx.session.owner``.
        context_class: the class of the ``ctx`` handlers get.
        max_workers: the most request handlers that run at once.
        timeout: the default seconds ``request()`` waits for an answer.
        trace: print every message to stderr, ``→`` sent and ``←`` received.
        name: a label for logs and the trace.
        workers: a worker pool to share with other sessions (an HTTP server
            gives all its sessions one); by default the session has its own.
        close_on_eof: close (and free the workers) when the peer ends the
            stream: a server serving a connection in the background wants it.
        inline_methods: methods whose handlers run on the reader itself, in arrival
            order; only quick ones (a server's ``initialize``, so a request right behind
            it sees the version). Those of :data:`ALWAYS_INLINE` always are.
        batches: asked when a JSON-RPC batch arrives: may the peer batch now?
            (MCP allows batches in protocol version 2025-03-26 alone, so the
            owner answers from what it negotiated.) By default: no.
        middleware: functions that wrap every request the session answers or sends
            (``engine/middleware.py``), the first outermost.
        masks_errors: an unexpected exception in a handler reaches the peer as -32603 with a
            reference only, its text in our log (a server's sessions); by default its text goes.
    """

    def __init__(self, transport: Transport, handlers: Optional[Dict[str, Handler]] = None,
                 notification_handlers: Optional[Dict[str, Callable[..., Any]]] = None, *,
                 owner: Any = None, context_class: Type[RequestContext] = RequestContext, max_workers: int = 16,
                 timeout: float = 60.0, trace: bool = False, name: str = "minimcp",
                 workers: Optional[WorkerPool] = None, close_on_eof: bool = False,
                 inline_methods: Iterable[str] = (), batches: Optional[Callable[[], bool]] = None,
                 middleware: Optional[List[Middleware]] = None, masks_errors: bool = False) -> None:
        self.transport: Any = transport  # (Any: the HTTP app calls its own transports' extra methods on it)
        if handlers is not None and "ping" in handlers:  # (a server's table, the same for every
            self.handlers: Dict[str, Handler] = handlers  # connection: kept, not copied per connection)
        else:
            self.handlers = {"ping": _ping}
            self.handlers.update(handlers or {})
        #: ``callback(params)``; the ``"*"`` one is ``callback(method, params)``.
        self.notification_handlers: Dict[str, Callable[..., Any]] = (  # (the caller's own dict: kept)
            notification_handlers if notification_handlers is not None else {})
        self.owner: Any = owner  # a Client, or a server's ServerConnection
        self.context_class: Type[RequestContext] = context_class
        self.timeout: float = timeout
        self.trace: bool = trace
        self.name: str = name
        self.close_on_eof: bool = close_on_eof
        self.inline_methods: FrozenSet[str] = (  # (a frozenset with them already: kept as it is)
            inline_methods if type(inline_methods) is frozenset and ALWAYS_INLINE <= inline_methods
            else frozenset(inline_methods) | ALWAYS_INLINE)
        self.batches_allowed: Callable[[], bool] = batches or _no_batches
        #: What every request this session answers or sends passes through (engine/middleware.py).
        #: The list is kept, not copied: a server's sessions share its list, and one added later
        #: applies to them too.
        self.middleware: List[Middleware] = middleware if middleware is not None else []
        #: True: an unexpected exception in a handler (or a middleware) reaches the peer as a
        #: reference only, its text and traceback in our log (CWE-209: a server's clients may be
        #: anyone). False: its text goes too (a client's own handlers answering its server).
        self.masks_errors: bool = masks_errors
        self._lock = threading.Lock()
        self._outgoing = Outgoing()
        self._incoming = Incoming()
        # A pool shared by many sessions (an HTTP server's) is its owner's to shut down.
        self._own_workers = workers is None
        self._workers = WorkerPool(max_workers) if workers is None else workers
        self._dispatcher = Dispatcher()
        #: Who reads the stream (reading.py): set by start() or serve_forever(); None where
        #: messages are pushed in (an HTTP server's POSTs) and for a session not started.
        self._reading: Optional[Reading] = None
        self._closing = False
        self._stopping = False  # stop() was called: no grace
        # Held by the first close() while it shuts down; a later one waits on it. (A Lock, not
        # an Event: an Event is costly to make, and an HTTP server makes a session per POST.)
        self._shutting_down = threading.Lock()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return (f"<Session {self.name} {state} pending={len(self._outgoing)} "
                f"in_flight={len(self._incoming)} transport={self.transport!r}>")

    # -- the reader ---------------------------------------------------------

    def start(self) -> None:
        """Start reading the stream on a thread of its own (clients; a stdio server calls
        serve_forever()). Over HTTP (``exchanges``) each caller posts its request and reads its
        answer; over a stdio child (``timed_reads``) callers read their own answers too."""
        transport = self.transport
        reading: Reading = (Exchanges(self) if transport.exchanges else
                            SharedReading(self) if transport.timed_reads else ReaderThread(self))
        self._reading = reading
        reading.start()

    def serve_forever(self, grace: float = 2.0, while_waiting: Optional[Callable[[], None]] = None) -> None:
        """Serve until the peer closes the stream (or :meth:`stop`), then :meth:`close` with ``grace``.

        The reading and handling run on :class:`~minimcp.engine.reading.Readers` threads
        while this one waits, so no handler can keep it from closing. Like
        ``socketserver``'s loop, it must not be called from one of the session's handlers.
        ``while_waiting``: called on this thread once a second while it waits (``run()``
        checks that its parent lives).
        """
        readers = Readers(self)
        self._reading = readers
        if self._stopping:
            readers.stop()
        self.connection_lost(readers.serve(while_waiting))
        self.close(grace)

    def stop(self) -> Optional[int]:
        """End :meth:`serve_forever` now: read no more, cancel what is in flight (no grace).

        It only sets flags, so a signal handler may call it. Returns the ident of a
        thread that may be blocked in a read, or None: the caller ends that read.
        """
        self._stopping = True
        reading = self._reading
        return reading.stop() if reading is not None else None

    def stream_ended(self, error: Optional[ConnectionClosed]) -> None:
        """The reading reached the end of the stream (``error``: how it failed; None: the peer
        closed it): every pending request fails now; with ``close_on_eof`` the session closes."""
        self.connection_lost(error)
        if self.close_on_eof:
            self.close(grace=2.0)

    # -- the one way in ------------------------------------------------------------

    def accept(self, message: Any, batch: Optional[Batch] = None) -> Optional[RequestContext]:
        """Take in one message from the peer: the one way in, whoever read it.

        The read loop, :meth:`receive` (an HTTP server's POSTs) and the stdio server's
        :class:`~minimcp.engine.reading.Readers` all call this. A response, notification, malformed
        message or batch is dealt with here and now, in arrival order. A request is checked,
        registered, and its context returned for the caller to :meth:`run` or :meth:`submit`;
        ``None`` when there is nothing to run (it was answered already).
        """
        if self.trace:
            from ..wiretrace import trace  # late: only a traced session loads the renderer

            trace(self, "←", message)
        kind = type(message)
        if kind is Request:  # checked, registered, and handed back (or answered now)
            handler = self.handlers.get(message.method)
            if handler is None:
                self._answer(batch, ErrorResponse(
                    message.id, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {message.method}"))
                return None
            ctx = self.context_class(self, message, handler, batch)
            if not self._incoming.add(ctx):
                self._answer(batch, id_in_use(message.id))
                return None
            if message.method in self.inline_methods:
                self.run(ctx)
                return None
            return ctx
        if kind is Response or kind is ErrorResponse:
            self._on_response(message)
        elif kind is Notification:
            self._on_notification(message)
        elif kind is Malformed:
            log.warning("%s: bad message from peer: %s", self.name, message.message)
            self._answer(batch, message.error_response())
        elif kind is Failed:  # one of our requests could not be sent (HTTP)
            self._outgoing.fail(message.request_id, message.error)
        else:
            self._on_batch(message)
        return None

    def receive(self, message: Any, inline: bool = False) -> None:
        """Take in one message and run what it asks: on the worker pool, or with ``inline``
        on the calling thread (for handlers that cannot wait on the peer: no hand-off to pay).

        For the read loop, and for transports that are pushed to rather than
        read from (an HTTP server gets each message in a POST).
        """
        ctx = self.accept(message)
        if ctx is not None:
            (self.run if inline else self.submit)(ctx)

    def submit(self, ctx: RequestContext) -> None:
        """Run an accepted request on the worker pool; when every worker is busy and the pool's
        queue is full too, answer it now with -32603 "server busy" (:meth:`turn_away`)."""
        if not self._workers.submit(self.run, ctx):
            self.turn_away(ctx)

    def turn_away(self, ctx: RequestContext) -> None:
        """Answer an accepted request -32603 "server busy" instead of running it: the worker pool
        (:class:`~minimcp.engine.threads.WorkerPool`) refused it. Whoever read it must never
        wait for a worker (it reads the pings and cancels that would free one), and an unbounded
        queue would let a peer grow our memory without end; an error the peer can retry on is
        the answer that keeps both promises."""
        global _last_busy_log
        workers = self._workers
        now = time.monotonic()
        if now - _last_busy_log >= BUSY_LOG_EVERY:  # (a flood of them: one line per period)
            _last_busy_log = now
            log.warning("%s: %s turned away (server busy): all %d workers are busy and %d requests wait "
                        "(max_workers, max_queued)", self.name, ctx.method, workers.max_workers, workers.queued)
        ctx.answered = True
        try:
            self._answer(ctx.batch, ErrorResponse(
                ctx.request_id, jsonrpc.INTERNAL_ERROR,
                f"Server busy: all {workers.max_workers} workers are busy and {workers.max_queued} requests "
                f"wait already; try {ctx.method} again shortly"))
        except ConnectionClosed:
            log.debug("%s: peer gone before the answer to %r", self.name, ctx.request_id)
        finally:
            self._incoming.done(ctx)

    @property
    def max_workers(self) -> int:
        """The most request handlers that run at once."""
        return self._workers.max_workers

    def run(self, ctx: RequestContext) -> None:
        """Run an accepted request's handler on this thread and send its answer."""
        request_id = ctx.request_id
        reply: Any = dispatch(ctx)
        if reply is None:  # held open for the peer (ctx.held_open()): hold() or its end does the rest
            return
        if ctx.is_cancelled:
            reply = None  # spec basic/utilities/cancellation: send no response
            self.transport.discard(request_id)
        elif ctx.batch is not None:
            # A batch leaves as one array, sent by whichever answer comes last: encode this
            # one now, so that a result that is not JSON spoils its own answer only.
            try:
                jsonrpc.dumps(reply)
            except (TypeError, ValueError) as exc:
                reply = not_json(ctx, exc, self.name)
        ctx.answered = True  # in flight until written: close() waits for the write, not just the handler
        try:
            if ctx.batch is None:
                if reply is not None:
                    self._send(reply)  # (what _answer() does for a lone request, one frame less per call)
            else:
                self._answer(ctx.batch, reply)
        except (TypeError, ValueError) as exc:  # the result is not JSON
            self._answer(None, not_json(ctx, exc, self.name))
        except ConnectionClosed:
            log.debug("%s: peer gone before the answer to %r", self.name, request_id)
        finally:
            self._incoming.done(ctx)

    def answer_here(self, ctx: RequestContext) -> Any:
        """Run a lone request's handler on this thread and return its reply instead of sending
        it: for an HTTP POST answered in its own body, when nothing can be sent before the
        answer. It is in flight meanwhile, as any request: its id is taken and close() waits for
        it. A cancel that comes meanwhile (on another POST) does not take the answer away: the
        POST must get one (spec basic/transports: JSON or SSE for a request), and a client
        ignores the answer to a request it cancelled (spec basic/utilities/cancellation).
        The caller has checked its method."""
        if not self._incoming.add(ctx):
            return id_in_use(ctx.request_id)
        try:
            reply = dispatch(ctx)
            if reply is None:  # held open: this POST's body is its answer, and there is no stream to hold
                self.unhold(ctx)
                reply = ErrorResponse(ctx.request_id, jsonrpc.INTERNAL_ERROR,
                                      f"Internal error: {ctx.method} cannot be held open in a POST's own body")
            return reply
        finally:
            self._incoming.done(ctx)

    def hold(self, ctx: RequestContext, on_end: Optional[Callable[[], None]] = None) -> Any:
        """Hold ``ctx``'s request open for the peer, with no thread; return what its handler
        returns (see :meth:`~minimcp.engine.inflight.RequestContext.held_open`). A request the
        peer cancelled already, or one held as the session ends, ends at once.

        Raises:
            RPCError: -32603, too many requests are held open on this session.
        """
        if not self._incoming.hold(ctx, on_end):
            self._end_held(ctx, on_end)
        return HELD_OPEN

    def unhold(self, ctx: RequestContext) -> None:
        """``ctx``'s request is answered after all (its handler held it open, then failed, or a
        middleware answered it): it is held no more, and its ``on_end`` runs. Not held: nothing."""
        incoming = self._incoming
        if incoming.held:  # (most sessions hold nothing: no lock taken)
            on_end = incoming.unhold(ctx)
            if on_end is not None:
                self._run_on_end(ctx, on_end)

    def _end_held(self, ctx: RequestContext, on_end: Optional[Callable[[], None]]) -> None:
        """A request held open ends (the peer cancelled it, or the session ends): unanswered, as a
        cancelled request is (spec basic/utilities/cancellation: no response), its stream ended."""
        ctx.cancelled.set()
        if on_end is not None:
            self._run_on_end(ctx, on_end)
        ctx.answered = True
        try:
            self.transport.discard(ctx.request_id)
            if ctx.batch is not None:
                self._answer(ctx.batch, None)  # (counted out of its batch)
        except ConnectionClosed:
            pass
        finally:
            self._incoming.done(ctx)

    def _run_on_end(self, ctx: RequestContext, on_end: Callable[[], None]) -> None:
        try:
            on_end()
        except Exception:  # (minimcp's own code: a bug, logged; the request ends all the same)
            log.exception("%s: ending held request %r failed", self.name, ctx.request_id)

    def _on_response(self, response: Any) -> None:
        # Callbacks of notifications sent before this answer may not have run: then the caller
        # waits for them (_wait). The request completes here, so an EOF right behind cannot fail it.
        dispatcher = self._dispatcher
        mark = dispatcher.queued
        if not self._outgoing.resolve(response, None if mark == dispatcher.ran else mark):
            # Late answers to cancelled or timed-out requests are normal (spec
            # basic/utilities/cancellation); anything else is the peer's bug.
            log.debug("%s: response to unknown request id %r ignored", self.name, response.id)

    def _on_notification(self, note: Notification) -> None:
        params = note.params or {}
        method = note.method
        if method == "notifications/cancelled":
            self.cancel_incoming(params.get("requestId"), params.get("reason"))
        elif method == "notifications/progress":
            self._on_progress(params)
        handler = self.notification_handlers.get(method)
        if handler is not None:
            self._dispatcher.dispatch(handler, params)
        catch_all = self.notification_handlers.get("*")  # gets (method, params) of every notification
        if catch_all is not None:
            self._dispatcher.dispatch(catch_all, method, params)

    def cancel_incoming(self, request_id: Any, reason: Optional[str] = None) -> None:
        """Cancel a request the peer sent: its ``notifications/cancelled``, or a transport where
        closing a stream is the cancel (2026-07-28 HTTP). Unknown ids are ignored."""
        incoming = self._incoming
        ctx = incoming.get(request_id)  # (on the reader itself: never stuck behind user code)
        if ctx is not None:
            log.debug("%s: request %r cancelled by peer: %s", self.name, ctx.request_id, reason)
            held, on_end = incoming.cancel(ctx)
            if held:  # no handler runs for it: it ends here
                self._end_held(ctx, on_end)

    def _on_progress(self, params: Dict[str, Any]) -> None:
        pending = self._outgoing.get(params.get("progressToken"))
        if pending is None:
            return
        self._outgoing.progressed(pending)  # resets the caller's timeout if it allows
        if pending.on_progress is not None:
            self._dispatcher.dispatch(pending.on_progress, params.get("progress"), params.get("total"),
                                      params.get("message"))

    def _on_batch(self, messages: List[Any]) -> None:
        if not self.batches_allowed():  # (MCP has them in protocol version 2025-03-26 alone)
            self._send(ErrorResponse(None, jsonrpc.INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not "
                                                                      "allowed on this connection (2025-03-26 only)"))
            return
        batch = Batch(sum(1 for m in messages if type(m) is Request or type(m) is Malformed))
        for message in messages:
            ctx = self.accept(message, batch)
            if ctx is not None:
                self.submit(ctx)

    # -- the way out: what the session sends, and the waiting for answers ---------------

    def _send(self, message: Any, related_to: Any = None) -> None:
        if self.trace:
            from ..wiretrace import trace

            trace(self, "→", message)
        try:
            if related_to is None:
                self.transport.write(message)
            else:
                self.transport.write(message, related_to=related_to)
        except OSError as exc:
            raise self._error_for_send(exc) from exc

    def _error_for_send(self, exc: Exception) -> ConnectionClosed:
        known = exc if isinstance(exc, ConnectionClosed) else None  # (it can say how: a child's exit code)
        return self._outgoing.closed_error or known or ConnectionClosed(f"cannot send: the connection is closed ({exc})")

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None,
                on_progress: Optional[ProgressCallback] = None,
                max_timeout: Optional[float] = None, related_to: Any = None,
                request_id: Optional[int] = None, cancellable: bool = True) -> Any:
        """Send a request and block until its answer comes.

        Args:
            method: the method name, e.g. ``"tools/call"``.
            params: the params object.
            timeout: seconds to wait; ``None`` means the session's default.
            on_progress: ``callback(progress, total, message)``, called for
                each ``notifications/progress`` about this request (a
                ``progressToken`` is added to ``params._meta``).
            max_timeout: when given, each progress notification restarts the
                ``timeout`` clock, up to this many seconds in all.
            related_to: the id of the incoming request this one is part of (a server
                asking its client mid-call): a transport with a stream per request uses it.
            request_id: an id from :meth:`new_request_id`, for a caller that
                may need to :meth:`cancel` the request from another thread.
            cancellable: tell the peer when we stop waiting (a timeout, Ctrl-C)? False for
                one never cancelled (spec basic/utilities/cancellation: ``initialize``).

        Returns:
            The ``result`` of the response.

        Raises:
            RPCError: the peer answered with an error.
            Timeout: no answer in time; the peer was sent ``notifications/cancelled``.
            ConnectionClosed: the connection ended first, or was already closed.
            KeyboardInterrupt: the request is cancelled at the peer, then re-raised.
        """
        if self.middleware:
            from .middleware import OutgoingRequest, through  # (loaded once a middleware is added)

            if request_id is None:  # known before the middleware runs: a tracer names the request by it
                request_id = self._outgoing.new_id()
            sent_ids: List[int] = []

            def send(passed: OutgoingRequest) -> Any:
                sent = passed.params if passed.params or params is not None else None  # (none stays none)
                # Each sending gets an id of its own (spec basic: an id is never reused in a session):
                # a middleware that retries, or builds a request afresh, is given a new one.
                request_id = passed.request_id
                if request_id is None or request_id in sent_ids:
                    request_id = passed.request_id = self._outgoing.new_id()
                sent_ids.append(request_id)
                return self._request(passed.method, sent, timeout, on_progress, max_timeout,
                                     related_to, request_id, cancellable)

            return through(self.middleware, OutgoingRequest(self, method, dict(params or ()), request_id), send)
        return self._request(method, params, timeout, on_progress, max_timeout, related_to, request_id, cancellable)

    def _request(self, method: str, params: Optional[Dict[str, Any]], timeout: Optional[float],
                 on_progress: Optional[ProgressCallback], max_timeout: Optional[float], related_to: Any,
                 request_id: Optional[int], cancellable: bool) -> Any:
        request_id, pending = self._outgoing.open(method, on_progress, cancellable, request_id)
        if on_progress is not None or max_timeout is not None:
            params = with_progress_token(params, request_id)  # our ids are unique: good tokens
        try:
            self._send(Request(request_id, method, params), related_to)
            return self._wait(request_id, pending, self.timeout if timeout is None else timeout, max_timeout)
        except KeyboardInterrupt:  # anywhere from send to answer: cancel at the peer
            self._give_up(request_id, pending, "interrupted by the user")
            raise
        except BaseException:
            self._outgoing.pop(request_id)
            raise

    def _wait(self, request_id: int, pending: _Pending, timeout: float, max_timeout: Optional[float]) -> Any:
        started = time.monotonic()
        reading = self._reading
        if reading is not None:  # (a stdio client's caller may read its answer itself)
            reading.awaiting(request_id, pending, started + timeout)
        try:
            return pending.wait(timeout, max_timeout, started)
        except NoAnswer:
            waited = time.monotonic() - started
            self._give_up(request_id, pending, f"timed out after {waited:.1f}s")
            raise Timeout(f"{pending.method} (request {request_id}) got no answer in {waited:.1f}s") from None
        finally:  # the callbacks of what the peer sent before the answer (progress, logs) run first
            if pending.mark is not None:
                self._dispatcher.catch_up(pending.mark, timeout)

    def new_request_id(self) -> int:
        """An id for a request to send later with ``request(..., request_id=...)``."""
        return self._outgoing.new_id()

    def timeout_paused(self, *request_ids: int) -> PausedClocks:
        """Stop the timeout clocks of requests other threads sent while this block runs (none
        named: of every request waiting now, and of those sent until the block ends); when it
        ends, each goes on from where it stopped. A request's ``max_timeout``, when given,
        bounds the pauses too.

        For requests whose answers wait on a question the peer asked us about them: a person
        answering an elicitation, a sampling round (spec basic/lifecycle "Timeouts": the
        timeout bounds the peer, not us). A proxy pauses what it forwarded while its own
        caller answers the upstream server's question. Unknown or answered ids are ignored.
        """
        return PausedClocks(self._outgoing, request_ids)

    def cancel(self, request_id: int, reason: str = "cancelled") -> None:
        """Stop waiting for a request another thread sent: it fails with ``ConnectionClosed``
        and the peer is told (``notifications/cancelled``). Unknown ids are ignored."""
        pending = self._outgoing.get(request_id)
        if pending is not None and self._give_up(request_id, pending, reason):  # (unless answered meanwhile)
            pending.set_exception(ConnectionClosed(f"{pending.method} was cancelled: {reason}"))

    def _give_up(self, request_id: int, pending: _Pending, reason: str) -> bool:
        """Stop waiting for a request; tell the peer. False if its answer already came."""
        still_pending = self._outgoing.pop(request_id) is not None
        if still_pending:
            self.transport.abandon(request_id)
        # spec basic/lifecycle "Timeouts": cancel what we stop waiting for (unless it must not be).
        if still_pending and pending.cancellable and self._outgoing.closed_error is None:
            try:
                self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
            except ConnectionClosed:
                pass
        return still_pending

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, related_to: Any = None) -> None:
        """Send a notification (``related_to``: as for :meth:`request`).

        Raises:
            ConnectionClosed: the connection is closed.
        """
        if self._outgoing.closed_error is not None:
            raise self._outgoing.closed_error
        self._send(Notification(method, params), related_to)

    # -- replies and the dispatcher -------------------------------------------

    def _answer(self, batch: Optional[Batch], reply: Any) -> None:
        """Send the answer to one incoming request (``None``: it gets none), or add it to its batch."""
        if batch is not None:
            reply = batch.add(reply)  # the whole array, once the batch's last answer is in
        if reply is not None:
            self._send(reply)

    # -- the end ----------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True once :meth:`start` or :meth:`serve_forever` began reading the stream."""
        return self._reading is not None

    @property
    def pristine(self) -> bool:
        """True while nothing of this session outlives what it answered: nothing in flight either
        way, never started, no notification ever dispatched, not closed. (An HTTP server may then
        use it for another POST: it carries nothing from one to the next.)"""
        return (not self._incoming.contexts and not self._outgoing.pending and self._reading is None
                and self._dispatcher.thread is None
                and self._outgoing.closed_error is None and not self._closing)  # (not closed)

    @property
    def busy(self) -> bool:
        """True while a request the peer sent is being handled."""
        return len(self._incoming) > 0

    @property
    def closed(self) -> bool:
        """True once the stream has ended or close() was called."""
        return self._outgoing.closed_error is not None or self._closing

    def still_waiting(self, requests: List[Tuple[Any, _Pending]]) -> List[Tuple[Any, _Pending]]:
        """Those of ``requests`` (id, pending) still waiting for their answers."""
        return self._outgoing.still_waiting(requests)

    def connection_lost(self, error: Optional[ConnectionClosed] = None) -> None:
        """Fail every pending request at once, and end those held open for the peer: it is gone."""
        for ctx, on_end in self._incoming.cancel_held():
            self._end_held(ctx, on_end)
        if error is None:
            error = ConnectionClosed("the session was closed") if self._closing else self.transport.closed_error()
        self._outgoing.close(error)

    def close(self, grace: float = 0.0) -> None:
        """End the session: stop reading, fail pending requests, join every thread.

        Handlers still running get ``grace`` seconds to finish and send their
        answers (requests held open for the peer, ``ctx.held_open()``, end at once); then
        their ``ctx.cancelled`` is set, and after ``STRAGGLERS`` seconds they are
        left behind. Idempotent, and safe to call from any thread, a handler's included.
        """
        with self._lock:
            first, self._closing = not self._closing, True
            if first:
                self._shutting_down.acquire()
        self._outgoing.refuse_new()
        if not first:
            if not self._is_own_thread() and self._shutting_down.acquire(timeout=10.0):
                self._shutting_down.release()  # (never wait for ourselves: the first closer joins us)
        else:
            try:
                self._shut_down(grace)
            finally:
                self._shutting_down.release()
        reading = self._reading
        if reading is not None and not self._is_own_thread():
            reading.join(5.0)

    def _is_own_thread(self) -> bool:
        current = threading.current_thread()
        return current is self._dispatcher.thread or (
            self._own_workers and current in self._workers.threads) or (
            self._reading is not None and current in self._reading.threads)

    def _shut_down(self, grace: float) -> None:
        if not self._incoming and self._reading is None and self._dispatcher.thread is None:
            # Nothing runs, reads or dispatches (an HTTP POST's own session, answered): the end is
            # the transport's close and the pending requests' failure, nothing to wait for or join.
            self.transport.close()
            self.connection_lost(ConnectionClosed("the session was closed"))
            return
        for ctx, on_end in self._incoming.cancel_held():  # requests held open for the peer: no grace
            self._end_held(ctx, on_end)
        for ctx in self._incoming.drain(grace, lambda: self._stopping):  # those still running after the grace
            ctx.cancelled.set()
        stragglers = time.monotonic() + STRAGGLERS
        self.transport.close()
        reading = self._reading
        if reading is not None:
            reading.wake()  # a reader thread between its looks sees the end now
            reading.join(max(5.0 if reading.reads_only else 0.0, stragglers - time.monotonic()))
        self.connection_lost(ConnectionClosed("the session was closed"))
        self._dispatcher.close(5.0)
        if self._own_workers:
            # At least a moment: an idle worker ends as soon as it is told, but a transport whose
            # close() took the whole budget (a child slow to exit) must not leave it unjoined.
            self._workers.shutdown(timeout=max(0.5, stragglers - time.monotonic()))

