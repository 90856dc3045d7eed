"""What both HTTP clients do with responses and ``requests`` sessions, below MCP.

Read a streaming body as it arrives, wake a thread blocked reading one, close a
session's pooled connections now, and turn a failed POST into the JSON-RPC error
its request gets. A response is ``requests``' or a direct POST's answer
(direct.py: ``http.client`` underneath, so it reads, waits and aborts itself).
``requests`` is imported here as in the clients, and only there.
"""

import socket
from typing import Any, Iterator

import requests

from ...protocol.jsonrpc import HTTP_ERROR, ErrorResponse
from .direct import Answer, DirectAnswer


def http_error(request_id: Any, response: Answer) -> ErrorResponse:
    """The JSON-RPC error a failed POST means for the request it carried.

    Uses the server's JSON-RPC error body when it sent one; ``data`` keeps
    the HTTP status, so callers (and the fallback to HTTP+SSE) can tell a 404 from a 405.
    """
    code, message = HTTP_ERROR, f"HTTP {response.status_code} {response.reason}"
    try:
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            code, message = error["code"], f"{message}: {error.get('message', '')}"
    except ValueError:
        if response.text:
            message += f": {response.text[:200]}"
    if response.status_code == 401:
        message += " (pass auth= or headers= to connect())"
    return ErrorResponse(request_id, code, message, {"httpStatus": response.status_code})


def arriving(response: Answer) -> Iterator[bytes]:
    """The body of a streaming response, in pieces as they arrive.

    ``iter_content(chunk_size=None)`` yields a chunked body chunk by chunk, but
    reads any other body (one that ends when the server closes the connection,
    legal in HTTP/1.1) to its very end before yielding anything, so a request
    sent mid-stream would wait for the stream to end. ``read1()`` returns
    whatever has arrived (as does a direct POST's answer: ``http.client``'s ``read1``).
    """
    if isinstance(response, DirectAnswer):
        yield from response.pieces()
        return
    raw = response.raw
    if getattr(raw, "chunked", False) or not hasattr(raw, "read1"):  # (urllib3 < 2 has no read1)
        yield from response.iter_content(chunk_size=None)
        return
    from urllib3.exceptions import HTTPError

    while True:  # until the body ends, fails, or close() aborts it: a stream has no length to bound it
        try:
            data = raw.read1(65536)
        except HTTPError as exc:  # urllib3's own errors (a connection reset mid-body, ...)
            raise requests.exceptions.ChunkedEncodingError(exc) from exc
        if not data:
            return
        yield data


def no_read_timeout(response: Answer) -> None:
    """A stream may be quiet for long (a slow tool): the caller's timeout governs it, not ours."""
    if isinstance(response, DirectAnswer):
        return response.no_read_timeout()
    raw: Any = response.raw  # the layers below urllib3 are private (Any): a change is an AttributeError
    try:
        raw._fp.fp.raw._sock.settimeout(None)
    except (AttributeError, OSError):
        pass


def abort(response: Answer) -> None:
    """Close a streaming response so that a thread blocked reading it wakes up now.

    Closing a socket does not wake a ``recv()`` blocked on it in another
    thread; shutting it down does. The socket sits a few layers down
    (urllib3 -> http.client -> socket file); if the layout differs, the
    reader still ends, at the read timeout.
    """
    if isinstance(response, DirectAnswer):
        return response.abort()
    raw: Any = response.raw  # (private layers, as in no_read_timeout)
    try:
        raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
    except (AttributeError, OSError):
        pass
    response.close()


def close_http(http: "requests.Session") -> None:
    """Close a ``requests`` session and its idle pooled connections, now.

    ``Session.close()`` empties urllib3's pool manager, but urllib3 (2.8 on) does not
    close the pools it drops: their kept-alive sockets would stay open until the
    garbage collector came, each holding a thread of the server.
    """
    for adapter in http.adapters.values():
        pools: Any = getattr(getattr(adapter, "poolmanager", None), "pools", None)  # urllib3's, private
        for key in list(pools.keys()) if pools is not None else []:
            pool = pools.get(key)
            if pool is not None:
                pool.close()
    http.close()
