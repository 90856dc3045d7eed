"""The 2026-07-28 side of the client: the era probe, calls with ``_meta``, input-required rounds,
cached results, and listen requests (spec 2026-07-28 basic, digest base.md §9).

A :class:`~minimcp.client.Client` holds one :class:`StatelessSide` as
``client.stateless``; it is ``active`` once ``server/discover`` found a
2026-07-28 server, and the Client hands it every call from then on. It owns
what only this era has (the result cache, the log level each request asks
for, the resource subscriptions and the open listen request) and knows the
Client only through what its constructor takes: the session, the answers to
the server's questions, the capabilities, the client info and a way to
refresh the tool list.
"""

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, cast

from ..engine.inflight import ProgressCallback
from ..engine.session import Session
from ..engine.threads import join, start_thread
from ..errors import MCPError, ProtocolError, RPCError, Timeout
from ..logs import get_logger
from ..protocol.headers import header_params
from ..protocol.jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.stateless import (
    CACHEABLE,
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    SUBSCRIPTION_KEY,
    VERSION_KEY,
)
from ..protocol.versions import STATELESS_VERSION
from . import wire
from .results import Tool

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: How many input_required rounds one call may take before giving up.
MAX_INPUT_ROUNDS = 10
#: The longest the probe waits for ``server/discover``: an old server may never answer it.
PROBE_TIMEOUT = 10.0
#: Which cached results a notification makes stale (spec 2026-07-28 server/utilities/caching).
_STALE_AFTER = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
    "notifications/prompts/list_changed": ("prompts/list",),
}

#: ``answer(params, ctx) -> result`` for a request the server sends the client.
Answer = Callable[[Dict[str, Any], Any], Any]


class StatelessSide:
    """The client's half of the stateless protocol: one per :class:`~minimcp.client.Client`.

    Args:
        session: the client's session, which carries every request.
        answers: ``{method: answer(params, ctx)}`` for ``sampling/createMessage``,
            ``elicitation/create`` and ``roots/list``: the same answers the
            handshake era runs when the server asks; here they fill ``input_required`` rounds.
        capabilities: returns the capabilities each request declares.
        client_info: ``{"name", "version"}`` each request carries.
        refresh_tools: ``refresh_tools(timeout=...)`` lists the tools again (after a HEADER_MISMATCH).
    """

    def __init__(self, session: Session, *, answers: Mapping[str, Answer], capabilities: Callable[[], Dict[str, Any]],
                 client_info: Dict[str, Any], refresh_tools: Callable[..., Any]) -> None:
        self.session = session
        self.answers = answers
        self.capabilities = capabilities
        self.client_info = client_info
        self.refresh_tools = refresh_tools
        #: True once the server and client agreed on 2026-07-28.
        self.active: bool = False
        #: The level every request asks for (``logging/setLevel`` is gone), or None for the server's default.
        self.log_level: Optional[str] = None
        #: The resource URIs the listen request subscribes to.
        self.subscribed: Set[Any] = set()
        #: The open ``subscriptions/listen`` request, if any.
        self.listener: Optional[Listener] = None
        self._cache: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}  # (method, cursor, uri) -> (expires, result), from ttlMs
        self._probed_twice = False

    def __repr__(self) -> str:
        return f"<StatelessSide active={self.active} cached={len(self._cache)} listener={self.listener!r}>"

    def meta(self) -> Dict[str, Any]:
        """The ``_meta`` every 2026-07-28 request carries (spec 2026-07-28 basic "Request metadata")."""
        meta = {VERSION_KEY: STATELESS_VERSION, CAPABILITIES_KEY: self.capabilities(), CLIENT_INFO_KEY: self.client_info}
        if self.log_level is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        return meta

    # -- which era ----------------------------------------------------------------------------

    def discover(self, timeout: Optional[float], required: bool) -> Optional[Dict[str, Any]]:
        """Ask ``server/discover`` (spec 2026-07-28 "era detection"): its result, and ``active`` set,
        for a 2026-07-28 server; None for a handshake-era one. Only a recognised stateless-era error is final.

        Args:
            timeout: the caller's timeout (the probe waits at most :data:`PROBE_TIMEOUT`).
            required: the user asked for 2026-07-28, so a fallback is an error instead.

        Raises:
            ProtocolError: the server refused 2026-07-28 in a way that rules out falling
                back, or ``required`` is set and the server does not speak it.
        """
        self.active = True  # so capabilities() declares what this era means
        try:
            result = self.session.request("server/discover", {"_meta": self.meta()},
                                          timeout=min(timeout or self.session.timeout, PROBE_TIMEOUT))
        except RPCError as exc:
            supported = exc.data.get("supported") if (exc.code == UNSUPPORTED_PROTOCOL_VERSION
                                                      and isinstance(exc.data, dict)) else None
            if isinstance(supported, list) and STATELESS_VERSION in supported:
                return self._discover_again(timeout, required)  # spec basic/versioning: retry once
            self.active = False
            if exc.code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY) or required:
                raise ProtocolError(f"the server does not speak {STATELESS_VERSION}: {exc}") from exc
            log.debug("server/discover failed (%s): using the initialize handshake", exc)
            return None
        except Timeout as exc:  # some handshake-era servers ignore unknown methods before initialize
            self.active = False
            if required:
                raise ProtocolError(f"the server does not speak {STATELESS_VERSION}: {exc}") from exc
            log.debug("server/discover timed out: using the initialize handshake")
            return None
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if not isinstance(versions, list) or STATELESS_VERSION not in versions:  # garbage, or handshake versions only
            self.active = False
            if required:
                raise ProtocolError(f"the server supports {versions}, not {STATELESS_VERSION}")
            return None
        return cast(Dict[str, Any], result)  # a dict: versions came from it

    def _discover_again(self, timeout: Optional[float], required: bool) -> Optional[Dict[str, Any]]:
        if self._probed_twice:
            self.active = False
            raise ProtocolError(f"the server refuses {STATELESS_VERSION} yet lists it as supported")
        self._probed_twice = True
        return self.discover(timeout, required)

    # -- calls --------------------------------------------------------------------------------

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None,
             on_progress: Optional[ProgressCallback] = None, max_timeout: Optional[float] = None) -> Any:
        """Send a request with ``_meta``, answer its ``input_required`` rounds, and keep a
        result the server says may be cached (``ttlMs``).

        Raises:
            RPCError, Timeout, ConnectionClosed: as :meth:`Session.request`.
            ProtocolError: an unknown ``resultType``, or input still wanted after
                :data:`MAX_INPUT_ROUNDS` rounds.
            MCPError: a handler answering the server's question failed.
        """
        params = dict(params or {})
        key = (method, params.get("cursor"), params.get("uri"))
        cached = self._cache.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        params["_meta"] = {**(params.get("_meta") or {}), **self.meta()}
        for _ in range(MAX_INPUT_ROUNDS):
            try:
                result = self.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                              max_timeout=max_timeout)
            except RPCError as exc:
                # spec 2026-07-28 basic/transports: a header mismatch about Mcp-Param-* headers
                # means our tool list is stale: refresh it (it says which headers to send) and retry.
                if exc.code != HEADER_MISMATCH or method != "tools/call":
                    raise
                self.refresh_tools(timeout=timeout)
                result = self.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                              max_timeout=max_timeout)
            what = f"the server's answer to {method}"
            kind = result.get("resultType") if type(result) is dict else None  # (the usual answer: no helper)
            if type(kind) is not str:
                kind = wire.field(wire.result(method, result), "resultType", str, what, "complete")  # missing: complete
            if kind == "complete":
                ttl = result.get("ttlMs")
                if method in CACHEABLE and "inputResponses" not in params and isinstance(ttl, int) and ttl > 0:
                    self._cache[key] = (time.monotonic() + ttl / 1000, result)
                return result
            if kind == "task" and method == "tools/call":  # the tasks extension: client/tasks.py waits
                return result
            if kind != "input_required":
                raise ProtocolError(f"the server answered {method} with an unknown resultType {kind!r}")
            # spec 2026-07-28 basic/patterns/mrtr: answer each, retry with a new id and the state
            requests = wire.field(result, "inputRequests", dict, what, {})
            params = dict(params, inputResponses={
                key: self._answer(wire.obj(request, f"{what}: inputRequests[{key!r}]"))
                for key, request in requests.items()})
            params.pop("requestState", None)
            if wire.field(result, "requestState", str, what) is not None:
                params["requestState"] = result["requestState"]
        raise ProtocolError(f"{method}: the server still wanted input after {MAX_INPUT_ROUNDS} rounds")

    def mirror_headers(self, tools: List[Tool]) -> List[Tool]:
        """Over HTTP, tell the transport which arguments each tool mirrors into ``Mcp-Param-*``
        headers; leave out (with a warning) a tool whose ``x-mcp-header`` annotations break
        the rules, as the spec requires (spec 2026-07-28 basic/transports)."""
        headers = self.session.transport.param_headers
        if headers is None:
            return tools
        kept = []
        for tool in tools:
            mirrored = header_params(tool.input_schema)
            if mirrored is None:
                log.warning("dropping tool %r: its x-mcp-header annotations are invalid", tool.name)
                continue
            headers[tool.name] = mirrored
            kept.append(tool)
        return kept

    def _answer(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """Answer one of an ``input_required`` result's requests with the client's own answers."""
        method, params = request.get("method"), wire.field(request, "params", dict, "an input request", {})
        answer = self.answers.get(method) if isinstance(method, str) else None
        if answer is None:
            raise ProtocolError(f"the server asked for input of an unknown kind: {method!r}")
        try:
            answered: Dict[str, Any] = answer(params, None)
            return answered
        except MCPError:
            raise
        except Exception as exc:  # the call fails here, with the cause; the server holds nothing
            raise MCPError(f"the {method} handler failed: {exc}") from exc

    # -- notifications and subscriptions -----------------------------------------------------------

    def notified(self, method: str, params: Dict[str, Any]) -> bool:
        """See a notification before the client's callbacks do: note an acknowledged listen
        request, drop cached results it makes stale. False if it belongs to a listen
        request already closed (demultiplexed by subscription id, as the spec says)."""
        subscription = (params.get("_meta") or {}).get(SUBSCRIPTION_KEY)
        listener = self.listener
        if subscription is not None and (listener is None or listener.request_id != subscription):
            return False
        if method == "notifications/subscriptions/acknowledged":
            if listener is not None and subscription is not None:  # ours: any other was dropped above
                listener.acknowledged = params.get("notifications", {})
                listener.ready.set()
        elif method == "notifications/resources/updated":
            self._cache.pop(("resources/read", None, params.get("uri")), None)
        for stale in _STALE_AFTER.get(method, ()):
            for key in [key for key in list(self._cache) if key[0] == stale]:  # list(): callers write it
                self._cache.pop(key, None)
        return True

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = ()) -> "Listener":
        """Open a ``subscriptions/listen`` request for what is asked, in place of the open one;
        return it once the server acknowledged it."""
        filters: Dict[str, Any] = {}
        for name, wanted in (("toolsListChanged", tools), ("promptsListChanged", prompts),
                             ("resourcesListChanged", resources)):
            if wanted:
                filters[name] = True
        if resource_uris:
            filters["resourceSubscriptions"] = list(resource_uris)
        listener = Listener(self.session, filters)
        previous, self.listener = self.listener, listener  # before it opens: its acknowledgement must match
        listener.open(self.meta())
        if previous is not None:
            previous.close()
        return listener

    def relisten(self, *, tools: bool, prompts: bool, resources: bool) -> None:
        """Keep one listen request open for the list changes asked for and :attr:`subscribed`;
        close it when nothing is wanted any more."""
        if self.subscribed or tools or prompts or resources:
            self.listen(tools=tools, prompts=prompts, resources=resources, resource_uris=sorted(self.subscribed))
        elif self.listener is not None:
            self.listener.close()
            self.listener = None

    def close(self) -> None:
        """End the open listen request, if any."""
        if self.listener is not None:
            self.listener.close()


class Listener:
    """An open ``subscriptions/listen`` request, on a thread of its own; ``close()`` ends it.

    Made by :meth:`Client.listen`, which returns once the server acknowledged
    it (``acknowledged`` holds the filters the server honours), so nothing
    sent after that is missed.
    """

    def __init__(self, session: Session, filters: Dict[str, Any]) -> None:
        self.session: Session = session
        self.filters: Dict[str, Any] = filters
        self.acknowledged: Optional[Dict[str, Any]] = None
        self.ready: threading.Event = threading.Event()
        self.request_id: int = session.new_request_id()
        self._params: Dict[str, Any] = {}
        self._thread: Optional[threading.Thread] = None

    def open(self, meta: Dict[str, Any], timeout: float = 10.0) -> None:
        """Send the request and wait (up to ``timeout``) for the server's acknowledgement."""
        self._params = {"notifications": self.filters, "_meta": meta}
        self._thread = start_thread(self._run, "listen")
        if not self.ready.wait(timeout):
            log.warning("the server did not acknowledge subscriptions/listen within %ss", timeout)

    def _run(self) -> None:
        try:
            self.session.request("subscriptions/listen", self._params, timeout=365 * 86400.0,
                                 request_id=self.request_id)
        except Exception as exc:  # cancelled by close(), the connection ended, or refused
            log.debug("listen request ended: %s", exc)
        finally:  # (ended before its acknowledgement, say refused: nobody waits for one any longer)
            self.ready.set()

    def close(self) -> None:
        """End the listen request (``notifications/cancelled``, or closing its HTTP stream)."""
        self.ready.set()
        self.session.cancel(self.request_id, "the client stopped listening")
        if self._thread is not None:
            join(self._thread, 5.0)

    def __repr__(self) -> str:
        return f"<Listener {self.filters!r}>"
