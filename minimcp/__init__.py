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

__version__ = "0.1.0"

from .errors import (  # noqa: E402
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
from .protocol.versions import PROTOCOL_VERSION  # noqa: E402
from .server.content import Audio, EmbeddedResource, Image, Message, ResourceLink  # noqa: E402
from .server.server import Context, Server  # noqa: E402

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .client.client import Client
    from .client.connect import connect


def __getattr__(name: str) -> Any:
    # The client side loads on first use, so a stdio server starts without it
    # (start-up time is import time: see benchmarks/).
    if name == "Client":
        from .client.client import Client

        return Client
    if name == "connect":
        from .client.connect import connect

        return connect
    raise AttributeError(f"module 'minimcp' has no attribute {name!r}")

__all__ = (
    "connect", "Client", "Server", "Context",
    "MCPError", "RPCError", "ConnectionClosed", "Timeout", "ToolError", "ProtocolError", "CapabilityError",
    "ServerNotFound", "ConfigError", "ServerStartError", "Unauthorized",
    "Image", "Audio", "ResourceLink", "EmbeddedResource", "Message",
    "PROTOCOL_VERSION", "__version__",
)
