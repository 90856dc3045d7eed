"""The stateless protocol, 2026-07-28, as data: what a request carries in ``_meta``.

spec 2026-07-28 basic (digest base.md §9). There is no handshake: every
request names its protocol version and the client's capabilities in
``params._meta``, and the server reads them from that request alone. A
server never sends the client a request; when a handler needs the client
(sampling, elicitation, roots) it answers ``input_required`` instead, and
the client calls again with the answers (multi round-trip requests, MRTR).

This module holds the names and shapes both sides agree on; the server side
is :mod:`minimcp.server.stateless`, the client side :mod:`minimcp.client.stateless`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, Optional

from ..errors import RPCError
from .jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION
from .versions import STATELESS_VERSION, SUPPORTED_VERSIONS

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
#: The tasks extension (SEP-2663): server/tasks.py, client/tasks.py.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

#: Only these may answer input_required (spec 2026-07-28 basic/patterns/mrtr).
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
#: The body field each request's ``Mcp-Name`` header mirrors (spec 2026-07-28 basic/transports;
#: the tasks extension's "Routing Headers" adds the task id of ``tasks/*``).
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
               "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
#: Results that carry cache hints (spec 2026-07-28 server/utilities/caching).
CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
             "resources/read")


def stateless_version(params: Optional[Dict[str, Any]]) -> Optional[str]:
    """The version a request's ``_meta`` asks for, or None for a handshake-era request."""
    meta = params.get("_meta") if params else None
    return meta.get(VERSION_KEY) if type(meta) is dict else None


class RequestMeta:
    """What one stateless-era request says about its client (spec 2026-07-28 basic "Request metadata")."""

    __slots__ = ("version", "capabilities", "client_info", "log_level")

    def __init__(self, params: Dict[str, Any]) -> None:
        meta = params.get("_meta")
        if type(meta) is not dict or not isinstance(meta.get(VERSION_KEY), str):
            raise RPCError(INVALID_PARAMS, f"Invalid params: _meta[{VERSION_KEY!r}] is required")
        self.version: str = meta[VERSION_KEY]
        if self.version != STATELESS_VERSION:
            raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {self.version}",
                           {"supported": list(SUPPORTED_VERSIONS), "requested": self.version})
        capabilities = meta.get(CAPABILITIES_KEY)
        if type(capabilities) is not dict:
            raise RPCError(INVALID_PARAMS, f"Invalid params: _meta[{CAPABILITIES_KEY!r}] (an object) is required")
        if not capabilities.keys().isdisjoint(CLIENT_CAPABILITIES):  # (only a capability we read is checked)
            checked_capabilities(capabilities, f"_meta[{CAPABILITIES_KEY!r}]")
        self.capabilities: Dict[str, Any] = capabilities
        info = meta.get(CLIENT_INFO_KEY)
        self.client_info: Dict[str, Any] = info if type(info) is dict else {}  # optional: never trusted anyway
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None and not isinstance(level, str):
            raise RPCError(INVALID_PARAMS, f"Invalid params: _meta[{LOG_LEVEL_KEY!r}] must be a string, not {level!r}")
        self.log_level: Optional[str] = level

    def __repr__(self) -> str:
        return f"RequestMeta(version={self.version!r}, capabilities={self.capabilities!r})"


#: The client capabilities a server reads into (spec schema ClientCapabilities): each is an object.
CLIENT_CAPABILITIES = ("roots", "sampling", "elicitation", "experimental", "tasks")


def checked_capabilities(capabilities: Any, where: str) -> Dict[str, Any]:
    """``capabilities`` if it is the object the spec says (each capability we read an object too).

    Raises:
        RPCError: -32602 naming the field that is not an object.
    """
    if type(capabilities) is not dict:
        raise RPCError(INVALID_PARAMS, f"Invalid params: {where} must be an object, not {capabilities!r}")
    for name in CLIENT_CAPABILITIES:
        value = capabilities.get(name)
        if value is not None and type(value) is not dict:
            raise RPCError(INVALID_PARAMS, f"Invalid params: {where}.{name} must be an object, not {value!r}")
    return capabilities


def missing_capability(capability: str) -> RPCError:
    """The -32021 error for a request that did not declare what its handler needs."""
    return RPCError(MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Missing required client capability: {capability}",
                    {"requiredCapabilities": {capability: {}}})


class InputRequired(Exception):
    """Raised inside a handler (by ``ctx.elicit`` and friends) when it needs the client's answers."""

    def __init__(self, requests: Dict[str, Dict[str, Any]]) -> None:
        super().__init__(f"input required: {sorted(requests)}")
        self.requests = requests

