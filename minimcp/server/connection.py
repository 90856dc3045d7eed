"""One client's connection to a server: what it negotiated, and the code that answers each method.

:class:`ServerConnection` holds what one client negotiated (protocol
version, capabilities, log level, subscriptions) and has one method per MCP
request it answers; :mod:`minimcp.server.methods` is the table that maps
method names (and the protocol eras that have them) to these.
"""

from __future__ import annotations

import threading

from ..engine.session import ALWAYS_INLINE, Session
from ..errors import RPCError
from ..logs import get_logger
from ..protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, RESOURCE_NOT_FOUND
from ..protocol.levels import LOG_LEVELS, RANK
from ..protocol.stateless import checked_capabilities
from ..protocol.versions import HANDSHAKE_VERSIONS, PROTOCOL_VERSION, knows
from .context import Context
from .coroutines import finish

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

    from ..engine.session import Handler
    from .server import Server
    from .tools import ServerTool

log: Logger = get_logger(__name__)

#: The deepest a tool's arguments may nest (objects and arrays): deeper ones would overflow the
#: stack in the code that checks, converts or echoes them, so they are refused up front.
MAX_DEPTH = 100



def require_scopes(needed: Sequence[str], principal: Any, what: str) -> None:
    """Refuse a call whose caller lacks a scope it needs (server/auth/protection.py, loaded only
    when a scoped call has a caller: stdio and in-memory connections have none)."""
    if needed and principal is not None:
        from .auth.protection import require_scopes as check

        check(needed, principal, what)


#: The requests a connection runs on the thread that read them, in arrival order: ``initialize``
#: (so a request pipelined right behind it sees the version), and what every session answers so
#: (``ALWAYS_INLINE``: ``ping``, ``server/discover``): made once, not per connection.
INLINE_METHODS = frozenset({"initialize"}) | ALWAYS_INLINE


class ServerConnection:
    """One client's connection to a :class:`~minimcp.Server`: what it negotiated, and its session."""

    def __init__(self, server: Server, transport: Any, handlers: Dict[str, Callable[[Dict[str, Any], Context], Any]], *,
                 trace: bool = False, workers: Any = None, principal: Any = None,
                 close_on_eof: bool = False) -> None:
        self.server: Server = server
        #: Who the client authenticated as (HTTP with an ``auth`` hook), else None.
        self.principal: Any = principal
        self.protocol_version: Optional[str] = None
        self.client_capabilities: Dict[str, Any] = {}
        self.client_info: Dict[str, Any] = {}
        #: Whether the client sent ``initialize`` on this connection, so that the two above are
        #: what it declared. False on a sessionless app's POST: its client's ``initialize`` went
        #: to another connection, and what it declared is not known here (not "nothing").
        self.initialized: bool = False
        #: The least severe level the client wants (``logging/setLevel``); None: send nothing.
        self.log_level: Optional[str] = server.log_level
        #: Resource URIs this client subscribed to (``resources/subscribe``).
        self.subscriptions: Set[str] = set()
        self._lock = threading.Lock()
        # initialize runs on the reader, so a request pipelined right behind it sees the version.
        # The handlers take a Context, which the checker cannot tie to context_class=Context below.
        self.session: Session = Session(
            transport, handlers,  # type: ignore[arg-type]
            {"notifications/roots/list_changed": self._roots_changed},
            owner=self, context_class=Context, max_workers=server.max_workers,
            timeout=server.timeout, trace=trace, name=f"server {server.name}",
            workers=workers, close_on_eof=close_on_eof, inline_methods=INLINE_METHODS,
            batches=self.allows_batches, middleware=server.middleware, masks_errors=True)

    def handlers(self) -> Dict[str, Handler]:
        """Every MCP request this connection answers: ``method -> handler(params, ctx)``
        (the table of :mod:`minimcp.server.methods`)."""
        return self.session.handlers

    def allows_batches(self) -> bool:
        """May the client send JSON-RPC batches? Only under 2025-03-26, once negotiated."""
        return self.protocol_version is not None and knows(self.protocol_version, "batches")

    @property
    def version(self) -> str:
        """The negotiated protocol version (the newest, before the handshake)."""
        return self.protocol_version or PROTOCOL_VERSION

    def ping(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``ping`` (spec basic/utilities/ping; gone in 2026-07-28)."""
        return {}

    def initialize(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Negotiate the protocol version (spec basic/lifecycle "Initialization")."""
        if ctx.batch is not None:  # spec 2025-03-26 basic/lifecycle: initialize MUST NOT be part of a batch
            raise RPCError(INVALID_REQUEST, "Invalid Request: initialize cannot be batched")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RPCError(INVALID_PARAMS, 'initialize needs "protocolVersion" (a string)')
        if self.protocol_version is not None:
            raise RPCError(INVALID_REQUEST, "Invalid Request: already initialized")
        # Agree to the client's version if we speak it; else offer our newest.
        version = requested if requested in HANDSHAKE_VERSIONS else PROTOCOL_VERSION
        capabilities, info = params.get("capabilities"), params.get("clientInfo")
        capabilities = {} if capabilities is None else checked_capabilities(capabilities, "capabilities")
        if info is not None and type(info) is not dict:
            raise RPCError(INVALID_PARAMS, f'Invalid params: "clientInfo" must be an object, not {info!r}')
        self.client_capabilities, self.client_info = capabilities, info or {}
        self.initialized = True
        self.protocol_version = version
        return self.server.initialize_result(version)

    # -- lists, with pagination -----------------------------------------------------

    def list_tools(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``tools/list``."""
        return self.list_items("tools", "tools", params, ctx)

    def list_resources(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``resources/list``."""
        return self.list_items("resources", "resources", params, ctx)

    def list_resource_templates(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``resources/templates/list``."""
        return self.list_items("resource_templates", "resourceTemplates", params, ctx)

    def list_prompts(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``prompts/list``."""
        return self.list_items("prompts", "prompts", params, ctx)

    def list_items(self, registry: str, key: str, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer a list method: one page of ``server.<registry>()`` as ``key``."""
        version = ctx.protocol_version or PROTOCOL_VERSION
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise RPCError(INVALID_PARAMS, f'Invalid params: "cursor" must be a string, not {cursor!r}')
        items = getattr(self.server, registry)()
        page, next_cursor = paginate([item.definition_for(version) for item in items], cursor, self.server.page_size)
        result: Dict[str, Any] = {key: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # -- tools, resources, prompts, completion ----------------------------------------

    def call_tool(self, params: Dict[str, Any], ctx: Context, tool: Optional[ServerTool] = None) -> Dict[str, Any]:
        """Answer ``tools/call``: an unknown tool is a protocol error, a failing tool a result. A
        tool registered with ``task=`` goes through :mod:`.tasks` (a task, when the 2026-07-28
        request declares the extension). ``tool``: the one ``params["name"]`` names, when the
        caller has looked it up and chosen to run it here (the tasks extension does)."""
        name = params.get("name")
        if tool is None:
            if not isinstance(name, str):
                raise RPCError(INVALID_PARAMS, 'tools/call needs "name" (a string)')
            tool = self.server.get_tool(name)
            if tool is None:
                raise RPCError(INVALID_PARAMS, f"Unknown tool: {name!r}")
            if tool.task is not None and ctx.meta is not None:
                from .tasks import call_tool as call_with_task  # late, like every extension's code

                return call_with_task(self, params, ctx)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise RPCError(INVALID_PARAMS, 'tools/call "arguments" must be an object')
        else:
            for value in arguments.values():  # flat arguments (the usual case) need no walk: no call
                if type(value) is dict or type(value) is list:
                    if too_deep(arguments, MAX_DEPTH):
                        raise RPCError(INVALID_PARAMS, f'Invalid params: tools/call "arguments" are nested '
                                                       f'deeper than {MAX_DEPTH} levels')
                    break
        if tool.scopes:  # (HTTP refused it earlier: a 403) the message is made only when it may be needed
            require_scopes(tool.scopes, ctx.principal, f"tool {name!r}")
        meta = ctx.meta  # this request's version and log level (stateless era), or the connection's
        version = (meta.version if meta is not None else self.protocol_version) or PROTOCOL_VERSION
        bridge = self.server.log_bridge
        wanted = meta.log_level if meta is not None else self.log_level  # (one set while it runs: from the next call)
        if wanted is None or not bridge.can_forward():
            return tool.call(arguments, ctx, version)  # no record could reach the client: no mapping
        with bridge.handling(ctx):
            return tool.call(arguments, ctx, version)

    def _resource_uri(self, params: Dict[str, Any]) -> str:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RPCError(INVALID_PARAMS, 'needs "uri" (a string)')
        return uri

    def read_resource(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``resources/read``; an unknown URI is ``-32002`` (spec server/resources "Error Handling")."""
        uri = self._resource_uri(params)
        found = self.server.find_resource(uri)
        try:
            if found is None:
                raise RPCError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
            resource, variables = found
            require_scopes(resource.scopes, ctx.principal, f"resource {uri!r}")
            with self.server.log_bridge.handling(ctx):
                result = resource.read(uri, variables, ctx)
        except RPCError as exc:
            if exc.code == RESOURCE_NOT_FOUND and ctx.meta is not None:
                exc.code = INVALID_PARAMS  # spec 2026-07-28 server/resources: -32002 is gone
            raise
        return result  # (2026-07-28 cache hints: ServerResource.read adds them)

    def subscribe(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``resources/subscribe``: updates to ``uri`` will be sent to this client."""
        uri = self._resource_uri(params)
        found = self.server.find_resource(uri)
        if found is None:
            raise RPCError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        require_scopes(found[0].scopes, ctx.principal, f"resource {uri!r}")
        with self._lock:
            self.subscriptions.add(uri)
        return {}

    def unsubscribe(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``resources/unsubscribe`` (unknown URIs are fine: the goal is reached)."""
        uri = self._resource_uri(params)
        with self._lock:
            self.subscriptions.discard(uri)
        return {}

    def get_prompt(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``prompts/get``: unknown prompts and bad arguments are ``-32602``."""
        name = params.get("name")
        prompt = self.server.get_prompt(name) if isinstance(name, str) else None
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"Unknown prompt: {name!r}")
        arguments = params.get("arguments")
        arguments = {} if arguments is None else arguments
        if type(arguments) is not dict:
            raise RPCError(INVALID_PARAMS, 'prompts/get "arguments" must be an object')
        _strings(arguments, "prompts/get", "arguments")  # spec: {[key: string]: string}
        require_scopes(prompt.scopes, ctx.principal, f"prompt {name!r}")
        with self.server.log_bridge.handling(ctx):
            return prompt.get(arguments, ctx, ctx.protocol_version or PROTOCOL_VERSION)

    def complete(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``completion/complete`` (spec server/utilities/completion), at most 100 values."""
        ref = params.get("ref")
        argument = params.get("argument")
        if type(ref) is not dict or type(argument) is not dict or not isinstance(argument.get("name"), str):
            raise RPCError(INVALID_PARAMS, 'completion/complete needs "ref" and "argument": {"name", "value"}')
        named = "uri" if ref.get("type") == "ref/resource" else "name"
        _strings({key: ref.get(key) for key in ("type", named)}, "completion/complete", "ref")
        value = argument.get("value", "")
        _strings({"value": value}, "completion/complete", "argument")
        context = params.get("context")
        context = {} if context is None else context
        if type(context) is not dict or type(context.get("arguments", {})) is not dict:
            raise RPCError(INVALID_PARAMS, 'Invalid params: completion/complete "context" must be '
                                           '{"arguments": {name: value}}')
        context = _strings(context.get("arguments", {}), "completion/complete", "context.arguments")
        completer = self.server.find_completer(ref, argument["name"])
        if completer is None:
            values: Any = []
        else:
            with self.server.log_bridge.handling(ctx):
                values = finish(completer(value, context), ctx)  # an async def completer too
        if type(values) is dict:
            return {"completion": values}
        values = [str(v) for v in values]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    # -- logging --------------------------------------------------------------------

    def set_level(self, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
        """Answer ``logging/setLevel``: send log messages at this level and above."""
        level = params.get("level")
        if not isinstance(level, str) or level not in RANK:
            raise RPCError(INVALID_PARAMS, f"Unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    def send_log(self, level: str, data: Any, logger: Optional[str] = None, related_to: Any = None) -> None:
        """Send ``notifications/message`` if the client's level lets it through."""
        if level not in RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self.log_level is None or RANK[level] < RANK[self.log_level]:
            return
        params: Dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params, related_to)

    # -- talking to the client ---------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]], timeout: Optional[float],
                related_to: Any = None) -> Any:
        """Send a request to the client and wait for its answer (used by ``Context``)."""
        return self.session.request(method, params, timeout=timeout, related_to=related_to)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, related_to: Any = None) -> None:
        """Send a notification if the connection is open (after the handshake, or for a request)."""
        if self.session.closed or (self.protocol_version is None and related_to is None):
            return
        try:
            self.session.notify(method, params, related_to=related_to)
        except Exception as exc:  # the client went away: nothing to tell
            log.debug("could not send %s: %s", method, exc)

    def notify_elicitation_complete(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished (2025-11-25)."""
        if knows(self.version, "elicitation_mode"):
            self.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def _roots_changed(self, params: Dict[str, Any]) -> None:
        if self.server.on_roots_changed is not None:
            self.server.on_roots_changed(self)

    def __repr__(self) -> str:
        return f"<ServerConnection {self.client_info.get('name')!r} version={self.protocol_version}>"


def too_deep(value: Any, limit: int) -> bool:
    """Is ``value`` (JSON) nested deeper than ``limit`` arrays and objects? Walked without recursion,
    so the answer itself cannot overflow the stack."""
    stack = [(value, 1)]  # only containers go on it: flat arguments (the usual case) cost one loop
    while stack:  # bounded: each value of the document is looked at once
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in (item.values() if type(item) is dict else item):
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return False


def _strings(fields: Dict[str, Any], method: str, where: str) -> Dict[str, Any]:
    """``fields`` if every value is a string; else -32602 naming the first that is not."""
    for key, value in fields.items():
        if not isinstance(value, str):
            raise RPCError(INVALID_PARAMS, f'Invalid params: {method} "{where}.{key}" must be a string, not {value!r}')
    return fields


def paginate(items: List[Any], cursor: Optional[str], page_size: Optional[int]) -> Tuple[List[Any], Optional[str]]:
    """Return one page of ``items`` and the ``nextCursor`` (``None`` at the end).

    Cursors are opaque to clients (spec server/utilities/pagination); here
    they are the base64 of the next offset. A bad one is ``-32602``.
    """
    if cursor is None and page_size is None:
        return items, None  # the usual case: one page
    import base64  # late: only servers that page need it

    start = 0
    if cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii"))
            if not 0 <= start <= len(items):
                raise ValueError(start)
        except (ValueError, TypeError, AttributeError, UnicodeError):
            raise RPCError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None
    if page_size is None:
        return items[start:], None
    end = start + page_size
    next_cursor = base64.urlsafe_b64encode(str(end).encode("ascii")).decode("ascii") if end < len(items) else None
    return items[start:end], next_cursor
