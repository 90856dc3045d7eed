"""A gateway: one MCP server in front of three others, their tools, resources and prompts served as its own.

    python examples/proxy.py                 # serves stdio; start it from a client
    python examples/proxy.py --http 8000     # Streamable HTTP at http://127.0.0.1:8000/mcp

Each server is mounted under a prefix: ``weather__get_weather``, ``kb__search``,
``kb+kb://index``, ``clock__now``. A question an upstream server asks (sampling, elicitation,
roots) goes to whoever called the gateway, as do its progress and log messages; cancelling a
call cancels it upstream. The same thing from the shell, for a host config file:
``minimcp proxy --transport http --config .mcp.json``.
"""

import os
import sys
import time

from minimcp import Server
from minimcp.integrations.proxy import ProxyServer

HERE = os.path.dirname(os.path.abspath(__file__))

clock = Server("clock")  # a server in this process: mounted without a connection of its own to a child


@clock.tool()
def now() -> str:
    """The time on the gateway's machine."""
    return time.strftime("%H:%M:%S")


gateway = ProxyServer("gateway", version="1.0.0", start_timeout=10.0)
gateway.mount("weather", [sys.executable, os.path.join(HERE, "weather_server.py")])  # a stdio server
gateway.mount("kb", [sys.executable, os.path.join(HERE, "knowledge_base.py")])
gateway.mount("clock", clock)
# gateway.mount("docs", "https://example.com/mcp")   # a remote one: Streamable HTTP
# gateway.mount("files", "filesystem", config=".mcp.json")   # one from a host's config file

if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        gateway.run("http", port=int(sys.argv[2]))
    else:
        gateway.run()  # connects the three (in parallel), serves stdio, closes them at the end
