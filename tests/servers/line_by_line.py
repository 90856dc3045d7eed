"""The scenario of docs/explanation/protocol-line-by-line.md: a server, and a client that runs it.

``python tests/servers/line_by_line.py`` serves over stdio. With ``--client VERSION``
it is the client instead: it starts itself as the server, speaks ``VERSION``
(``2025-11-25``: the initialize handshake; ``2026-07-28``: no handshake) with the trace
on, and makes the calls the page walks through, one after the other: list the tools,
a call with progress, a call whose tool asks the client's model (sampling), a call
that times out and is cancelled, and the close. tests/test_trace.py runs it and checks
that the page still shows what the trace prints.
"""

import sys

from minimcp import Context, Server, Timeout, connect

server = Server("line-by-line", version="1.0.0")


@server.tool()
def count(to: int, ctx: Context) -> str:
    """Count to a number, reporting progress at each step."""
    for step in range(1, to + 1):
        ctx.report_progress(step, to, f"step {step}")
    return f"counted to {to}"


@server.tool()
def haiku(topic: str, ctx: Context) -> str:
    """Ask the client's model for a haiku about a topic."""
    reply = ctx.sample(f"A haiku about {topic}, please.", max_tokens=60)
    return reply["content"]["text"]


@server.tool()
def wait(ctx: Context) -> str:
    """Wait until cancelled (at most a minute)."""
    return "cancelled" if ctx.cancelled.wait(60) else "done waiting"


def write_a_haiku(params: dict) -> dict:
    """The client's model, for this scenario: one fixed haiku."""
    return {"role": "assistant", "model": "fixed", "stopReason": "endTurn",
            "content": {"type": "text", "text": "Rain on the server / each request stands alone / the answer comes back"}}


def run_the_scenario(version: str) -> None:
    """Connect to this file as a server, speaking ``version``, and make the page's calls."""
    with connect([sys.executable, __file__], protocol=version, trace=True,
                 sampling_handler=write_a_haiku) as client:
        client.list_tools()
        client.call_tool("count", {"to": 2}, on_progress=lambda progress, total, message: None)
        client.call_tool("haiku", {"topic": "rain"})
        try:
            client.call_tool("wait", {}, timeout=0.5)
        except Timeout:
            pass


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        run_the_scenario(sys.argv[2])
    else:
        server.run()
