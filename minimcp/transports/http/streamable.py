"""Streamable HTTP, client side (spec basic/transports, 2025-03-26 … 2025-11-25).

Every message we send is a POST. The answer to a request comes back as
JSON, or as an SSE stream that may first carry the server's notifications
and requests about it; a background thread reads such a stream, so the
caller's ``timeout`` keeps working. Everything that arrives goes into one
queue that the session's reader thread drains (``read()``).

Also here: the ``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers, the
standalone GET stream (opened once the session starts, if the server
allows it: 405 means no), resuming a broken stream with ``Last-Event-ID``
after the server's ``retry`` delay, DELETE on close, and a fresh
``initialize`` (then one retry) when the server says the session expired (404).

``requests`` and ``sseclient`` are imported here and only here.
"""

import queue
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Set, Tuple, Union

import requests
import requests.adapters  # (loaded by requests itself; named so that type checkers know it)
import sseclient

from ...engine.threads import WorkerPool, join, start_thread
from ...engine.transport import Failed, Transport
from ...errors import ConnectionClosed, MCPError
from ...logs import get_logger
from ...protocol import jsonrpc
from ...protocol.headers import encode_header_value
from ...protocol.jsonrpc import HTTP_ERROR, ErrorResponse, Request
from ...protocol.stateless import NAME_FIELDS, modern_version
from ...protocol.versions import MODERN_VERSION
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
        # requests would scan os.environ on every call (~a third of a call's cost).
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
        self._inbox: queue.SimpleQueue[Optional[Union[jsonrpc.Parsed, Failed]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._readers: Set[threading.Thread] = set()
        self._responses: Set[Any] = set()
        self._listener: Optional[threading.Thread] = None
        self._posters = WorkerPool(connections)
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
        """POST one message; whatever comes back is queued for ``read()``.

        A request is posted from a worker thread, so the caller is free to
        time out while the server takes its time to answer; notifications
        and responses are posted at once (the server answers them with 202).

        Raises:
            ConnectionClosed: the server cannot be reached (for a request:
                that request fails with it instead).
        """
        if _request_ids(message):
            self._posters.submit(self._post_request, message)
        else:
            self._send(message)

    def _post_request(self, message: Any) -> None:
        try:
            self._send(message)
        except Exception as exc:  # whatever went wrong, the request fails now, not at its timeout
            error = exc if isinstance(exc, MCPError) else ConnectionClosed(  # AuthError: as it is
                f"the request to {self.url} failed: {type(exc).__name__}: {exc}")
            for request_id in _request_ids(message):
                self._inbox.put(Failed(request_id, error))

    def _send(self, message: Any) -> None:
        session_id = self.session_id
        response = self._post(message)
        if (response.status_code == 404 and session_id is not None and type(message) is Request
                and message.method != "initialize" and self.on_session_expired is not None):
            # spec basic/transports "Session Management": 404 means the session
            # is gone; start a new one and send this message once more.
            response.close()
            self._renew_session(session_id)
            response = self._post(message)
        self._handle(message, response)

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
                self.http.delete(self.url, headers=self._headers(), timeout=5)
            except requests.RequestException as exc:
                log.debug("DELETE of the session failed: %s", exc)
        for response in responses:
            abort(response)  # wakes the thread reading it
        for reader in readers:
            join(reader, 5.0)
        self._posters.shutdown(timeout=5.0)
        close_http(self.http)
        self._direct.close()
        self._inbox.put(None)

    def negotiated(self, version: str) -> None:
        """Called by the Client after ``initialize``: remember the version, open the GET stream."""
        self.protocol_version = version
        if self.session_id is not None and self._listener is None and version != MODERN_VERSION:
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

    def _modern_headers(self, message: Any) -> Dict[str, str]:
        """The headers that mirror a 2026-07-28 request's body (spec 2026-07-28 basic/transports)."""
        params = getattr(message, "params", None) or {}
        version = modern_version(params)
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

    def _post(self, message: Any) -> Answer:
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        extra = {"Content-Type": "application/json", **self._modern_headers(message)}
        headers = self._headers(extra)  # (every per-request header is added there, on both paths)
        try:
            direct = self._direct.headers()  # (http/direct.py: what that saves)
            response: Optional[Answer] = None
            if direct is not None:
                response = self._direct.post(jsonrpc.encode(message), {**headers, **direct}, self.timeout)
                if response.status_code in (401, 403) and getattr(self.http.auth, "answers_challenges", False):
                    response.close()  # refused: the OAuth flow answers the challenge on requests' path
                    response = None  # (nothing was served, so the POST goes again)
            if response is None:
                response = self.http.post(self.url, data=jsonrpc.encode(message), stream=True,
                                          timeout=self.timeout, headers=headers)
        except requests.RequestException as exc:
            raise ConnectionClosed(f"cannot reach the MCP server at {self.url}: {exc}") from exc
        if type(message) is Request:
            with self._lock:
                self._by_request[message.id] = response
        return response

    def abandon(self, request_id: Any) -> None:
        """Close the stream of a request we stopped waiting for (the 2026-07-28 cancel)."""
        with self._lock:
            response = self._by_request.pop(request_id, None)
        if response is not None and self.protocol_version == MODERN_VERSION:
            abort(response)

    def _renew_session(self, expired: str) -> None:
        with self._expired:  # many threads may see the 404: one re-initializes
            if self.session_id == expired:
                log.info("session %s expired; initializing a new one", expired)
                self.session_id = None
                self.on_session_expired()  # type: ignore[misc]

    def _handle(self, message: Any, response: Answer) -> None:
        request_ids = _request_ids(message)
        content_type = response.headers.get("Content-Type", "")  # (read once: a header lookup is not free)
        if type(message) is Request and not content_type.startswith("text/event-stream"):
            with self._lock:
                self._by_request.pop(message.id, None)
        if response.status_code >= 400:
            with response:
                answer = _error_answer(response, request_ids)
                errors = [answer] if answer is not None else [http_error(request_id, response)
                                                              for request_id in request_ids]
            if not errors:
                log.warning("the server refused a notification or response: HTTP %s", response.status_code)
            for error in errors:
                self._inbox.put(error)
            return
        if type(message) is Request and message.method == "initialize":
            self.session_id = response.headers.get("Mcp-Session-Id") or self.session_id
        if content_type.startswith("text/event-stream"):
            self._read_in_background(response, request_ids)
            return
        with response:
            body = response.content
        if request_ids and content_type.startswith("application/json") and body:
            parsed = jsonrpc.parse(body)
            for item in parsed if type(parsed) is list else [parsed]:
                self._inbox.put(item)
        elif request_ids:
            for request_id in request_ids:
                self._inbox.put(ErrorResponse(request_id, HTTP_ERROR, f"the server answered HTTP "
                                              f"{response.status_code} with {content_type or 'no body'}"))

    # -- SSE streams ---------------------------------------------------------------------------

    def _track(self, response: Answer) -> bool:
        """Remember a streaming response, so close() can abort it; False (and closed) once we are closed."""
        with self._lock:
            if self._closed:
                response.close()
                return False
            self._responses.add(response)
        no_read_timeout(response)
        return True

    def _read_in_background(self, response: Answer, request_ids: Set[Any]) -> None:
        if self._track(response):
            thread = start_thread(lambda: self._read_stream(response, request_ids), "sse")
            with self._lock:
                self._readers.add(thread)

    def _read_stream(self, response: Answer, waiting: Set[Any]) -> None:
        """Read one POST's stream to its end, resuming it if it breaks before the answers came."""
        last_id, retry_ms = None, 1000
        try:
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
                self._inbox.put(ErrorResponse(request_id, HTTP_ERROR,
                                              "the connection dropped before the answer came"))
        finally:
            with self._lock:
                self._readers.discard(threading.current_thread())

    def _resume(self, last_id: str) -> Optional[Answer]:
        try:
            response = self.http.get(self.url, stream=True, timeout=self.timeout,
                                     headers=self._headers({"Accept": "text/event-stream", "Last-Event-ID": last_id}))
        except requests.RequestException as exc:
            log.debug("resuming the stream failed: %s", exc)
            return None
        if response.status_code != 200:
            response.close()
            return None
        return response if self._track(response) else None

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
                response = self.http.get(self.url, stream=True, timeout=self.timeout, headers=self._headers(extra))
            except requests.RequestException as exc:
                log.debug("the GET stream failed: %s", exc)
                self._listening.set()
                return
            self._listening.set()
            if response.status_code != 200:
                log.debug("no GET stream (HTTP %s)", response.status_code)  # 405: the server offers none
                response.close()
                return
            if not self._track(response):
                return
            last_id, retry_ms = self._consume(response, set(), last_id, retry_ms)
            if self._stop.wait(retry_ms / 1000):
                return


def _error_answer(response: Answer, request_ids: Set[Any]) -> Optional[ErrorResponse]:
    """A 4xx whose body is the JSON-RPC error for our request (2026-07-28 sends those): keep it whole."""
    if len(request_ids) != 1 or not response.headers.get("Content-Type", "").startswith("application/json"):
        return None
    parsed = jsonrpc.parse(response.content)
    if type(parsed) is ErrorResponse and parsed.id in request_ids:
        return parsed
    return None


def _request_ids(message: Any) -> Set[Any]:
    items = message if type(message) is list else [message]
    return {m.id for m in items if type(m) is Request}
