"""The 2026-07-28 side of the client: the era probe, calls with ``_meta``, input-required rounds,
cached results, and listen requests (spec 2026-07-28 basic, digest base.md §9).

Functions of a :class:`~minimcp.client.Client`, kept here so client.py reads as the
calls a user makes; the Client delegates to them when the server speaks 2026-07-28.
"""

import threading
import time
from typing import Any, Optional

from ..protocol.stateless import CACHEABLE, SERVER_INFO_KEY
from ..protocol.versions import MODERN_VERSION
from ..errors import MCPError, ProtocolError, RPCError, Timeout
from ..logs import get_logger
from ..session import ProgressCallback

log = get_logger(__name__)

#: How many input_required rounds one call may take before giving up.
MAX_INPUT_ROUNDS = 10


def probe(client: Any, timeout: Optional[float]) -> Optional[dict]:
    """Ask ``server/discover`` first (spec 2026-07-28 "era detection"); the result, or None for a
    handshake-era server. Only a recognised modern error is final."""
    client.modern = True
    try:
        result = client.session.request("server/discover", {"_meta": client._meta()},
                                        timeout=min(timeout or client.session.timeout, 10.0))
    except RPCError as exc:
        supported = exc.data.get("supported") if exc.code == -32022 and isinstance(exc.data, dict) else None
        if isinstance(supported, list) and MODERN_VERSION in supported:
            # spec 2026-07-28 basic/versioning: retry with a version the server lists
            return probe_again(client, timeout)
        client.modern = False
        if exc.code in (-32020, -32021) or client.protocol == MODERN_VERSION:
            raise ProtocolError(f"the server does not speak {MODERN_VERSION}: {exc}") from exc
        log.debug("server/discover failed (%s): using the initialize handshake", exc)
        return None
    except Timeout as exc:  # some handshake-era servers ignore unknown methods before initialize
        client.modern = False
        if client.protocol == MODERN_VERSION:
            raise ProtocolError(f"the server does not speak {MODERN_VERSION}: {exc}") from exc
        log.debug("server/discover timed out: using the initialize handshake")
        return None
    versions = result.get("supportedVersions") if isinstance(result, dict) else None
    if not isinstance(versions, list) or MODERN_VERSION not in versions:  # garbage, or legacy only
        client.modern = False
        if client.protocol == MODERN_VERSION:
            raise ProtocolError(f"the server supports {versions}, not {MODERN_VERSION}")
        return None
    client.protocol_version = MODERN_VERSION
    client.server_info = (result.get("_meta") or {}).get(SERVER_INFO_KEY) or {}
    client.server_capabilities = result.get("capabilities") or {}
    client.instructions = result.get("instructions")
    client.session.transport.negotiated(MODERN_VERSION)
    client._relisten()  # list-change callbacks need a listen request in this era
    return result

def probe_again(client: Any, timeout: Optional[float]) -> Optional[dict]:
    if client._probed_twice:
        client.modern = False
        raise ProtocolError(f"the server refuses {MODERN_VERSION} yet lists it as supported")
    client._probed_twice = True
    return probe(client, timeout)

def call(client: Any, method: str, params: Optional[dict] = None, *, timeout: Optional[float] = None,
          on_progress: Optional[ProgressCallback] = None, max_timeout: Optional[float] = None) -> Any:
    """Send a request; on a 2026-07-28 server add ``_meta``, answer ``input_required``
    rounds, and keep results the server says may be cached."""
    if not client.modern:
        return client.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                    max_timeout=max_timeout)
    params = dict(params or {})
    key = (method, params.get("cursor"), params.get("uri"))
    cached = client._cache.get(key)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    params["_meta"] = {**(params.get("_meta") or {}), **client._meta()}
    for _ in range(MAX_INPUT_ROUNDS):
        try:
            result = client.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                          max_timeout=max_timeout)
        except RPCError as exc:
            # spec 2026-07-28 basic/transports: a -32020 about Mcp-Param-* headers means
            # our tool list is stale: refresh it (it says which headers to send) and retry.
            if exc.code != -32020 or method != "tools/call":
                raise
            client.list_tools(timeout=timeout)
            result = client.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                          max_timeout=max_timeout)
        kind = result.get("resultType", "complete")  # missing means complete (older servers)
        if kind == "complete":
            ttl = result.get("ttlMs")
            if method in CACHEABLE and "inputResponses" not in params and isinstance(ttl, int) and ttl > 0:
                client._cache[key] = (time.monotonic() + ttl / 1000, result)
            return result
        if kind != "input_required":
            raise ProtocolError(f"the server answered {method} with an unknown resultType {kind!r}")
        # spec 2026-07-28 basic/patterns/mrtr: answer each, retry with a new id and the state
        params = dict(params, inputResponses={k: answer_input(client, r) for k, r in
                                              (result.get("inputRequests") or {}).items()})
        params.pop("requestState", None)
        if "requestState" in result:
            params["requestState"] = result["requestState"]
    raise ProtocolError(f"{method}: the server still wanted input after {MAX_INPUT_ROUNDS} rounds")

def answer_input(client: Any, request: dict) -> dict:
    method, params = request.get("method"), request.get("params") or {}
    answer = {"sampling/createMessage": client._answer_sampling, "elicitation/create": client._answer_elicitation,
              "roots/list": client._answer_roots}.get(method)
    if answer is None:
        raise ProtocolError(f"the server asked for input of an unknown kind: {method!r}")
    try:
        return answer(params, None)
    except MCPError:
        raise
    except Exception as exc:  # the call fails here, with the cause; the server holds nothing
        raise MCPError(f"the {method} handler failed: {exc}") from exc


class Listener:
    """An open ``subscriptions/listen`` request, on a thread of its own; ``close()`` ends it.

    Made by :meth:`Client.listen`, which returns once the server acknowledged
    it (``acknowledged`` holds the filters the server honours), so nothing
    sent after that is missed.
    """

    def __init__(self, client: Any, filters: dict, timeout: float = 10.0) -> None:
        from ..threads import start_thread

        self.client, self.filters = client, filters
        self.acknowledged: Optional[dict] = None
        self.ready = threading.Event()
        self.request_id = client.session.new_request_id()
        previous, client._listener = client._listener, self
        self._thread = start_thread(self._run, "listen")
        if not self.ready.wait(timeout):
            log.warning("the server did not acknowledge subscriptions/listen within %ss", timeout)
        if previous is not None and previous is not self:
            previous.close()

    def _run(self) -> None:
        try:
            params = {"notifications": self.filters, "_meta": self.client._meta()}
            self.client.session.request("subscriptions/listen", params, timeout=365 * 86400.0,
                                        request_id=self.request_id)
        except Exception as exc:  # cancelled by close(), or the connection ended
            log.debug("listen request ended: %s", exc)

    def close(self) -> None:
        """End the listen request (``notifications/cancelled``, or closing its HTTP stream)."""
        self.ready.set()
        self.client.session.cancel(self.request_id, "the client stopped listening")
        from ..threads import join

        join(self._thread, 5.0)

    def __repr__(self) -> str:
        return f"<Listener {self.filters!r}>"
