"""The server side: a :class:`Server` registry of tools, resources and prompts, and how a
connection answers them.

- :mod:`~minimcp.server.server`: :class:`Server`, the registry, its middleware and ``run()``;
- :mod:`~minimcp.server.methods`: the MCP method table, with the era each method belongs to;
- :mod:`~minimcp.server.connection`: one client's connection, one method per MCP request;
- :mod:`~minimcp.server.context`: :class:`Context`, what a handler gets;
- :mod:`~minimcp.server.tools`, :mod:`~minimcp.server.resources`, :mod:`~minimcp.server.prompts`:
  one registered function each, its definition and one call;
- :mod:`~minimcp.server.schema`: JSON Schema from a Python signature;
  :mod:`~minimcp.server.validation`: the argument checks;
- :mod:`~minimcp.server.content`: return values into MCP content;
- :mod:`~minimcp.server.logbridge`: ``logging`` records to the client;
- :mod:`~minimcp.server.stateless`: the stateless-era (2026-07-28) server side (discover,
  listen), loaded with the first such request; :mod:`~minimcp.server.state`: its signed
  request state;
- :mod:`~minimcp.server.tasks`, :mod:`~minimcp.server.skills`, :mod:`~minimcp.server.apps`: the
  tasks, skills and MCP Apps (``io.modelcontextprotocol/ui``) extensions;
- :mod:`minimcp.server.http`: the server over HTTP (a WSGI app, the built-in server);
  :mod:`minimcp.server.auth`: the server as an OAuth resource server.
"""

from .server import Context, Server

__all__ = ["Server", "Context"]
