"""A server to pack with ``minimcp bundle`` and list with ``minimcp registry`` (tests/test_ship.py):
tools, prompts, and settings read from the environment in each way the source scan knows."""

import os
from os import environ as ENV
from os import getenv

import minimcp
from minimcp import Server

server = Server("shipped", version="3.2.1", title="Shipped Server", instructions="Tools to test shipping with.")


@server.tool()
def settings() -> dict:
    """Report the settings the server sees, and where minimcp came from.

    A second paragraph, which the manifest leaves out.
    """
    os.environ["SHIPPED_WRITTEN"] = "yes"  # written here, not a setting to ask for
    return {"api_key": os.environ["SHIPPED_API_KEY"], "units": getenv("SHIPPED_UNITS", "c"),
            "region": ENV.get("SHIPPED_REGION"), "debug": "SHIPPED_DEBUG" in ENV,
            "home": bool(os.environ.get("HOME")), "minimcp": os.path.dirname(os.path.abspath(minimcp.__file__))}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.prompt()
def summarize(topic: str, words: int = 50) -> str:
    """Ask for a summary."""
    return f"Summarize {topic} in {words} words."


@server.prompt()
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


if __name__ == "__main__":
    server.run("http", port=int(os.environ["PORT"]))
