"""The 2024-11-05 "HTTP with SSE" endpoints, served beside Streamable HTTP for old clients.

spec 2024-11-05 basic/transports: the client opens a GET stream (``/sse``);
its first event, ``endpoint``, names the URL to POST messages to
(``/messages/?session_id=...``). Every POST is answered ``202 Accepted`` and
every server message, responses included, goes down that one stream. The
stream is the session: when it ends, so does the session.
"""

import secrets
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional
from urllib.parse import parse_qs

from ...protocol import jsonrpc
from ...protocol.jsonrpc import Malformed
from ..auth.protection import check_request_scopes
from ..connection import ServerConnection
from .replies import SSE_HEADERS, STATUS, HTTPError, read_body, reply, session_not_found
from .security import check_owner
from .sockets import gone_probe
from .streams import SSEServerTransport, format_event

if TYPE_CHECKING:
    from .app import MCPApp


class SSEEndpoints:
    """The GET stream and the POST endpoint of one :class:`~minimcp.server.http.app.MCPApp`.

    Its sessions are its own (a Streamable HTTP ``Mcp-Session-Id`` never
    finds one), keyed by the id the ``endpoint`` event names.
    """

    def __init__(self, app: "MCPApp") -> None:
        self.app = app
        self.sessions: Dict[str, ServerConnection] = {}
        self._lock = threading.Lock()

    def stream(self, environ: Dict[str, Any], principal: Any, start_response: Callable[..., Any]) -> Iterable[bytes]:
        """``GET sse_path``: open a session and stream its messages until the client leaves."""
        self.app.admit_session()  # within max_sessions: a stream is a session
        session_id = secrets.token_hex(16)
        connection = self.app.server.open_connection(SSEServerTransport(), principal=principal,
                                                     workers=self.app.workers)
        with self._lock:
            self.sessions[session_id] = connection
        start_response(STATUS[200], SSE_HEADERS)
        return self._body(session_id, connection, environ.get("SCRIPT_NAME", ""), gone_probe(environ))

    def _body(self, session_id: str, connection: ServerConnection, prefix: str,
              gone: Optional[Callable[[], bool]]) -> Iterable[bytes]:
        # The endpoint is relative, so the client cannot be sent to another origin.
        transport: SSEServerTransport = connection.session.transport
        try:
            endpoint = f"{prefix}{self.app.messages_path}?session_id={session_id}"
            yield format_event(endpoint.encode("utf-8"), event="endpoint")
            yield from transport.events(gone)
        finally:
            with self._lock:
                self.sessions.pop(session_id, None)
            connection.session.close()

    def post(self, environ: Dict[str, Any], principal: Any, start_response: Callable[..., Any]) -> List[bytes]:
        """``POST messages_path?session_id=...``: hand one message (or batch) to its session."""
        session_id = parse_qs(environ.get("QUERY_STRING", "")).get("session_id", [""])[0]
        with self._lock:
            connection = self.sessions.get(session_id)
        if connection is None:
            raise session_not_found("open the SSE stream (GET) first")
        check_owner(connection.principal, principal)
        connection.principal = principal  # the same caller; its newest token (a step-up widens the scopes)
        parsed = jsonrpc.parse(read_body(environ, self.app.max_body))
        if type(parsed) is Malformed:
            raise HTTPError(400, parsed.message, parsed.code)
        check_request_scopes(self.app, parsed if type(parsed) is list else [parsed], principal)
        connection.session.receive(parsed)
        return reply(start_response, 202, b"Accepted")

    def close(self) -> None:
        """End every session (the app is shutting down)."""
        with self._lock:
            sessions, self.sessions = list(self.sessions.values()), {}
        for connection in sessions:
            connection.session.close()
