"""The client's introduction: which era the server is in, and what it said about itself.

With ``protocol="auto"`` (or ``"2026-07-28"``) the client asks ``server/discover``
first (spec 2026-07-28 "era detection"); a handshake-era server gets the handshake
(spec basic/lifecycle "Initialization"): ``initialize``, the server's choice of
version, then ``notifications/initialized``. :meth:`Client.initialize` is the way in.
"""

import time
from typing import Any, Dict, Optional

from ..errors import ProtocolError, Timeout
from ..protocol.stateless import SERVER_INFO_KEY
from ..protocol.versions import HANDSHAKE_VERSIONS, PROTOCOL_VERSION, STATELESS_VERSION
from . import wire


def introduce(client: Any, timeout: Optional[float]) -> Dict[str, Any]:
    """Run :meth:`Client.initialize` for ``client``: discover or handshake, within ``timeout``."""
    if not client.session.started:
        client.session.start()
    deadline = time.monotonic() + (timeout or client.session.timeout)
    if client.protocol in ("auto", STATELESS_VERSION):
        required = client.protocol == STATELESS_VERSION
        probe = deadline - time.monotonic()
        discovered: Optional[Dict[str, Any]] = client.stateless.discover(probe if required else probe / 2, required=required)
        if discovered is not None:
            meta = wire.field(discovered, "_meta", dict, "the server's answer to server/discover", {})
            _introduced(client, STATELESS_VERSION, meta.get(SERVER_INFO_KEY), discovered)
            client.session.transport.negotiated(STATELESS_VERSION)
            client._relisten()  # list-change callbacks need a listen request in this era
            return discovered
    try:
        result: Dict[str, Any] = client.session.request("initialize", {
            "protocolVersion": client.protocol if client.protocol in HANDSHAKE_VERSIONS else PROTOCOL_VERSION,
            "capabilities": client.capabilities(),
            "clientInfo": client.client_info,
        }, timeout=max(deadline - time.monotonic(), 0.01), cancellable=False)  # never cancelled (spec
        # basic/utilities/cancellation); what the probe left of the deadline
    except Timeout:
        if client.protocol != "auto":
            raise
        # Say the whole wait, not initialize's part of it: the user gave one timeout.
        raise Timeout(f"the handshake got no answer in {timeout or client.session.timeout:.1f}s "
                      "(server/discover, then initialize); is the server slow to start? "
                      "Pass a longer timeout=") from None
    version = wire.field(wire.result("initialize", result), "protocolVersion", str, "initialize")
    if version not in HANDSHAKE_VERSIONS:
        raise ProtocolError(f"the server chose protocol version {version!r}; minimcp speaks "
                            f"{', '.join(HANDSHAKE_VERSIONS)}")
    _introduced(client, version, result.get("serverInfo"), result)
    client.session.notify("notifications/initialized")
    client.session.transport.negotiated(version)
    return result


def _introduced(client: Any, version: str, server_info: Optional[Dict[str, Any]], result: Dict[str, Any]) -> None:
    """Keep what ``initialize`` or ``server/discover`` said about the server."""
    what = f"the server's answer to {'server/discover' if version == STATELESS_VERSION else 'initialize'}"
    client.server_info = wire.obj(server_info, f"{what}: serverInfo") if server_info is not None else {}
    client.server_capabilities = wire.field(result, "capabilities", dict, what, {})
    client.instructions = wire.field(result, "instructions", str, what)
    client.protocol_version = version
