"""minimcp: the Model Context Protocol for plain Python, with threads and blocking calls.

Call a tool from a script::

    import minimcp

    with minimcp.connect(["python", "examples/weather_server.py"]) as client:
        print(client.call_tool("get_weather", {"city": "Kraków"}).text)

Write a server in one file::

    from minimcp import Server

    server = Server("weather")

    @server.tool()
    def get_weather(city: str) -> str:
        '''Get the current weather for a city.'''
        return f"{city}: sunny"

    server.run()

This module is the table of contents: the names in ``__all__`` are the
public API. ``minimcp.protocol``, ``minimcp.engine.session`` and
``minimcp.transports`` are there for people who build on the layers below;
ARCHITECTURE.md (in the repository) maps every folder.
"""

from __future__ import annotations

from .errors import (
    BackendUnavailable,
    CapabilityError,
    ConfigError,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RPCError,
    ServerNotFound,
    ServerStartError,
    Timeout,
    ToolError,
    Unauthorized,
)
from .protocol.versions import PROTOCOL_VERSION
from .protocol.versions import SDK_VERSION as __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .client.client import Client
    from .client.connect import connect
    from .server.content import Audio, EmbeddedResource, Image, Message, ResourceLink
    from .server.redis_backend import RedisBackend
    from .server.server import Context, Server

def __getattr__(name: str) -> Any:
    """The public names of the client and server sides, each imported when first asked for: a
    server loads no client module and a client no server module (start-up time is import time;
    ``importlib`` is not used for it, as it would import ``warnings``)."""
    if name in ("Server", "Context"):
        from .server.server import Context, Server

        value: Any = Server if name == "Server" else Context
    elif name in ("Image", "Audio", "ResourceLink", "EmbeddedResource", "Message"):
        from .server import content

        value = getattr(content, name)
    elif name == "RedisBackend":
        from .server.redis_backend import RedisBackend as value
    elif name == "Client":
        from .client.client import Client as value
    elif name == "connect":
        from .client.connect import connect as value
    else:
        raise AttributeError(f"module 'minimcp' has no attribute {name!r}")
    globals()[name] = value  # (asked once: the module's own attribute from then on)
    return value


__all__ = (
    "connect", "Client", "Server", "Context", "RedisBackend",
    "MCPError", "RPCError", "ConnectionClosed", "Timeout", "ToolError", "ProtocolError", "CapabilityError",
    "ServerNotFound", "ConfigError", "ServerStartError", "Unauthorized", "BackendUnavailable",
    "Image", "Audio", "ResourceLink", "EmbeddedResource", "Message",
    "PROTOCOL_VERSION", "__version__",
)
