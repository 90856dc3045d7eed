"""GET on the MCP endpoint: a session's standalone SSE stream, or a broken stream resumed.

The standalone stream carries what belongs to no request (the server's own requests,
notifications, list changes). One GET holds it at a time; a new GET takes it over at once
from one whose client is gone (:meth:`~minimcp.server.http.streams.HTTPSessionTransport.attach_standalone`),
else gets 409. ``Last-Event-ID`` resumes any stream of the session after that event
(spec 2025-11-25 "Resumability and Redelivery"). 2026-07-28 has no GET (405).
Beside :mod:`.app`, which serves POST and DELETE and owns the sessions.
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional

from ...protocol.versions import STATELESS_VERSION
from .replies import SSE_HEADERS, STATUS, HTTPError
from .sockets import gone_probe
from .streams import OPENING, HTTPSessionTransport, OutStream

if TYPE_CHECKING:
    from .app import MCPApp


def serve_get(app: "MCPApp", environ: Dict[str, Any], headers: Dict[str, str], principal: Any,
              start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Answer a GET on the endpoint: the session's standalone stream (one at a time), or the
    stream a ``Last-Event-ID`` resumes, from where the client's last event left it."""
    if headers.get("mcp-protocol-version") == STATELESS_VERSION:
        raise HTTPError(405, "Method Not Allowed: 2026-07-28 uses POST only", headers=[("Allow", "POST")])
    if "text/event-stream" not in headers.get("accept", ""):
        raise HTTPError(406, "Not Acceptable: Accept must list text/event-stream")
    _, connection = app._session(headers, principal)
    transport: HTTPSessionTransport = connection.session.transport
    last_event_id = headers.get("last-event-id", "")  # ("": as absent)
    gone = gone_probe(environ)  # has this client left? (where the WSGI server can tell)
    stream = None
    if last_event_id:
        replay = app.store.events_after(last_event_id)
        stream = transport.resumable(replay[0]) if replay else None
        if stream is None:
            raise HTTPError(404, f"Not Found: no stream to resume at event {last_event_id!r}")
        # The headers go out with the first bytes: a comment, unless an event is there to replay.
        opening = [] if any(data for _, data in replay[1]) else [OPENING]  # type: ignore[index]
        if stream is not transport.standalone:
            start_response(STATUS[200], SSE_HEADERS)
            return _resumed_body(stream, last_event_id, opening)
    start = transport.attach_standalone(gone is not None)
    if start is None:
        raise HTTPError(409, "Conflict: this session already has a GET stream open")
    start_response(STATUS[200], SSE_HEADERS)
    if stream is not None:  # the standalone stream, resumed: after the client's last event
        return _standalone_body(transport, last_event_id, opening, gone)
    # A new stream starts with the priming event, or with a comment where there is none: the
    # server may have nothing to send on it for long, and the client waits for its headers.
    return _standalone_body(transport, start, app._priming(connection, start) or [OPENING], gone)


def _resumed_body(stream: OutStream, last_event_id: str, opening: List[bytes]) -> Iterable[bytes]:
    yield from opening
    yield from stream.events(after=last_event_id)


def _standalone_body(transport: HTTPSessionTransport, start: str, opening: List[bytes],
                     gone: Optional[Callable[[], bool]]) -> Iterable[bytes]:
    try:
        yield from opening
        yield from transport.standalone.events(after=start, gone=gone)  # type: ignore[union-attr]
    finally:
        transport.detach_standalone()
