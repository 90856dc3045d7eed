"""A stdio server mixing ``async def`` and plain handlers, as someone coming from FastMCP writes it."""

import asyncio
import threading

from minimcp import Context, Server

server = Server("async-mix", version="1.0.0")
cancelled = threading.Event()  # set when wait_forever's coroutine saw its cancellation


@server.tool()
async def fetch(city: str, delay: float = 0.0) -> dict:
    """Look a city up, the async way."""
    await asyncio.sleep(delay)
    results = await asyncio.gather(asyncio.sleep(0, "sunny"), asyncio.sleep(0, 21))
    return {"city": city, "sky": results[0], "celsius": results[1]}


@server.tool()
async def wait_forever(ctx: Context) -> str:
    """Wait until cancelled."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.tool()
def was_cancelled(within: float) -> bool:
    """A plain tool: did wait_forever's coroutine get its CancelledError?"""
    return cancelled.wait(within)


@server.resource("async://{name}")
async def note(name: str) -> str:
    """A note, read asynchronously."""
    await asyncio.sleep(0)
    return f"note {name}"


async def complete_topic(value: str) -> list:
    await asyncio.sleep(0)
    return [t for t in ("asyncio", "threads", "trio") if t.startswith(value)]


@server.prompt(complete={"topic": complete_topic})
async def explain(topic: str) -> str:
    """Ask for an explanation."""
    await asyncio.sleep(0)
    return f"Explain {topic}."


if __name__ == "__main__":
    server.run()
