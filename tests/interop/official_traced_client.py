"""The official MCP Python SDK's client, traced, against a server over stdio (run in the SDK's venv)::

    SDK_PYTHON official_traced_client.py SPANS.json SERVER_COMMAND...

Within a span of its own (``official root``) it lists the tools, calls ``echo`` and calls
``missing`` (a JSON-RPC error); every span its process made is written to SPANS.json at exit
(tests/interop/otel_spans.py), and the tool's answer is printed.
"""

import asyncio
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from opentelemetry import trace
from otel_spans import record_spans


async def main(command):
    tracer = trace.get_tracer("interop")
    with tracer.start_as_current_span("official root"):
        async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
            await client.list_tools()
            result = await client.call_tool("echo", {"text": "traced"})
            print(result.content[0].text, flush=True)
            try:
                await client.call_tool("missing", {})
            except Exception as exc:  # the SDK's MCPError: the JSON-RPC error the server answered
                print(f"missing: {type(exc).__name__}", flush=True)


if __name__ == "__main__":
    record_spans(sys.argv[1])
    asyncio.run(main(sys.argv[2:]))
