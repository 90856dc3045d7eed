"""The official SDK's client contender: ``ClientSession`` over ``stdio_client``, asyncio.

Same command line and protocol as ``raw_client.py``; the loop is the async
twin of ``run_blocks`` there (same warm-up, same clocks). Reading the
driver's next command blocks the event loop, on purpose: between blocks
no call is in flight, and a thread for it would cost CPU in the loop.
"""

import asyncio
import json
import os
import sys
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from raw_client import parse_args, summarize  # noqa: E402


async def run(warmup, text, command):
    server = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(warmup):
                await session.call_tool("echo", {"text": text})
            result = await session.call_tool("echo", {"text": text})
            if result.content[0].text != text:
                raise RuntimeError("the echo tool answered something else")
            latencies = []
            cpu = wall = 0.0
            clock, cpu_clock, append = time.perf_counter, time.process_time, latencies.append
            print("ready", flush=True)
            for line in sys.stdin:
                if line.strip() == "end":
                    break
                cpu0, wall0 = cpu_clock(), clock()
                for _ in range(int(line)):
                    t0 = clock()
                    await session.call_tool("echo", {"text": text})
                    append(clock() - t0)
                wall += clock() - wall0
                cpu += cpu_clock() - cpu0
                print("ok", flush=True)
    return summarize(latencies, cpu, wall)


def main():
    report = asyncio.run(run(*parse_args(sys.argv[1:])))
    report["version"] = f"mcp {version('mcp')}"
    print(json.dumps(report), flush=True)


main()
