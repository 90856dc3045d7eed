"""The transports: ways to move whole JSON-RPC messages between two peers.

Each implements :class:`~minimcp.engine.transport.Transport` (``read``, ``write``,
``close``; the engine's interface, re-exported here for whoever writes a transport).
The modules here: ``stdio`` (this process's own stdin/stdout, or any pair of
byte streams), ``child`` (a server started as a child process), ``memory`` (an
in-process pair, for tests and embedding) and ``websocket``; the HTTP transports
live in :mod:`minimcp.transports.http` (the client's) and :mod:`minimcp.server.http` (the server's).
"""

from ..engine.transport import Failed, Transport

__all__ = ["Failed", "Transport"]
