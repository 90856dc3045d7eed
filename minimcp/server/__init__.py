"""The server side: a :class:`Server` registry of tools, resources and prompts, and how a
connection answers them.

- :mod:`~minimcp.server.server`: :class:`Server`, the registry and ``run()``;
- :mod:`~minimcp.server.connection`: one client's connection and the MCP method table;
- :mod:`~minimcp.server.tools`, :mod:`~minimcp.server.resources`, :mod:`~minimcp.server.prompts`:
  one registered function each, its definition and one call;
- :mod:`~minimcp.server.schema`: JSON Schema from a Python signature, and argument checks;
- :mod:`~minimcp.server.content`: return values into MCP content;
- :mod:`~minimcp.server.logbridge`: ``logging`` records to the client;
- :mod:`~minimcp.server.stateless`: the 2026-07-28 server side (discover, listen), loaded with
  the first 2026-07-28 request; :mod:`~minimcp.server.state`: its signed request state.
"""

from .server import Context, Server

__all__ = ["Server", "Context"]
