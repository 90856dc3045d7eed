"""A small threaded HTTP/1.1 server for WSGI apps, from the standard library.

What ``server.run("http")`` uses, so an MCP server needs nothing else to go
on the network: one thread per connection, keep-alive, responses of unknown
length streamed with chunked encoding (each SSE event is sent as it is
yielded; close-delimited for HTTP/1.0, which has no chunks), ``TCP_NODELAY``
(without it keep-alive requests wait ~40 ms on delayed ACKs), and a graceful
stop: stop accepting, end the SSE streams, let in-flight requests finish,
release the port.

Hostile clients are bounded: at most ``max_connections`` connections are served (past it
the oldest idle keep-alive connection is closed, or the new one gets a 503); a bad request
head (:mod:`minimcp.server.http.request`) or ``Content-Length`` is a 400; and a connection closed
with a request unread is closed *lingering* (our side shut, the rest read and dropped,
within bounds) so the client reads the answer instead of a reset. For production, run the
same WSGI app under gunicorn or waitress instead.

Here: the listening socket and the connection cap (:class:`WSGIServer`), ``serve()`` and
:class:`BackgroundServer`. What a connection does with each request is
:class:`~minimcp.server.http.handler.RequestHandler`.
"""

import selectors
import signal
import socket
import socketserver
import threading
import time
from http.server import HTTPServer
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Set, Tuple

from ...engine.threads import join, start_thread
from ...logs import get_logger
from .handler import RequestHandler

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: Connections served at once by default (each holds a thread; an SSE stream holds one for its life).
MAX_CONNECTIONS = 256
#: Connections past the cap answered 503 at once; beyond these the new ones are just closed.
MAX_REFUSING = 16


class WSGIServer(socketserver.ThreadingMixIn, HTTPServer):
    """The listening socket, one named thread per connection, and a graceful stop.

    Args:
        address: ``(host, port)`` to listen on.
        app: the WSGI application.
        websockets: path -> minimcp Server, served over WebSocket at that path.
        max_connections: connections served at once. At the cap a new
            connection closes the longest-idle keep-alive one (a connection
            waiting for its next request); when none is idle it is answered
            ``503`` with ``Retry-After`` and closed, never left waiting.
        max_message: the largest WebSocket message read, in bytes (over it: close 1009).
            Default: the app's ``max_body`` (a message too big for a POST is too big here),
            else ``MINIMCP_MAX_MESSAGE``, else 4 MiB. Worked out once, here.

    Raises:
        ValueError: ``max_connections`` is below 1; with ``websockets``, ``max_message`` (or the
            app's ``max_body``) is not a positive number of bytes, or ``MINIMCP_MAX_MESSAGE``
            is set, and not to one (said now, not to each client after its upgrade).
    """

    daemon_threads = True
    block_on_close = False  # stop() joins the threads itself, with a deadline
    allow_reuse_address = True
    request_queue_size = 128  # socketserver's 5 resets clients that connect together

    def __init__(self, address: Tuple[str, int], app: Callable[..., Any], websockets: Optional[Dict[str, Any]] = None,
                 max_connections: int = MAX_CONNECTIONS, max_message: Optional[int] = None) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.app = app
        #: path -> minimcp Server, served over WebSocket at that path
        self.websockets: Dict[str, Any] = dict(websockets or {})
        #: The largest WebSocket message read (None: no WebSocket route, nothing worked out).
        self.max_message: Optional[int] = None
        if self.websockets:  # before the socket is bound: a bad limit leaves nothing open
            self.max_message = _websocket_limit(app, max_message)
        self.max_connections = max_connections
        self.stopping: threading.Event = threading.Event()
        self._connections: Dict[threading.Thread, socket.socket] = {}
        self._idle: Dict[socket.socket, None] = {}  # waiting for a request line, longest-waiting first
        self._closed_idle: Set[Any] = set()  # idle connections closed at the cap, their threads still ending
        self._refused: Set[Any] = set()  # connections past the cap, being answered 503
        self._conn_lock = threading.Lock()
        # stop() writes a byte here to end the accept loop's wait at once (socketserver's own loop
        # looks for a shutdown request only every poll_interval: half a second per stop).
        self._wake_read, self._wake_write = socket.socketpair()
        self._loop_ended, self._loop_lock = threading.Event(), threading.Lock()  # (the lock: see serve_forever)
        self._loop_ended.set()  # (no loop runs yet)
        super().__init__(address, RequestHandler)

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept connections until :meth:`shutdown` (or :meth:`stop`); ``poll_interval`` is
        unused: the loop sleeps until a connection comes or it is told to stop."""
        with self._loop_lock:  # a stop() that came before the loop began keeps it from beginning
            if self.stopping.is_set():
                return  # (server_close() may have closed the socket)
            self._loop_ended.clear()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self.socket, selectors.EVENT_READ)
                selector.register(self._wake_read, selectors.EVENT_READ)
                while not self.stopping.is_set():
                    for key, _ in selector.select():
                        if key.fileobj is self.socket and not self.stopping.is_set():
                            self._accept()
        finally:
            self._loop_ended.set()

    def _accept(self) -> None:
        try:
            request, client_address = self.get_request()
        except OSError:
            return  # the client reset before it was accepted
        try:
            self.process_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
            self.shutdown_request(request)

    def shutdown(self) -> None:
        """Stop the accept loop and wait for it to end (connections already served go on)."""
        with self._loop_lock:
            self.stopping.set()
        try:
            self._wake_write.send(b"x")
        except OSError:
            pass  # closed already: the loop has ended
        self._loop_ended.wait()

    def server_close(self) -> None:
        """Close the listening socket (and the loop's wake-up pair)."""
        super().server_close()
        self._wake_read.close()
        self._wake_write.close()

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve one connection on its own thread (named, and tracked for stop()), within the cap."""
        def serve() -> None:
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)
                with self._conn_lock:
                    self._connections.pop(threading.current_thread(), None)
                    self._idle.pop(request, None)
                    self._closed_idle.discard(request)
                    self._refused.discard(request)

        with self._conn_lock:
            if len(self._connections) - len(self._closed_idle) - len(self._refused) >= self.max_connections:
                if not self._make_room():
                    if len(self._refused) >= MAX_REFUSING:
                        self.shutdown_request(request)  # a flood: no thread for it, but no hang either
                        return
                    self._refused.add(request)
            if request not in self._refused:
                self._idle[request] = None  # idle until its first request line is read
            thread = start_thread(serve, "http")
            self._connections[thread] = request

    def _make_room(self) -> bool:
        """Close the longest-idle connection (its thread sees end of stream); under the lock."""
        for victim in self._idle:
            if victim in self._closed_idle:
                continue
            self._closed_idle.add(victim)
            del self._idle[victim]
            try:
                victim.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            log.info("%d connections: closed an idle one", self.max_connections)
            return True
        log.warning("%d connections, none idle: answering 503", self.max_connections)
        return False

    def mark_idle(self, request: Any, idle: bool) -> None:
        """Say whether a connection waits for its next request (so it may be closed at the cap)."""
        with self._conn_lock:
            if not idle:
                self._idle.pop(request, None)
            elif request not in self._idle and request not in self._closed_idle and request not in self._refused:
                self._idle[request] = None  # at the end: the longest-idle stay first

    def is_refused(self, request: Any) -> bool:
        """True for a connection past the cap (it is answered 503)."""
        with self._conn_lock:
            return request in self._refused

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Log a failed connection instead of printing a traceback to stderr."""
        log.exception("error serving %s", client_address)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let in-flight requests finish (up to ``timeout``), release the port.

        Must not be called from the thread running ``serve_forever()``.
        """
        self.shutdown()
        close = getattr(self.app, "close", None)
        if close is not None:
            close()  # ends every SSE stream, so their threads can finish
        with self._conn_lock:
            connections = dict(self._connections)
        for sock in connections.values():
            try:
                sock.shutdown(socket.SHUT_RD)  # idle keep-alive readers see EOF; writes still go out
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        for thread in connections:
            join(thread, max(0.0, deadline - time.monotonic()))
        self.server_close()


def _websocket_limit(app: Callable[..., Any], max_message: Optional[int]) -> int:
    """The WebSocket routes' message limit: ``max_message``, else the app's ``max_body``, else
    ``MINIMCP_MAX_MESSAGE``, else 4 MiB (ValueError for one that is not a number of bytes)."""
    from ...transports.stdio import message_limit  # late: few servers route WebSockets
    from ...transports.websocket import SERVER_MAX_MESSAGE

    if max_message is not None:
        return message_limit(SERVER_MAX_MESSAGE, max_message)
    return message_limit(SERVER_MAX_MESSAGE, getattr(app, "max_body", None), name="the app's max_body")


def serve(app: Callable[..., Any], host: str = "127.0.0.1", port: int = 8000,
          ready: Optional[Callable[[WSGIServer], None]] = None, websockets: Optional[Dict[str, Any]] = None,
          max_connections: int = MAX_CONNECTIONS, max_message: Optional[int] = None) -> None:
    """Serve ``app`` until Ctrl-C or SIGTERM, then stop gracefully.

    Binds ``127.0.0.1`` unless told otherwise (spec: local servers SHOULD
    bind to localhost only). ``ready(server)`` is called once it listens.
    ``websockets`` maps paths to minimcp Servers served over WebSocket there.
    ``max_connections`` caps the connections served at once, ``max_message`` a WebSocket
    message (see :class:`WSGIServer`).

    Raises:
        ValueError: a limit is not a positive number (see :class:`WSGIServer`).
    """
    httpd = WSGIServer((host, port), app, websockets, max_connections, max_message)
    stop = threading.Event()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if in_main else None
    serving = start_thread(httpd.serve_forever, "http-accept")
    log.info("MCP server listening on http://%s:%d", *httpd.server_address[:2])
    if ready is not None:
        ready(httpd)
    try:
        stop.wait()  # the signal handler (main thread) sets it; Ctrl-C raises here
    except KeyboardInterrupt:
        pass
    finally:
        httpd.stop()
        join(serving, 5.0)
        if in_main:
            signal.signal(signal.SIGTERM, previous)


class BackgroundServer:
    """Run a WSGI app on a background thread (for tests and embedding); a context manager.

    Example::

        with BackgroundServer(server.wsgi_app()) as running:
            client = minimcp.connect(running.url + "/mcp")

    Binds port 0 (a free port) on 127.0.0.1 by default; ``url`` says where. The other
    arguments are :class:`WSGIServer`'s.
    """

    def __init__(self, app: Callable[..., Any], host: str = "127.0.0.1", port: int = 0,
                 websockets: Optional[Dict[str, Any]] = None, max_connections: int = MAX_CONNECTIONS,
                 max_message: Optional[int] = None) -> None:
        self.httpd: WSGIServer = WSGIServer((host, port), app, websockets, max_connections, max_message)
        self.url: str = f"http://{host}:{self.httpd.server_address[1]}"
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "BackgroundServer":
        """Start serving (the socket already listens, so requests can be sent at once)."""
        self._thread = start_thread(self.httpd.serve_forever, "http-accept")
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop gracefully and join every thread."""
        if self._thread is not None:
            self.httpd.stop(timeout)
            join(self._thread, 5.0)
            self._thread = None

    def __enter__(self) -> "BackgroundServer":
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
