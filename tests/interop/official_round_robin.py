"""The official MCP Python SDK's client against several minimcp workers behind a round-robin
balancer (run in the SDK's venv): ``python official_round_robin.py URL CALLS``.

Its requests land on every worker in turn; it lists the tools once and calls ``whoami``
``CALLS`` times, then prints one JSON object: the tool names and the worker pids that answered.
"""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, calls: int) -> None:
    async with Client(streamable_http_client(url)) as client:
        tools = await client.list_tools()
        pids = []
        for _ in range(calls):
            result = await client.call_tool("whoami", {})
            pids.append(int(result.content[0].text))
    print(json.dumps({"tools": sorted(tool.name for tool in tools.tools), "pids": pids}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
