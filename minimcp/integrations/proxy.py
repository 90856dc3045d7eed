"""ProxyServer: one MCP server that fronts others (a gateway), their features served as its own.

:class:`ProxyServer` is a :class:`~minimcp.Server`: it keeps tools, resources and prompts
of its own, and :meth:`~ProxyServer.mount` puts another server's beside them, under a
prefix: an in-process :class:`~minimcp.Server`, a stdio command, an HTTP URL or a name in a
host config file. Tools and prompts are named ``prefix__name`` (:func:`minimcp.integrations.hub
.qualified_names`, the names :class:`~minimcp.integrations.hub.ToolHub` gives), resource URIs
get ``prefix+`` in front of their scheme (``files+file:///notes.txt``), and completions
follow the prompt or template they complete. A mount with the prefix ``""`` keeps the names
as they are (the bridge ``minimcp proxy`` serves one server so). Each mount's names are its
own: no prefix may start another's, and a name or URI an unprefixed server lists under another
mount's prefix is left out (logged), so no upstream server can take another's calls.

What happens during a forwarded request comes back to whoever called the proxy: progress,
log messages, and the upstream server's own requests (sampling, elicitation, roots); a
cancel from the caller cancels the upstream request; a ``list_changed`` from an upstream
server becomes the proxy's own when the list did change. Every item the proxy lists carries
its id in ``_meta`` (:data:`VIA`), and an item that comes back to it through another proxy
is left out: two proxies that mount each other settle.

Who answers an upstream server's question. Over stdio in the handshake era a server's
``sampling/createMessage`` says nothing of the call it belongs to, so a connection that
carries calls of two callers cannot tell whose it is. So each upstream connection is leased,
while calls are in flight on it, to one caller: a handshake-era client connection (whose
calls may share it), or one stateless-era request. A call of another caller takes an idle
connection or opens one more (at most ``max_links`` per upstream; past that it waits for one,
within its timeout). A connection whose upstream request the proxy stopped waiting for (the
caller cancelled, it timed out, or the proxy stopped it to ask a 2026-07-28 caller first) is
never lent again: the upstream tool may still run and ask, and only its own caller may hear
it. It is closed once its caller's calls on it end (an upstream stdio server is started
again for the next call). A question that comes when no call of the connection's caller is
in flight is refused. Roots: a server that asked for them outside a call keeps them, so
when its connection is lent to another caller the proxy tells it they changed (spec
client/roots "Root List Changes") and waits until it asked again, answering ``[]`` for a
caller that has none.

An upstream server that speaks 2026-07-28 asks inside the call's own answer
(``input_required``), so one connection serves every caller there: the proxy hands the
question on (to a 2026-07-28 caller, as its own ``input_required``, the upstream's
``requestState`` carried inside the proxy's signed one) and sends the answers back. A request
such a server sends on its own is refused: it has no caller to go to.

A caller of the stateless era (2026-07-28) cannot be asked in the middle of a request: when a
handshake-era upstream server asks, the proxy stops that upstream call, answers its caller
``input_required``, and calls again when the caller comes back with the answer, which it then
gives the upstream server when it asks again. That is how minimcp runs its own handlers in
this era (they are re-run, :mod:`minimcp.server.stateless`); an upstream tool that asks
something runs once per question.

No deadlock under load: a forwarded call waits on its upstream answer on its own worker
thread; the upstream server's questions are answered on the threads of the upstream
connection, and the caller's answers to them are read by the proxy's reading, which never
waits for a worker. None of them waits for a thread another holds while it waits.

An upstream server that is down (it crashed, did not answer ``initialize`` within
``start_timeout``, or its URL refuses) leaves the others serving: its tools stay listed as
they last were, and calling one answers an ``isError`` result that names it and says why in
general words (the details, which may hold a command line or a URL's password, go to the
proxy's log under a reference the message gives); each call tries to reconnect first.
"""

from __future__ import annotations

import os
import re
import threading
import time
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..client import tasks
from ..client.client import Client
from ..client.tasks import TaskHandle
from ..engine.threads import WorkerPool, join, start_thread
from ..errors import ConnectionClosed, MCPError, RPCError, TaskCancelled, Timeout
from ..logs import get_logger, reference
from ..protocol.apps import EXTENSION as APPS_EXTENSION
from ..protocol.apps import LEGACY_RESOURCE_URI as APPS_LEGACY_RESOURCE_URI
from ..protocol.apps import RESOURCE_URI as APPS_RESOURCE_URI
from ..protocol.apps import SCHEME as APPS_SCHEME
from ..protocol.apps import UI as APPS_UI
from ..protocol.apps import tool_view
from ..protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from ..protocol.stateless import CAPABILITIES_KEY, LOG_LEVEL_KEY, InputRequired
from ..protocol.versions import PROTOCOL_VERSION, SDK_VERSION, knows
from ..server.content import block_for_version, result_for_version
from ..server.context import Context
from ..server.prompts import ServerPrompt
from ..server.resources import ServerResource
from ..server.server import Server
from ..server.tools import ServerTool
from .hub import Target, _open, qualified_names

if TYPE_CHECKING:
    from logging import Logger

log: Logger = get_logger(__name__)

#: Where a caller's answers to the proxy's own questions sit among its 2026-07-28 answers:
#: the upstream server's ``requestState`` and the keys it asked, carried inside the proxy's
#: signed ``requestState`` (so the caller can neither read-alter nor forge it: the proxy reads
#: it only from a state it signed).
UPSTREAM_STATE = "io.github.minimcp/proxy-upstream"
#: The ``_meta`` key of every tool, prompt, resource and template a proxy lists: the ids of the
#: proxies it went through (:attr:`ProxyServer.proxy_id`), so that none is listed in a loop.
VIA = "io.github.minimcp/proxied-by"
#: The most tools (and prompts, resources, templates) the proxy keeps of one upstream server;
#: past it the rest are left out, with a warning, so one server cannot fill the proxy's memory.
MAX_ITEMS = 5000
#: How often the proxy looks for calls their callers cancelled (seconds).
WATCH_TICK = 0.05
#: How long the cancel watcher lingers with no call in flight before its thread ends (seconds).
WATCH_LINGER = 2.0
#: How long a call waits for a server told that the roots changed to ask for them (seconds).
ROOTS_WAIT = 2.0
#: The most ``input_required`` rounds one forwarded request takes with a 2026-07-28 upstream.
MAX_ROUNDS = 10
#: The capability a caller needs for each question an upstream server may ask.
_NEEDS = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}
#: Result fields of the stateless era that a handshake-era caller's schema does not have.
_STATELESS_FIELDS = ("resultType", "ttlMs", "cacheScope")
#: What a URI scheme may not hold (RFC 3986 §3.1), and ``+``: it ends a mount's URI prefix.
_SCHEME_UNSAFE = re.compile(r"[^a-z0-9.-]")
#: The lists the proxy marks with its id as they go out, and the key of each one's items.
_LISTS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
          "resources/templates/list": "resourceTemplates"}


class _Nobody:
    """Whose roots a server holds when it was given none (``[]``)."""

    def __repr__(self) -> str:
        return "<nobody's roots>"


_NO_ROOTS = _Nobody()


def _forwarded(ctx: Context) -> None:
    """What a forwarded tool, prompt or resource is registered with: it is never called
    (their ``call``, ``get`` and ``read`` forward the request instead)."""


def _owner(ctx: Any) -> Any:
    """Who a request is to an upstream connection: its handshake-era client connection (the
    session its calls share), or the one 2026-07-28 request."""
    return ctx.session if ctx.meta is None else ctx


def _missing(method: str, params: Dict[str, Any], capabilities: Dict[str, Any]) -> Optional[str]:
    """What the caller lacks to be asked ``method`` with ``params``: its capability, or the part
    of it the question needs (sampling with tools, URL-mode elicitation); None when nothing."""
    need = _NEEDS.get(method)
    if need is None:
        return None
    declared = capabilities.get(need)
    if declared is None:
        return need
    if method == "sampling/createMessage" and params.get("tools") and not (
            isinstance(declared, dict) and declared.get("tools") is not None):
        return "sampling with tools"
    if method == "elicitation/create" and params.get("mode") == "url" and not (
            isinstance(declared, dict) and declared.get("url") is not None):
        return "URL-mode elicitation"
    return None


def uri_prefix(prefix: str) -> str:
    """What a mount's resource URIs start with: ``prefix+`` made a valid URI scheme start
    (RFC 3986 §3.1: a letter, then letters, digits, ``+``, ``-`` or ``.``; a ``+`` inside the
    prefix becomes ``-``, so the first ``+`` always ends it), or ``""`` for an unprefixed
    mount. ``"My_Files"`` gives ``"my-files+"``, ``"a+b"`` ``"a-b+"``."""
    if not prefix:
        return ""
    safe = _SCHEME_UNSAFE.sub("-", prefix.lower())
    return (safe if safe[0].isalpha() else "x" + safe) + "+"


def _safe_url(url: str, brief: bool = False) -> str:
    """A URL without its user and password (and, ``brief``, without path and query either)."""
    from urllib.parse import urlsplit  # late: only a proxy with a URL mount describes one

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "a URL"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}" + ("" if brief else parts.path)


def describe(target: Any, brief: bool = False) -> str:
    """A name of an upstream target for messages: for the proxy's own log and output, the whole
    command (cut in the middle past 80 characters, so the script it runs still shows) or the URL
    less its password; ``brief``, what its callers may read (the program's name, the URL's
    origin), which holds no argument a secret may be in."""
    if isinstance(target, Server):
        return f"in-process server {target.name!r}"
    if isinstance(target, (list, tuple)):
        if brief:
            return os.path.basename(str(target[0])) if target else "a command"
        text = " ".join(str(part) for part in target)
        return text if len(text) <= 80 else text[:24] + "..." + text[-53:]
    if isinstance(target, dict):
        if target.get("url"):
            return _safe_url(str(target["url"]), brief)
        if target.get("command"):
            command = str(target["command"])
            return os.path.basename(command) if brief else command
        return "a config entry"
    text = str(target)
    if text.split(":", 1)[0].lower() in ("http", "https"):
        return _safe_url(text, brief)
    return text


def _reason(exc: BaseException) -> str:
    """Why an upstream server cannot be reached, in words a caller may read (no path, no URL,
    none of the server's own output)."""
    if isinstance(exc, Timeout):
        return "it did not answer in time"
    if isinstance(exc, ConnectionClosed):
        return "its connection ended" if exc.exit_code is None else f"it exited (code {exc.exit_code})"
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return "it could not be started"
    return "it could not be reached"


class Unavailable(MCPError):
    """An upstream server cannot be reached now; ``mount`` is its :class:`Mount`."""

    def __init__(self, mount: Mount, message: str) -> None:
        super().__init__(message)
        self.mount: Mount = mount


class _Cancelled(ConnectionClosed):
    """The proxy's caller cancelled its request before it was sent upstream."""


# -- what the proxy registers for each upstream tool, prompt and resource -------------------------


class ProxiedTool(ServerTool):
    """An upstream tool as the proxy lists it: its definition renamed, each call forwarded."""

    def __init__(self, mount: Mount, name: str, upstream: Optional[str], raw: Dict[str, Any]) -> None:
        schema = raw.get("inputSchema")
        super().__init__(_forwarded, name=name,
                         input_schema=schema if isinstance(schema, dict) else {"type": "object"})
        #: The mount the tool belongs to.
        self.mount: Mount = mount
        #: Its name at the upstream server (None: not known yet, its server never answered).
        self.upstream: Optional[str] = upstream
        # The upstream's definition as it is (fields minimcp does not know yet included), less
        # the task support: the proxy forwards a call, not a task.
        self.definition: Dict[str, Any] = {key: value for key, value in raw.items() if key != "execution"}
        execution = raw.get("execution")
        #: The upstream runs it only as a task (spec 2025-11-25 tools "taskSupport": "required").
        self.requires_task: bool = isinstance(execution, dict) and execution.get("taskSupport") == "required"
        self.definition["name"] = name
        if "_meta" in raw:  # (an MCP App's view: its URI as the proxy lists it)
            self.definition["_meta"] = mount.proxied_meta(raw["_meta"])
        self.can_run_inline = False  # it waits on its upstream server: never on a reading thread

    def call(self, arguments: Dict[str, Any], ctx: Any, version: str = PROTOCOL_VERSION) -> Dict[str, Any]:
        """Forward the call. An upstream that is down, or does not answer in time, is an
        ``isError`` result naming it; the upstream's own JSON-RPC error stays one."""
        try:
            return self.mount.call_tool(self, arguments, ctx, version)
        except RPCError:
            raise
        except MCPError as exc:
            return {"content": [{"type": "text", "text": f"Error in tool {self.name!r}: {self.mount.failed(exc)}"}],
                    "isError": True}


class ProxiedPrompt(ServerPrompt):
    """An upstream prompt as the proxy lists it: its definition renamed, each ``get`` forwarded."""

    def __init__(self, mount: Mount, name: str, upstream: str, raw: Dict[str, Any]) -> None:
        super().__init__(_forwarded, name=name)
        #: The mount the prompt belongs to.
        self.mount: Mount = mount
        #: Its name at the upstream server.
        self.upstream: str = upstream
        self.definition: Dict[str, Any] = dict(raw, name=name)

    def get(self, arguments: Dict[str, Any], ctx: Any, version: str) -> Dict[str, Any]:
        """Forward ``prompts/get``; its content blocks made fit for ``version``."""
        result = self.mount.forward_or_fail("prompts/get", {"name": self.upstream, "arguments": arguments}, ctx)
        messages = result.get("messages")
        if isinstance(messages, list):
            result["messages"] = [dict(message, content=block_for_version(
                self.mount.prefix_block(message["content"]), version))
                if isinstance(message, dict) and isinstance(message.get("content"), dict) else message
                for message in messages]
        return result


class ProxiedResource(ServerResource):
    """An upstream resource or template as the proxy lists it (its URI prefixed), or any URI under
    a mount's prefix (``raw`` None): each ``read`` forwarded with the prefix taken off."""

    def __init__(self, mount: Mount, raw: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(_forwarded, "proxy:forwarded")
        #: The mount the resource belongs to.
        self.mount: Mount = mount
        raw = raw or {}
        self.is_template: bool = "uriTemplate" in raw
        key = "uriTemplate" if self.is_template else "uri"
        self.uri: str = mount.proxied_uri(str(raw.get(key, "")))
        self.mime_type: Optional[str] = raw.get("mimeType")
        self.definition: Dict[str, Any] = dict(raw, **{key: self.uri}) if raw else {}

    def match(self, uri: str) -> Optional[Dict[str, str]]:
        """Any URI under the mount's prefix (the upstream server says whether it has it)."""
        return {} if self.mount.owns_uri(uri) else None

    def read(self, uri: str, variables: Dict[str, str], ctx: Any) -> Dict[str, Any]:
        """Forward ``resources/read`` for ``uri`` less the prefix; the contents' URIs get it back."""
        result = self.mount.forward_or_fail("resources/read", {"uri": self.mount.upstream_uri(uri)}, ctx)
        contents = result.get("contents")
        if isinstance(contents, list):
            result["contents"] = [self.mount.prefix_block(item) for item in contents]
        return result


# -- one upstream connection, and one forwarded request ------------------------------------------


class _Link:
    """One connection to an upstream server, and the forwarded requests in flight on it."""

    def __init__(self, mount: Mount) -> None:
        self.mount: Mount = mount
        self.client: Optional[Client] = None
        #: The forwarded requests in flight on it, oldest first (under the mount's lock); all of
        #: them its owner's.
        self.relays: List[_Relay] = []
        #: The caller it is leased to while requests are in flight (handshake-era upstreams).
        self.owner: Any = None
        #: The caller it was last leased to: who hears a log message sent outside any call.
        self.last_owner: Any = None
        #: True once the proxy stopped waiting for an upstream request on it: lent to nobody
        #: else, closed when its owner's requests on it end (see the module's docstring).
        self.retired: bool = False
        # Roots: a server that asked for them outside any call (server-everything asks once, after
        # initialize, and keeps them) is told they changed when the link is lent to another caller.
        self.roots_outside: bool = False
        self.roots_for: Any = _NO_ROOTS  # whose roots the server was last given (under the mount's lock)
        self.roots_answered: int = 0  # roots/list requests answered (under the mount's lock)

    @property
    def alive(self) -> bool:
        return self.client is not None and not self.client.session.closed

    @property
    def stateless(self) -> bool:
        """True when the upstream server speaks 2026-07-28 on it (it asks inside answers)."""
        client = self.client
        return client is not None and client.era == "stateless"

    def handlers(self) -> Dict[str, Any]:
        """The connect() options that route what the upstream server sends to this link."""
        return {"sampling_handler": lambda params: self.ask("sampling/createMessage", params),
                "sampling_tools": True, "elicitation_modes": ("form", "url"),
                "elicitation_handler": lambda params: self.ask("elicitation/create", params),
                "roots": lambda: self.ask("roots/list", {}).get("roots", []),
                "on_log": self.on_log, "log_level": "debug",
                "on_tools_changed": lambda: self.changed("tools"),
                "on_resources_changed": lambda: self.changed("resources"),
                "on_prompts_changed": lambda: self.changed("prompts"),
                "on_resource_updated": self.updated}

    def relay(self) -> Optional[_Relay]:
        """The request a question from the upstream server belongs to: the oldest in flight (all
        of them are one caller's, see the module's docstring), or None."""
        with self.mount.lock:
            return self.relays[0] if self.relays else None

    def ask(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Answer the upstream server's question by asking the caller whose request it is in."""
        if self.stateless:  # (spec 2026-07-28: a server asks inside its answer, input_required)
            raise RPCError(METHOD_NOT_FOUND, f"{method}: a server of protocol 2026-07-28 asks through "
                                             f"input_required, not with a request; the proxy refuses it")
        relay = self.relay()
        given: Any = None  # whose roots the server is given: set once they are
        try:
            outside = relay is None or (relay.request_id is None and not relay.telling)
            if outside:
                if method == "roots/list":  # asked between calls (say, right after initialize): no caller
                    self.roots_outside = True
                    given = _NO_ROOTS
                    return {"roots": []}
                raise RPCError(METHOD_NOT_FOUND, f"{method}: no call is in flight through the proxy on this "
                                                 f"connection, so there is nobody to ask")
            assert relay is not None
            answer = relay.ask(method, params)
            if method == "roots/list":
                given = relay.owner if answer.get("roots") else _NO_ROOTS
            return answer
        finally:
            if method == "roots/list":
                with self.mount.lock:
                    if given is not None:
                        self.roots_for = given
                    self.roots_answered += 1
                    self.mount.lock.notify_all()

    def on_log(self, params: Dict[str, Any]) -> None:
        """An upstream log message: to the caller of the requests in flight, else (a handshake-era
        upstream) to the client connection the link was last lent to, if it is still open; else
        to this process's ``logging`` (so when the requests in flight on a shared 2026-07-28
        connection are several callers'). One caller's messages never reach another."""
        logger = self.mount.prefix or self.mount.label
        if params.get("logger"):
            logger = f"{logger}.{params['logger']}"
        with self.mount.lock:
            owners = {id(relay.owner) for relay in self.relays}
            first = self.relays[0] if self.relays else None
            last = self.last_owner
        level, data = params.get("level", "info"), params.get("data")
        try:
            if first is not None and len(owners) == 1:
                first.ctx.log(level, data, logger)
                return
            session = last if first is None and not self.stateless and not isinstance(last, Context) else None
            if session is not None and not session.closed:
                session.owner.send_log(level, data, logger)
                return
        except ValueError:  # an unknown level: the upstream's mistake, said only here
            pass
        log.info("%s: %s", logger, data)

    def changed(self, kind: str) -> None:
        if self is self.mount.main:  # (every connection hears it: one refresh is enough)
            self.mount.proxy.refresh_later(self.mount, kind)

    def updated(self, uri: str) -> None:
        if self is self.mount.main:
            self.mount.proxy.notify_resource_updated(self.mount.proxied_uri(uri))

    def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # a child that would not end: logged, the proxy goes on
                log.warning("closing the connection to %s: %s", self.mount.label, exc)


class _Relay:
    """One request forwarded to an upstream server for one caller's request (``ctx``)."""

    def __init__(self, ctx: Any, link: _Link, method: str) -> None:
        self.ctx: Any = ctx
        self.owner: Any = _owner(ctx)
        self.link: _Link = link
        self.method: str = method
        self.request_id: Optional[int] = None  # the upstream request now (or last) in flight
        self.asked: Dict[str, int] = {}  # questions the upstream server asked so far, by method
        #: False while an upstream request of it is sent and not answered: one that ends so was
        #: abandoned, and its upstream tool may still run (and ask).
        self.answered: bool = True
        #: The question that stopped this round, for a 2026-07-28 caller: ``{key: {method, params}}``.
        self.wanted: Optional[Dict[str, Any]] = None
        self.cancelled: bool = False
        self.telling: bool = False  # the server was told the roots changed and is expected to ask
        #: The upstream task the call became (a 2025-11-25 tool that requires one), while followed.
        self.task: Optional[TaskHandle] = None
        self._task_cancelled = False

    def following(self, task: TaskHandle) -> None:
        """The upstream server made the call a task: a cancel from here on cancels the task."""
        self.task = task
        if self.cancelled:
            self.cancel_upstream("the proxy's caller cancelled its request")

    def cancel_upstream(self, reason: str) -> None:
        """Cancel the upstream request in flight, if one is (again and again is harmless: an id
        already answered or cancelled is ignored)."""
        client, request_id = self.link.client, self.request_id
        if client is not None and request_id is not None and not self.answered:
            client.session.cancel(request_id, reason)
        task = self.task
        if task is not None and not task.done and not self._task_cancelled:  # (once: tasks/cancel off
            self._task_cancelled = True                                       # this thread, a request)
            background = self.link.mount.proxy._background
            if not background.submit(lambda: tasks.cancel_quietly(task)):
                tasks.cancel_quietly(task)

    def ask(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Ask the caller: at once in the handshake era; in 2026-07-28 from the answers it brought,
        else by stopping the upstream call so that the proxy answers ``input_required``."""
        ctx = self.ctx
        if self.cancelled or ctx.is_cancelled:  # (the caller left: nobody to ask, and no clock to pause)
            raise RPCError(INTERNAL_ERROR, f"{method}: the proxy's caller cancelled the request this belongs to")
        if ctx.meta is None:
            return self.ask_now(method, params)
        missing = _missing(method, params, ctx.client_capabilities)
        if missing is not None:
            return _refused(method, missing, ctx)
        # Keyed by the method and its count: a tool run again asks the same questions in the same
        # order, while a roots request the server sends on its own may come at any point (all of
        # them have the same answer).
        self.asked[method] = count = self.asked.get(method, 0) + 1
        key = f"proxy-{method.split('/')[0]}-{count}"
        if key in ctx.answers:
            answer: Dict[str, Any] = ctx.answers[key]
            return answer
        self.wanted = {key: {"method": method, "params": params}}
        self.cancel_upstream("the caller is asked first (2026-07-28 input_required)")
        raise RPCError(INTERNAL_ERROR, "the proxy's caller is asked first; this call is made again with the answer")

    def ask_now(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Ask a handshake-era caller now, as a request related to its own (spec 2025-11-25
        basic/transports: it goes on that request's stream)."""
        ctx = self.ctx
        missing = _missing(method, params, ctx.client_capabilities)
        if missing is not None:
            return _refused(method, missing, ctx)
        timeout = 600.0 if method == "elicitation/create" else None  # a person may take a while
        client = self.link.client
        if client is None:
            answer: Dict[str, Any] = ctx.connection.request(method, params, timeout, ctx.request_id)
            return answer
        # The clocks of what the connection forwarded wait meanwhile (it is lent to this caller
        # alone: all it has in flight is the caller's, a task's tasks/result included): the
        # upstream server waits on our caller, whose own timeout still bounds the whole call.
        with client.session.timeout_paused():
            answer = ctx.connection.request(method, params, timeout, ctx.request_id)
        return answer


def _refused(method: str, missing: str, ctx: Any) -> Dict[str, Any]:
    """The answer to a question the caller cannot be asked: no roots (``[]``: a server that keeps
    roots must not keep another caller's), else an error saying what it lacks."""
    if method == "roots/list" and missing == "roots":
        return {"roots": []}
    raise RPCError(METHOD_NOT_FOUND, f"the client behind the proxy ({ctx.client_info.get('name', 'unknown')}) "
                                     f"does not support {missing}")


# -- one upstream server ------------------------------------------------------------------------------


class Mount:
    """One upstream server of a :class:`ProxyServer`: its connections, and what it offers.

    Made by :meth:`ProxyServer.mount`. ``error`` says why it is down (None while it serves).
    """

    def __init__(self, proxy: ProxyServer, prefix: str, target: Target, options: Dict[str, Any]) -> None:
        #: The proxy it is mounted on.
        self.proxy: ProxyServer = proxy
        #: Its tools and prompts are named ``prefix__name``; "" keeps their names.
        self.prefix: str = prefix
        #: What its tools' names start with (``prefix__``, made safe for LLM APIs; "" unprefixed).
        self.name_prefix: str = qualified_names([(prefix, "")])[0] if prefix else ""
        #: What its resource URIs start with (:func:`uri_prefix`).
        self.uri_prefix: str = uri_prefix(prefix)
        #: The server: a Server, a command, a URL, a config entry or a config name.
        self.target: Target = target
        #: A name for the messages its callers read: the prefix, else what the target is, briefly
        #: (:func:`describe`).
        self.label: str = prefix or describe(target, brief=True)
        self.options: Dict[str, Any] = options
        #: Why it is down: None while it serves (and before its first connect). The details, for
        #: the proxy's owner: its callers get general words (:meth:`failed`).
        self.error: Optional[str] = None
        #: True once it answered at least once (its capabilities are known).
        self.known: bool = False
        #: True once a connect was tried (by :meth:`ProxyServer.start` or a call).
        self.tried: bool = False
        #: True when it speaks 2026-07-28 (its questions come inside answers).
        self.stateless: bool = False
        #: True once :meth:`close` ran: it opens no connection until the proxy starts again.
        self.closed: bool = False
        #: What it declared (``server_capabilities``).
        self.capabilities: Dict[str, Any] = {}
        self.tools: Dict[str, ProxiedTool] = {}
        self.prompts: Dict[str, ProxiedPrompt] = {}
        self.resources: Dict[str, ProxiedResource] = {}
        self.templates: Dict[str, ProxiedResource] = {}
        #: Any URI under the prefix: what ``find_resource`` answers for URIs not listed.
        self.any_resource: ProxiedResource = ProxiedResource(self)
        #: Guards the links and their leases; waited on for a free link.
        self.lock: threading.Condition = threading.Condition()
        self.links: List[_Link] = []
        self.main: Optional[_Link] = None  # the link that hears list changes and resource updates
        self._opening = 0  # links being opened (under lock)
        self._connecting: Optional[threading.Event] = None  # set when the main link's (re)connect ends
        self._stale = False  # its lists must be fetched again on the next connect (the proxy started again)
        # Upstream URI -> who subscribed to it through the proxy (client sessions, 2026-07-28 listens).
        self._subscribers: Dict[str, Set[Any]] = {}

    def __repr__(self) -> str:
        state = "down" if self.error else ("up" if self.main is not None else "not connected")
        return f"<Mount {self.label!r} {describe(self.target)!r} {state}>"

    # -- names and URIs ---------------------------------------------------------------------------

    def proxied_uri(self, uri: str) -> str:
        """An upstream URI as the proxy lists it: ``prefix+`` in front, but a view's ``ui://``
        URI keeps its scheme (MCP Apps: "URI MUST start with ui://"), the prefix in front of its
        authority: ``ui://counter/view.html`` is ``ui://ctr+counter/view.html``."""
        if not self.uri_prefix:
            return uri
        if uri.startswith(APPS_SCHEME):
            return APPS_SCHEME + self.uri_prefix + uri[len(APPS_SCHEME):]
        return self.uri_prefix + uri

    def owns_uri(self, uri: str) -> bool:
        """Whether a URI the proxy lists is this (prefixed) mount's."""
        return bool(self.uri_prefix) and (uri.startswith(self.uri_prefix) or
                                          uri.startswith(APPS_SCHEME + self.uri_prefix))

    def upstream_uri(self, uri: str) -> str:
        """A proxied URI as the upstream server knows it."""
        if not self.uri_prefix:
            return uri
        if uri.startswith(APPS_SCHEME + self.uri_prefix):
            return APPS_SCHEME + uri[len(APPS_SCHEME + self.uri_prefix):]
        return uri[len(self.uri_prefix):] if uri.startswith(self.uri_prefix) else uri

    def prefix_block(self, block: Dict[str, Any]) -> Dict[str, Any]:
        """A content block (or resource contents) with its URI as the proxy lists it."""
        if not self.uri_prefix or not isinstance(block, dict):
            return block
        if isinstance(block.get("uri"), str):
            return dict(block, uri=self.proxied_uri(block["uri"]))
        inner = block.get("resource")
        if block.get("type") == "resource" and isinstance(inner, dict) and isinstance(inner.get("uri"), str):
            return dict(block, resource=dict(inner, uri=self.proxied_uri(inner["uri"])))
        return block

    def proxied_meta(self, meta: Any) -> Any:
        """A tool's ``_meta`` with its view's URI as the proxy lists it (MCP Apps: ``ui.resourceUri``,
        and the deprecated ``ui/resourceUri``)."""
        if type(meta) is not dict or not self.uri_prefix:
            return meta
        meta = dict(meta)
        ui = meta.get(APPS_UI)
        if type(ui) is dict and isinstance(ui.get(APPS_RESOURCE_URI), str):
            meta[APPS_UI] = dict(ui, **{APPS_RESOURCE_URI: self.proxied_uri(ui[APPS_RESOURCE_URI])})
        if isinstance(meta.get(APPS_LEGACY_RESOURCE_URI), str):
            meta[APPS_LEGACY_RESOURCE_URI] = self.proxied_uri(meta[APPS_LEGACY_RESOURCE_URI])
        return meta

    # -- connecting -------------------------------------------------------------------------------

    def _open(self, timeout: float) -> _Link:
        """Open one more connection (not under the lock: it may take ``timeout``)."""
        link = _Link(self)
        options = dict(self.options)
        options.setdefault("timeout", timeout)
        options.setdefault("client_info", {"name": f"{self.proxy.name} (minimcp proxy)", "version": SDK_VERSION})
        for key, value in link.handlers().items():
            options.setdefault(key, value)
        options.setdefault("apps", True)  # (MCP Apps: the upstream lists every tool; the proxy hides its own)
        config = options.pop("config", self.proxy.config)
        link.client = _open(self.label, self.target, config, options)
        link.client.session.timeout = self.proxy.call_timeout
        return link

    def _closed_error(self) -> Unavailable:
        return Unavailable(self, f"the upstream server {self.label!r} is unavailable: the proxy is closed")

    def up(self, timeout: Optional[float] = None) -> _Link:
        """The main connection, opened (with the lists fetched) if it is not; one caller connects
        while the others wait for it (or, when the server is down, fail at once with why).

        Raises:
            Unavailable: the server did not start or answer within ``timeout`` (default: the
                proxy's ``start_timeout``), or refused; or the proxy is closed.
        """
        timeout = self.proxy.start_timeout if timeout is None else timeout
        deadline: Optional[float] = None
        while True:  # (bounded: each turn connects, or waits out what is left of the deadline)
            promoted = None
            with self.lock:
                if self.closed:
                    raise self._closed_error()
                main = self.main
                if main is not None and main.alive:
                    return main
                spare = next((link for link in self.links if link.alive and not link.retired), None)
                if spare is not None:  # (the main one was closed: another hears the changes from now on)
                    self.main = promoted = spare
                else:
                    connecting = self._connecting
                    mine = connecting is None
                    if mine:
                        connecting = self._connecting = threading.Event()
                    down = self.error
            if promoted is not None:
                for uri in sorted(self._subscribers):
                    self.proxy.subscribe_later(self, uri)
                return promoted
            assert connecting is not None
            if mine:
                try:
                    return self._connect(timeout)
                finally:
                    with self.lock:
                        self._connecting = None
                    connecting.set()
            if down is not None:  # down, and being tried again: no second wait for the same answer
                raise Unavailable(self, self._unavailable(None))
            if deadline is None:
                deadline = time.monotonic() + timeout + self.proxy.call_timeout
            left = deadline - time.monotonic()
            if left <= 0:
                raise Unavailable(self, self._unavailable(None))
            connecting.wait(left)

    def _connect(self, timeout: float) -> _Link:
        self.tried = True
        self._drop_dead()
        started = time.monotonic()
        try:
            link = self._open(timeout)
        except Exception as exc:
            waited = time.monotonic() - started
            was_up = self.known and self.error is None
            self.error = f"{type(exc).__name__}: {exc}" + (f" (after {waited:.1f}s)" if waited >= 1 else "")
            ref = reference()
            what = describe(self.target)
            log.warning("upstream %s is unavailable (ref %s): %s; its tools fail saying so until it answers (tried "
                        "again on each call)", self.label if what == self.label else f"{self.label} ({what})", ref,
                        self.error)
            if was_up:
                self.proxy.changed_all()  # up -> down: its tools now fail (the same list, other answers)
            raise Unavailable(self, self._unavailable(exc, ref)) from None
        client = link.client
        assert client is not None
        with self.lock:
            closed = self.closed
            if not closed:
                self.links.insert(0, link)
                self.main = link
        if closed:  # (close() ran while it connected: it must not outlive the proxy)
            link.close()
            raise self._closed_error()
        self.stateless = client.era == "stateless"
        self.capabilities = dict(client.server_capabilities)
        was_down, was_known = self.error is not None, self.known
        self.error, self.known = None, True
        changed: List[str] = []
        if was_down or not was_known or self._stale:  # (else its main connection was retired: the lists stand)
            self._stale = False
            try:
                changed = self.refresh(timeout=timeout)
            except MCPError as exc:
                log.warning("upstream %s connected but its lists failed: %s", self.label, exc)
        for uri in sorted(self._subscribers):
            self.proxy.subscribe_later(self, uri)
        if was_down:
            log.warning("upstream %s is back", self.label)
            self.proxy.changed_all()  # down -> up: its tools answer again
        else:
            for kind in changed:
                self.proxy.list_changed(kind)
        return link

    def _unavailable(self, exc: Optional[BaseException], ref: Optional[str] = None) -> str:
        """What a caller reads when the server is down: its label and why, in general words (the
        details are in the proxy's log, under ``ref``)."""
        why = _reason(exc) if exc is not None else ("it did not connect" if self.error else "it did not connect in time")
        where = f" (ref {ref}: the proxy's log says more)" if ref else ""
        return (f"the upstream server {self.label!r} is unavailable: {why}{where}. "
                f"The proxy tries it again on the next call.")

    def failed(self, exc: MCPError) -> str:
        """What a caller reads when forwarding failed other than by the upstream's own answer."""
        if isinstance(exc, Unavailable):
            return str(exc)
        if isinstance(exc, _Cancelled):  # (nobody reads it: the caller cancelled)
            return "the request was cancelled"
        if isinstance(exc, Timeout):
            return (f"the upstream server {self.label!r} did not answer within {self.proxy.call_timeout:g}s "
                    f"(the request was cancelled there)")
        ref = reference()
        log.warning("upstream %s: forwarding failed (ref %s): %s: %s", self.label, ref, type(exc).__name__, exc)
        return f"the upstream server {self.label!r} failed to answer (ref {ref}: the proxy's log says more)"

    def forward_or_fail(self, method: str, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """:meth:`forward`, a failure other than the upstream's own answer raised as an
        ``RPCError`` that names the upstream server (for prompts and resources)."""
        try:
            return self.forward(method, params, ctx)
        except RPCError:
            raise
        except MCPError as exc:
            raise RPCError(INTERNAL_ERROR, self.failed(exc)) from None

    def _drop_dead(self) -> None:
        """Close the connections that ended (a crashed child, say)."""
        with self.lock:
            dead = [link for link in self.links if not link.alive and not link.relays]
            self.links = [link for link in self.links if link not in dead]
            if self.main in dead:
                self.main = None
        for link in dead:
            link.close()

    def lost(self, link: _Link, exc: BaseException) -> None:
        """A forwarded request found its connection gone (already dropped by :meth:`release`): the
        next call reconnects."""
        ref = reference()
        log.warning("upstream %s: the connection ended (ref %s): %s", self.label, ref, exc)
        with self.lock:
            if self.main is link or self.main is None:
                self.error = f"the connection ended: {exc}"
        return None

    def lease(self, ctx: Any, method: str) -> _Relay:
        """The forwarded request of ``ctx``'s ``method``, on a connection: the one already leased to
        its caller, an idle one, or a new one (see the module's docstring); the shared one for a
        2026-07-28 upstream. It is in flight on it from here (:meth:`release` ends it).

        Raises:
            Unavailable: the server is down, the proxy is closed, or ``max_links`` connections
                are busy for the whole of the call's timeout.
            _Cancelled: the caller cancelled while it waited.
        """
        main = self.up()
        if main.stateless:
            return self._in_flight(_Relay(ctx, main, method))
        owner = _owner(ctx)
        deadline = time.monotonic() + self.proxy.call_timeout
        while True:
            if ctx.is_cancelled:
                raise _Cancelled("the proxy's caller cancelled its request")
            with self.lock:
                if self.closed:
                    raise self._closed_error()
                live = [link for link in self.links if link.alive and not link.retired]
                leased = next((link for link in live if link.owner is owner), None)
                if leased is None:
                    leased = next((link for link in live if link.owner is None), None)
                if leased is not None:  # (taken and in flight at once: a release cannot come between)
                    leased.owner = owner
                    return self._in_flight(_Relay(ctx, leased, method))
                if len(live) + self._opening < self.proxy.max_links:
                    self._opening += 1
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Unavailable(self, f"all {self.proxy.max_links} connections to the upstream server "
                                                f"{self.label!r} are busy with other callers' calls; try again")
                    # (woken when a link is released; a short wait so a cancel is seen; the loop is bounded)
                    self.lock.wait(min(left, 0.25))
                    continue
            try:
                link = self._open(self.proxy.start_timeout)
            except Exception as exc:
                ref = reference()
                log.warning("upstream %s: another connection failed (ref %s): %s: %s", self.label, ref,
                            type(exc).__name__, exc)
                raise Unavailable(self, self._unavailable(exc, ref)) from None
            finally:
                with self.lock:
                    self._opening -= 1
            with self.lock:
                if not self.is_closed():  # (a method: a check above narrowed the attribute to False)
                    link.owner = owner
                    self.links.append(link)
                    return self._in_flight(_Relay(ctx, link, method))
            link.close()  # (close() ran while it opened)
            raise self._closed_error()

    def _in_flight(self, relay: _Relay) -> _Relay:
        with self.lock:  # (re-entered from lease: a Condition's lock is an RLock)
            relay.link.relays.append(relay)
            relay.link.last_owner = relay.owner
        return relay

    def release(self, relay: _Relay) -> None:
        """End a forwarded request on its connection. A handshake-era connection whose upstream
        request it abandoned is retired (see the module's docstring); one retired or dead, with no
        request left in flight, is closed."""
        with self.lock:
            link = relay.link
            if relay in link.relays:
                link.relays.remove(relay)
            if not relay.answered and not link.stateless:
                link.retired = True
            closing = not link.relays and (link.retired or not link.alive)
            was_main = closing and self.main is link
            if closing:
                if link in self.links:
                    self.links.remove(link)
                if was_main:
                    self.main = None
            elif not link.relays:
                link.owner = None
            self.lock.notify_all()
        if closing and link.retired:  # (off this thread: its upstream tool may still run, and closing waits)
            self.proxy.close_later(link)
        elif closing:
            link.close()
        if was_main and link.retired and not self.closed:  # (someone must hear the list changes again)
            self.proxy.reconnect_later(self)

    # -- lists ----------------------------------------------------------------------------------

    def _fetch(self, items: Any, kind: str) -> List[Any]:
        """At most :data:`MAX_ITEMS` of an upstream list (pages past it are never fetched)."""
        fetched = list(islice(items, MAX_ITEMS + 1))
        if len(fetched) > MAX_ITEMS:
            log.warning("upstream %s lists more than %d %s: the rest are left out", self.label, MAX_ITEMS, kind)
            del fetched[MAX_ITEMS:]
        return fetched

    def _keeps(self, raw: Any, kind: str, name: Optional[str], uri: Optional[str]) -> bool:
        """Whether the proxy lists an upstream item: not one that went through this proxy already
        (a loop of proxies), nor one whose name or URI falls under another mount's prefix."""
        if not isinstance(raw, dict):
            return False
        meta = raw.get("_meta")
        via = meta.get(VIA) if isinstance(meta, dict) else None
        if isinstance(via, list) and self.proxy.proxy_id in via:
            return False  # (it came back here through another proxy: listed already, as this proxy's own)
        other = self.proxy.claimed(self, name, uri)
        if other is not None:
            log.warning("upstream %s: its %s %r is left out: it falls under the prefix of the mount %r",
                        self.label, kind, name if name is not None else uri, other.prefix)
            return False
        return True

    def refresh(self, kinds: Sequence[str] = ("tools", "resources", "prompts"),
                timeout: Optional[float] = None) -> List[str]:
        """Fetch the upstream lists of ``kinds`` afresh (those it declared), each request within
        ``timeout`` (default: the proxy's ``call_timeout``).

        Returns:
            The kinds whose definitions changed.
        """
        link = self.main
        client = link.client if link is not None else None
        if client is None:
            return []
        caps, changed = self.capabilities, []
        if "tools" in kinds and "tools" in caps:
            listed = self._fetch(client.iter_tools(timeout=timeout), "tools")
            if client.stateless.active:
                listed = client.stateless.mirror_headers(listed)
            raws = [tool.raw for tool in listed if isinstance(tool.raw.get("name"), str)]
            tools = {name: ProxiedTool(self, name, raw["name"], raw) for name, raw in zip(self._names(raws), raws)
                     if self._keeps(raw, "tool", name, None)}
            if _definitions(tools) != _definitions(self.tools):
                changed.append("tools")
            self.tools = tools
            views = [tool_view(tool.definition.get("_meta")) for tool in tools.values()]
            if any(uri is not None for uri, _ in views):
                self.proxy.serve_apps(hide=any("model" not in who for _, who in views))
        if "prompts" in kinds and "prompts" in caps:
            raws = [prompt.raw for prompt in self._fetch(client.iter_prompts(timeout=timeout), "prompts")
                    if isinstance(prompt.raw.get("name"), str)]
            prompts = {name: ProxiedPrompt(self, name, raw["name"], raw) for name, raw in zip(self._names(raws), raws)
                       if self._keeps(raw, "prompt", name, None)}
            if _definitions(prompts) != _definitions(self.prompts):
                changed.append("prompts")
            self.prompts = prompts
        if "resources" in kinds and "resources" in caps:
            resources = [ProxiedResource(self, r.raw)
                         for r in self._fetch(client.iter_resources(timeout=timeout), "resources")]
            templates = [ProxiedResource(self, t.raw)
                         for t in self._fetch(client.iter_resource_templates(timeout=timeout), "templates")]
            kept = {r.uri: r for r in resources if self._keeps(r.definition, "resource", None, r.uri)}
            kept_templates = {t.uri: t for t in templates if self._keeps(t.definition, "template", None, t.uri)}
            if _definitions(kept) != _definitions(self.resources) or \
                    _definitions(kept_templates) != _definitions(self.templates):
                changed.append("resources")
            self.resources, self.templates = kept, kept_templates
        return changed

    def _names(self, raws: List[Dict[str, Any]]) -> List[str]:
        """The names the proxy lists these upstream tools or prompts by: ``prefix__name`` (as
        ToolHub makes them), or their own without a prefix."""
        if not self.prefix:
            return [raw["name"] for raw in raws]
        return qualified_names([(self.prefix, raw["name"]) for raw in raws])

    def tool_named(self, name: str) -> Optional[ProxiedTool]:
        """The tool the proxy lists as ``name``; a placeholder for a name under the prefix of a
        server never reached (it connects, then finds the tool, when called)."""
        tool = self.tools.get(name)
        if tool is None and not self.known and self.name_prefix and name.startswith(self.name_prefix):
            tool = ProxiedTool(self, name, None, {"name": name})
        return tool

    # -- forwarding -------------------------------------------------------------------------------

    def call_tool(self, tool: ProxiedTool, arguments: Dict[str, Any], ctx: Any, version: str) -> Dict[str, Any]:
        """Forward ``tools/call``: the result fit for ``version``, its URIs the proxy's (and, in an
        error, the tool's name as the caller called it)."""
        upstream = tool.upstream
        if upstream is None:  # a placeholder: connect, then look the tool up
            self.up()
            found = self.tools.get(tool.name)
            if found is None:
                raise RPCError(INVALID_PARAMS, f"Unknown tool: {tool.name!r} (the upstream server "
                                               f"{self.label!r} has no such tool)")
            tool = found
            upstream = found.upstream
        assert upstream is not None
        try:
            result = self.forward("tools/call", {"name": upstream, "arguments": arguments}, ctx,
                                  as_task=tool.requires_task)
        except RPCError as exc:
            raise RPCError(exc.code, _as_called(exc.message, upstream, tool.name), exc.data) from None
        content = result.get("content")
        if isinstance(content, list):
            failed = result.get("isError") is True  # (only an error names the tool: a result is the tool's own)
            result["content"] = [self.prefix_block(_block_as_called(block, upstream, tool.name) if failed else block)
                                 for block in content]
            return result_for_version(result, version)
        return result

    def forward(self, method: str, params: Dict[str, Any], ctx: Any, as_task: bool = False) -> Dict[str, Any]:
        """Send ``method`` upstream for the caller's request ``ctx``, and return the result
        (``as_task``: a ``tools/call`` the upstream runs only as a task, followed to its end).

        Raises:
            Unavailable: the server is down or its connection ended.
            Timeout: the upstream server did not answer in time (the request is cancelled there).
            RPCError: what the upstream server answered.
            InputRequired: a 2026-07-28 caller must answer the upstream server's question first.
        """
        relay = self.lease(ctx, method)
        link = relay.link
        self.proxy.watch(relay)
        lost: Optional[ConnectionClosed] = None
        try:
            self._tell_roots(relay)
            if link.stateless:
                result = self._rounds(relay, method, params)
            elif as_task:
                result = self._task_call(relay, params)
            else:
                result = self._request(relay, method, params)
        except ConnectionClosed as exc:
            if relay.wanted is not None:  # (the handshake-era upstream asked a 2026-07-28 caller)
                raise InputRequired(relay.wanted) from None
            if relay.cancelled or ctx.is_cancelled:  # the caller left: its answer is dropped anyway
                raise _Cancelled("the proxy's caller cancelled its request") from None
            lost = exc
        finally:
            self.proxy.unwatch(relay)
            self.release(relay)  # (first: a dead link with nothing in flight is closed here)
        if lost is not None:
            self.lost(link, lost)
            ref = reference()
            log.warning("upstream %s: %s failed (ref %s): %s", self.label, method, ref, lost)
            raise Unavailable(self, self._unavailable(lost, ref))
        if ctx.meta is None and type(result) is dict:
            for key in _STATELESS_FIELDS:
                result.pop(key, None)
        if type(result) is not dict:
            raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} answered {method} with "
                                           f"{type(result).__name__}, not an object")
        return result

    def _tell_roots(self, relay: _Relay) -> None:
        """Before a caller's first request on a connection whose server keeps the roots it was
        given (it asked outside any call), and holds another caller's: tell it they changed (spec
        client/roots "Root List Changes"), and wait (at most :data:`ROOTS_WAIT`) until it asked
        this caller for them. A server that does not ask again is not told again; if the roots it
        keeps are another caller's, this call fails (a retry gets another connection)."""
        link, ctx, owner = relay.link, relay.ctx, relay.owner
        client = link.client
        if client is None or link.stateless:
            return
        with self.lock:
            holds = link.roots_for
            has_roots = _missing("roots/list", {}, ctx.client_capabilities) is None
            if not link.roots_outside or holds is owner or (holds is _NO_ROOTS and not has_roots):
                return
            seen = link.roots_answered
        relay.telling = True
        try:
            client.session.notify("notifications/roots/list_changed")
            deadline = time.monotonic() + ROOTS_WAIT
            with self.lock:
                while link.roots_answered == seen and relay.wanted is None and not ctx.is_cancelled:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self.lock.wait(min(left, 0.25))
                asked_again = link.roots_answered != seen
                if not asked_again:
                    link.roots_outside = False  # it does not ask again: not told again
                    if link.roots_for is not _NO_ROOTS:  # it keeps another caller's roots: not lent again
                        link.retired = True
        finally:
            relay.telling = False
        if relay.wanted is not None:  # a 2026-07-28 caller answers first
            raise InputRequired(relay.wanted)
        if not asked_again and link.retired:
            log.warning("upstream %s keeps roots it was given and did not ask again when told they changed "
                        "(spec client/roots): its connection is closed", self.label)
            raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} did not take this client's roots; "
                                           f"try again")

    def _progress(self, ctx: Any) -> Callable[[Any, Any, Any], None]:
        def forward_progress(progress: Any, total: Any, message: Any) -> None:
            if isinstance(progress, (int, float)):
                ctx.report_progress(progress, total, message)  # (nothing, when the caller did not ask)

        return forward_progress

    def _request(self, relay: _Relay, method: str, params: Dict[str, Any]) -> Any:
        client = relay.link.client
        if client is None:
            raise ConnectionClosed("the connection was closed")
        relay.request_id = client.session.new_request_id()
        relay.answered = False  # (before the check below: a cancel from here on cancels it upstream)
        if relay.cancelled or relay.ctx.is_cancelled:  # (between two rounds, say: nothing more is sent)
            relay.answered = True
            raise _Cancelled("the proxy's caller cancelled its request")
        try:
            # Progress restarts the clock (up to max_call_timeout), so a long tool that reports is not cut.
            result = client.session.request(method, params, timeout=self.proxy.call_timeout,
                                            on_progress=self._progress(relay.ctx),
                                            max_timeout=self.proxy.max_call_timeout, request_id=relay.request_id)
        except RPCError:
            relay.answered = True
            raise
        relay.answered = True
        return result

    def _task_call(self, relay: _Relay, params: Dict[str, Any]) -> Any:
        """``tools/call`` of a tool a 2025-11-25 upstream runs only as a task: called as one and
        followed to its end, as the client's own ``call_tool()`` does (its progress and its
        questions reach the caller as a plain call's do; the caller's cancel cancels the task).
        The caller gets the plain result it asked for: the proxy lists no tool as a task."""
        client = relay.link.client
        if client is None:
            raise ConnectionClosed("the connection was closed")
        relay.request_id = client.session.new_request_id()
        relay.answered = False
        if relay.cancelled or relay.ctx.is_cancelled:
            relay.answered = True
            raise _Cancelled("the proxy's caller cancelled its request")

        def send(method: str, sent: Dict[str, Any], timeout: Optional[float] = None,
                 on_progress: Any = None, max_timeout: Optional[float] = None) -> Any:
            return client.session.request(method, sent, timeout=timeout, on_progress=on_progress,
                                          max_timeout=max_timeout, request_id=relay.request_id)

        failure: Optional[MCPError] = None
        try:
            outcome = tasks.call_tool(client, params, self.proxy.call_timeout, self._progress(relay.ctx),
                                      self.proxy.max_call_timeout, send=send, on_task=relay.following,
                                      requires_task=tasks.runs_tools_as_tasks(client))  # (spec: else no task)
        except (TaskCancelled, RPCError) as exc:
            failure = exc
        if relay.wanted is not None or relay.cancelled or relay.ctx.is_cancelled:
            # The proxy stopped it (to ask a 2026-07-28 caller first, or for the caller's cancel):
            # whatever the task came to is no answer (the upstream may have made the refused
            # question an error result); forward() says what happened instead.
            raise ConnectionClosed("the upstream task was stopped by the proxy")
        relay.answered = True
        if isinstance(failure, TaskCancelled):
            raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} cancelled the task running "
                                           f"the tool") from None
        if failure is not None:
            raise failure
        return outcome.raw

    def _rounds(self, relay: _Relay, method: str, params: Dict[str, Any]) -> Any:
        """A 2026-07-28 upstream: the request with ``_meta`` (the caller's capabilities and log
        level), its ``input_required`` rounds answered by the caller (spec 2026-07-28
        basic/patterns/mrtr)."""
        ctx, client = relay.ctx, relay.link.client
        if client is None:
            raise ConnectionClosed("the connection was closed")
        meta = client.stateless.meta()
        capabilities = {key: value for key, value in ctx.client_capabilities.items() if key != "extensions"}
        extensions = ctx.client_capabilities.get("extensions")
        if isinstance(extensions, dict) and APPS_EXTENSION in extensions:  # (not tasks: the proxy forwards calls)
            capabilities["extensions"] = {APPS_EXTENSION: extensions[APPS_EXTENSION]}
        meta[CAPABILITIES_KEY] = capabilities  # the caller's: the upstream decides what it may ask
        level = ctx.meta.log_level if ctx.meta is not None else ctx.connection.log_level
        meta.pop(LOG_LEVEL_KEY, None)
        if level is not None:
            meta[LOG_LEVEL_KEY] = level
        params = dict(params, _meta=meta)
        kept = self.proxy.signed_answers(ctx).get(UPSTREAM_STATE) if ctx.meta is not None else None
        if isinstance(kept, dict):  # a 2026-07-28 caller is back with the answers
            params["inputResponses"] = {key: ctx.answers[key] for key in kept.get("asked", ()) if key in ctx.answers}
            if isinstance(kept.get("state"), str):
                params["requestState"] = kept["state"]
        for _ in range(MAX_ROUNDS):
            result = self._request(relay, method, params)
            if type(result) is not dict or result.get("resultType") != "input_required":
                return result
            requests = result.get("inputRequests")
            if type(requests) is not dict:
                raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} asked for input without "
                                               f"inputRequests")
            state = result.get("requestState")
            if ctx.meta is not None:  # hand the question on: the caller answers, then calls again
                ctx.answers[UPSTREAM_STATE] = {"state": state, "asked": list(requests)}
                raise InputRequired(requests)
            responses = {}
            for key, request in requests.items():
                if type(request) is not dict or not isinstance(request.get("method"), str):
                    raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} sent a malformed "
                                                   f"input request {key!r}")
                responses[key] = relay.ask_now(request["method"], request.get("params") or {})
            params = dict(params, inputResponses=responses)
            params.pop("requestState", None)
            if isinstance(state, str):
                params["requestState"] = state
        raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} still wanted input after "
                                       f"{MAX_ROUNDS} rounds")

    def complete(self, ref: Dict[str, Any], argument: str, value: str, context: Dict[str, Any]) -> Dict[str, Any]:
        """Forward ``completion/complete`` for an upstream prompt or template."""
        try:
            client = self.up().client
            if client is None:
                raise Unavailable(self, self._unavailable(ConnectionClosed()))
            params: Dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
            if context:
                params["context"] = {"arguments": context}
            result = client.request("completion/complete", params, timeout=self.proxy.call_timeout)
        except RPCError:
            raise
        except MCPError as exc:
            raise RPCError(INTERNAL_ERROR, self.failed(exc)) from None
        completion = result.get("completion") if isinstance(result, dict) else None
        return completion if isinstance(completion, dict) else {"values": []}

    # -- resource subscriptions -------------------------------------------------------------------

    def _prune(self) -> None:
        """Forget subscribers that are gone (a closed client connection, an ended listen)."""
        for who in self._subscribers.values():
            who.difference_update([owner for owner in who if _gone(owner)])

    def subscribed(self, uri: str, owner: Any) -> bool:
        """Record ``owner``'s subscription to ``uri`` (as the upstream knows it); True when it is
        the first, to be made upstream."""
        with self.lock:
            self._prune()
            who = self._subscribers.setdefault(uri, set())
            first = not who
            who.add(owner)
            return first

    def unsubscribed(self, uri: str, owner: Any) -> bool:
        """Forget ``owner``'s subscription to ``uri``; True when none is left, to end upstream."""
        with self.lock:
            who = self._subscribers.get(uri)
            if who is None:
                return False
            who.discard(owner)
            self._prune()
            if who:
                return False
            del self._subscribers[uri]
            for other, rest in list(self._subscribers.items()):  # (others pruned empty: ended as well)
                if not rest:
                    del self._subscribers[other]
            return True

    def subscribe(self, uri: str, on: bool = True) -> None:
        """Subscribe upstream to ``uri`` (as it knows it), or (``on`` False) unsubscribe."""
        client = self.up().client
        if client is None or not (self.capabilities.get("resources") or {}).get("subscribe"):
            return
        if on:
            client.subscribe_resource(uri)
        else:
            client.unsubscribe_resource(uri)

    def close(self) -> None:
        """Close every connection to the upstream server; none is opened until :meth:`reopen`."""
        with self.lock:
            self.closed = True
            links, self.links, self.main = self.links, [], None
            self.lock.notify_all()
        for link in links:
            link.close()

    def is_closed(self) -> bool:
        """Whether :meth:`close` ran (and :meth:`reopen` did not since)."""
        return self.closed

    def reopen(self) -> None:
        """Let a closed mount connect again (the proxy starts again)."""
        with self.lock:
            self.closed = False
            self.tried = False
            self._stale = True


def _gone(owner: Any) -> bool:
    """Whether a subscriber is gone: its client connection closed, or its listen ended."""
    session = owner.session if isinstance(owner, Context) else owner
    return bool(session.closed) or (isinstance(owner, Context) and owner.is_cancelled)


def _definitions(items: Dict[str, Any]) -> List[Any]:
    """What the proxy lists of a mount's items, to tell whether a refresh changed them."""
    return [item.definition for item in items.values()]


def _as_called(text: str, upstream: str, name: str) -> str:
    """``text`` with the quoted upstream name replaced by the name the caller used."""
    if upstream == name:
        return text
    return text.replace(repr(upstream), repr(name)).replace(f'"{upstream}"', f'"{name}"')


def _block_as_called(block: Any, upstream: str, name: str) -> Any:
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return dict(block, text=_as_called(block["text"], upstream, name))
    return block


# -- the proxy -------------------------------------------------------------------------------------


class ProxyServer(Server):
    """A :class:`~minimcp.Server` that serves other MCP servers' tools, resources and prompts as its own.

    Example::

        proxy = ProxyServer("gateway")
        proxy.mount("weather", [sys.executable, "examples/weather_server.py"])   # stdio
        proxy.mount("docs", "http://127.0.0.1:8001/mcp")                          # Streamable HTTP
        proxy.mount("local", my_server)                                            # in-process
        proxy.run("http", port=8000)    # weather__get_weather, docs__search, ...

    ``run()`` connects every mount first (in parallel, each within ``start_timeout``), serves,
    and closes them at the end; used otherwise (``serve()``, ``wsgi_app()``, ``connect("memory",
    server=proxy)``), call :meth:`start` first or use ``with proxy:``, which closes them too.
    A proxy closed may start again.

    Args:
        name, version: as for :class:`~minimcp.Server` (the proxy's own ``serverInfo``).
        start_timeout: seconds an upstream server has to start and answer the handshake (and,
            at start, each page of its lists).
        call_timeout: seconds a forwarded request waits for its answer (progress extends it,
            up to ``max_call_timeout``).
        max_call_timeout: the longest a forwarded request that reports progress may take.
        max_links: the most connections per upstream server in the handshake era (one per
            caller with calls in flight; see the module's docstring).
        config: the host config file that targets given by name are found in.
        options: the other :class:`~minimcp.Server` options (``max_workers``, ``middleware`` ...).
    """

    def __init__(self, name: str = "minimcp-proxy", version: str = SDK_VERSION, *, start_timeout: float = 10.0,
                 call_timeout: float = 60.0, max_call_timeout: float = 3600.0, max_links: int = 8,
                 config: Any = None, **options: Any) -> None:
        super().__init__(name, version, **options)
        self.start_timeout: float = start_timeout
        self.call_timeout: float = call_timeout
        self.max_call_timeout: float = max_call_timeout
        self.max_links: int = max_links
        self.config: Any = config
        #: The mounted servers, by prefix, in the order mounted.
        self.mounts: Dict[str, Mount] = {}
        #: What this proxy adds to the ``_meta`` (:data:`VIA`) of every item it lists: random, so
        #: two proxies that mount each other (even two copies of one program) tell theirs apart.
        self.proxy_id: str = os.urandom(8).hex()
        self._started = False
        self._closed = False
        self._background = WorkerPool(2, kind="proxy")  # list refreshes and upstream subscriptions
        self._refreshing: Set[Tuple[str, str]] = set()  # (prefix, kind) refreshes queued, not yet begun
        self._refresh_lock = threading.Lock()
        self._watch_lock = threading.Lock()
        self._in_flight: Set[_Relay] = set()
        self._watchers: List[threading.Thread] = []
        self._watching = False
        self._stop = threading.Event()
        self.add_middleware(self._subscriptions)
        self.add_middleware(self._mark_lists)

    def __repr__(self) -> str:
        return f"<ProxyServer {self.name!r} mounts={list(self.mounts)}>"

    def __enter__(self) -> ProxyServer:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def mount(self, prefix: str, target: Target, **connect_options: Any) -> Mount:
        """Serve ``target``'s tools, resources and prompts under ``prefix`` (connected at :meth:`start`).

        Args:
            prefix: tools and prompts become ``prefix__name``, resource URIs ``prefix+uri``;
                ``""`` keeps them as they are (one such mount at most).
            target: a :class:`~minimcp.Server` (in process), a command (a list: a stdio server),
                an ``http(s)://`` URL, a host config entry (a dict), or a server's name in a host
                config file (``config=``).
            connect_options: for :func:`minimcp.connect` (``env=``, ``headers=``, ``auth=``,
                ``protocol=``, ``on_stderr=`` ...).

        Raises:
            ValueError: the prefix is taken, or its names or URIs would start another mount's
                (``a`` and ``a__b``: ``a__b__x`` would be both), or ``target`` is a connected
                Client (the proxy opens connections of its own).
        """
        if isinstance(target, Client):
            raise ValueError("mount a target the proxy can connect to (a Server, command, URL or config name), "
                             "not a connected Client: the proxy opens a connection per caller")
        mount = Mount(self, prefix, target, connect_options)
        for other in self.mounts.values():
            if other.prefix == prefix:
                raise ValueError(f"the prefix {prefix!r} is taken: choose another")
            if not prefix or not other.prefix:
                continue
            names = (mount.name_prefix, other.name_prefix)
            if names[0].startswith(names[1]) or names[1].startswith(names[0]) or mount.uri_prefix == other.uri_prefix:
                raise ValueError(f"the prefix {prefix!r} names the same tools or resource URIs as {other.prefix!r} "
                                 f"(their names start {names[0]!r} and {names[1]!r}, their URIs {mount.uri_prefix!r} "
                                 f"and {other.uri_prefix!r}): choose a prefix that neither starts nor is "
                                 f"another's")
        self.mounts[prefix] = mount
        if self._started:
            self._start([mount])
        return mount

    def claimed(self, mount: Mount, name: Optional[str], uri: Optional[str]) -> Optional[Mount]:
        """The other mount whose prefix ``name`` (a tool's or prompt's, as listed) or ``uri`` falls
        under, if any: what ``mount`` lists there is left out."""
        for other in self.mounts.values():
            if other is mount or not other.prefix:
                continue
            if name is not None and name.startswith(other.name_prefix):
                return other
            if uri is not None and other.owns_uri(uri):
                return other
        return None

    # -- starting and stopping -----------------------------------------------------------------

    def start(self) -> Dict[str, Optional[str]]:
        """Connect every mount, in parallel, each within ``start_timeout``; an upstream server that
        fails is logged (a warning) and tried again on the next call. Idempotent; after
        :meth:`close`, it starts the proxy again.

        Returns:
            ``{prefix: None}`` for each server that answered, ``{prefix: why}`` for each that did not.
        """
        if self._closed:  # started again after close(): fresh threads, the mounts connect again
            self._closed = False
            self._stop = threading.Event()
            self._background = WorkerPool(2, kind="proxy")
            with self._refresh_lock:
                self._refreshing.clear()  # (those queued when it closed never ran)
            for mount in self.mounts.values():
                mount.reopen()
        self._started = True
        self._start([mount for mount in self.mounts.values() if not mount.tried])
        return {prefix: mount.error for prefix, mount in self.mounts.items()}

    def _start(self, mounts: List[Mount]) -> None:
        def connect(mount: Mount) -> Callable[[], None]:
            def run() -> None:
                try:
                    mount.up()
                except Unavailable:
                    pass  # logged; its tools say so when called

            return run

        threads = [start_thread(connect(mount), "proxy-start") for mount in mounts]
        for thread in threads:  # each ends within its start_timeout (and its lists' pages, each within it)
            join(thread, 4 * self.start_timeout + 1.0)

    def close(self) -> None:
        """Close every upstream connection (stopping the servers they started) and the proxy's
        threads. Idempotent."""
        self._closed = True
        self._stop.set()
        for mount in reversed(list(self.mounts.values())):  # (first: a refresh waiting on one ends)
            mount.close()
        self._background.shutdown(timeout=5.0)
        with self._watch_lock:
            watchers, self._watchers = self._watchers, []
        for thread in watchers:
            join(thread, 5.0)

    def run(self, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8000,
            websocket_path: Optional[str] = None, session_id_prefix: str = "", **options: Any) -> None:
        """Connect the mounts (:meth:`start`), serve as :meth:`Server.run` does, then close them."""
        self.start()
        try:
            super().run(transport, host=host, port=port, websocket_path=websocket_path,
                        session_id_prefix=session_id_prefix, **options)
        finally:
            self.close()

    # -- what the proxy offers: its own, then each mount's ----------------------------------------

    def _live(self) -> List[Mount]:
        if not self._started:
            self.start()
        return list(self.mounts.values())

    def _merged(self, own: List[Any], kind: str, key: str) -> List[Any]:
        """``own``, then each mount's items of ``kind``, each ``key`` (name, URI) listed once: the
        first wins (an unprefixed mount's name the proxy has: its own)."""
        seen = {getattr(item, key) for item in own}
        for mount in self._live():
            for item in list(getattr(mount, kind).values()):
                if getattr(item, key) not in seen:
                    seen.add(getattr(item, key))
                    own.append(item)
        return own

    def tools(self) -> List[ServerTool]:
        """The proxy's own tools, then each mount's (a name listed once: the first wins)."""
        return self._merged(super().tools(), "tools", "name")

    def get_tool(self, name: object) -> Optional[ServerTool]:
        """The tool listed as ``name`` (a mount's of a server never reached, by its prefix)."""
        tool = super().get_tool(name)
        if tool is not None or not isinstance(name, str):
            return tool
        for mount in self._live():
            found = mount.tool_named(name)
            if found is not None:
                return found
        return None

    def prompts(self) -> List[ServerPrompt]:
        """The proxy's own prompts, then each mount's (a name listed once: the first wins)."""
        return self._merged(super().prompts(), "prompts", "name")

    def get_prompt(self, name: str) -> Optional[ServerPrompt]:
        """The prompt listed as ``name``."""
        prompt = super().get_prompt(name)
        if prompt is not None:
            return prompt
        for mount in self._live():
            if name in mount.prompts:
                return mount.prompts[name]
        return None

    def resources(self) -> List[ServerResource]:
        """The proxy's own resources, then each mount's (URIs prefixed; a URI listed once)."""
        return self._merged(super().resources(), "resources", "uri")

    def resource_templates(self) -> List[ServerResource]:
        """The proxy's own resource templates, then each mount's (prefixed; a template listed once)."""
        return self._merged(super().resource_templates(), "templates", "uri")

    def mount_for_uri(self, uri: str) -> Optional[Mount]:
        """The mount a proxied URI belongs to (the unprefixed one, if any, for other URIs)."""
        unprefixed = None
        for mount in self.mounts.values():
            if not mount.uri_prefix:
                unprefixed = mount
            elif mount.owns_uri(uri):
                return mount
        return unprefixed

    def _own_resource(self, uri: str) -> Optional[Tuple[ServerResource, Dict[str, str]]]:
        """The proxy's own resource or template for ``uri`` (``Server.find_resource`` would look
        through the mounts' templates too: it lists them with ``resource_templates()``)."""
        for resource in Server.resources(self):
            if resource.uri == uri:
                return resource, {}
        for template in Server.resource_templates(self):
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def find_resource(self, uri: str) -> Optional[Tuple[ServerResource, Dict[str, str]]]:
        """The proxy's own resource for ``uri``, else the mount's its prefix names."""
        found = self._own_resource(uri)
        if found is not None:
            return found
        mount = self.mount_for_uri(uri)
        if mount is None:
            return None
        return mount.resources.get(uri) or mount.any_resource, {}

    def find_completer(self, ref: Dict[str, Any], argument: str) -> Optional[Callable[..., Any]]:
        """A mount's prompt or template: a completer that asks its upstream server."""
        kind = ref.get("type")
        if kind == "ref/prompt" and isinstance(ref.get("name"), str) and super().get_prompt(ref["name"]) is None:
            for mount in self._live():
                prompt = mount.prompts.get(ref["name"])
                if prompt is not None:
                    upstream = {"type": "ref/prompt", "name": prompt.upstream}
                    return lambda value, context: mount.complete(upstream, argument, value, context)
        if kind == "ref/resource" and isinstance(ref.get("uri"), str):
            uri = ref["uri"]
            if self._own_resource(uri) is None and uri not in {t.uri for t in Server.resource_templates(self)}:
                found = self.mount_for_uri(uri)
                if found is not None:
                    resource_ref = {"type": "ref/resource", "uri": found.upstream_uri(uri)}
                    return lambda value, context: found.complete(resource_ref, argument, value, context)
        return super().find_completer(ref, argument)

    def capabilities(self, version: str = PROTOCOL_VERSION) -> Dict[str, Any]:
        """The proxy's own, and every mount's (all of them for a mount not reached yet)."""
        caps = super().capabilities(version)
        for mount in self.mounts.values():
            declared = mount.capabilities if mount.known else {"tools": {}, "prompts": {}, "resources": {},
                                                                  "completions": {}}
            if "tools" in declared:
                caps["tools"] = {"listChanged": True}
            if "prompts" in declared:
                caps["prompts"] = {"listChanged": True}
            if "resources" in declared:
                caps["resources"] = {"subscribe": True, "listChanged": True}
            if "completions" in declared and knows(version, "completions"):
                caps["completions"] = {}
        return caps

    # -- list changes, subscriptions --------------------------------------------------------------

    def serve_apps(self, hide: bool) -> None:
        """Declare MCP Apps (a mount has tools with a view), and, ``hide``, keep the tools only a
        view calls from callers that render none (as :func:`minimcp.server.apps.add_ui_tool` does)."""
        from ..server.apps import apps_of, hide_app_only_tools  # late: most proxies serve no app

        apps = apps_of(self)
        if hide and not apps.hides_app_only_tools:
            self.add_middleware(hide_app_only_tools)
            apps.hides_app_only_tools = True

    def changed_all(self) -> None:
        """Tell the proxy's clients that its lists changed (a mount came up or went down)."""
        for kind in ("tools", "prompts", "resources"):
            self.list_changed(kind)

    def list_changed(self, kind: str) -> None:
        """Tell the proxy's clients that its list of ``kind`` (tools, prompts, resources) changed."""
        self._audience.changed(f"notifications/{kind}/list_changed")

    def refresh_later(self, mount: Mount, kind: str) -> None:
        """Fetch a mount's list of ``kind`` again, off the thread that heard of the change, then,
        if it did change, tell the proxy's clients (its ``notifications/<kind>/list_changed``).
        One refresh of a mount's list waits at a time: a change heard meanwhile joins it."""
        self._fetch_later(mount, kind, lambda: mount.refresh((kind,)), f"refreshing its {kind}")

    def close_later(self, link: _Link) -> None:
        """Close an upstream connection off the calling thread (at once if the proxy is closed)."""
        if not self._background.submit(link.close):
            link.close()

    def reconnect_later(self, mount: Mount) -> None:
        """Give a mount whose main connection was retired another (or a spare one), off the thread
        that retired it, and fetch its lists again (a change may have come meanwhile)."""
        def reconnect() -> List[str]:
            mount.up()
            return mount.refresh()

        self._fetch_later(mount, "connection", reconnect, "reconnecting")

    def _fetch_later(self, mount: Mount, job: str, fetch: Callable[[], List[str]], doing: str) -> None:
        # Run fetch() on a background thread, then tell the clients which lists it changed. One
        # (mount, job) waits at a time: asked again before it begins, the waiting one serves both;
        # once it has begun, a new ask queues another (what it heard may postdate the fetch).
        key = (mount.prefix, job)

        def run() -> None:
            with self._refresh_lock:
                self._refreshing.discard(key)  # (from here a change heard is a fetch of its own)
            try:
                changed = fetch()
            except MCPError as exc:
                log.warning("upstream %s: %s failed: %s", mount.label, doing, exc)
                return
            for what in changed:
                self.list_changed(what)

        with self._refresh_lock:
            if self._closed or key in self._refreshing:
                return
            self._refreshing.add(key)
        self._background.submit(run)

    def subscribe_later(self, mount: Mount, uri: str, on: bool = True) -> None:
        """Subscribe upstream to ``uri`` (or, ``on`` False, unsubscribe), off the thread of the
        request that asked."""
        def subscribe() -> None:
            try:
                mount.subscribe(uri, on)
            except MCPError as exc:
                log.warning("upstream %s: %s %s failed: %s", mount.label,
                            "subscribing to" if on else "unsubscribing from", uri, exc)

        if not self._closed:
            self._background.submit(subscribe)

    def _subscriptions(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        """Middleware: a client's subscription to a mount's resource (``resources/subscribe``, or a
        2026-07-28 ``subscriptions/listen``) is made upstream too, once for all its subscribers;
        the last ``resources/unsubscribe`` of a URI ends it there."""
        result = call_next(request)
        if request.outgoing or request.method not in ("resources/subscribe", "resources/unsubscribe",
                                                      "subscriptions/listen"):
            return result
        params = request.params or {}
        if request.method == "subscriptions/listen":
            wanted = params.get("notifications")
            uris = list(wanted.get("resourceSubscriptions") or ()) if isinstance(wanted, dict) else []
            owner: Any = request
        else:
            uris, owner = [params.get("uri")], request.session
        for uri in uris:
            if not isinstance(uri, str) or self._own_resource(uri) is not None:
                continue  # (the proxy's own resource: nothing upstream)
            mount = self.mount_for_uri(uri)
            if mount is None:
                continue
            upstream = mount.upstream_uri(uri)
            if request.method == "resources/unsubscribe":
                if mount.unsubscribed(upstream, owner):
                    self.subscribe_later(mount, upstream, on=False)
            elif mount.subscribed(upstream, owner):
                self.subscribe_later(mount, upstream)
        return result

    def _mark_lists(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        """Middleware: every item of the proxy's lists carries its id in ``_meta`` (:data:`VIA`),
        after those of the proxies it came through."""
        result = call_next(request)
        key = _LISTS.get(request.method) if not request.outgoing else None
        if key is None or type(result) is not dict or type(result.get(key)) is not list:
            return result
        marked = []
        for item in result[key]:
            if type(item) is dict:
                meta = item.get("_meta")
                meta = dict(meta) if type(meta) is dict else {}
                via = meta.get(VIA)
                meta[VIA] = (list(via) if type(via) is list else []) + [self.proxy_id]
                item = dict(item, _meta=meta)
            marked.append(item)
        return dict(result, **{key: marked})

    def signed_answers(self, ctx: Any) -> Dict[str, Any]:
        """The answers a 2026-07-28 request's ``requestState`` carries, which the proxy signed
        (none of the caller's ``inputResponses``); ``{}`` when it has none."""
        params = {key: value for key, value in ctx.params.items() if key != "inputResponses"}
        if not isinstance(params.get("requestState"), str):
            return {}
        try:
            return self.state_signer.answers(ctx.method, params)
        except RPCError:  # (checked already when the request came in: not ours, so none)
            return {}

    # -- cancellation ---------------------------------------------------------------------------

    def watch(self, relay: _Relay) -> None:
        """Watch a forwarded request: its caller's cancel cancels it upstream."""
        with self._watch_lock:
            self._in_flight.add(relay)
            if self._watching or self._closed:
                return
            self._watching = True
            self._watchers = [thread for thread in self._watchers if thread.is_alive()]
            self._watchers.append(start_thread(self._watch, "proxy-watch"))

    def unwatch(self, relay: _Relay) -> None:
        """Stop watching a forwarded request (it ended)."""
        with self._watch_lock:
            self._in_flight.discard(relay)

    def _watch(self) -> None:
        """The cancel watcher: ends when nothing was in flight for :data:`WATCH_LINGER`, or at close.
        A cancelled request is cancelled upstream on every tick until it ends (the request it has
        in flight may be sent, or registered, just after a tick)."""
        stop = self._stop
        idle_since = time.monotonic()
        while not stop.wait(WATCH_TICK):
            with self._watch_lock:
                relays = list(self._in_flight)
                if relays:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > WATCH_LINGER:
                    self._watching = False
                    return
            for relay in relays:
                if relay.ctx.is_cancelled:
                    relay.cancelled = True
                    relay.cancel_upstream("the proxy's caller cancelled its request")
        with self._watch_lock:
            self._watching = False
