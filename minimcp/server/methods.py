"""The MCP method table: every request a minimcp server answers, the code that answers it, and
the protocol eras that have it.

Two eras share one endpoint (spec: each version's basic/lifecycle page):

- ``HANDSHAKE``: 2024-11-05 … 2025-11-25. The client sends ``initialize``
  first; the connection remembers what was negotiated.
- ``STATELESS``: 2026-07-28. No handshake: every request names its version
  and capabilities in ``params._meta`` and is served on its own.

One guard applies the era rules to every method, so no handler checks them:
a stateless request for a handshake-only method, or a handshake request for
a stateless-only one, is ``-32601`` (that era has no such method); a
handshake request before ``initialize`` is ``-32600`` (but ``initialize``
itself and ``ping`` come first); a stateless request goes through
:func:`minimcp.server.stateless.serve`, which reads its ``_meta`` and
finishes its result.

The same guard keeps a handler's unexpected exception from the client (CWE-209: its text may
name a path, a host, a query): the client gets ``-32603 Internal error (ref 3f9a2c1d): see the
server's log`` and the server's log the traceback under the same reference. What a handler
raises on purpose (:data:`DELIBERATE`: an ``RPCError`` above all) reaches the client as it is.
A tool's own exceptions never get here: they are ``isError`` results (:mod:`.tools`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, Dict, Optional, Tuple

    from .apps import Apps


from ..errors import CapabilityError, RPCError
from ..logs import get_logger, reference
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from ..protocol.stateless import VERSION_KEY, InputRequired
from ..protocol.versions import STATELESS_VERSION
from .connection import ServerConnection
from .context import Context

log: Logger = get_logger(__name__)

HANDSHAKE, STATELESS, BOTH = "handshake", "stateless", "both"

#: The handshake-era requests a client may send before ``initialize`` (spec basic/lifecycle).
BEFORE_INITIALIZE = ("initialize", "ping")


def _later(module: str, name: str) -> Callable[..., Any]:
    """``minimcp.server.<module>.<name>``, imported on first use and then kept: a server that
    publishes no skills, runs no tasks and gets no 2026-07-28 request never loads those modules
    (start-up time is import time), and one that does imports once (not an import on every call)."""
    found: Optional[Callable[..., Any]] = None

    def answer(*args: Any) -> Any:
        nonlocal found
        if found is None:
            from importlib import import_module

            found = getattr(import_module(f"{__package__}.{module}"), name)
        return found(*args)

    answer.__qualname__ = f"{module}.{name}"
    return answer


def _serve_stateless(connection: Any, answer: Any, params: Dict[str, Any], ctx: Context) -> Any:
    """``server.stateless.serve(connection, answer, params, ctx)``, which every 2026-07-28 request
    goes through: imported with the first one, then called directly (this name is rebound to it)."""
    global _serve_stateless
    from .stateless import serve

    _serve_stateless = serve
    return serve(connection, answer, params, ctx)


def _list_tools(connection: ServerConnection, params: Dict[str, Any], ctx: Context) -> Dict[str, Any]:
    """Answer ``tools/list``: MCP Apps answer it on a server that has them (server/apps.py: it
    leaves a view's own tools out for some clients before the list is paged), else the connection."""
    apps: Optional[Apps] = connection.server.__dict__.get("apps")
    if apps is not None:
        return apps.list_tools(connection, params, ctx)
    return connection.list_tools(params, ctx)


#: method -> (the code that answers it: ``answer(connection, params, ctx)``, the eras that have it)
METHODS: Dict[str, Tuple[Callable[[Any, Dict[str, Any], Context], Any], str]] = {
    "initialize":               (ServerConnection.initialize, HANDSHAKE),
    "ping":                     (ServerConnection.ping, HANDSHAKE),
    "logging/setLevel":         (ServerConnection.set_level, HANDSHAKE),
    "resources/subscribe":      (ServerConnection.subscribe, HANDSHAKE),
    "resources/unsubscribe":    (ServerConnection.unsubscribe, HANDSHAKE),
    "server/discover":          (_later("stateless", "discover"), STATELESS),
    "subscriptions/listen":     (_later("stateless", "listen"), STATELESS),
    "tools/list":               (_list_tools, BOTH),
    "tools/call":               (ServerConnection.call_tool, BOTH),
    "resources/list":           (ServerConnection.list_resources, BOTH),
    "resources/templates/list": (ServerConnection.list_resource_templates, BOTH),
    "resources/read":           (ServerConnection.read_resource, BOTH),
    "prompts/list":             (ServerConnection.list_prompts, BOTH),
    "prompts/get":              (ServerConnection.get_prompt, BOTH),
    "completion/complete":      (ServerConnection.complete, BOTH),
    # the tasks extension (io.modelcontextprotocol/tasks): server/tasks.py
    "tasks/get":                (_later("tasks", "tasks_get"), STATELESS),
    "tasks/update":             (_later("tasks", "tasks_update"), STATELESS),
    "tasks/cancel":             (_later("tasks", "tasks_cancel"), STATELESS),
    "tasks/result":             (_later("tasks", "removed"), BOTH),  # 2025-11-25 tasks: not in the extension
    "tasks/list":               (_later("tasks", "removed"), BOTH),
    # the skills extension (io.modelcontextprotocol/skills): server/skills.py
    "skills/list":              (_later("skills", "list_skills"), BOTH),
    "skills/get":               (_later("skills", "get_skill"), BOTH),
    "resources/directory/read": (_later("skills", "read_directory"), BOTH),
}


def guarded(method: str, answer: Callable[[Any, Dict[str, Any], Context], Any],
            era: str) -> Callable[[Dict[str, Any], Context], Any]:
    """``answer`` wrapped in the era rules (see the module docstring), as a session handler."""
    handshake_only, stateless_only = era == HANDSHAKE, era == STATELESS
    needs_initialize = method not in BEFORE_INITIALIZE

    def handler(params: Dict[str, Any], ctx: Context) -> Any:
        connection = ctx.session.owner
        meta = params.get("_meta")
        try:  # (free until something raises: no frame, no call on the way through)
            if meta is not None and (type(meta) is not dict or "progressToken" in meta):  # (else nothing to check)
                check_meta(meta)
            if meta is not None and VERSION_KEY in meta:  # a stateless request
                if handshake_only:
                    raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method} "
                                                     f"(not part of protocol version {STATELESS_VERSION})")
                return _serve_stateless(connection, answer, params, ctx)
            if stateless_only:
                raise RPCError(METHOD_NOT_FOUND, f"Method not found: {method} ({STATELESS_VERSION} only)")
            if needs_initialize and connection.protocol_version is None:
                raise RPCError(INVALID_REQUEST, "Invalid Request: the session is not initialized; "
                                                "send initialize first")
            return answer(connection, params, ctx)
        except DELIBERATE:
            raise
        except Exception as exc:
            raise internal_error(ctx.session.name, method, exc) from exc

    handler.__qualname__ = f"answer[{method}]"  # what a traceback or the trace shows
    return handler


#: What a handler raises on purpose, which reaches the client as it is: an ``RPCError`` (its code
#: and message, chosen by the author or by minimcp: -32002, -32602 …), a ``CapabilityError`` (what
#: the client did not declare), and the control flow of the stateless era and the tasks
#: extension (``InputRequired``, ``StartTask``). ``SystemExit`` is no ``Exception``: the session's
#: ``dispatch`` answers it.
DELIBERATE = (RPCError, CapabilityError, InputRequired)


def internal_error(name: str, method: str, exc: BaseException) -> RPCError:
    """The -32603 a client gets for an unexpected exception ``exc`` in the handler of ``method``:
    a generic message with a reference, where the exception's text may hold what the server
    must not tell (a path, a host, a query: CWE-209). The exception is logged with its traceback
    and the same reference (``name``: the session's, for the log line)."""
    ref = reference()
    log.error("%s: %s failed (ref %s)", name, method, ref, exc_info=exc)
    return RPCError(INTERNAL_ERROR, f"Internal error (ref {ref}): see the server's log")


def check_meta(meta: Any) -> None:
    """Refuse a request whose ``params._meta`` is not an object, or whose ``progressToken`` is
    neither a string nor an integer (spec schema ``RequestParams``), with -32602 naming the field."""
    if meta is None:
        return
    if type(meta) is not dict:
        raise RPCError(INVALID_PARAMS, f'Invalid params: "_meta" must be an object, not {meta!r}')
    token = meta.get("progressToken")
    if token is not None and type(token) not in (int, str):
        raise RPCError(INVALID_PARAMS, f'Invalid params: "_meta.progressToken" must be a string or an integer, '
                                       f'not {token!r}')


#: What a server connection's session gets: ``method -> handler(params, ctx)``, built once for all
#: connections (each handler finds its connection as ``ctx.session.owner``).
HANDLERS: Dict[str, Callable[[Dict[str, Any], Context], Any]] = {
    method: guarded(method, answer, era) for method, (answer, era) in METHODS.items()}
