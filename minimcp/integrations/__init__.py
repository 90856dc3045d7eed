"""What is built on the public client, for the programs around MCP.

- :mod:`~minimcp.integrations.hub`: :class:`~minimcp.integrations.hub.ToolHub`, the tools of
  several servers as one list (and one server);
- :mod:`~minimcp.integrations.adapters`: tool definitions, calls and results in the shapes the
  Anthropic and OpenAI APIs use;
- :mod:`~minimcp.integrations.hosts`: writing a server into the config files of MCP hosts
  (Claude Desktop, Cursor, VS Code ...); reading them is :mod:`minimcp.client.config`.
"""
