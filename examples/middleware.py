"""Middleware: code that wraps every request, written once, over every transport.

Run it::

    python examples/middleware.py

It starts itself as a stdio server (``--serve``) and calls it. The server's middleware
times each request and logs it (to stderr: a stdio server's stdout is the wire), and refuses
a tool call past a rate limit; the client's middleware counts what it sends. The same two
functions would see the same requests over Streamable HTTP, WebSocket or in memory.
"""

import collections
import logging
import sys
import time

import minimcp
from minimcp import Server
from minimcp.errors import RPCError

log = logging.getLogger("timing")

# -- the server side -------------------------------------------------------------------------

server = Server("calculator")


@server.add_middleware
def timing(request, call_next):
    """Log each request the server answers, with its tool and how long it took."""
    started = time.perf_counter()
    try:
        return call_next(request)
    finally:
        name = request.params.get("name") if request.method == "tools/call" else None
        took = (time.perf_counter() - started) * 1000
        log.info("%s%s took %.2f ms", request.method, f" {name}" if name else "", took)


CALLS_ALLOWED = 3
calls_made = collections.Counter()


@server.add_middleware
def rate_limit(request, call_next):
    """Refuse a tool call past CALLS_ALLOWED per tool (a JSON-RPC error the client can read)."""
    if request.method == "tools/call" and not request.outgoing:
        tool = request.params.get("name")
        calls_made[tool] += 1
        if calls_made[tool] > CALLS_ALLOWED:
            raise RPCError(-32000, f"rate limit: {tool} may be called {CALLS_ALLOWED} times")
    return call_next(request)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


# -- the client side -------------------------------------------------------------------------

def main() -> None:
    sent = collections.Counter()

    def count(request, call_next):
        if request.outgoing:
            sent[request.method] += 1
        return call_next(request)

    with minimcp.connect([sys.executable, __file__, "--serve"], middleware=[count]) as client:
        for n in range(CALLS_ALLOWED + 1):
            try:
                print(f"add({n}, 1) = {client.call_tool('add', {'a': n, 'b': 1}).structured['result']}")
            except RPCError as exc:
                print(f"add({n}, 1) refused: {exc.message}")
    print("the client sent:", ", ".join(f"{method} x{n}" for method, n in sorted(sent.items())))


if __name__ == "__main__":
    if "--serve" in sys.argv:
        logging.basicConfig(level=logging.INFO, format="server: %(message)s")  # stderr
        server.run()
    else:
        main()
