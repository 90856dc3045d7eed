"""How ``Server.run()`` serves until stopped: stdio with signal handling, or the built-in HTTP server.

Kept apart from :mod:`minimcp.server.server` because it is process plumbing
(signals, the parent watch, sockets), not the registry; it is loaded only
when a server is run.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable, List, Optional

from ..logs import get_logger

if TYPE_CHECKING:  # pragma: no cover
    from .server import Server

log = get_logger(__name__)


def run(server: "Server", transport: str, host: str, port: int, websocket_path: Optional[str],
        options: dict) -> None:
    """Serve ``server`` over ``transport`` until stopped (see :meth:`Server.run`).

    Raises:
        ValueError: ``transport`` is not ``"stdio"``, ``"http"`` or ``"websocket"``.
    """
    if transport in ("http", "websocket"):
        from ..http.wsgiserver import serve

        if transport == "websocket":
            websocket_path = websocket_path or "/ws"
            app: Any = _not_found
        else:
            app = server.wsgi_app(**options)
        serve(app, host, port, websockets={websocket_path: server} if websocket_path else None)
        return
    if transport != "stdio":
        raise ValueError(f"unknown transport {transport!r}; use 'stdio', 'http' or 'websocket'")
    run_stdio(server)


def run_stdio(server: "Server") -> None:
    """Serve one client on this process's stdin/stdout until stdin closes, SIGTERM or Ctrl-C.

    SIGTERM becomes ``KeyboardInterrupt`` so both end the same way; a parent
    that dies without closing our stdin is noticed too (``watch_parent``).
    Signals can be set only on the main thread, so elsewhere neither is done.
    """
    from ..transports.stdio import StdioTransport, watch_parent

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if in_main else None
    stop_watching = watch_parent(lambda: os.kill(os.getpid(), signal.SIGTERM)) if in_main else None
    try:
        server.serve(StdioTransport.for_current_process(), background=False)
    except KeyboardInterrupt:
        log.info("interrupted; shutting down")
        for connection in server.connections():
            connection.session.close()
    finally:
        if stop_watching is not None:
            stop_watching()
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        server.log_bridge.uninstall()


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _not_found(environ: dict, start_response: Callable) -> List[bytes]:
    start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "39")])
    return [b"this server speaks MCP over WebSocket\n"]
