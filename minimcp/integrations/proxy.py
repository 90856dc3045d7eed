"""ProxyServer: one MCP server that fronts others (a gateway), their features served as its own.

:class:`ProxyServer` is a :class:`~minimcp.Server`: it keeps tools, resources and prompts
of its own, and :meth:`~ProxyServer.mount` puts another server's beside them, under a
prefix: an in-process :class:`~minimcp.Server`, a stdio command, an HTTP URL or a name in a
host config file. Tools and prompts are named ``prefix__name`` (:func:`minimcp.integrations.hub
.qualified_names`, the names :class:`~minimcp.integrations.hub.ToolHub` gives), resource URIs
get ``prefix+`` in front of their scheme (``files+file:///notes.txt``), and completions
follow the prompt or template they complete. A mount with the prefix ``""`` keeps the names
as they are (the bridge ``minimcp proxy`` serves one server so).

What happens during a forwarded request comes back to whoever called the proxy: progress,
log messages, and the upstream server's own requests (sampling, elicitation, roots); a
cancel from the caller cancels the upstream request; a ``list_changed`` from an upstream
server becomes the proxy's own.

Who answers an upstream server's question. Over stdio in the handshake era a server's
``sampling/createMessage`` says nothing of the call it belongs to, so a connection that
carries calls of two callers cannot tell whose it is. So each upstream connection is leased,
while calls are in flight on it, to one caller: a handshake-era client connection (whose
calls may share it), or one stateless-era request. A call of another caller takes an idle
connection or opens one more (at most ``max_links`` per upstream; past that it waits for one,
within its timeout). An upstream server that speaks 2026-07-28 asks inside the call's own
answer (``input_required``), so one connection serves every caller there: the proxy hands the
question on (to a 2026-07-28 caller, as its own ``input_required``, the upstream's
``requestState`` carried inside the proxy's signed one) and sends the answers back.

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
they last were, and calling one answers an ``isError`` result that names it and says why;
each call tries to reconnect first.
"""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..client.client import Client
from ..engine.threads import WorkerPool, join, start_thread
from ..errors import ConnectionClosed, MCPError, RPCError
from ..logs import get_logger
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
#: signed ``requestState`` (so the caller can neither read-alter nor forge it).
UPSTREAM_STATE = "io.github.minimcp/proxy-upstream"
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
_SCHEME_UNSAFE = re.compile(r"[^a-z0-9+.-]")


def _forwarded(ctx: Context) -> None:
    """What a forwarded tool, prompt or resource is registered with: it is never called
    (their ``call``, ``get`` and ``read`` forward the request instead)."""


def uri_prefix(prefix: str) -> str:
    """What a mount's resource URIs start with: ``prefix+`` made a valid URI scheme start
    (RFC 3986 §3.1: a letter, then letters, digits, ``+``, ``-`` or ``.``), or ``""`` for
    an unprefixed mount. ``"My_Files"`` gives ``"my-files+"``."""
    if not prefix:
        return ""
    safe = _SCHEME_UNSAFE.sub("-", prefix.lower())
    return (safe if safe[0].isalpha() else "x" + safe) + "+"


def describe(target: Any) -> str:
    """A short name of an upstream target, for messages."""
    if isinstance(target, Server):
        return f"in-process server {target.name!r}"
    if isinstance(target, (list, tuple)):
        text = " ".join(str(part) for part in target)
        return text if len(text) <= 80 else text[:77] + "..."
    if isinstance(target, dict):
        return str(target.get("url") or target.get("command") or target)
    return str(target)


class Unavailable(MCPError):
    """An upstream server cannot be reached now; ``mount`` is its :class:`Mount`."""

    def __init__(self, mount: Mount, message: str) -> None:
        super().__init__(message)
        self.mount: Mount = mount


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
        self.definition["name"] = name
        self.can_run_inline = False  # it waits on its upstream server: never on a reading thread

    def call(self, arguments: Dict[str, Any], ctx: Any, version: str = PROTOCOL_VERSION) -> Dict[str, Any]:
        """Forward the call; an upstream that is down is an ``isError`` result naming it."""
        try:
            return self.mount.call_tool(self, arguments, ctx, version)
        except Unavailable as exc:
            return {"content": [{"type": "text", "text": f"Error in tool {self.name!r}: {exc}"}], "isError": True}


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
        result = self.mount.forward("prompts/get", {"name": self.upstream, "arguments": arguments}, ctx)
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
        self.uri: str = mount.uri_prefix + str(raw.get(key, ""))
        self.mime_type: Optional[str] = raw.get("mimeType")
        self.definition: Dict[str, Any] = dict(raw, **{key: self.uri}) if raw else {}

    def match(self, uri: str) -> Optional[Dict[str, str]]:
        """Any URI under the mount's prefix (the upstream server says whether it has it)."""
        return {} if uri.startswith(self.mount.uri_prefix) else None

    def read(self, uri: str, variables: Dict[str, str], ctx: Any) -> Dict[str, Any]:
        """Forward ``resources/read`` for ``uri`` less the prefix; the contents' URIs get it back."""
        result = self.mount.forward("resources/read", {"uri": self.mount.upstream_uri(uri)}, ctx)
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
        #: The forwarded requests in flight on it, oldest first (under the mount's lock).
        self.relays: List[_Relay] = []
        #: The caller it is leased to while requests are in flight (handshake-era upstreams).
        self.owner: Any = None
        # Roots: a server that asked for them outside any call (server-everything asks once, after
        # initialize, and keeps them) is told they changed when a caller of other roots comes.
        self.roots_outside: bool = False
        self.roots_owner: Any = None
        self.roots_answered: int = 0  # roots/list requests answered (under the mount's lock)

    @property
    def alive(self) -> bool:
        return self.client is not None and not self.client.session.closed

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
        relay = self.relay()
        try:
            if relay is None:
                if method == "roots/list":  # asked between calls (say, right after initialize): no caller to ask
                    self.roots_outside = True
                    return {"roots": []}
                raise RPCError(METHOD_NOT_FOUND, f"{method}: no call is in flight through the proxy, so there "
                                                 f"is nobody to ask")
            return relay.ask(method, params)
        finally:
            if method == "roots/list":
                with self.mount.lock:
                    self.roots_answered += 1
                    self.mount.lock.notify_all()

    def on_log(self, params: Dict[str, Any]) -> None:
        """An upstream log message: to the caller of the request in flight, else to every
        handshake-era client of the proxy; to this process's ``logging`` when the requests in
        flight are several callers' (one caller's messages never reach another)."""
        logger = self.mount.prefix or self.mount.label
        if params.get("logger"):
            logger = f"{logger}.{params['logger']}"
        with self.mount.lock:
            owners = {id(relay.ctx.session if relay.ctx.meta is None else relay.ctx) for relay in self.relays}
            first = self.relays[0] if self.relays else None
        level, data = params.get("level", "info"), params.get("data")
        if first is not None and len(owners) == 1:
            first.ctx.log(level, data, logger)
        elif first is None:
            for connection in self.mount.proxy.connections():
                try:
                    connection.send_log(level, data, logger)
                except ValueError:  # an unknown level: the upstream's mistake, said nowhere
                    return
        else:
            log.info("%s: %s", logger, data)

    def changed(self, kind: str) -> None:
        if self is self.mount.main:  # (every connection hears it: one refresh is enough)
            self.mount.proxy.refresh_later(self.mount, kind)

    def updated(self, uri: str) -> None:
        if self is self.mount.main:
            self.mount.proxy.notify_resource_updated(self.mount.uri_prefix + uri)

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
        self.link: _Link = link
        self.method: str = method
        self.request_id: Optional[int] = None  # the upstream request now in flight
        self.asked: int = 0  # questions the upstream server asked so far (their keys for a 2026-07-28 caller)
        #: The question that stopped this round, for a 2026-07-28 caller: ``{key: {method, params}}``.
        self.wanted: Optional[Dict[str, Any]] = None
        self.cancelled: bool = False

    def cancel_upstream(self, reason: str) -> None:
        client, request_id = self.link.client, self.request_id
        if client is not None and request_id is not None:
            client.session.cancel(request_id, reason)

    def ask(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """Ask the caller: at once in the handshake era; in 2026-07-28 from the answers it brought,
        else by stopping the upstream call so that the proxy answers ``input_required``."""
        ctx = self.ctx
        if ctx.meta is None:
            return self.ask_now(method, params)
        self.asked += 1
        key = f"proxy-{self.asked}"
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
        need = _NEEDS.get(method)
        if need is not None and ctx.client_capabilities.get(need) is None:
            raise RPCError(METHOD_NOT_FOUND, f"the client behind the proxy ({ctx.client_info.get('name', 'unknown')})"
                                             f" does not support {need}")
        timeout = 600.0 if method == "elicitation/create" else None  # a person may take a while
        answer: Dict[str, Any] = ctx.connection.request(method, params, timeout, ctx.request_id)
        return answer


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
        #: A name for messages: the prefix, else what the target is.
        self.label: str = prefix or describe(target)
        self.options: Dict[str, Any] = options
        #: Why it is down: None while it serves (and before its first connect).
        self.error: Optional[str] = None
        #: True once it answered at least once (its capabilities are known).
        self.known: bool = False
        #: True once a connect was tried (by :meth:`ProxyServer.start` or a call).
        self.tried: bool = False
        #: True when it speaks 2026-07-28 (its questions come inside answers).
        self.stateless: bool = False
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
        self._subscribed: Set[str] = set()

    def __repr__(self) -> str:
        state = "down" if self.error else ("up" if self.main is not None else "not connected")
        return f"<Mount {self.label!r} {describe(self.target)!r} {state}>"

    # -- names and URIs ---------------------------------------------------------------------------

    def upstream_uri(self, uri: str) -> str:
        """A proxied URI as the upstream server knows it."""
        return uri[len(self.uri_prefix):] if self.uri_prefix and uri.startswith(self.uri_prefix) else uri

    def prefix_block(self, block: Dict[str, Any]) -> Dict[str, Any]:
        """A content block (or resource contents) with its URI as the proxy lists it."""
        if not self.uri_prefix or not isinstance(block, dict):
            return block
        if isinstance(block.get("uri"), str):
            return dict(block, uri=self.uri_prefix + block["uri"])
        inner = block.get("resource")
        if block.get("type") == "resource" and isinstance(inner, dict) and isinstance(inner.get("uri"), str):
            return dict(block, resource=dict(inner, uri=self.uri_prefix + inner["uri"]))
        return block

    # -- connecting -------------------------------------------------------------------------------

    def _open(self, timeout: float) -> _Link:
        """Open one more connection (not under the lock: it may take ``timeout``)."""
        link = _Link(self)
        options = dict(self.options)
        options.setdefault("timeout", timeout)
        options.setdefault("client_info", {"name": f"{self.proxy.name} (minimcp proxy)", "version": SDK_VERSION})
        for key, value in link.handlers().items():
            options.setdefault(key, value)
        config = options.pop("config", self.proxy.config)
        link.client = _open(self.label, self.target, config, options)
        link.client.session.timeout = self.proxy.call_timeout
        return link

    def up(self, timeout: Optional[float] = None) -> _Link:
        """The main connection, opened (with the lists fetched) if it is not; one caller connects
        while the others wait for it.

        Raises:
            Unavailable: the server did not start or answer within ``timeout`` (default: the
                proxy's ``start_timeout``), or refused; ``error`` says why.
        """
        timeout = self.proxy.start_timeout if timeout is None else timeout
        with self.lock:
            main = self.main
            if main is not None and main.alive:
                return main
            connecting = self._connecting
            if connecting is None:
                connecting = self._connecting = threading.Event()
                mine = True
            else:
                mine = False
        if not mine:
            connecting.wait(timeout + self.proxy.call_timeout)
            with self.lock:
                main = self.main
            if main is not None and main.alive:
                return main
            raise Unavailable(self, self._unavailable(self.error or f"it did not connect within {timeout:g}s"))
        try:
            return self._connect(timeout)
        finally:
            with self.lock:
                self._connecting = None
            connecting.set()

    def _connect(self, timeout: float) -> _Link:
        self.tried = True
        self._drop_dead()
        started = time.monotonic()
        try:
            link = self._open(timeout)
        except Exception as exc:
            waited = time.monotonic() - started
            self.error = f"{type(exc).__name__}: {exc}" + (f" (after {waited:.1f}s)" if waited >= 1 else "")
            log.warning("upstream %s is unavailable: %s; its tools fail saying so until it answers "
                        "(tried again on each call)", self.label, self.error)
            self.proxy.changed_all()  # its tools now fail: the same list, other answers
            raise Unavailable(self, self._unavailable(self.error)) from None
        client = link.client
        assert client is not None
        with self.lock:
            self.links.insert(0, link)
            self.main = link
        self.stateless = client.era == "stateless"
        self.capabilities = dict(client.server_capabilities)
        was_down, self.error, self.known = self.error is not None, None, True
        try:
            self.refresh()
        except MCPError as exc:
            log.warning("upstream %s connected but its lists failed: %s", self.label, exc)
        for uri in sorted(self._subscribed):
            self.proxy.subscribe_later(self, uri)
        if was_down:
            log.warning("upstream %s is back", self.label)
        return link

    def _unavailable(self, why: str) -> str:
        what = describe(self.target)
        return (f"the upstream server {self.label!r}{f' ({what})' if what != self.label else ''} is unavailable: "
                f"{why}. The proxy tries it again on the next call.")

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
        """A forwarded request found its connection gone: drop it; the next call reconnects."""
        log.warning("upstream %s: the connection ended: %s", self.label, exc)
        with self.lock:
            if self.main is link:
                self.main = None
                self.error = f"the connection ended: {exc}"
            if link in self.links and not link.relays:
                self.links.remove(link)
                closing = True
            else:
                closing = False
        if closing:
            link.close()

    def lease(self, ctx: Any, method: str) -> _Relay:
        """The forwarded request of ``ctx``'s ``method``, on a connection: the one already leased to
        its caller, an idle one, or a new one (see the module's docstring); the shared one for a
        2026-07-28 upstream. It is in flight on it from here (:meth:`release` ends it).

        Raises:
            Unavailable: the server is down, or ``max_links`` connections are busy for the
                whole of the call's timeout.
        """
        main = self.up()
        if self.stateless:
            return self._in_flight(_Relay(ctx, main, method))
        owner = ctx.session if ctx.meta is None else ctx  # a handshake-era client, or one 2026-07-28 request
        deadline = time.monotonic() + self.proxy.call_timeout
        while True:
            with self.lock:
                live = [link for link in self.links if link.alive]
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
                    self.lock.wait(min(left, 1.0))  # (woken when a link is released; the loop is bounded)
                    continue
            try:
                link = self._open(self.proxy.start_timeout)
            except Exception as exc:
                raise Unavailable(self, self._unavailable(f"{type(exc).__name__}: {exc}")) from None
            finally:
                with self.lock:
                    self._opening -= 1
            with self.lock:
                link.owner = owner
                self.links.append(link)
                return self._in_flight(_Relay(ctx, link, method))

    def _in_flight(self, relay: _Relay) -> _Relay:
        with self.lock:  # (re-entered from lease: a Condition's lock is an RLock)
            relay.link.relays.append(relay)
        return relay

    def release(self, relay: _Relay) -> None:
        with self.lock:
            link = relay.link
            if relay in link.relays:
                link.relays.remove(relay)
            if not link.relays:
                link.owner = None
                self.lock.notify_all()

    # -- lists ----------------------------------------------------------------------------------

    def refresh(self, kinds: Sequence[str] = ("tools", "resources", "prompts")) -> None:
        """Fetch the upstream lists of ``kinds`` afresh (those it declared)."""
        link = self.main
        client = link.client if link is not None else None
        if client is None:
            return
        caps = self.capabilities
        if "tools" in kinds and "tools" in caps:
            raws = [tool.raw for tool in client.list_tools()]
            names = [""] * len(raws)
            if self.prefix:
                names = qualified_names([(self.prefix, raw["name"]) for raw in raws])
            self.tools = {name or raw["name"]: ProxiedTool(self, name or raw["name"], raw["name"], raw)
                          for name, raw in zip(names, raws)}
        if "prompts" in kinds and "prompts" in caps:
            raws = [prompt.raw for prompt in client.list_prompts()]
            names = qualified_names([(self.prefix, raw["name"]) for raw in raws]) if self.prefix else \
                [raw["name"] for raw in raws]
            self.prompts = {name: ProxiedPrompt(self, name, raw["name"], raw) for name, raw in zip(names, raws)}
        if "resources" in kinds and "resources" in caps:
            resources = [ProxiedResource(self, r.raw) for r in client.list_resources()]
            templates = [ProxiedResource(self, t.raw) for t in client.list_resource_templates()]
            self.resources = {r.uri: r for r in resources}
            self.templates = {t.uri: t for t in templates}

    def tool_named(self, name: str) -> Optional[ProxiedTool]:
        """The tool the proxy lists as ``name``; a placeholder for a name under the prefix of a
        server never reached (it connects, then finds the tool, when called)."""
        tool = self.tools.get(name)
        if tool is None and not self.known and self.name_prefix and name.startswith(self.name_prefix):
            tool = ProxiedTool(self, name, None, {"name": name})
        return tool

    # -- forwarding -------------------------------------------------------------------------------

    def call_tool(self, tool: ProxiedTool, arguments: Dict[str, Any], ctx: Any, version: str) -> Dict[str, Any]:
        """Forward ``tools/call``: the result fit for ``version``, its names and URIs the proxy's."""
        upstream = tool.upstream
        if upstream is None:  # a placeholder: connect, then look the tool up
            self.up()
            found = self.tools.get(tool.name)
            if found is None:
                raise RPCError(INVALID_PARAMS, f"Unknown tool: {tool.name!r} (the upstream server "
                                               f"{self.label!r} has no such tool)")
            upstream = found.upstream
        assert upstream is not None
        try:
            result = self.forward("tools/call", {"name": upstream, "arguments": arguments}, ctx)
        except RPCError as exc:
            raise RPCError(exc.code, _as_called(exc.message, upstream, tool.name), exc.data) from None
        content = result.get("content")
        if isinstance(content, list):
            result["content"] = [self.prefix_block(_block_as_called(block, upstream, tool.name)) for block in content]
            return result_for_version(result, version)
        return result

    def forward(self, method: str, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        """Send ``method`` upstream for the caller's request ``ctx``, and return the result.

        Raises:
            Unavailable: the server is down or its connection ended.
            RPCError: what the upstream server answered.
            InputRequired: a 2026-07-28 caller must answer the upstream server's question first.
        """
        relay = self.lease(ctx, method)
        link = relay.link
        self.proxy.watch(relay)
        try:
            self._tell_roots(relay)
            if self.stateless:
                result = self._rounds(relay, method, params)
            else:
                result = self._request(relay, method, params)
        except ConnectionClosed as exc:
            if relay.wanted is not None:  # (the handshake-era upstream asked a 2026-07-28 caller)
                raise InputRequired(relay.wanted) from None
            if relay.cancelled or ctx.is_cancelled:
                raise  # the caller left: its answer is dropped anyway
            self.lost(link, exc)
            raise Unavailable(self, self._unavailable(f"{type(exc).__name__}: {exc}")) from None
        finally:
            self.proxy.unwatch(relay)
            self.release(relay)
        if ctx.meta is None and type(result) is dict:
            for key in _STATELESS_FIELDS:
                result.pop(key, None)
        if type(result) is not dict:
            raise RPCError(INTERNAL_ERROR, f"the upstream server {self.label!r} answered {method} with "
                                           f"{type(result).__name__}, not an object")
        return result

    def _tell_roots(self, relay: _Relay) -> None:
        """Before a caller's first call on a connection whose server keeps the roots it asked for
        outside any call: tell it they changed (spec client/roots "Root List Changes"), and wait
        (at most :data:`ROOTS_WAIT`) until it asked this caller for them, so that the call sees
        them. A server that does not ask again is not told again."""
        link, ctx = relay.link, relay.ctx
        owner = ctx.session if ctx.meta is None else ctx
        client = link.client
        if relay.method != "tools/call" or not link.roots_outside or link.roots_owner is owner \
                or "roots" not in ctx.client_capabilities or client is None:
            return
        link.roots_owner = owner
        with self.lock:
            seen = link.roots_answered
        client.session.notify("notifications/roots/list_changed")
        deadline = time.monotonic() + ROOTS_WAIT
        with self.lock:
            while link.roots_answered == seen and relay.wanted is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    link.roots_outside = False
                    break
                self.lock.wait(left)
        if relay.wanted is not None:  # a 2026-07-28 caller answers first
            raise InputRequired(relay.wanted)

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
        # Progress restarts the clock (up to max_call_timeout), so a long tool that reports is not cut.
        return client.session.request(method, params, timeout=self.proxy.call_timeout,
                                      on_progress=self._progress(relay.ctx),
                                      max_timeout=self.proxy.max_call_timeout, request_id=relay.request_id)

    def _rounds(self, relay: _Relay, method: str, params: Dict[str, Any]) -> Any:
        """A 2026-07-28 upstream: the request with ``_meta`` (the caller's capabilities and log
        level), its ``input_required`` rounds answered by the caller (spec 2026-07-28
        basic/patterns/mrtr)."""
        ctx, client = relay.ctx, relay.link.client
        if client is None:
            raise ConnectionClosed("the connection was closed")
        meta = client.stateless.meta()
        capabilities = {key: value for key, value in ctx.client_capabilities.items() if key != "extensions"}
        meta[CAPABILITIES_KEY] = capabilities  # the caller's: the upstream decides what it may ask
        level = ctx.meta.log_level if ctx.meta is not None else ctx.connection.log_level
        meta.pop(LOG_LEVEL_KEY, None)
        if level is not None:
            meta[LOG_LEVEL_KEY] = level
        params = dict(params, _meta=meta)
        kept = ctx.answers.get(UPSTREAM_STATE) if ctx.meta is not None else None
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
        client = self.up().client
        if client is None:
            raise Unavailable(self, self._unavailable("its connection was closed"))
        params: Dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = client.request("completion/complete", params, timeout=self.proxy.call_timeout)
        completion = result.get("completion") if isinstance(result, dict) else None
        return completion if isinstance(completion, dict) else {"values": []}

    def subscribe(self, uri: str) -> None:
        """Subscribe upstream to ``uri`` (as it knows it), once; again after a reconnect."""
        self._subscribed.add(uri)
        client = self.up().client
        if client is not None and (self.capabilities.get("resources") or {}).get("subscribe"):
            client.subscribe_resource(uri)

    def close(self) -> None:
        """Close every connection to the upstream server."""
        with self.lock:
            links, self.links, self.main = self.links, [], None
        for link in links:
            link.close()


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

    Args:
        name, version: as for :class:`~minimcp.Server` (the proxy's own ``serverInfo``).
        start_timeout: seconds an upstream server has to start and answer the handshake.
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
        self._started = False
        self._closed = False
        self._background = WorkerPool(2, kind="proxy")  # list refreshes and upstream subscriptions
        self._watch_lock = threading.Lock()
        self._in_flight: Set[_Relay] = set()
        self._watchers: List[threading.Thread] = []
        self._watching = False
        self._stop = threading.Event()
        self.add_middleware(self._subscriptions)

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
            ValueError: the prefix is taken (or names the same tools as one taken), or ``target``
                is a connected Client (the proxy opens connections of its own).
        """
        if isinstance(target, Client):
            raise ValueError("mount a target the proxy can connect to (a Server, command, URL or config name), "
                             "not a connected Client: the proxy opens a connection per caller")
        mount = Mount(self, prefix, target, connect_options)
        for other in self.mounts.values():
            if other.prefix == prefix or (prefix and other.name_prefix == mount.name_prefix) or (
                    prefix and other.uri_prefix == mount.uri_prefix):
                raise ValueError(f"the prefix {prefix!r} is taken, or names the same tools or URIs as "
                                 f"{other.prefix!r}: choose another")
        self.mounts[prefix] = mount
        if self._started:
            self._start([mount])
        return mount

    # -- starting and stopping -----------------------------------------------------------------

    def start(self) -> Dict[str, Optional[str]]:
        """Connect every mount, in parallel, each within ``start_timeout``; an upstream server that
        fails is logged (a warning) and tried again on the next call. Idempotent.

        Returns:
            ``{prefix: None}`` for each server that answered, ``{prefix: why}`` for each that did not.
        """
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
        for thread in threads:  # each ends within its start_timeout (and its lists' call_timeout)
            join(thread, self.start_timeout + 4 * self.call_timeout)

    def close(self) -> None:
        """Close every upstream connection (stopping the servers they started) and the proxy's
        threads. Idempotent."""
        self._closed = True
        self._stop.set()
        self._background.shutdown(timeout=5.0)
        for mount in reversed(list(self.mounts.values())):
            mount.close()
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

    def tools(self) -> List[ServerTool]:
        """The proxy's own tools, then each mount's."""
        tools = super().tools()
        names = {tool.name for tool in tools}
        for mount in self._live():
            for tool in mount.tools.values():
                if tool.name not in names:  # (an unprefixed mount's name the proxy has: its own wins)
                    names.add(tool.name)
                    tools.append(tool)
        return tools

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
        """The proxy's own prompts, then each mount's."""
        prompts = super().prompts()
        for mount in self._live():
            prompts.extend(mount.prompts.values())
        return prompts

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
        """The proxy's own resources, then each mount's (URIs prefixed)."""
        resources = super().resources()
        for mount in self._live():
            resources.extend(mount.resources.values())
        return resources

    def resource_templates(self) -> List[ServerResource]:
        """The proxy's own resource templates, then each mount's (prefixed)."""
        templates = super().resource_templates()
        for mount in self._live():
            templates.extend(mount.templates.values())
        return templates

    def mount_for_uri(self, uri: str) -> Optional[Mount]:
        """The mount a proxied URI belongs to (the unprefixed one, if any, for other URIs)."""
        unprefixed = None
        for mount in self.mounts.values():
            if not mount.uri_prefix:
                unprefixed = mount
            elif uri.startswith(mount.uri_prefix):
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

    def changed_all(self) -> None:
        """Tell the proxy's clients that its lists changed (a mount came up or went down)."""
        for method in ("notifications/tools/list_changed", "notifications/prompts/list_changed",
                       "notifications/resources/list_changed"):
            self._audience.changed(method)

    def refresh_later(self, mount: Mount, kind: str) -> None:
        """Fetch a mount's list of ``kind`` again, off the thread that heard of the change, then
        tell the proxy's clients (its ``notifications/<kind>/list_changed``)."""
        def refresh() -> None:
            try:
                mount.refresh((kind,))
            except MCPError as exc:
                log.warning("upstream %s: refreshing its %s failed: %s", mount.label, kind, exc)
            self._audience.changed(f"notifications/{kind}/list_changed")

        if not self._closed:
            self._background.submit(refresh)

    def subscribe_later(self, mount: Mount, uri: str) -> None:
        """Subscribe upstream to ``uri``, off the thread of the request that asked."""
        def subscribe() -> None:
            try:
                mount.subscribe(uri)
            except MCPError as exc:
                log.warning("upstream %s: subscribing to %s failed: %s", mount.label, uri, exc)

        if not self._closed:
            self._background.submit(subscribe)

    def _subscriptions(self, request: Any, call_next: Callable[[Any], Any]) -> Any:
        """Middleware: a client's subscription to a mount's resource (``resources/subscribe``, or a
        2026-07-28 ``subscriptions/listen``) is made upstream too."""
        result = call_next(request)
        if request.outgoing or request.method not in ("resources/subscribe", "subscriptions/listen"):
            return result
        params = request.params or {}
        if request.method == "resources/subscribe":
            uris = [params.get("uri")]
        else:
            wanted = params.get("notifications")
            uris = list(wanted.get("resourceSubscriptions") or ()) if isinstance(wanted, dict) else []
        for uri in uris:
            if not isinstance(uri, str) or self._own_resource(uri) is not None:
                continue  # (the proxy's own resource: nothing upstream)
            mount = self.mount_for_uri(uri)
            if mount is not None:
                self.subscribe_later(mount, mount.upstream_uri(uri))
        return result

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
        """The cancel watcher: ends when nothing was in flight for :data:`WATCH_LINGER`, or at close."""
        idle_since = time.monotonic()
        while not self._stop.wait(WATCH_TICK):
            with self._watch_lock:
                relays = list(self._in_flight)
                if relays:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > WATCH_LINGER:
                    self._watching = False
                    return
            for relay in relays:
                if relay.ctx.is_cancelled and not relay.cancelled:
                    relay.cancelled = True
                    relay.cancel_upstream("the proxy's caller cancelled its request")
        with self._watch_lock:
            self._watching = False
