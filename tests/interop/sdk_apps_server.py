"""The official MCP Python SDK (mcp 2.3.0) as an MCP Apps server, for tests/test_apps.py.

    SDK_PYTHON sdk_apps_server.py

Run with the python of a venv that has ``mcp``: serves on stdio, with the SDK's own apps API
(``mcp.server.apps``): a view ``ui://weather/view.html`` with a CSP, a permission and a border
preference, a tool the model calls (``get_weather``) and one only the view calls (``refresh``).
"""

from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions
from mcp.server.mcpserver import MCPServer

VIEW = "ui://weather/view.html"
HTML = "<!doctype html><html><body><p id='sky'>sunny</p><script>/* the view */</script></body></html>"

apps = Apps()


@apps.tool(resource_uri=VIEW, description="The weather, with a view")
def get_weather(city: str = "Paris") -> str:
    return f"{city}: sunny"


@apps.tool(resource_uri=VIEW, visibility=["app"], description="Refresh the view's data")
def refresh() -> str:
    return "refreshed"


apps.add_html_resource(VIEW, HTML, name="weather view",
                       csp=ResourceCsp(connect_domains=["https://api.example.com"]),
                       permissions=ResourcePermissions(clipboard_write={}), prefers_border=False)

server = MCPServer("sdk-apps", extensions=[apps])

if __name__ == "__main__":
    server.run()
