"""How ``Server.run()`` serves until stopped: stdio with signal handling, or the built-in HTTP server.

Kept apart from :mod:`minimcp.server.server` because it is process plumbing
(signals, the parent watch, sockets), not the registry; it is loaded only
when a server is run.
"""

from __future__ import annotations

import gc
import os
import sys
import threading

from ..logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    import signal
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional

    from .server import Server
else:
    try:  # signal's own C module: signal.py makes three IntEnums as it loads (costly: benchmarks/instructions.py)
        import _signal as signal
    except ImportError:  # (an interpreter without it)
        import signal

log: Logger = get_logger(__name__)


def run(server: Server, transport: str, host: str, port: int, websocket_path: Optional[str],
        options: Dict[str, Any]) -> None:
    """Serve ``server`` over ``transport`` until stopped (see :meth:`Server.run`).

    ``options["max_message"]`` (``server.run(max_message=...)``): the largest message this server
    reads, in bytes, on whichever transport: a stdio line (default 64 MiB), a WebSocket message
    (default: the HTTP app's ``max_body``, else 4 MiB) and, unless ``max_body=`` is given too,
    an HTTP request body. Without it, ``MINIMCP_MAX_MESSAGE`` sets the stdio and WebSocket-only
    limits (every minimcp process that inherits that variable takes it).

    Raises:
        ValueError: ``transport`` is not ``"stdio"``, ``"http"`` or ``"websocket"``, ``max_message``
            is not a positive number of bytes, or ``session_id_prefix`` is given to a transport
            other than ``"http"`` or cannot start a session id (said before anything is served).
    """
    if transport not in ("stdio", "http", "websocket"):
        raise ValueError(f"unknown transport {transport!r}; use 'stdio', 'http' or 'websocket'")
    if "session_id_prefix" in options and transport != "http":  # (the app checks it, over HTTP)
        raise ValueError(f"session_id_prefix starts the HTTP session ids of run('http'); run({transport!r}) "
                         f"has none: leave it out")
    max_message = options.pop("max_message", None)
    if max_message is not None:
        from ..transports.stdio import SERVER_MAX_MESSAGE, message_limit

        max_message = message_limit(SERVER_MAX_MESSAGE, max_message)  # (checked: 0 or less is refused)
    if threading.current_thread() is threading.main_thread():  # the server owns the process
        # What exists now (the modules, the registry) lives as long as the process: frozen, the
        # garbage collector never walks it again, in a full collection or at exit (a large part
        # of a stdio server's whole run: benchmarks/instructions.py counts it). Only garbage
        # made before this is kept.
        gc.freeze()
    if transport in ("http", "websocket"):
        from .http.wsgiserver import MAX_CONNECTIONS, serve

        max_connections = options.pop("max_connections", MAX_CONNECTIONS)  # the server's; the rest the app's
        quiet = options.pop("quiet", False)
        if transport == "websocket":
            websocket_path = websocket_path or "/ws"
            app: Any = _not_found
        else:
            if max_message is not None:  # one limit for a message, whichever way it comes
                options.setdefault("max_body", max_message)
            app = server.wsgi_app(**options)

        def say_where(httpd: Any) -> None:
            # One line on stderr, for the person who started it (stdout may be a pipe, and a
            # logger may have no handler): where to point a client.
            bound, bound_port = httpd.server_address[:2]
            where = [f"http://{bound}:{bound_port}{app.path}"] if transport == "http" else []
            if websocket_path:
                where.append(f"ws://{bound}:{bound_port}{websocket_path}")
            print(f"serving MCP at {' and '.join(where)}", file=sys.stderr, flush=True)

        serve(app, host, port, ready=None if quiet else say_where,
              websockets={websocket_path: server} if websocket_path else None, max_connections=max_connections,
              max_message=max_message)
        return
    run_stdio(server, max_message)


def run_stdio(server: Server, max_message: Optional[int] = None) -> None:
    """Serve one client on this process's stdin/stdout until stdin closes, SIGTERM or Ctrl-C.

    ``max_message``: the longest line read, in bytes (default: ``MINIMCP_MAX_MESSAGE``, else
    64 MiB; see :class:`~minimcp.transports.stdio.StdioTransport`).

    At the end of stdin, the requests read get the session's grace period to
    be answered. SIGTERM and Ctrl-C (SIGINT, unless the process ignores it)
    cancel what is in flight at once; either way the call returns, so the
    process exits 0, quietly. A parent that dies without closing our stdin is
    noticed too: the waiting thread checks the parent's pid once a second. Signals
    can be set only on the main thread, so elsewhere none of this is done.
    """
    from ..transports.stdio import StdioTransport

    transport = StdioTransport.for_current_process(max_message)
    session = server.open_connection(transport).session
    stopped: List[int] = []

    def on_signal(signum: int, frame: Any) -> None:
        # This runs on the main thread between two bytecodes, perhaps inside a
        # buffered read or write: raising here (as KeyboardInterrupt would) could
        # leave a file object's lock taken, and finalization then dies on it
        # ("_enter_buffered_busy"). So it only sets flags, and ends stdin.
        if stopped:  # (the signal it sends below lands here again)
            return
        stopped.append(signum)
        reading = session.stop()
        transport.end_input()
        if reading is not None and hasattr(signal, "pthread_kill"):
            try:  # a read blocked on the old stdin: interrupted, it is retried on /dev/null
                signal.pthread_kill(reading, signum)
            except OSError:  # (that thread has just ended)
                pass

    in_main = threading.current_thread() is threading.main_thread()
    previous = {}
    if in_main:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, on_signal)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (an ignored SIGINT stays so)
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, on_signal)
    parent = os.getppid()

    def watch_parent() -> None:
        # Once a second, on this thread, while it waits: a client that died without closing our
        # stdin (another process holds the pipe open) leaves us with a new parent.
        if os.getppid() != parent and not stopped:
            log.info("parent process %d is gone; shutting down", parent)
            on_signal(signal.SIGTERM, None)

    try:
        session.serve_forever(while_waiting=watch_parent if in_main else None)
        if stopped:
            from signal import Signals  # (late: the enum only for the name it logs)

            log.info("%s; shut down", Signals(stopped[0]).name)
    except KeyboardInterrupt:  # (a SIGINT handler of the caller's own)
        log.info("interrupted; shutting down")
        session.stop()
        session.close()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.log_bridge.uninstall()
        if "tasks" in server.__dict__:  # a task runner was made (few servers have one: don't import it)
            from .tasks import close as close_tasks

            close_tasks(server)  # the client is gone: its running tasks end cancelled


def _not_found(environ: Dict[str, Any], start_response: Callable[..., Any]) -> List[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "39")])
    return [b"this server speaks MCP over WebSocket\n"]
