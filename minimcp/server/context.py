"""What a tool, resource or prompt function gets when it declares a ``ctx`` parameter.

:class:`Context` gives progress, cancellation, logging to the client, and
requests to the client (sampling, elicitation, roots). In the handshake
versions those are real requests that block only the handler's own worker
thread; under 2026-07-28 they become the request's ``input_required``
answer, and the handler is run again with the client's answers
(:mod:`minimcp.server.stateless` tells how).
"""

from __future__ import annotations

from ..engine.inflight import Batch, RequestContext
from ..errors import CapabilityError, ProtocolError
from ..protocol.jsonrpc import Request
from ..protocol.levels import RANK
from ..protocol.stateless import TASKS_EXTENSION, InputRequired, RequestMeta
from ..protocol.versions import knows

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, List, Optional, Union

    from ..engine.session import Session
    from .connection import ServerConnection


#: What this process said once already (a plain dict: one lookup on the path of each ctx.log()).
_said = {"logging is deprecated": False}


def _deprecated_log() -> None:
    """Say once per process, as a ``DeprecationWarning`` at the tool's own ``ctx.log()`` line,
    that 2026-07-28 deprecates logging (SEP-2577). minimcp's own calls (the logging bridge
    forwarding ``logging`` records) do not count: the tool did not call ctx.log() there."""
    import sys

    caller = sys._getframe(2)  # (0: here; 1: Context.log; 2: whoever called it)
    if str(caller.f_globals.get("__name__", "")).startswith("minimcp."):
        return
    _said["logging is deprecated"] = True
    import warnings

    warnings.warn("ctx.log(): logging is deprecated from MCP 2026-07-28 (SEP-2577), which this request "
                  "speaks; it still works (a client that asks for a level gets the messages of its own "
                  "request), but plan for stderr or OpenTelemetry instead", DeprecationWarning, stacklevel=3)


class Context(RequestContext):
    """What a tool, resource or prompt function gets when it declares a ``ctx`` parameter.

    Example::

        @server.tool()
        def summarise(path: str, ctx: Context) -> str:
            ctx.log("info", f"reading {path}")
            text = open(path).read()
            reply = ctx.sample(f"Summarise:\\n{text}", max_tokens=200)
            return reply["content"]["text"]

    Besides ``request_id``, ``cancelled`` and ``report_progress()`` (see
    :class:`~minimcp.engine.inflight.RequestContext`), it tells what the client
    negotiated and can ask the client for things. Those requests block this
    handler's worker thread only, never the connection.
    """

    __slots__ = ("meta", "answers", "_asked", "_asks", "_batching")

    def __init__(self, session: Session, request: Request, handler: Any = None,
                 batch: Optional[Batch] = None) -> None:
        super().__init__(session, request, handler, batch)
        name = self.params.get("name")
        if type(name) is str:  # a stdio server's reading times each tool (and prompt) apart
            self.kind: Any = (self.method, name)
        #: The request's 2026-07-28 metadata, or None for a handshake-era request.
        self.meta: Optional[RequestMeta] = None
        #: Answers the client sent for this request's input requests (2026-07-28).
        self.answers: Dict[str, Any] = {}
        self._asked: Dict[str, Dict[str, Any]] = {}
        self._asks = 0
        self._batching = 0

    @property
    def connection(self) -> ServerConnection:
        """The client connection this request came in on."""
        connection: ServerConnection = self.session.owner  # (a server's sessions are owned by one)
        return connection

    @property
    def protocol_version(self) -> Optional[str]:
        """The protocol version of this request (2026-07-28) or negotiated with this client."""
        return self.meta.version if self.meta else self.session.owner.protocol_version

    @property
    def client_capabilities(self) -> Dict[str, Any]:
        """The capabilities the client declared, in this request (2026-07-28) or at initialize."""
        return self.meta.capabilities if self.meta else self.session.owner.client_capabilities

    @property
    def client_info(self) -> Dict[str, Any]:
        """The client's ``clientInfo`` (name, version), self-reported."""
        return self.meta.client_info if self.meta else self.session.owner.client_info

    @property
    def principal(self) -> Any:
        """Who the client authenticated as (what the HTTP ``auth`` hook returned), or None."""
        return self.session.owner.principal

    def close_sse_stream(self) -> None:
        """End this request's SSE stream now; the client reconnects and resumes (Streamable HTTP,
        2025-11-25 polling). Messages sent meanwhile are kept for it. Elsewhere (other
        transports, other protocol versions): does nothing."""
        # spec 2025-11-25 basic/transports: only a stream primed with an event id may be
        # closed before its response; older versions cannot resume, so it stays open.
        version = self.protocol_version
        if self.meta is None and version is not None and knows(version, "sse_priming"):
            self.session.transport.close_stream(self.request_id)

    def log(self, level: str, data: Any, logger: Optional[str] = None) -> None:
        """Send a log message to the client, if it asked for this level or above.

        Args:
            level: one of ``debug info notice warning error critical alert emergency``.
            data: any JSON value: a string, or a dict of details.
            logger: the name of the part of the server that logs.
        """
        if self.meta is None:
            self.connection.send_log(level, data, logger, related_to=self.request_id)
            return
        if not _said["logging is deprecated"]:
            _deprecated_log()
        # 2026-07-28: logs are request-scoped, only at the level this request asked
        # for, and nothing more once it was cancelled (spec basic/patterns/cancellation).
        wanted = self.meta.log_level
        if wanted is not None and RANK.get(level, 0) >= RANK.get(wanted, 0) and not self.is_cancelled:
            params: Dict[str, Any] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self.session.notify("notifications/message", params, related_to=self.request_id)

    def _require(self, capability: str, what: str, sub: Optional[str] = None) -> None:
        declared = self.client_capabilities.get(capability)
        if declared is None or (sub is not None and sub not in declared):
            name = f"{capability}.{sub}" if sub else capability
            raise CapabilityError(f"cannot {what}: the client did not declare the {name!r} capability "
                                  f"(client: {self.client_info.get('name', 'unknown')})", capability)

    def _ask(self, method: str, params: Optional[Dict[str, Any]], key: Optional[str], timeout: Optional[float]) -> Any:
        """Ask the client: a request now (handshake era), or an input request (2026-07-28).
        Any: the answer (a dict), or None for a question not answered yet inside ``inputs()``."""
        if self.meta is None:
            answer = self.connection.request(method, params, timeout, self.request_id)
            if not _fits(method, answer):  # the handler gets an error it can read, not an AttributeError
                raise ProtocolError(f"the client answered {method} with a malformed result: {answer!r:.200}")
            return answer
        self._asks += 1
        key = key or f"{method.split('/')[0]}-{self._asks}"
        if key in self.answers and _fits(method, self.answers[key]):
            return self.answers[key]  # (a malformed answer is asked for again: spec MRTR)
        self._asked[key] = {"method": method, "params": params or {}}
        if self._batching:
            return None
        raise InputRequired(dict(self._asked))

    def start_task(self) -> None:
        """Become a task here: for a tool registered with ``task=`` and
        :func:`~minimcp.server.tasks.starts_task_later`, once its questions are answered
        (the call answers a ``CreateTaskResult`` and the tool runs again as the task);
        does nothing when the client did not opt in to tasks."""
        tool = self.connection.server.get_tool(self.params.get("name")) if self.method == "tools/call" else None
        extensions = self.client_capabilities.get("extensions") if self.meta is not None else None
        if getattr(tool, "task", None) and type(extensions) is dict and TASKS_EXTENSION in extensions:
            raise StartTask()

    def inputs(self) -> _Inputs:
        """Ask for several things in one round (2026-07-28); elsewhere it changes nothing.

        Inside the block, a question with no answer yet returns ``None``; at
        the end, the round's input requests go to the client together::

            with ctx.inputs():
                name = ctx.elicit("Your name?", {...}, key="name")
                roots = ctx.list_roots(key="roots")
            # here both are answered
        """
        return _Inputs(self)

    def sample(self, messages: Union[str, List[Any]], *, max_tokens: int, system_prompt: Optional[str] = None,
               temperature: Optional[float] = None, stop_sequences: Optional[List[str]] = None,
               model_preferences: Optional[Dict[str, Any]] = None, include_context: Optional[str] = None,
               tools: Optional[List[Dict[str, Any]]] = None, tool_choice: Optional[Dict[str, Any]] = None,
               metadata: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None,
               key: Optional[str] = None) -> Dict[str, Any]:
        """Ask the client's LLM for a message (``sampling/createMessage``).

        Args:
            messages: a string (one user message) or a list of strings and
                ``{"role": ..., "content": ...}`` dicts.
            max_tokens: the most tokens to generate (required by the spec).
            tools, tool_choice: tools the model may call (2025-11-25; the
                client must declare ``sampling.tools``).
            key: this question's name among the request's input requests
                (2026-07-28); by default its place in the order of questions.

        Returns:
            The ``CreateMessageResult``: ``role``, ``content``, ``model``, ``stopReason``.

        Raises:
            CapabilityError: the client did not declare ``sampling``.
            RPCError: the client refused (a user may decline).
        """
        self._require("sampling", "sample")
        if tools is not None:
            self._require("sampling", "sample with tools", "tools")
        items = [messages] if isinstance(messages, str) else messages
        params: Dict[str, Any] = {
            "messages": [{"role": "user", "content": {"type": "text", "text": m}} if isinstance(m, str) else m
                         for m in items],
            "maxTokens": max_tokens}
        for field, value in (("systemPrompt", system_prompt), ("temperature", temperature),
                             ("stopSequences", stop_sequences), ("modelPreferences", model_preferences),
                             ("includeContext", include_context), ("tools", tools), ("toolChoice", tool_choice),
                             ("metadata", metadata)):
            if value is not None:
                params[field] = value
        answer: Dict[str, Any] = self._ask("sampling/createMessage", params, key, timeout)
        return answer

    def elicit(self, message: str, schema: Any, *, timeout: Optional[float] = 600.0,
               key: Optional[str] = None) -> Dict[str, Any]:
        """Ask the user to fill in a form (``elicitation/create``, form mode, 2025-06-18+).

        Args:
            message: what to ask.
            schema: a flat JSON Schema object (``{"type": "object", "properties": ...}``),
                or a dataclass / TypedDict whose fields are str, int, float, bool or Literal.
            timeout: seconds to wait for the person (default ten minutes).

        Returns:
            The ``ElicitResult``: ``{"action": "accept", "content": {...}}``,
            or ``action`` ``"decline"`` / ``"cancel"``.

        Raises:
            CapabilityError: the client did not declare ``elicitation`` (form mode).
        """
        self._require("elicitation", "elicit")
        declared = self.client_capabilities["elicitation"]
        if declared and "form" not in declared:  # 2025-11-25: {} means form only
            raise CapabilityError("cannot elicit a form: the client declared elicitation for URLs only")
        if not isinstance(schema, dict):
            from .schema import type_schema

            schema = type_schema(schema)
        params: Dict[str, Any] = {"message": message, "requestedSchema": schema}
        version = self.protocol_version
        if version is not None and knows(version, "elicitation_mode"):
            params = {"mode": "form", **params}
        answer: Dict[str, Any] = self._ask("elicitation/create", params, key, timeout)
        return answer

    def elicit_url(self, message: str, url: str, *, elicitation_id: Optional[str] = None,
                   timeout: Optional[float] = 600.0, key: Optional[str] = None) -> Dict[str, Any]:
        """Ask the user to visit a URL (``elicitation/create``, URL mode, 2025-11-25).

        When the out-of-band step is done, call
        ``ctx.connection.notify_elicitation_complete(elicitation_id)``.

        Returns:
            The ``ElicitResult``; ``accept`` only means the user agreed to open the URL.
        """
        self._require("elicitation", "elicit a URL", "url")
        if elicitation_id is None:
            import secrets

            elicitation_id = secrets.token_urlsafe(12)
        params: Dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if self.meta is None:  # 2026-07-28 dropped elicitationId: the state carries it
            params["elicitationId"] = elicitation_id
        answer: Dict[str, Any] = self._ask("elicitation/create", params, key, timeout)
        return answer

    def list_roots(self, *, timeout: Optional[float] = None, key: Optional[str] = None) -> List[Dict[str, Any]]:
        """Ask the client for its roots (``roots/list``): ``[{"uri": "file:///...", "name": ...}]``.

        Raises:
            CapabilityError: the client did not declare ``roots``.
        """
        self._require("roots", "list roots")
        answer = self._ask("roots/list", None, key, timeout)
        return None if answer is None else answer.get("roots", [])  # type: ignore[return-value]


class StartTask(InputRequired):
    """Raised by ``ctx.start_task()`` to make the call a task (:mod:`minimcp.server.tasks`
    catches it); an ``InputRequired``, so that a tool's error handling lets it through."""

    def __init__(self) -> None:
        super().__init__({})


def _fits(method: str, answer: Any) -> bool:
    """Does a client's input response have the shape of ``method``'s result? (spec 2026-07-28 MRTR:
    servers SHOULD validate input responses; a bad one is asked for again.)"""
    if type(answer) is not dict:
        return False
    if method == "elicitation/create":
        return answer.get("action") in ("accept", "decline", "cancel") and (
            answer.get("action") != "accept" or "content" not in answer or type(answer["content"]) is dict)
    if method == "sampling/createMessage":
        return isinstance(answer.get("role"), str) and isinstance(answer.get("content"), (dict, list))
    if method == "roots/list":
        return type(answer.get("roots")) is list
    return True


class _Inputs:
    __slots__ = ("ctx",)

    def __init__(self, ctx: Context) -> None:
        self.ctx: Context = ctx

    def __enter__(self) -> None:
        self.ctx._batching += 1

    def __exit__(self, kind: Any, *rest: Any) -> None:
        ctx = self.ctx
        ctx._batching -= 1
        if kind is None and not ctx._batching and any(key not in ctx.answers for key in ctx._asked):
            raise InputRequired(dict(ctx._asked))
