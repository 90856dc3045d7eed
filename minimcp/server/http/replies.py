"""What the MCP WSGI app answers at the HTTP level: statuses, headers, refusals, bodies.

Every refusal (4xx) carries a JSON-RPC error body that says what to fix,
so a client that only logs the body still learns why.
"""

import json
import socket
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...protocol import jsonrpc
from ...protocol.jsonrpc import ErrorResponse

JSON_HEADERS = [("Content-Type", "application/json")]
SSE_HEADERS = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
               ("X-Accel-Buffering", "no")]  # nginx: pass events on at once, do not buffer them
STATUS = {200: "200 OK", 202: "202 Accepted", 400: "400 Bad Request", 401: "401 Unauthorized",
          403: "403 Forbidden", 404: "404 Not Found", 405: "405 Method Not Allowed",
          406: "406 Not Acceptable", 408: "408 Request Timeout", 409: "409 Conflict", 413: "413 Payload Too Large",
          415: "415 Unsupported Media Type", 421: "421 Misdirected Request", 500: "500 Internal Server Error",
          503: "503 Service Unavailable"}
#: Before a 413, how much of a body over the cap is read and dropped, and for how long, so a client
#: that sends the whole body before it reads (``http.client``, most scripts) reads the 413: a WSGI
#: server that closes with input unread makes the client's kernel see a reset, and the client a
#: broken pipe (gunicorn drains only 64 KiB itself). Past these, closing is the only defence.
DRAIN_BYTES, DRAIN_SECONDS = 64 * 1024 * 1024, 5.0


class HTTPError(Exception):
    """An HTTP-level refusal: status, JSON-RPC code, message, extra headers.

    ``status`` is also what a WebSocket upgrade refused by the same rules answers.
    """

    def __init__(self, status: int, message: str, code: int = jsonrpc.INVALID_REQUEST,
                 headers: Optional[List[Tuple[str, str]]] = None) -> None:
        super().__init__(message)
        self.status: int = status
        self.code = code
        self.headers: List[Tuple[str, str]] = headers or []


def session_not_found(what_to_do: str) -> HTTPError:
    """The 404 for a session id the server does not know (it expired, or was ended).

    spec basic/transports "Session Management": on 404 the client starts a new
    session; the JSON-RPC code is the one the official SDKs use too.
    """
    return HTTPError(404, f"Session not found: {what_to_do}", jsonrpc.SESSION_NOT_FOUND)


def error(start_response: Callable[..., Any], status: int, code: int, message: str,
          extra: Optional[List[Tuple[str, str]]] = None, request_id: Any = None, data: Any = None) -> List[bytes]:
    """Answer with a JSON-RPC error body (``request_id`` names the request, when known)."""
    body = jsonrpc.encode(ErrorResponse(request_id, code, message, data))
    start_response(STATUS[status], JSON_HEADERS + [("Content-Length", str(len(body)))] + (extra or []))
    return [body]


def reply(start_response: Callable[..., Any], status: int, body: bytes = b"",
          extra: Optional[List[Tuple[str, str]]] = None) -> List[bytes]:
    """Answer with ``body`` (JSON bytes as ``jsonrpc.encode`` made them), or with nothing."""
    headers = (JSON_HEADERS if body else []) + [("Content-Length", str(len(body)))] + (extra or [])
    start_response(STATUS[status], headers)
    return [body]


def read_body(environ: Dict[str, Any], max_body: int) -> bytes:
    """The request body, refused (413) past ``max_body`` bytes whether or not it said its length
    (408 when it stops coming: a timeout of the server's).

    Before the 413, a body of up to :data:`DRAIN_BYTES` is read and dropped (see
    :func:`discard_body`), so its client reads the 413 under any WSGI server.
    """
    text = (environ.get("CONTENT_LENGTH") or "").strip()
    if text and not (text.isascii() and text.isdigit()):  # int() would take "-1" (read to the end)
        raise HTTPError(400, "Bad Request: bad Content-Length")
    length = int(text) if text else -1  # -1: not said; read at most max_body + 1 bytes
    if length > max_body:
        discard_body(environ, length)
        raise _too_large(max_body)
    stream = environ["wsgi.input"]
    try:
        body: bytes = stream.read(length) if length >= 0 else stream.read(max_body + 1)
    except socket.timeout:  # the client stopped sending it (the server's read timeout passed)
        raise HTTPError(408, "Request Timeout: the request body did not come in time") from None
    if len(body) > max_body:  # (a body of unsaid length: read to its end, within the bound)
        discard_body(environ, -1, DRAIN_BYTES - len(body))
        raise _too_large(max_body)
    return body


def _too_large(max_body: int) -> HTTPError:
    return HTTPError(413, f"Payload Too Large: the limit is {max_body} bytes; send a smaller request "
                          f"(or raise the server's max_body)")


def discard_body(environ: Dict[str, Any], length: int, limit: int = DRAIN_BYTES,
                 seconds: float = DRAIN_SECONDS) -> bool:
    """Read and drop a request body the app refuses, so its client reads the refusal.

    RFC 9112 §9.6: a server that closes with input unread may have the client's kernel
    get a reset, which destroys the answer before the client reads it. So a body of up
    to ``limit`` bytes (``length``; -1 when it did not say: to its end) is read within
    ``seconds``; a larger or slower one is left, and the server's close ends it. The
    built-in server reads it after answering instead (``sockets.linger``: the client may
    stop sending as soon as it reads the 413), so it is left to that here.

    Returns:
        True if the body was read to its end.
    """
    if "minimcp.client_gone" in environ:  # the built-in server (its key): it lingers itself
        return False
    if length > limit:
        return False  # reading part of it would not save the answer: spare the bandwidth
    stream = environ["wsgi.input"]
    left = limit if length < 0 else length
    deadline = time.monotonic() + seconds
    try:
        while left > 0:
            if time.monotonic() > deadline:
                return False
            chunk = stream.read(min(65536, left))
            if not chunk:
                return True
            left -= len(chunk)
    except OSError:  # a timeout of the server's, a reset, a bad chunk (gunicorn's are OSErrors)
        return False
    return length >= 0  # (unsaid length, the whole budget read: more may follow)


def stateless_status(answer: bytes) -> int:
    """The HTTP status of a 2026-07-28 answer, as encoded bytes (see :func:`error_status`)."""
    if b'"error":{' not in answer[:300]:  # our encoder puts "error" right after the id
        return 200
    return _STATUS_OF_CODE.get(json.loads(answer).get("error", {}).get("code"), 200)


def error_status(answer: Any) -> int:
    """The HTTP status of a 2026-07-28 answer (spec 2026-07-28 basic/transports "Server
    validation"): 404 for an unknown method, 400 for a bad request, else 200."""
    if type(answer) is not ErrorResponse:
        return 200
    return _STATUS_OF_CODE.get(answer.code, 200)


_STATUS_OF_CODE = {jsonrpc.METHOD_NOT_FOUND: 404, jsonrpc.INVALID_PARAMS: 400, jsonrpc.HEADER_MISMATCH: 400,
                   jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY: 400, jsonrpc.UNSUPPORTED_PROTOCOL_VERSION: 400}


