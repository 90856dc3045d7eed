"""An MCP App: a tool that comes with a view. The model calls ``show_counter``; the host renders
``mcp_app.html`` (the view) with its result; the view's +1 button calls ``increment`` through
the host, a tool only the view may call.

    python examples/mcp_app.py            # a client that looks at the app as a host does; it starts the server itself
    python examples/mcp_app.py --server   # the server alone, on stdio: install it into a host that renders apps
    minimcp read ui://counter/view.html -o view.html -- python examples/mcp_app.py --server   # the view, to open

The extension is ``io.modelcontextprotocol/ui`` (MCP Apps, SEP-1865). A host that does not
render views (or a client that does not declare the extension) sees ``show_counter`` as an
ordinary tool, whose text says the count, and never sees ``increment``.
"""

import sys
import threading
from pathlib import Path

import minimcp
from minimcp import Server

VIEW = "ui://counter/view.html"

server = Server("counter")
count = 0
lock = threading.Lock()


@server.ui_resource(VIEW, prefers_border=True)
def counter_view() -> str:
    """The counter: the count and a +1 button."""
    return Path(__file__).with_name("mcp_app.html").read_text(encoding="utf-8")


@server.ui_tool(VIEW)
def show_counter() -> dict:
    """Show the counter, with a button to count."""
    return {"count": count}


@server.ui_tool(VIEW, visibility=["app"])
def increment(by: int = 1) -> dict:
    """Add `by` to the counter (the view's +1 button)."""
    global count
    with lock:
        count += by
        return {"count": count}


def main() -> None:
    command = [sys.executable, __file__, "--server"]
    with minimcp.connect(command, apps=True) as client:  # as a host that renders views
        print(f"connected to {client.server_info['name']} (protocol {client.protocol_version})")
        for tool in client.list_tools():
            print(f"  tool {tool.name}: view {tool.ui_resource_uri}, called by {' and '.join(tool.visibility)}")
        view = client.read_app(VIEW)
        print(f"the view {view.uri}: {len(view.html.splitlines())} lines of HTML, prefersBorder={view.prefers_border}")
        print(f"the model calls show_counter: {client.call_tool('show_counter').structured}")
        print(f"the view's button calls increment: {client.call_tool('increment', {'by': 1}).structured}")
    with minimcp.connect(command) as client:  # a client that renders no view
        print(f"a client without views sees: {', '.join(tool.name for tool in client.list_tools())}")


if __name__ == "__main__":
    if "--server" in sys.argv:
        server.run()
    else:
        main()
