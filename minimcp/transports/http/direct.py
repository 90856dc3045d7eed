"""The client's hot POST: ``http.client`` on a kept-alive connection, beside a ``requests.Session``.

``requests`` prepares every request afresh (URL parsing, hooks, cookie and proxy
merging, auth), and urllib3 below it wraps each one in Retry, Timeout and pool
objects: together most of the client's CPU per call on plain ``http://``
(benchmarks/instructions_client.py measures it). When a POST needs none of it (no
TLS, proxy or cookie to send, and no auth but a held Bearer token),
:class:`DirectPost` sends it itself on one of its own kept-alive connections, and
:class:`DirectAnswer` reads the answer (a JSON body by its Content-Length, an SSE
stream as it arrives); ``requests`` keeps everything else. A :class:`DirectAnswer`
has the few fields of a ``requests.Response`` the transport reads, so the transport
reads both kinds one way.

A kept-alive connection the server closed while it was idle (its keep-alive
timeout) is found before it is used, as urllib3 does: an idle connection has
nothing to read, so one that is readable (an end of stream) is dropped, and the
POST goes on a fresh one. A POST that could not be sent at all goes once more
on a fresh connection. Once it was sent, never: a connection that ends without
an answer may have been read (a worker killed mid-request), and a tool must not
run twice; that request fails, as it would through ``requests``.
"""

import http.client
import json
import socket
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union
from urllib.parse import urlsplit

import requests
import requests.cookies  # (requests loads it itself: named so that type checkers know it)

from ..sockets import readable

#: What a POST's answer is, to the transport: ``requests``' or ours.
Answer = Union[requests.Response, "DirectAnswer"]


class DirectPost:
    """POSTs to ``url`` on kept-alive ``http.client`` connections, for the ``session`` beside it.

    Args:
        session: the transport's ``requests.Session``: its headers go on every POST, and
            its auth, proxies and cookies decide whether a POST may go direct.
        url: the MCP endpoint.
        connections: how many idle connections to keep (one per thread that posts at once).
    """

    def __init__(self, session: requests.Session, url: str, connections: int = 64) -> None:
        self.session: requests.Session = session
        self.url: str = url
        parts = urlsplit(url)
        self.plain: bool = parts.scheme == "http"  # plain http only: requests keeps TLS, with its CA settings
        self.host: str = parts.hostname or "localhost"
        self.port: int = parts.port or 80
        self.path: str = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._keep = connections
        self._idle: List[http.client.HTTPConnection] = []  # kept-alive, free: the last used first
        self._lock = threading.Lock()
        self._closed = False

    def headers(self) -> Optional[Dict[str, str]]:
        """The headers a direct POST adds (``{}``, or an OAuth flow's token), or None when the
        POST needs ``requests`` (read per call: the session's auth, proxies and cookies may change).

        An auth object takes part when it has ``direct_headers(url)`` (``minimcp.client.auth``'s
        flows): a held, fresh Bearer token is then one header; the rest (no token yet,
        renewal, DPoP, a 401 or 403) goes through ``requests``, which calls the flow."""
        session = self.session
        if not self.plain or session.proxies or session.cookies:
            return None
        if session.auth is None:
            return {}
        direct = getattr(session.auth, "direct_headers", None)
        return direct(self.url) if direct is not None else None

    def post(self, body: bytes, headers: Dict[str, str], timeout: float) -> "DirectAnswer":
        """POST ``body`` with the session's headers and ``headers``; the answer is left unread.

        ``timeout`` bounds the connect and each wait for the answer's bytes.

        Raises:
            requests.ConnectionError: the server cannot be reached, or dropped the connection
                before answering (as ``requests`` would raise).
        """
        # The session's headers with this request's over them, names compared without case (as
        # requests merges them: one ``Authorization``, whoever spelled it ``authorization``), and
        # ``Accept-Encoding: identity``: a direct answer is read as it comes, not decompressed.
        by_name: Dict[str, Tuple[str, Any]] = {}
        for name, value in self.session.headers.items():
            if value is not None:
                by_name[name.lower()] = (name, value)
        by_name["accept-encoding"] = ("Accept-Encoding", "identity")
        for name, value in headers.items():
            by_name[name.lower()] = (name, value)
        merged = dict(by_name.values())
        connection, kept = self._take(timeout)
        try:
            raw, sock = _exchange(connection, self.path, body, merged)
        except _Unsent:
            if not kept:
                raise
            # A kept-alive connection that broke as this POST went: the server never read it.
            connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
            raw, sock = _exchange(connection, self.path, body, merged)  # (once: a second failure is raised)
        if "Set-Cookie" in raw.msg:  # the server starts a cookie (a sticky load balancer): keep it
            request = requests.Request("POST", self.url, headers=headers).prepare()
            # (requests' stand-ins for what http.cookiejar reads: the stubs name the originals)
            self.session.cookies.extract_cookies(requests.cookies.MockResponse(raw.msg),  # type: ignore[arg-type]
                                                 requests.cookies.MockRequest(request))  # type: ignore[arg-type]
        return DirectAnswer(self, connection, raw, sock)

    def close(self) -> None:
        """Close every idle connection; one still answering closes when its answer does."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _take(self, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        """An idle kept-alive connection still open (its timeout set to ``timeout``) and True,
        else a new one (http.client's connect() sets TCP_NODELAY) and False."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return http.client.HTTPConnection(self.host, self.port, timeout=timeout), False
            if connection.sock is None or readable(connection.sock):  # the server closed it while idle
                connection.close()
                continue  # (bounded: each turn takes one from the idle list)
            connection.timeout = timeout
            connection.sock.settimeout(timeout)  # (an SSE answer may have left it with none: no_read_timeout)
            return connection, True

    def _give_back(self, connection: http.client.HTTPConnection) -> None:
        """Keep ``connection`` for the next POST (its answer was read to the end)."""
        with self._lock:
            if not self._closed and len(self._idle) < self._keep:
                self._idle.append(connection)
                return
        connection.close()


class _Unsent(requests.ConnectionError):
    """The POST could not be sent (a refused connect, or a kept-alive connection that broke as
    it went): the server did not read it, so it may go once more."""


def _exchange(connection: http.client.HTTPConnection, path: str, body: bytes,
              headers: Dict[str, str]) -> Tuple[http.client.HTTPResponse, Any]:
    """Send the POST; the answer (its status line and headers read) and the socket it is read from.

    Raises:
        _Unsent: the POST did not get to the server (it may go again).
        requests.ConnectionError: any other failure (a timeout, no answer, a broken answer): the
            server may have read the POST, so it is never sent again.
    """
    try:
        connection.request("POST", path, body, headers)
        sock = connection.sock  # (http.client hands it to the answer when the server ends the connection)
    except socket.timeout as exc:  # (some of the POST may be there: never sent again)
        connection.close()
        raise requests.ConnectionError(f"POST {path}: no room to send within {connection.timeout} s") from exc
    except OSError as exc:  # (a refused connect too: nothing was sent)
        connection.close()
        raise _Unsent(f"POST {path}: {type(exc).__name__}: {exc}") from exc
    except BaseException:  # a header http.client refuses, ...: the connection is half-used
        connection.close()
        raise
    try:
        return connection.getresponse(), sock
    except socket.timeout as exc:
        connection.close()
        raise requests.ConnectionError(f"POST {path}: no answer within {connection.timeout} s "
                                       f"(the timeout; raise it for slow tools)") from exc
    except http.client.RemoteDisconnected as exc:  # not one byte of an answer (but it may have been read)
        connection.close()
        raise requests.ConnectionError(f"POST {path}: the server closed the connection without answering") from exc
    except BaseException as exc:
        connection.close()
        if isinstance(exc, (OSError, http.client.HTTPException)):
            raise requests.ConnectionError(f"POST {path}: {type(exc).__name__}: {exc}") from exc
        raise


class DirectAnswer:
    """The answer to a direct POST: what the transport reads of a ``requests.Response``.

    ``status_code``, ``reason``, ``headers`` (``.get`` ignores case), ``content``,
    ``text``, ``json()``, ``close()`` and ``with``; for SSE, ``pieces()`` (what has
    arrived), ``no_read_timeout()`` and ``abort()`` (responses.py calls them). Closed
    after its body was read to the end, its connection goes back to the pool; closed
    before (a caller that gave up), the connection is closed.
    """

    def __init__(self, post: DirectPost, connection: http.client.HTTPConnection,
                 raw: http.client.HTTPResponse, sock: Any) -> None:
        self.status_code: int = raw.status
        self.reason: str = raw.reason
        self.headers: Any = raw.msg  # (an email.message.Message: .get ignores case)
        self.url: str = post.url
        self._post = post
        self._connection: Optional[http.client.HTTPConnection] = connection
        self._raw = raw
        self._sock: Any = sock
        self._content: Optional[bytes] = None
        self._lock = threading.Lock()  # close() (reader) and abort() (another thread) may meet

    @property
    def content(self) -> bytes:
        """The whole body (read once: by its Content-Length, its chunks, or to the connection's end)."""
        if self._content is None:
            try:
                self._content = self._raw.read()
            except (OSError, http.client.HTTPException) as exc:  # dropped mid-answer: never sent again
                self._drop()
                raise requests.ConnectionError(f"the answer from {self.url} broke off: {exc!r}") from exc
        return self._content

    @property
    def text(self) -> str:
        """The body as text (UTF-8, what JSON and SSE are; anything else is replaced)."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body parsed as JSON (a ``ValueError`` when it is not)."""
        return json.loads(self.content)

    def pieces(self) -> Iterator[bytes]:
        """The body in pieces as they arrive (an SSE stream), until it ends or breaks."""
        read1 = self._raw.read1
        while True:  # until the body ends, fails, or abort() wakes it: a stream has no length to bound it
            try:
                data = read1(65536)
            except http.client.HTTPException as exc:  # (a chunk cut short, ...)
                raise requests.exceptions.ChunkedEncodingError(exc) from exc
            if not data:
                return
            yield data

    def no_read_timeout(self) -> None:
        """Wait on a quiet stream for as long as it takes: the caller's timeout governs it."""
        try:
            self._sock.settimeout(None)
        except (AttributeError, OSError):
            pass

    def abort(self) -> None:
        """Wake a thread blocked reading this answer (shutdown does; close alone does not), and close."""
        with self._lock:
            if self._connection is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except (AttributeError, OSError):
                    pass
                self._connection.close()
                self._connection = None
        self._raw.close()

    def close(self) -> None:
        """Give the connection back (the body was read to its end) or close it. Idempotent."""
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is None:
            return
        raw = self._raw
        if not raw.will_close and (raw.isclosed() or raw.length == 0):  # the body was read to its end
            raw.close()  # (3.9's read1 leaves a body read to its length open; http.client closes it after)
            self._post._give_back(connection)
        else:
            self._raw.close()
            connection.close()

    def _drop(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        self._raw.close()
        if connection is not None:
            connection.close()

    def __enter__(self) -> "DirectAnswer":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

