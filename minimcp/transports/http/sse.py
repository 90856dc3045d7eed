"""The 2024-11-05 "HTTP with SSE" transport, client side (deprecated since 2025-03-26).

Apart from :mod:`~minimcp.transports.http.streamable`, which is the transport of the
current spec. spec 2024-11-05 basic/transports "HTTP with SSE": the client GETs the SSE
endpoint; the server's first event, ``endpoint``, names the URL to POST
messages to; every server message then arrives as a ``message`` event on
that one stream. Only needed to talk to old servers.

As in :mod:`~minimcp.transports.http.streamable`, no redirect is followed: a 3xx
to the GET or to a POST is an error naming where it pointed.
"""

import queue
import threading
from typing import TYPE_CHECKING, Any, Dict, Optional
from urllib.parse import urljoin, urlsplit

import requests
import sseclient

from ...engine.threads import join, start_thread
from ...engine.transport import Transport
from ...errors import ConnectionClosed
from ...logs import get_logger
from ...protocol import jsonrpc
from ...protocol.jsonrpc import Request
from .responses import abort, arriving, close_http, http_error
from .streamable import redirect_error, redirected

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)


class SSETransport(Transport):
    """The client end of a 2024-11-05 HTTP+SSE server.

    Example::

        transport = SSETransport("http://127.0.0.1:8000/sse")

    Raises:
        ConnectionClosed: the stream cannot be opened, or names no endpoint
            within ``timeout`` (or one on another origin).
    """

    def __init__(self, url: str, *, headers: Optional[Dict[str, str]] = None, auth: Any = None,
                 timeout: float = 60.0) -> None:
        self.url = url
        self.timeout = timeout
        self.http: requests.Session = requests.Session()
        self.http.headers.update(headers or {})
        self.http.auth = auth
        self.endpoint: Optional[str] = None
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._ready = threading.Event()
        self._closed = False
        try:
            self._stream = self.http.get(url, stream=True, timeout=timeout, headers={"Accept": "text/event-stream"},
                                         allow_redirects=False)
        except requests.RequestException as exc:
            close_http(self.http)
            raise ConnectionClosed(f"cannot reach the MCP server at {url}: {exc}") from exc
        if self._stream.status_code != 200:
            self._stream.close()
            close_http(self.http)
            if 300 <= self._stream.status_code < 400:
                raise ConnectionClosed(f"the SSE GET: {redirected(url, self._stream)}")
            raise ConnectionClosed(f"{url} answered HTTP {self._stream.status_code} to the SSE GET; "
                                   f"is it an MCP server's SSE endpoint?")
        self._reader = start_thread(self._read_events, "sse-stream")
        if not self._ready.wait(timeout) or self.endpoint is None:
            self.close()
            raise ConnectionClosed(f"{url} sent no usable 'endpoint' event; is it an MCP HTTP+SSE server?")

    def __repr__(self) -> str:
        return f"<SSETransport {self.url} endpoint={self.endpoint!r}>"

    def _read_events(self) -> None:
        try:
            for event in sseclient.SSEClient(arriving(self._stream)).events():
                if event.event == "endpoint":
                    endpoint = urljoin(self.url, event.data.strip())
                    if urlsplit(endpoint)[:2] != urlsplit(self.url)[:2]:
                        log.error("refusing an endpoint on another origin: %s", endpoint)  # spec: same origin
                    else:
                        self.endpoint = endpoint
                    self._ready.set()
                elif event.event == "message" and event.data:
                    self._inbox.put(jsonrpc.parse(event.data))
        except (requests.RequestException, OSError, ValueError, AttributeError) as exc:
            log.debug("the SSE stream ended: %r", exc)
        finally:
            self._ready.set()
            self._inbox.put(None)

    def read(self) -> Optional[jsonrpc.Parsed]:
        """The next message from the stream; ``None`` when it ends."""
        message: Optional[jsonrpc.Parsed] = self._inbox.get()
        if message is None:
            self._inbox.put(None)
        return message

    def write(self, message: Any, related_to: Any = None) -> None:
        """POST one message to the endpoint (the answer comes on the stream).

        Raises:
            ConnectionClosed: the server cannot be reached.
        """
        if self._closed:
            raise ConnectionClosed("the SSE transport is closed")
        try:
            response = self.http.post(self.endpoint, data=jsonrpc.encode(message), timeout=self.timeout,  # type: ignore
                                      headers={"Content-Type": "application/json"}, allow_redirects=False)
        except requests.RequestException as exc:
            raise ConnectionClosed(f"cannot reach the MCP server at {self.endpoint}: {exc}") from exc
        if response.status_code >= 300:  # (a 3xx too: not followed)
            for item in message if type(message) is list else [message]:
                if type(item) is Request:
                    self._inbox.put(http_error(item.id, response) if response.status_code >= 400
                                    else redirect_error(item.id, self.endpoint or self.url, response))

    def close(self) -> None:
        """Close the stream and join the thread reading it. Idempotent."""
        if self._closed:
            return
        self._closed = True
        abort(self._stream)
        join(self._reader, 5.0)
        close_http(self.http)

    def closed_error(self) -> ConnectionClosed:
        """The error pending calls get when the stream ends."""
        return ConnectionClosed(f"the SSE stream from {self.url} ended")

