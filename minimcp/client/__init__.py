"""The client side: :func:`connect`, the :class:`Client` and what its calls return.

- :mod:`~minimcp.client.connect`: ``connect(target)`` picks the transport;
- :mod:`~minimcp.client.client`: :class:`Client`, one method per MCP call;
- :mod:`~minimcp.client.stateless`: :class:`StatelessSide`, the 2026-07-28 client side;
- :mod:`~minimcp.client.answers`: what the client answers when the server asks (sampling, elicitation, roots);
- :mod:`~minimcp.client.results`: the result types (``Tool``, ``ToolResult`` ...);
- :mod:`~minimcp.client.config`: host config files (Claude Desktop, Cursor, VS Code ...), read;
- :mod:`minimcp.client.auth`: OAuth 2.1 for the client (the flows ``auth=`` takes).

Built on the client, in :mod:`minimcp.integrations`: many servers as one tool list, and tool
calls in the shapes LLM APIs use.
"""

from .client import Client
from .connect import connect
from .results import Completion, Prompt, PromptResult, Resource, ResourceResult, ResourceTemplate, Tool, ToolResult

__all__ = ["connect", "Client", "Tool", "ToolResult", "Resource", "ResourceTemplate", "ResourceResult",
           "Prompt", "PromptResult", "Completion"]
