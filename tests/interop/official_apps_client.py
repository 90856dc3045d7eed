"""The official MCP Python SDK's client as an MCP Apps host, against a minimcp server (run in the
SDK's venv): ``python official_apps_client.py MODE DECLARE COMMAND...``.

MODE is the SDK's ``mode`` (``legacy``: the initialize handshake; ``auto``: 2026-07-28 when the
server speaks it); DECLARE is ``yes`` to declare the ``io.modelcontextprotocol/ui`` extension
(as a host that renders views does), ``no`` not to. It starts COMMAND over stdio, lists the
tools and the resources, reads every ``ui://`` resource a tool names, calls each tool with no
arguments, and prints one JSON object of what it saw, as the SDK parsed it.
"""

import asyncio
import json
import sys

from mcp.client import Client, advertise
from mcp.client.stdio import StdioServerParameters

EXTENSION, MIME_TYPE = "io.modelcontextprotocol/ui", "text/html;profile=mcp-app"


async def main(mode: str, declare: bool, command: list) -> None:
    extensions = [advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})] if declare else None
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(server, mode=mode, extensions=extensions) as client:
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)
        tools = (await client.list_tools()).tools
        resources = (await client.list_resources()).resources
        views = {}
        for uri in sorted({(tool.meta or {}).get("ui", {}).get("resourceUri") for tool in tools} - {None}):
            read = await client.read_resource(uri)
            views[uri] = [item.model_dump(by_alias=True, exclude_none=True) for item in read.contents]
        calls = {}
        for tool in tools:
            result = await client.call_tool(tool.name, {})
            calls[tool.name] = {"isError": result.is_error, "structuredContent": result.structured_content}
        seen = {"protocolVersion": client.protocol_version,
                "extensions": capabilities.get("extensions"),
                "tools": {tool.name: tool.meta for tool in tools},
                "resources": [resource.model_dump(by_alias=True, exclude_none=True) for resource in resources],
                "views": views, "calls": calls}
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] == "yes", sys.argv[3:]))
