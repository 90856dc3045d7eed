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
  is its parent;
- its name is ``{mcp.method.name} {target}``, the target being the tool's or the prompt's
  name (``tools/call get_weather``), else ``{mcp.method.name}``; a resource URI is an attribute,
  never part of the name (it would make a name per resource);
- its attributes: ``mcp.method.name``, ``jsonrpc.request.id`` (where the request carries its
  id to the middleware: a ``RequestContext`` does), ``gen_ai.tool.name`` and
  ``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.prompt.name``, ``mcp.resource.uri``,
  ``mcp.protocol.version``, ``mcp.session.id`` (where the transport knows the Streamable HTTP
  ``Mcp-Session-Id``, as a digest: see :func:`session_digest`), ``network.transport``
  (``pipe`` for stdio, ``tcp`` for HTTP and WebSocket) and ``network.protocol.name``,
  ``server.address`` and ``server.port`` (a client over HTTP or WebSocket);
- an error: a JSON-RPC error answer sets ``error.type`` and ``rpc.response.status_code`` to its
  code and the status to ``ERROR`` with its message; a handler's unexpected exception is
  answered -32603, so it is recorded the same way, with the exception as an event; a request
  sent that got no answer (a timeout, a closed connection) sets ``error.type`` (``timeout``, or
  the exception's class) and records the exception. A tool result with ``isError: true`` is
  an answer, not a failed request: nothing is recorded as an exception, but the conventions ask
  for ``error.type`` ``tool_error``, and so for the ``ERROR`` status, as the official SDK does.

Notifications pass no middleware, so they have no span. OpenTelemetry is imported by
:func:`tracing` alone: a program that never calls it loads none of it, and not this module.
"""

from __future__ import annotations

import hashlib

from ..errors import RPCError, Timeout
from ..protocol.jsonrpc import INTERNAL_ERROR
from ..protocol.stateless import VERSION_KEY
from ..protocol.versions import SDK_VERSION

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional, Tuple

    from .middleware import Middleware

#: The instrumentation scope the spans are made under (``otel.scope.name``).
SCOPE = "minimcp"

#: The methods whose span name adds a target, and the attribute that names it (the conventions'
#: ``{mcp.method.name} {target}``, the target being ``gen_ai.tool.name`` or ``gen_ai.prompt.name``).
TARGETS = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}

#: The methods whose ``params.uri`` is ``mcp.resource.uri`` (conditionally required there).
RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})

#: What the conventions' ``error.type`` is for a tool result with ``isError: true``.
TOOL_ERROR = "tool_error"

# transport class -> (network.transport, network.protocol.name), learned on first sight
_NETWORK: Dict[type, Tuple[Optional[str], Optional[str]]] = {}
# a client's URL -> (server.address, server.port), or None where it names no host
_ADDRESSES: Dict[str, Optional[Tuple[str, int]]] = {}


def tracing(tracer_provider: Any = None) -> Middleware:
    """A middleware that traces every request this side answers or sends (see the module's text).

    Give it to a server, a client, or both::

        server = Server("demo", middleware=[tracing()])
        with minimcp.connect(target, middleware=[tracing()]) as client: ...

    It needs the OpenTelemetry API (``opentelemetry-api``, the ``otel`` extra), which alone
    records nothing: an OpenTelemetry SDK, set up by the program, makes and exports the spans.

    Args:
        tracer_provider: the ``TracerProvider`` to make the spans with; by default the global one,
            looked up on each span, so one set up after this call is used too.

    Raises:
        ImportError: the OpenTelemetry API is not installed (the message says what to install).
    """
    try:
        from opentelemetry import propagate, trace
        from opentelemetry.context import attach, detach
    except ImportError as exc:
        raise ImportError("tracing() needs the OpenTelemetry API: pip install opentelemetry-api (the otel extra "
                          "of minimcp-sync), and opentelemetry-sdk to record the spans") from exc

    tracer = trace.get_tracer(SCOPE, SDK_VERSION, tracer_provider=tracer_provider)
    extract, inject = propagate.extract, propagate.inject
    current_span, in_context = trace.get_current_span, trace.set_span_in_context
    SERVER, CLIENT, ERROR = trace.SpanKind.SERVER, trace.SpanKind.CLIENT, trace.StatusCode.ERROR
    Link = trace.Link

    def answered(request: Any, call_next: Callable[[Any], Any]) -> Any:
        # A request the peer sent: a SERVER span whose parent is the context in its _meta.
        method, params, session = request.method, request.params, request.session
        name, attributes = _describe(method, params, request.request_id)
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if type(meta) is dict else None  # (2026-07-28: each request's own)
        _connection(attributes, session, version or getattr(session.owner, "protocol_version", None), None)
        parent, links = None, None
        if type(meta) is dict and meta:
            try:  # (a malformed traceparent is the peer's problem: the span starts a trace of its own)
                carried = extract(meta)
            except (TypeError, ValueError):
                carried = None
            if carried is not None and current_span(carried).get_span_context().is_valid:
                parent = carried
                ambient = current_span().get_span_context()
                if ambient.is_valid:  # the conventions: parent from _meta, link to the ambient context
                    links = [Link(ambient)]
        span = tracer.start_span(name, context=parent, kind=SERVER, attributes=attributes, links=links)
        token = attach(in_context(span))
        try:
            result = call_next(request)
        except RPCError as exc:
            cause = exc.__cause__
            if cause is not None and exc.code == INTERNAL_ERROR:  # (an unexpected exception, answered with a
                span.record_exception(cause)                       # reference: the exception is the operator's)
            _failed(span, ERROR, exc.code, exc.message)
            raise
        except Exception as exc:  # (dispatch answers it -32603)
            span.record_exception(exc)
            _failed(span, ERROR, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            raise
        except BaseException as exc:  # (sys.exit() in a handler is answered -32603 too; Ctrl-C is not answered)
            span.record_exception(exc)
            if isinstance(exc, SystemExit):
                _failed(span, ERROR, INTERNAL_ERROR, f"the handler called sys.exit({exc.code!r})")
            else:
                _failed(span, ERROR, None, type(exc).__name__, type(exc).__qualname__)
            raise
        else:
            if method == "tools/call":
                _tool_result(span, ERROR, result)
            return result
        finally:
            if "mcp.protocol.version" not in attributes:  # (initialize: known once it ran)
                version = getattr(session.owner, "protocol_version", None)
                if type(version) is str:
                    span.set_attribute("mcp.protocol.version", version)
            detach(token)
            span.end()

    def sent(request: Any, call_next: Callable[[Any], Any]) -> Any:
        # A request this side sends: a CLIENT span, carried to the peer in params._meta.
        method, params, session = request.method, request.params, request.session
        name, attributes = _describe(method, params, getattr(request, "request_id", None))
        meta = params.get("_meta")
        version = meta.get(VERSION_KEY) if type(meta) is dict else None  # (2026-07-28: each request's own)
        _connection(attributes, session, version or getattr(session.owner, "protocol_version", None),
                    getattr(session.transport, "url", None))
        span = tracer.start_span(name, kind=CLIENT, attributes=attributes)
        token = attach(in_context(span))
        result = None
        try:
            if meta is None or type(meta) is dict:  # (a _meta that is not an object is left as it is)
                carrier = dict(meta or ())
                inject(carrier)
                if carrier:
                    params["_meta"] = carrier
            result = call_next(request)
        except RPCError as exc:
            _failed(span, ERROR, exc.code, exc.message)
            raise
        except BaseException as exc:  # no answer: a timeout, a closed connection, Ctrl-C
            span.record_exception(exc)
            _failed(span, ERROR, None, f"{type(exc).__name__}: {exc}",
                    "timeout" if isinstance(exc, Timeout) else type(exc).__qualname__)
            raise
        else:
            if method == "tools/call":
                _tool_result(span, ERROR, result)
            return result
        finally:
            if "mcp.protocol.version" not in attributes and type(result) is dict:  # (the answer to initialize)
                version = result.get("protocolVersion")
                if type(version) is str:
                    span.set_attribute("mcp.protocol.version", version)
            if "mcp.session.id" not in attributes:  # (Streamable HTTP: the answer to initialize brings it)
                session_id = getattr(session.transport, "session_id", None)
                if type(session_id) is str and session_id:
                    span.set_attribute("mcp.session.id", session_digest(session_id))
            detach(token)
            span.end()

    def traced(request: Any, call_next: Callable[[Any], Any]) -> Any:
        if request.outgoing:
            return sent(request, call_next)
        return answered(request, call_next)

    return traced


def _describe(method: str, params: Dict[str, Any], request_id: Any) -> Tuple[str, Dict[str, Any]]:
    """A request's span name and the attributes its params and id say."""
    attributes: Dict[str, Any] = {"mcp.method.name": method}
    if request_id is not None:  # (the conventions: not when the id is null or absent)
        attributes["jsonrpc.request.id"] = str(request_id)
    name = method
    target = TARGETS.get(method)
    if target is not None:
        value = params.get("name")
        if type(value) is str:
            attributes[target] = value
            name = f"{method} {value}"
        if method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
    elif method in RESOURCE_METHODS:
        uri = params.get("uri")
        if type(uri) is str:
            attributes["mcp.resource.uri"] = uri
    return name, attributes


def _connection(attributes: Dict[str, Any], session: Any, version: Any, url: Any) -> None:
    """Add the attributes of the connection a request goes on: its protocol version (when known),
    its HTTP session, its transport, and where the server is (``url``: a client's)."""
    if type(version) is str:
        attributes["mcp.protocol.version"] = version
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
        address = _ADDRESSES[url] if url in _ADDRESSES else _address(url)
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
    span.set_status(error, description)


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
