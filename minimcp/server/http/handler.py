"""The built-in HTTP server's connection: each request read, run through the WSGI app, answered.

One :class:`RequestHandler` per connection, on the connection's thread
(:class:`~minimcp.server.http.wsgiserver.WSGIServer` starts it): keep-alive, the head
read by :mod:`minimcp.server.http.request` (not ``email.parser``), the WSGI environ
(PEP 3333), a response of unknown length streamed with chunked encoding (each
SSE event as it is yielded; close-delimited for HTTP/1.0), a WebSocket upgrade
where one is routed, and the socket-level refusals of :mod:`minimcp.server.http.sockets`.
"""

import io
import socket
import sys
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Tuple

from ...logs import get_logger
from .request import ENVIRON_KEY, Body, HeadError, read_fields, read_request_line
from .sockets import REFUSE_TIMEOUT, TimedReads, client_gone, content_length, kernel_timeouts, linger, refusal

if TYPE_CHECKING:
    from logging import Logger

    from .wsgiserver import WSGIServer

log: "Logger" = get_logger(__name__)


class RequestHandler(BaseHTTPRequestHandler):
    """One connection of the built-in server: read each request's head, run the WSGI app, send its answer."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 120.0  # an idle keep-alive connection is closed after this many seconds
    server: "WSGIServer"
    # What each connection and request leaves here (http.server's names, with the types of our values):
    refusing: bool
    rfile: Any  # a BufferedReader (over TimedReads where the kernel times the socket)
    raw_requestline: bytes
    requestline: str
    command: str
    path: str
    request_version: str
    close_connection: bool
    headers: Any  # a minimcp.server.http.request.Fields: the part of a Message that http.server reads

    def setup(self) -> None:
        """Set the connection up: its waits timed by the kernel where it can be
        (:func:`~minimcp.server.http.sockets.kernel_timeouts`); a connection past the cap gets a short
        timeout (it is refused)."""
        self.refusing = self.server.is_refused(self.request)
        if self.refusing:
            self.timeout = REFUSE_TIMEOUT  # type: ignore[misc]  # per connection: setup() reads self.timeout
        by_kernel = not self.refusing and bool(self.timeout) and kernel_timeouts(self.request, self.timeout)
        if by_kernel:
            self.timeout = None  # type: ignore[assignment,misc]  # no settimeout(): no poll before each recv and send
        super().setup()
        if by_kernel:  # makefile()'s reader, unread yet, swapped for one that raises at the kernel's timeout
            self.rfile.close()
            self.rfile = io.BufferedReader(TimedReads(self.connection, "rb"))

    def handle_one_request(self) -> None:
        """Read one request and run the app for it (any method)."""
        self.command, self.request_version, self.requestline = "", "HTTP/1.0", ""  # (what send_error reads)
        self.server.mark_idle(self.request, True)  # waiting for a request: the first to close at the cap
        try:
            self.raw_requestline = self.rfile.readline(65537)
        except (OSError, ValueError):
            self.close_connection = True
            return
        finally:
            self.server.mark_idle(self.request, False)
        if not self.raw_requestline or self.server.stopping.is_set():
            self.close_connection = True
            return
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            return
        if not self.parse_request():
            return
        if self.refusing:
            self._refuse()
            return
        route = self.server.websockets.get(self.path.partition("?")[0])
        if route is not None and self.headers.get("Upgrade", "").lower() == "websocket":
            self._websocket(route)
            return
        self._run_app()

    def parse_request(self) -> bool:
        """Read the request line and the header fields (:mod:`minimcp.server.http.request`: http.server's own
        reads the fields with ``email.parser``); False, answered, if the request cannot be served."""
        self.close_connection, self.requestline = True, str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        if not self.requestline.strip():
            return False  # an empty line where a request should be: closed unanswered, as http.server does
        try:
            self.command, self.path, self.request_version, number = read_request_line(self.requestline)
            self.headers = read_fields(self.rfile)
        except HeadError as exc:
            self.send_error(exc.status, exc.reason)
            self._linger()  # (the rest of the head unread: the client reads the answer, not a reset)
            return False
        except socket.timeout:  # the head stopped coming: say so, and close (its reads would fail at once now)
            self.send_error(408, "Request Timeout: the request head did not come in time")
            return False
        connection, before_1_1 = self.headers.get("Connection", "").lower(), number < (1, 1)
        self.close_connection = connection == "close" or (before_1_1 and connection != "keep-alive")
        if not before_1_1 and self.headers.get("Expect", "").lower() == "100-continue":
            return self.handle_expect_100()
        return True

    def _websocket(self, mcp_server: Any) -> None:
        """Upgrade to a WebSocket (RFC 6455 §4.2) and serve MCP on it until the client leaves."""
        from ...transports.websocket import WebSocketServerTransport, accept_key
        from .security import is_local_origin

        key = self.headers.get("Sec-WebSocket-Key")
        origin = self.headers.get("Origin")
        if not key or self.headers.get("Sec-WebSocket-Version") != "13":
            self.send_error(400, "Bad Request: not a WebSocket version 13 handshake")
            return
        check = getattr(self.server.app, "check_request", None)  # the HTTP app's Host/Origin/auth rules
        principal = None
        if check is not None:
            try:
                principal = check({name.lower(): value for name, value in self.headers.items()},
                                  self._upgrade_environ())
            except Exception as exc:
                self.send_error(getattr(exc, "status", 403), str(exc))
                return
        elif origin and not is_local_origin(origin):
            self.send_error(403, "Forbidden: origin not allowed")  # DNS rebinding, as for HTTP
            return
        offered = [p.strip() for p in self.headers.get("Sec-WebSocket-Protocol", "").split(",")]
        head = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
                f"Sec-WebSocket-Accept: {accept_key(key)}"]
        if "mcp" in offered:
            head.append("Sec-WebSocket-Protocol: mcp")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        self.close_connection = True
        self.connection.settimeout(None)  # the idle keep-alive timeout is for HTTP, not for a session
        kernel_timeouts(self.connection, 0)
        transport = WebSocketServerTransport(self.rfile, self.wfile, max_message=self.server.max_message)
        mcp_server.serve(transport, background=False, principal=principal)

    def _upgrade_environ(self) -> Dict[str, Any]:
        """The WSGI environ of the upgrade GET, as much as an auth hook reads: its method and URL
        (``wsgiref.util.request_uri``), which a DPoP proof must name (RFC 9449 §4.3 checks 8-9).
        The upgrade is an HTTP GET (RFC 6455 §4.1), so its URL is an http:// one, as every other
        request's here. No body, and no header but Host: the hook gets the headers as ``headers``."""
        path, _, query = self.path.partition("?")
        environ: Dict[str, Any] = {
            "REQUEST_METHOD": self.command, "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": self.server.server_address[0], "SERVER_PORT": str(self.server.server_address[1]),
            "SERVER_PROTOCOL": self.request_version, "wsgi.url_scheme": "http",
        }
        host = self.headers.get("Host")
        if host:
            environ["HTTP_HOST"] = host
        return environ

    def _environ(self, body: Body) -> Dict[str, Any]:
        path, _, query = self.path.partition("?")
        environ: Dict[str, Any] = {
            "REQUEST_METHOD": self.command, "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": self.server.server_address[0], "SERVER_PORT": str(self.server.server_address[1]),
            "SERVER_PROTOCOL": self.request_version, "REMOTE_ADDR": self.client_address[0],
            "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": body, "wsgi.errors": sys.stderr,
            "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
            "minimcp.client_gone": self._client_gone,
        }
        # One pass over the fields as they came.
        for name, value in self.headers.raw_items():
            key = ENVIRON_KEY[name]
            if key is None:  # a name with "_" (see ENVIRON_KEY)
                continue
            if key == "HTTP_CONTENT_TYPE" or key == "HTTP_CONTENT_LENGTH":
                environ.setdefault(key[5:], value)  # the first one, as headers.get() gives
            else:
                environ[key] = f"{environ[key]},{value}" if key in environ else value
        environ.setdefault("CONTENT_TYPE", "")
        environ.setdefault("CONTENT_LENGTH", "")
        return environ

    def _refuse(self) -> None:
        """Answer 503 to a connection past ``max_connections``, in a way its client can read."""
        self.close_connection = True
        try:
            self.wfile.write(refusal(self.protocol_version))
        except OSError:
            return
        self._linger()

    def _linger(self) -> None:
        self.close_connection = True
        linger(self.connection)

    def _client_gone(self) -> bool:
        return client_gone(self.connection)

    def _run_app(self) -> None:
        if self.headers.get("Transfer-Encoding") is not None:  # any coding: the body's end would be unknown
            self.send_error(411, "Length Required: send a Content-Length")
            self._linger()
            return
        length = content_length(self.headers.get_all("Content-Length") or [])
        if length is None:  # the body's end is unknown: nothing after it can be read as a request
            self.send_error(400, "Bad Request: invalid Content-Length")
            self._linger()
            return
        body = Body(self.rfile, length)
        response: List[Any] = []  # [status, headers] once start_response is called
        # (start_response's hints are strings: this def runs for every request, and typing's generics are costly)
        def start_response(status: str, headers: "List[Tuple[str, str]]", exc_info: Any = None) -> "Callable[..., Any]":
            response[:] = [status, headers]
            return self.wfile.write

        result = self.server.app(self._environ(body), start_response)
        if body.remaining > 65536:  # the app did not read it (a 413, say): too much to drain, so close
            self.close_connection = True  # ...and say so in the answer's headers
        try:
            self._send(result, response)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-response
            body.remaining = 0
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # a generator's finally runs now: streams detach, resources go
        if body.remaining > 65536:
            self._linger()
        elif body.remaining:
            try:
                body.read()  # a little left: drain it, else it would be read as the next request
            except OSError:  # it timed out (a 408), or the client went: nothing more is read here
                self.close_connection = True

    def _send(self, result: Any, response: List[Any]) -> None:
        chunks = iter(result)
        first = next(chunks, b"")
        status, headers = response
        names = {name.lower() for name, _ in headers}
        streamed = "content-length" not in names
        chunked = streamed and self.request_version not in ("HTTP/1.0", "HTTP/0.9")
        if streamed and not chunked:
            self.close_connection = True  # HTTP/1.0 has no chunks: the end of the body is the close
        head = [f"{self.protocol_version} {status}\r\n"]
        head += [f"{name}: {value}\r\n" for name, value in headers]
        if chunked:
            head.append("Transfer-Encoding: chunked\r\n")
        if self.close_connection:
            head.append("Connection: close\r\n")
        head.append("\r\n")
        data = "".join(head).encode("latin-1")
        if not chunked:  # headers and body in one send: no Nagle/delayed-ACK stall
            self.wfile.write(data + first + (b"" if streamed else b"".join(chunks)))
            for chunk in chunks:  # HTTP/1.0 streaming: as they come, close-delimited
                self.wfile.write(chunk)
            return
        self.wfile.write(data + (b"%x\r\n%s\r\n" % (len(first), first) if first else b""))
        for chunk in chunks:
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        """Log requests at debug level through ``logging`` (never to stdout)."""
        log.debug("%s %s", self.address_string(), format % args)
