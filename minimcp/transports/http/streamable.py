"""Streamable HTTP, client side (spec basic/transports, 2025-03-26 on, both eras).

Every message we send is a POST. A request is posted by the thread that makes
it (:meth:`StreamableHTTPTransport.exchange`), which reads a JSON answer itself
and hands it to the session: no other thread takes part, and the call's own
timeout bounds the wait. An SSE answer (the server's notifications and requests
about the call, then its answer) is read by a thread of its own, so the caller's
timeout keeps working however long the stream lasts (a socket read cannot be
bounded in time and then go on: ``SocketIO`` refuses every read after a timeout);
what it reads, and the standalone GET stream, go into one queue that the
session's reader thread drains (``read()``).

Also here: the ``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers, the
standalone GET stream (opened once the session starts, if the server
allows it: 405 means no), resuming a broken stream with ``Last-Event-ID``
after the server's ``retry`` delay, DELETE on close, and a fresh
``initialize`` (then one retry) when the server says the session expired (404).

No redirect is followed (``allow_redirects=False`` on every request): an MCP
endpoint has no reason to send one (spec basic/transports: the client POSTs to
and GETs from one endpoint), and ``requests`` would take our custom headers
(an ``X-API-Key``) along to wherever it points, a cloud metadata address or a
service on this machine. A 3xx is an error naming where it pointed
(:func:`redirect_error`), on both POST paths alike (the direct one never follows).

``requests`` and ``sseclient`` are imported here and only here.
"""

import queue
import socket
import threading
from time import monotonic
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Set, Tuple, Union
from urllib.parse import urljoin

import requests
import requests.adapters  # (loaded by requests itself; named so that type checkers know it)
import sseclient

from ...engine.threads import join, start_thread
from ...engine.transport import Failed, Transport
from ...errors import ConnectionClosed, MCPError
from ...logs import get_logger
from ...protocol import jsonrpc
from ...protocol.headers import encode_header_value
from ...protocol.jsonrpc import HTTP_ERROR, ErrorResponse, Request
from ...protocol.stateless import NAME_FIELDS, VERSION_KEY
from ...protocol.versions import STATELESS_VERSION
from .direct import Answer, DirectPost
from .responses import abort, arriving, close_http, http_error, no_read_timeout

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

_RESUME_ATTEMPTS = 5


class StreamableHTTPTransport(Transport):
    """The client end of Streamable HTTP.

    Example::

        transport = StreamableHTTPTransport("http://127.0.0.1:8000/mcp",
                                            headers={"Authorization": "Bearer ..."})

    Args:
        url: the MCP endpoint.
        headers: extra headers for every request.
        auth: a ``requests`` auth object (or ``(user, password)``).
        timeout: seconds to wait for the server to start answering a POST.
        connections: how many keep-alive connections to pool (one per
            thread that calls at once is ideal).
    """

    #: The session's callers post their own requests and read their answers (``exchange``).
    exchanges = True

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None, auth: Any = None,
                 timeout: float = 60.0, connections: int = 64) -> None:
        self.url = url
        self.timeout = timeout
        self.http: requests.Session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=connections)
        self.http.mount("http://", adapter)
        self.http.mount("https://", adapter)
        self.http.headers.update(headers or {})
        self.http.auth = auth
        # Read the proxy / CA-bundle / netrc settings from the environment once:
        # requests would scan os.environ on every call (a large part of a call's cost:
        # benchmarks/instructions_client.py measures it).
        settings = self.http.merge_environment_settings(url, {}, None, None, None)
        self.http.proxies.update(settings.get("proxies") or {})
        self.http.verify = settings.get("verify", True)
        if auth is None:
            self.http.auth = requests.utils.get_netrc_auth(url)
        self.http.trust_env = False
        self._direct = DirectPost(self.http, url, connections)
        #: Set from the server's answer to initialize.
        self.session_id: Optional[str] = None
        self.protocol_version: Optional[str] = None
        #: Called (with no arguments) to start a fresh session after a 404; the Client sets it.
        self.on_session_expired: Optional[Callable[[], None]] = None
        #: tool name -> {argument: header}: the x-mcp-header arguments to mirror (2026-07-28).
        self.param_headers: Dict[str, Dict[str, str]] = {}
        self._by_request: Dict[Any, Any] = {}
        self._unsent: Dict[Any, Request] = {}  # requests written, to be posted by their callers
        self._inbox: queue.SimpleQueue[Optional[Union[jsonrpc.Parsed, Failed]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._readers: Set[threading.Thread] = set()
        self._responses: Set[Any] = set()
        self._listener: Optional[threading.Thread] = None
        self._closed = False
        self._stop = threading.Event()  # set by close(): wakes threads waiting to reconnect
        self._listening = threading.Event()  # the GET stream was answered (or refused)
        self._expired = threading.Lock()

    def __repr__(self) -> str:
        return f"<StreamableHTTPTransport {self.url} session={self.session_id!r}>"

    # -- the Transport interface ----------------------------------------------------------

    def read(self) -> Optional[Union[jsonrpc.Parsed, Failed]]:
        """The next message from any response or stream; ``None`` once closed."""
        return self._inbox.get()

    def write(self, message: Any, related_to: Any = None) -> None:
        """Send one message: a request is kept for its caller to post (:meth:`exchange`, which
        the session calls next, on the same thread); anything else is posted now (the server
        answers a notification or a response with 202).

        Raises:
            ConnectionClosed: the server cannot be reached (for a request: that request
                fails with it instead, in :meth:`exchange`).
        """
        if type(message) is Request:
            with self._lock:
                self._unsent[message.id] = message
        else:  # (a batch too: its answers, if any, go into the queue)
            self._send(message, self._inbox.put, None)

    def exchange(self, request_id: Any, deadline: float, receive: Callable[[Any], None]) -> None:
        """Post the request ``request_id`` (written a moment ago) on this thread and read its
        answer within ``deadline`` (a ``time.monotonic()``), handing it to ``receive``; an SSE
        answer is read on by a thread of its own. Past the deadline it returns with no answer:
        the caller's wait times out (and cancels) as on any transport."""
        with self._lock:
            message = self._unsent.pop(request_id, None)
        if message is None:
            return  # (not ours to post: written before close(), or posted already)
        try:
            self._send(message, receive, deadline)
        except Exception as exc:  # whatever went wrong, the request fails now, not at its timeout
            error = exc if isinstance(exc, MCPError) else ConnectionClosed(  # AuthError: as it is
                f"the request to {self.url} failed: {type(exc).__name__}: {exc}")
            receive(Failed(request_id, error))

    def _send(self, message: Any, deliver: Callable[[Any], None], deadline: Optional[float]) -> None:
        session_id = self.session_id
        response = self._post(message, deadline)
        if response is None:
            return  # the deadline passed before an answer began: the caller's wait times out
        if (response.status_code == 404 and session_id is not None and type(message) is Request
                and message.method != "initialize" and self.on_session_expired is not None):
            # spec basic/transports "Session Management": 404 means the session
            # is gone; start a new one and send this message once more.
            response.close()
            self._renew_session(session_id)
            response = self._post(message, deadline)
            if response is None:
                return
        self._handle(message, response, deliver, deadline)

    def close(self) -> None:
        """End the session (DELETE), close every stream, join every thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop.set()
            responses, readers = list(self._responses), list(self._readers) + [self._listener]
        if self.session_id is not None:
            try:
                self.http.delete(self.url, headers=self._headers(), timeout=5, allow_redirects=False)
            except requests.RequestException as exc:
                log.debug("DELETE of the session failed: %s", exc)
        for response in responses:
            abort(response)  # wakes the thread reading it
        for reader in readers:
            join(reader, 5.0)
        close_http(self.http)
        self._direct.close()
        self._inbox.put(None)

    def negotiated(self, version: str) -> None:
        """Called by the Client after ``initialize``: remember the version, open the GET stream."""
        self.protocol_version = version
        if self.session_id is not None and self._listener is None and version != STATELESS_VERSION:
            self._listener = start_thread(self._listen, "sse-get")
            # Wait (bounded) until the server answered the GET, so a message it
            # sends right after our next request finds the stream open.
            self._listening.wait(5.0)

    # -- POSTs ----------------------------------------------------------------------------------

    def _headers(self, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream"}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        headers.update(extra or {})
        return headers

    def _stateless_headers(self, message: Any) -> Dict[str, str]:
        """The headers that mirror a 2026-07-28 request's body (spec 2026-07-28 basic/transports)."""
        params = getattr(message, "params", None) or {}
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if type(meta) is dict else None  # (what stateless_version() reads)
        if version is None:
            return {}
        headers = {"MCP-Protocol-Version": version}
        if type(message) is Request:
            headers["Mcp-Method"] = message.method
            if message.method in NAME_FIELDS:
                headers["Mcp-Name"] = encode_header_value(params.get(NAME_FIELDS[message.method]))
            if message.method == "tools/call":
                arguments = params.get("arguments") or {}
                for argument, header in self.param_headers.get(params.get("name") or "", {}).items():
                    if arguments.get(argument) is not None:
                        headers["Mcp-Param-" + header] = encode_header_value(arguments[argument])
        return headers

    def _post(self, message: Any, deadline: Optional[float] = None) -> Optional[Answer]:
        """POST one message; its answer, its status line and headers read (None when
        ``deadline`` passed first: the caller's wait then times out)."""
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        extra = {"Content-Type": "application/json"}
        version = self.protocol_version
        if version is None or version == STATELESS_VERSION:  # (a handshake-era connection's have none)
            extra.update(self._stateless_headers(message))
        headers = self._headers(extra)  # (every per-request header is added there, on both paths)
        timeout = self.timeout if deadline is None else max(0.001, min(self.timeout, deadline - monotonic()))
        try:
            direct = self._direct.headers()  # (transports/http/direct.py: what that saves)
            response: Optional[Answer] = None
            if direct is not None:
                response = self._direct.post(jsonrpc.encode(message), {**headers, **direct}, timeout)
                if response.status_code in (401, 403) and getattr(self.http.auth, "answers_challenges", False):
                    response.close()  # refused: the OAuth flow answers the challenge on requests' path
                    response = None  # (nothing was served, so the POST goes again)
            if response is None:
                response = self.http.post(self.url, data=jsonrpc.encode(message), stream=True,
                                          timeout=timeout, headers=headers, allow_redirects=False)
        except requests.RequestException as exc:
            if deadline is not None and monotonic() >= deadline - 0.001 and _timed_out(exc):
                return None  # the call's own timeout: it gives up (and cancels) as on any transport
            raise ConnectionClosed(f"cannot reach the MCP server at {self.url}: {exc}") from exc
        if type(message) is Request:
            with self._lock:
                self._by_request[message.id] = response
        return response

    def abandon(self, request_id: Any) -> None:
        """Close the stream of a request we stopped waiting for (the 2026-07-28 cancel); one not
        posted yet (its caller interrupted between writing and posting it) is never posted."""
        with self._lock:
            response = self._by_request.pop(request_id, None)
            self._unsent.pop(request_id, None)
        if response is not None and self.protocol_version == STATELESS_VERSION:
            abort(response)

    def _renew_session(self, expired: str) -> None:
        with self._expired:  # many threads may see the 404: one re-initializes
            if self.session_id == expired:
                log.info("session %s expired; initializing a new one", expired)
                self.session_id = None
                self.on_session_expired()  # type: ignore[misc]

    def _handle(self, message: Any, response: Answer, deliver: Callable[[Any], None],
                deadline: Optional[float]) -> None:
        request_ids = {message.id} if type(message) is Request else _request_ids(message)
        content_type = response.headers.get("Content-Type", "")  # (read once: a header lookup is not free)
        if type(message) is Request and not content_type.startswith("text/event-stream"):
            with self._lock:
                self._by_request.pop(message.id, None)
        if response.status_code >= 300:  # (a 3xx too: never followed, see the module docstring)
            with response:
                if response.status_code < 400:
                    errors = [redirect_error(request_id, self.url, response) for request_id in request_ids]
                else:
                    answer = _error_answer(response, request_ids)
                    errors = [answer] if answer is not None else [http_error(request_id, response)
                                                                  for request_id in request_ids]
            if not errors:
                log.warning("the server refused a notification or response: %s", _status(self.url, response))
            for error in errors:
                deliver(error)
            return
        if type(message) is Request and message.method == "initialize":
            self.session_id = response.headers.get("Mcp-Session-Id") or self.session_id
        if content_type.startswith("text/event-stream"):
            if self._track(response):
                self._read_later(response, request_ids)
            return
        try:
            try:
                body = response.content
            finally:
                response.close()  # (read to its end: the connection goes back to the pool)
        except requests.RequestException:
            if deadline is not None and monotonic() >= deadline - 0.001:
                return  # the call's own timeout, mid-body: it gives up (and cancels)
            raise
        if request_ids and content_type.startswith("application/json") and body:
            parsed = jsonrpc.parse(body)
            for item in parsed if type(parsed) is list else [parsed]:
                deliver(item)
        elif request_ids:
            for request_id in request_ids:
                deliver(ErrorResponse(request_id, HTTP_ERROR, f"the server answered HTTP "
                                      f"{response.status_code} with {content_type or 'no body'}"))

    # -- SSE streams ---------------------------------------------------------------------------

    def _track(self, response: Answer) -> bool:
        """Remember a streaming response, so close() can abort it; False (and closed) once we are closed."""
        with self._lock:
            if self._closed:
                response.close()
                return False
            self._responses.add(response)
        return True

    def _read_stream(self, response: Answer, waiting: Set[Any]) -> None:
        """Read one POST's stream to its end, resuming it if it breaks before the answers came."""
        last_id, retry_ms = None, 1000
        for _ in range(_RESUME_ATTEMPTS + 1):
            last_id, retry_ms = self._consume(response, waiting, last_id, retry_ms)
            if not waiting or self._closed:
                return
            if last_id is None:
                break  # no event ids: the stream cannot be resumed
            # spec 2025-11-25 basic/transports: wait `retry`, then GET with Last-Event-ID
            if self._stop.wait(retry_ms / 1000):
                return
            resumed = self._resume(last_id)
            if resumed is None:
                break
            response = resumed
        for request_id in waiting:
            self._inbox.put(ErrorResponse(request_id, HTTP_ERROR, "the connection dropped before the answer came"))

    def _read_later(self, response: Answer, waiting: Set[Any]) -> None:
        # An SSE answer: read on a thread of its own, into the queue (see the module docstring).
        def read_on() -> None:
            try:
                self._read_stream(response, waiting)
            finally:
                with self._lock:
                    self._readers.discard(threading.current_thread())

        no_read_timeout(response)
        with self._lock:
            if self._closed:
                return
            self._readers.add(start_thread(read_on, "sse"))

    def _resume(self, last_id: str) -> Optional[Answer]:
        try:
            response = self.http.get(self.url, stream=True, timeout=self.timeout, allow_redirects=False,
                                     headers=self._headers({"Accept": "text/event-stream", "Last-Event-ID": last_id}))
        except requests.RequestException as exc:
            log.debug("resuming the stream failed: %s", exc)
            return None
        if response.status_code != 200:
            log.debug("resuming the stream failed: %s", _status(self.url, response))
            response.close()
            return None
        if not self._track(response):
            return None
        no_read_timeout(response)
        return response

    def _consume(self, response: Answer, waiting: Set[Any], last_id: Optional[str],
                 retry_ms: int) -> Tuple[Optional[str], int]:
        """Queue every message of one SSE response; return the last event id and retry delay seen."""
        try:
            for event in sseclient.SSEClient(arriving(response)).events():
                if event.id:
                    last_id = event.id
                if event.retry and str(event.retry).isdigit():
                    retry_ms = int(event.retry)
                if not event.data or event.event != "message":
                    continue  # the priming event, or an event that is not MCP's
                message = jsonrpc.parse(event.data)
                if isinstance(message, (jsonrpc.Response, ErrorResponse)):
                    waiting.discard(message.id)
                    with self._lock:
                        self._by_request.pop(message.id, None)
                self._inbox.put(message)
        except (requests.RequestException, OSError, ValueError, AttributeError) as exc:
            log.debug("SSE stream ended: %r", exc)  # closed by us, or dropped
        finally:
            response.close()
            with self._lock:
                self._responses.discard(response)
        return last_id, retry_ms

    def _listen(self) -> None:
        """The standalone GET stream: the server's requests and notifications outside any call."""
        try:
            self._listen_loop()
        finally:
            self._listening.set()
            with self._lock:  # a renewed session (after a 404) may open a new one
                if self._listener is threading.current_thread():
                    self._listener = None

    def _listen_loop(self) -> None:
        last_id, retry_ms = None, 1000
        for _ in range(1000):
            extra = {"Accept": "text/event-stream"}
            if last_id is not None:
                extra["Last-Event-ID"] = last_id
            try:
                response = self.http.get(self.url, stream=True, timeout=self.timeout, headers=self._headers(extra),
                                         allow_redirects=False)
            except requests.RequestException as exc:
                log.debug("the GET stream failed: %s", exc)
                self._listening.set()
                return
            self._listening.set()
            if response.status_code != 200:
                if 300 <= response.status_code < 400:  # not followed (module docstring): worth a warning
                    log.warning("no GET stream: %s", redirected(self.url, response))
                else:
                    log.debug("no GET stream (HTTP %s)", response.status_code)  # 405: the server offers none
                response.close()
                return
            if not self._track(response):
                return
            no_read_timeout(response)
            last_id, retry_ms = self._consume(response, set(), last_id, retry_ms)
            if self._stop.wait(retry_ms / 1000):
                return


def redirected(url: str, response: Answer) -> str:
    """What a 3xx from the MCP endpoint ``url`` means, for an error message: where it pointed, and
    that it was not followed (see the module docstring)."""
    location = response.headers.get("Location")
    pointed = f"pointing to {urljoin(url, location)}" if location else "with no Location"
    return (f"{url} answered HTTP {response.status_code} {response.reason}, {pointed}; MCP endpoints must not "
            f"redirect, and minimcp follows no redirect (it would carry your headers there): connect to the "
            f"URL it names if you trust it")


def redirect_error(request_id: Any, url: str, response: Answer) -> ErrorResponse:
    """The JSON-RPC error a 3xx answer to a POST means for the request it carried (``data`` keeps
    the status, as :func:`~.responses.http_error`'s does; the message names the ``Location``)."""
    return ErrorResponse(request_id, HTTP_ERROR, redirected(url, response), {"httpStatus": response.status_code})


def _status(url: str, response: Answer) -> str:
    """``HTTP 405 Method Not Allowed``; a 3xx says where it pointed (:func:`redirected`)."""
    if 300 <= response.status_code < 400:
        return redirected(url, response)
    return f"HTTP {response.status_code} {response.reason}"


def _error_answer(response: Answer, request_ids: Set[Any]) -> Optional[ErrorResponse]:
    """A 4xx whose body is the JSON-RPC error for our request (2026-07-28 sends those): keep it whole."""
    if len(request_ids) != 1 or not response.headers.get("Content-Type", "").startswith("application/json"):
        return None
    parsed = jsonrpc.parse(response.content)
    if type(parsed) is ErrorResponse and parsed.id in request_ids:
        return parsed
    return None


def _timed_out(exc: BaseException) -> bool:
    """Did a read or a connect end because its socket timed out (whatever wrapped the timeout)?"""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (socket.timeout, requests.Timeout)) or "timed out" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def _request_ids(message: Any) -> Set[Any]:
    items = message if type(message) is list else [message]
    return {m.id for m in items if type(m) is Request}
