"""OpenTelemetry tracing, as a middleware: a span for every request a side answers or sends,
and the W3C trace context carried in ``params._meta`` both ways.

::

    from minimcp.engine.tracing import tracing

    server = Server("demo", middleware=[tracing()])
    client = minimcp.connect(target, middleware=[tracing()])

It follows the OpenTelemetry semantic conventions for MCP (``docs/gen-ai/mcp.md`` of
open-telemetry/semantic-conventions-genai, status Development):

- a request this side **sends** (a client's ``tools/call``, a server's
  ``sampling/createMessage``) is a ``CLIENT`` span, and the trace context goes out in its
  ``params._meta`` (``traceparent``, ``tracestate``, ``baggage``: unprefixed, as SEP-414 says),
  written by the configured OpenTelemetry propagators;
- a request this side **answers** is a ``SERVER`` span, whose parent is the context its
  ``params._meta`` carries (the peer's ``CLIENT`` span), linked to the ambient one (an HTTP
  server span, say) when there is one; without a trace context in ``_meta``, the ambient one
  is its parent. ``tracing(trust_remote_parent=False)`` makes the peer's context a link
  instead, and the ambient one the parent. Only the fields the propagators read, and only
  strings of at most :data:`CARRIED_LIMIT` characters, are read from ``_meta``; its ``baggage``
  becomes current in the handler only with ``tracing(accept_baggage=True)``;
- its name is ``{mcp.method.name} {target}``, the target being the tool's or the prompt's
  name (``tools/call get_weather``), else ``{mcp.method.name}``. The conventions want a
  low-cardinality target: a request this side answers names its target only when this side
  has that tool or prompt, so a peer's made-up names are never span names. A resource URI is
  an attribute, never part of the name (it would make a name per resource);
- its attributes: ``mcp.method.name``, ``jsonrpc.request.id`` (where the request carries its
  id to the middleware: a ``RequestContext`` does), ``gen_ai.tool.name`` and
  ``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.prompt.name``, ``mcp.resource.uri``,
  ``mcp.protocol.version``, ``mcp.session.id`` (where the transport knows the Streamable HTTP
  ``Mcp-Session-Id``, as a digest: see :func:`session_digest`), ``network.transport``
  (``pipe`` for stdio, ``tcp`` for HTTP and WebSocket) and ``network.protocol.name``,
  ``server.address`` and ``server.port`` (a client over HTTP or WebSocket). A value read from
  the request is cut to :data:`VALUE_LIMIT` characters: the peer chooses it;
- an error: a JSON-RPC error answer sets ``error.type`` and ``rpc.response.status_code`` to its
  code and the status to ``ERROR`` with its message; a handler's unexpected exception is
  answered -32603, so it is recorded the same way, with the exception as an event; a request
  sent that got no answer (a timeout, a closed connection) sets ``error.type`` (``timeout``, or
  the exception's class) and records the exception. A tool result with ``isError: true`` is
  an answer, not a failed request: nothing is recorded as an exception and there is no
  ``rpc.response.status_code``, but the conventions ask for ``error.type`` ``tool_error``, and
  for the ``ERROR`` status wherever ``error.type`` is set, as the official SDK does.

Tracing never changes an answer: when OpenTelemetry fails (a span processor, sampler, exporter
or propagator that raises), the request goes on as if untraced there, and the failure is logged
once for each step it happened at (see :data:`STEPS`).

Notifications pass no middleware, so they have no span. OpenTelemetry is imported by
:func:`tracing` alone: a program that never calls it loads none of it, and not this module.
"""

from __future__ import annotations

import hashlib

from ..errors import RPCError, Timeout
from ..logs import get_logger
from ..protocol.jsonrpc import INTERNAL_ERROR
from ..protocol.stateless import VERSION_KEY
from ..protocol.versions import SDK_VERSION

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from ..logs import Logger
    from .middleware import Middleware

log: Logger = get_logger(__name__)

#: The instrumentation scope the spans are made under (``otel.scope.name``).
SCOPE = "minimcp"

#: The methods whose span name adds a target, and the attribute that names it (the conventions'
#: ``{mcp.method.name} {target}``, the target being ``gen_ai.tool.name`` or ``gen_ai.prompt.name``).
TARGETS = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}

#: What a server is asked for a request's target: does it have it? (``Server.get_tool`` / ``get_prompt``.)
_LOOKUPS = {"tools/call": "get_tool", "prompts/get": "get_prompt"}

#: The methods whose ``params.uri`` is ``mcp.resource.uri`` (conditionally required there).
RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})

#: What the conventions' ``error.type`` is for a tool result with ``isError: true``.
TOOL_ERROR = "tool_error"

#: The longest value a span takes from a request (a tool or prompt name, a resource URI, a request
#: id, a protocol version): the peer chooses these, and longer ones are cut to this many characters.
VALUE_LIMIT = 256

#: The longest status description a span takes (an error's message, which may quote the request).
DESCRIPTION_LIMIT = 1024

#: The longest trace-context value read from ``_meta``; a longer one is not read. It is the size
#: W3C Baggage ("Limits") asks every platform to propagate, and what OpenTelemetry's own
#: propagators read of a ``baggage`` or ``tracestate`` (a ``traceparent``: 512).
CARRIED_LIMIT = 8192

#: The steps at which OpenTelemetry may fail, and what then happens: each is logged once per
#: :func:`tracing` middleware, with its traceback, and never fails the request.
STEPS = {
    "extract": "reading the trace context in a request's _meta failed: its span starts a trace of its own",
    "start": "starting a span failed: the request runs without one",
    "inject": "writing the trace context into a request's _meta failed: the request goes without it",
    "record": "recording on a span (an attribute, its status, an exception) failed: the span lacks it",
    "end": "ending a span failed (a span processor's on_end, say): it may never be exported",
}

# transport class -> (network.transport, network.protocol.name), learned on first sight
_NETWORK: Dict[type, Tuple[Optional[str], Optional[str]]] = {}
# a client's URL -> (server.address, server.port), or None where it names no host
_ADDRESSES: Dict[str, Optional[Tuple[str, int]]] = {}
# what _ADDRESSES.get() says of a URL it has not seen (None is a URL without a host)
_UNSEEN: Tuple[str, int] = ("", -1)


def tracing(tracer_provider: Any = None, *, trust_remote_parent: bool = True,
            accept_baggage: bool = False) -> Middleware:
    """A middleware that traces every request this side answers or sends (see the module's text).

    Give it to a server, a client, or both::

        server = Server("demo", middleware=[tracing()])
        with minimcp.connect(target, middleware=[tracing()]) as client: ...

    It needs the OpenTelemetry API (``opentelemetry-api``, the ``otel`` extra), which alone
    records nothing: an OpenTelemetry SDK, set up by the program, makes and exports the spans.

    Args:
        tracer_provider: the ``TracerProvider`` to make the spans with; by default the global one,
            looked up on each span, so one set up after this call is used too.
        trust_remote_parent: True (the conventions' default): the span of a request this side
            answers is the child of the trace context the request carries. False: of the
            ambient context (or a trace of its own), with a link to the one carried, for a
            peer you do not trust to choose where your spans go.
        accept_baggage: make the W3C Baggage a request carries current while it is answered
            (``opentelemetry.baggage.get_baggage()`` in the handler sees it, and instrumented
            calls the handler makes pass it on). False by default: baggage is the peer's
            say, and would travel on from here to every service the handler calls.

    Raises:
        ImportError: the OpenTelemetry API is not installed (the message says what to install).
    """
    try:
        from opentelemetry import baggage, propagate, trace
        from opentelemetry.context import attach, detach, get_current
    except ImportError as exc:
        raise ImportError("tracing() needs the OpenTelemetry API: pip install opentelemetry-api (the otel extra "
                          "of minimcp-sync), and opentelemetry-sdk to record the spans") from exc

    tracer = trace.get_tracer(SCOPE, SDK_VERSION, tracer_provider=tracer_provider)
    inject, textmap_now = propagate.inject, propagate.get_global_textmap
    current_span, in_context = trace.get_current_span, trace.set_span_in_context
    all_baggage, set_baggage = baggage.get_all, baggage.set_baggage
    SERVER, CLIENT, ERROR = trace.SpanKind.SERVER, trace.SpanKind.CLIENT, trace.StatusCode.ERROR
    Link = trace.Link
    # the global propagator last seen, and the _meta fields it reads (looked up again if it changes)
    fields_of: List[Tuple[Any, Tuple[str, ...]]] = [(None, ())]
    failed: Dict[str, object] = {}  # the steps of STEPS that failed: each logged the first time

    def broken(step: str) -> None:
        # Called in an except block: logs that exception, once per step.
        first = object()
        if failed.setdefault(step, first) is first:  # (one atomic step: two threads cannot both log)
            log.warning("tracing: %s; requests go on as if untraced at this step (logged once): check the "
                        "tracer provider's span processors, sampler and exporters, and the propagators",
                        STEPS[step], exc_info=True)

    def record(step: Callable[..., None], *args: Any) -> None:
        # Put what a request came to on its span; a failure there is logged, never raised.
        try:
            step(*args)
        except Exception:
            broken("record")

    def carried(meta: Dict[str, Any]) -> Any:
        # The context a request's _meta carries: what the configured propagators read from the
        # string values of their own fields (by default traceparent, tracestate and baggage), each
        # at most CARRIED_LIMIT characters; a field of any other type is the peer's mistake.
        textmap = textmap_now()
        seen, fields = fields_of[0]
        if seen is not textmap:
            fields = tuple(textmap.fields)
            fields_of[0] = (textmap, fields)
        carrier = {}
        for field in fields:
            value = meta.get(field)
            if type(value) is str and len(value) <= CARRIED_LIMIT:
                carrier[field] = value
        return textmap.extract(carrier) if carrier else None

    def answered(request: Any, call_next: Callable[[Any], Any]) -> Any:
        # A request the peer sent: a SERVER span whose parent is the context in its _meta.
        method, params, session = request.method, request.params, request.session
        try:
            name, attributes = _describe(method, params, request.request_id, session.owner)
            meta = params.get("_meta")
            version = meta.get(VERSION_KEY) if type(meta) is dict else None  # (2026-07-28: each request's own)
            _connection(attributes, session, version or getattr(session.owner, "protocol_version", None), None)
            parent, links, remote = None, None, None
            if type(meta) is dict and meta:
                try:  # (a malformed traceparent is the peer's problem: the span starts a trace of its own)
                    remote = carried(meta)
                    remote_span = current_span(remote).get_span_context() if remote is not None else None
                except Exception:
                    broken("extract")
                    remote, remote_span = None, None
                if remote_span is not None and remote_span.is_valid:
                    if trust_remote_parent:  # the conventions: parent from _meta, link to the ambient context
                        parent = remote
                        ambient = current_span().get_span_context()
                        if ambient.is_valid:
                            links = [Link(ambient)]
                    else:  # the ambient context is the parent; the peer's, a link
                        links = [Link(remote_span)]
            around = None  # the context the handler runs in, with the span (None: the current one)
            if accept_baggage and remote is not None:
                entries = all_baggage(remote)
                if entries:
                    around = get_current()
                    for key, value in entries.items():  # (the peer's entries over the ambient ones)
                        around = set_baggage(key, value, around)
            span = tracer.start_span(name, context=parent, kind=SERVER, attributes=attributes, links=links)
            token = attach(in_context(span, around))
        except Exception:
            broken("start")
            return call_next(request)
        try:
            result = call_next(request)
        except BaseException as exc:
            record(_answer_failed, span, ERROR, exc)
            raise
        else:
            if method == "tools/call":
                record(_tool_result, span, ERROR, result)
            return result
        finally:
            if "mcp.protocol.version" not in attributes:  # (initialize: known once it ran)
                record(_version_ran, span, session.owner)
            finish(span, token)

    def sent(request: Any, call_next: Callable[[Any], Any]) -> Any:
        # A request this side sends: a CLIENT span, carried to the peer in params._meta.
        method, params, session = request.method, request.params, request.session
        try:
            name, attributes = _describe(method, params, getattr(request, "request_id", None), None)
            meta = params.get("_meta")
            version = meta.get(VERSION_KEY) if type(meta) is dict else None  # (2026-07-28: each request's own)
            _connection(attributes, session, version or getattr(session.owner, "protocol_version", None),
                        getattr(session.transport, "url", None))
            span = tracer.start_span(name, kind=CLIENT, attributes=attributes)
            token = attach(in_context(span))
        except Exception:
            broken("start")
            return call_next(request)
        result = None
        try:
            if meta is None or type(meta) is dict:  # (a _meta that is not an object is left as it is)
                try:
                    carrier = dict(meta or ())
                    inject(carrier)
                except Exception:
                    broken("inject")
                else:
                    if carrier:
                        params["_meta"] = carrier
            result = call_next(request)
        except BaseException as exc:  # an error answer, or none: a timeout, a closed connection, Ctrl-C
            record(_send_failed, span, ERROR, exc)
            raise
        else:
            if method == "tools/call":
                record(_tool_result, span, ERROR, result)
            return result
        finally:
            record(_answer_said, span, attributes, result, session.transport)
            finish(span, token)

    def finish(span: Any, token: Any) -> None:
        # Called in a finally block: must not raise, or its exception would replace the answer.
        try:
            detach(token)
        except Exception:
            broken("end")
        try:
            span.end()
        except Exception:
            broken("end")

    def traced(request: Any, call_next: Callable[[Any], Any]) -> Any:
        if request.outgoing:
            return sent(request, call_next)
        return answered(request, call_next)

    return traced


def _cut(value: str, limit: int = VALUE_LIMIT) -> str:
    """``value``, cut to ``limit`` characters."""
    return value if len(value) <= limit else value[:limit]


def _describe(method: str, params: Dict[str, Any], request_id: Any, owner: Any) -> Tuple[str, Dict[str, Any]]:
    """A request's span name and the attributes its params and id say. ``owner`` is the session's
    owner for a request this side answers (its target is named only if the server has it: a
    ``ServerConnection``'s ``server``; a client answers no request with a target), None for
    one this side sends (its target is the caller's own)."""
    attributes: Dict[str, Any] = {"mcp.method.name": method}
    if request_id is not None:  # (the conventions: not when the id is null or absent)
        text = str(request_id)
        attributes["jsonrpc.request.id"] = text if len(text) <= VALUE_LIMIT else text[:VALUE_LIMIT]
    name = method
    target = TARGETS.get(method)
    if target is not None:
        value = params.get("name")
        if type(value) is str:
            shown = attributes[target] = value if len(value) <= VALUE_LIMIT else value[:VALUE_LIMIT]
            if owner is None:
                name = f"{method} {shown}"
            else:  # (the engine imports no server module: the server is found by its attribute)
                lookup = getattr(getattr(owner, "server", None), _LOOKUPS[method], None)
                if lookup is not None and lookup(value) is not None:
                    name = f"{method} {shown}"
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
    elif method in RESOURCE_METHODS:
        uri = params.get("uri")
        if type(uri) is str:
            attributes["mcp.resource.uri"] = _cut(uri)
    return name, attributes


def _connection(attributes: Dict[str, Any], session: Any, version: Any, url: Any) -> None:
    """Add the attributes of the connection a request goes on: its protocol version (when known),
    its HTTP session, its transport, and where the server is (``url``: a client's)."""
    if type(version) is str:
        attributes["mcp.protocol.version"] = _cut(version)
    transport = session.transport
    session_id = getattr(transport, "session_id", None)
    if type(session_id) is str and session_id:
        attributes["mcp.session.id"] = session_digest(session_id)
    network, protocol = _network(transport)
    if network is not None:
        attributes["network.transport"] = network
        if protocol is not None:
            attributes["network.protocol.name"] = protocol
    if type(url) is str:
        address = _ADDRESSES.get(url, _UNSEEN)  # (one read: another thread may clear it between two reads)
        if address is _UNSEEN:
            address = _address(url)
        if address is not None:
            attributes["server.address"], attributes["server.port"] = address


def _address(url: str) -> Optional[Tuple[str, int]]:
    """``(server.address, server.port)`` of a client's URL (kept for the next request), or None."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
    except ValueError:
        parts, port = None, 0
    address = (parts.hostname, port) if parts is not None and parts.hostname else None
    if len(_ADDRESSES) >= 256:  # (a program that connects to ever new URLs: start again)
        _ADDRESSES.clear()
    _ADDRESSES[url] = address
    return address


def _failed(span: Any, error: Any, code: Optional[int], description: str, kind: Optional[str] = None) -> None:
    """Mark a span failed: ``code`` is the JSON-RPC error code of the answer, if there is one, and
    ``error.type`` unless ``kind`` says otherwise (the conventions: the code, as a string)."""
    if code is not None:
        span.set_attributes({"rpc.response.status_code": str(code), "error.type": kind or str(code)})
    else:
        span.set_attribute("error.type", kind)
    span.set_status(error, _cut(description, DESCRIPTION_LIMIT))


def _answer_failed(span: Any, error: Any, exc: BaseException) -> None:
    """Mark the span of a request this side answered whose handler raised ``exc``."""
    if isinstance(exc, RPCError):  # an error answer: the handler's own, or -32603 for a crash
        cause = exc.__cause__
        if cause is not None and exc.code == INTERNAL_ERROR:  # (an unexpected exception, answered with a
            span.record_exception(cause)                       # reference: the exception is the operator's)
        _failed(span, error, exc.code, exc.message)
        return
    span.record_exception(exc)
    if isinstance(exc, Exception):  # (dispatch answers it -32603)
        _failed(span, error, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
    elif isinstance(exc, SystemExit):  # (sys.exit() in a handler is answered -32603 too)
        _failed(span, error, INTERNAL_ERROR, f"the handler called sys.exit({exc.code!r})")
    else:  # (Ctrl-C is not answered)
        _failed(span, error, None, type(exc).__name__, type(exc).__qualname__)


def _send_failed(span: Any, error: Any, exc: BaseException) -> None:
    """Mark the span of a request this side sent that got an error answer or none (``exc``)."""
    if isinstance(exc, RPCError):
        _failed(span, error, exc.code, exc.message)
        return
    span.record_exception(exc)
    _failed(span, error, None, f"{type(exc).__name__}: {exc}",
            "timeout" if isinstance(exc, Timeout) else type(exc).__qualname__)


def _version_ran(span: Any, owner: Any) -> None:
    """The protocol version of a request answered before it was known (``initialize``)."""
    version = getattr(owner, "protocol_version", None)
    if type(version) is str:
        span.set_attribute("mcp.protocol.version", _cut(version))


def _answer_said(span: Any, attributes: Dict[str, Any], result: Any, transport: Any) -> None:
    """What the answer to a request sent told of the connection: the protocol version (the
    answer to ``initialize``) and the Streamable HTTP session it brought."""
    if "mcp.protocol.version" not in attributes and type(result) is dict:
        version = result.get("protocolVersion")
        if type(version) is str:
            span.set_attribute("mcp.protocol.version", _cut(version))
    if "mcp.session.id" not in attributes:
        session_id = getattr(transport, "session_id", None)
        if type(session_id) is str and session_id:
            span.set_attribute("mcp.session.id", session_digest(session_id))


def _tool_result(span: Any, error: Any, result: Any) -> None:
    """A tool result with ``isError: true`` is the conventions' ``tool_error``."""
    if type(result) is dict and result.get("isError") is True:
        span.set_attribute("error.type", TOOL_ERROR)
        span.set_status(error)


def session_digest(session_id: str) -> str:
    """What ``mcp.session.id`` says for a ``Mcp-Session-Id``: the first 32 hex digits of its SHA-256.

    Both ends of a session compute the same, so its spans group as one session, and a trace
    store never holds the id itself: whoever holds a live session's id can send requests in it
    (spec basic/security_best_practices, "Session Hijacking").
    """
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _network(transport: Any) -> Tuple[Optional[str], Optional[str]]:
    """``(network.transport, network.protocol.name)`` of a transport, from the module that defines it:
    stdio is a pipe; HTTP (both sides, both HTTP transports) and WebSocket run on TCP; memory, neither."""
    kind = type(transport)
    known = _NETWORK.get(kind)
    if known is None:
        module = kind.__module__
        if module in ("minimcp.transports.stdio", "minimcp.transports.child"):
            known = ("pipe", None)
        elif module.startswith(("minimcp.transports.http.", "minimcp.server.http.")):
            known = ("tcp", "http")
        elif module == "minimcp.transports.websocket":
            known = ("tcp", "websocket")
        else:
            known = (None, None)
        _NETWORK[kind] = known
    return known
