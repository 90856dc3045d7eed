"""A stdio server with tools made to test the edges: slow, crashing, printing, huge.

Usage: python testing_server.py [--banner] [--slow-watch] [--all-quick]

--banner prints a non-JSON line to stdout first; --slow-watch makes the reading threads' watch
tick once an hour, so only what lets the reading go at once can do so; --all-quick makes every
kind of call one that runs on the reading thread, once it has been timed (engine.reading.Readers).
"""

import os
import sys
import threading
import time

from minimcp import Context, Server, ToolError

server = Server("testing", version="0.0.1")
_echoed = threading.Condition()  # wait_for_echo waits on it for an echo (and nap counts under it)
_echo_texts = set()  # the texts echoed so far
_napping = _most_napping = 0  # naps running now, and the most that ran at once


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    with _echoed:
        _echo_texts.add(text)
        _echoed.notify_all()
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def wait_for_cancel(seconds: float, ctx: Context) -> str:
    """Block until cancelled (or `seconds` pass); report the start, and which, on stderr."""
    print(f"waiting {ctx.request_id}", file=sys.stderr, flush=True)
    if ctx.cancelled.wait(seconds):
        print(f"cancelled {ctx.request_id}", file=sys.stderr, flush=True)
        return "cancelled"
    return "finished"


@server.tool()
def crash(code: int = 3) -> str:
    """Exit the whole server process at once, mid-call."""
    print("about to crash", file=sys.stderr, flush=True)
    os._exit(code)


@server.tool()
def leave(code: int = 3) -> str:
    """Call sys.exit(), which on a handler thread ends only this call."""
    sys.exit(code)


@server.tool()
def noisy(text: str) -> str:
    """print() to stdout (which must not reach the wire) and return the text."""
    print("this goes to stderr, not the protocol stream")
    sys.stdout.write("so does this\n")
    os.write(1, b"and even a raw write to fd 1\n")
    return text


@server.tool()
def fail(message: str) -> str:
    """Raise an ordinary exception."""
    raise RuntimeError(message)


@server.tool()
def refuse(message: str) -> str:
    """Raise a ToolError."""
    raise ToolError(message)


@server.tool()
def big(size: int) -> str:
    """Return a string of `size` characters."""
    return "x" * size


@server.tool()
def count(n: int, ctx: Context) -> str:
    """Report progress n times."""
    for i in range(n):
        ctx.report_progress(i + 1, total=n, message=f"step {i + 1}")
    return f"counted {n}"


@server.tool()
def roots_count(ctx: Context) -> int:
    """Ask the client for its roots (a request to the client, mid-call); return how many."""
    return len(ctx.list_roots(timeout=10))


@server.tool()
def wait_for_echo(text: str, ctx: Context) -> str:
    """Block until an echo of `text` has been called meanwhile (or 10 s pass); say so on stderr."""
    print(f"waiting for {text}", file=sys.stderr, flush=True)
    with _echoed:
        found = _echoed.wait_for(lambda: text in _echo_texts, 10)
    return "seen" if found else "not seen"


@server.tool()
def nap(ms: float) -> int:
    """Sleep `ms` milliseconds; return how many naps ran at once at most, so far."""
    global _napping, _most_napping
    with _echoed:
        _napping += 1
        _most_napping = max(_most_napping, _napping)
    time.sleep(ms / 1000)
    with _echoed:
        _napping -= 1
        return _most_napping


@server.tool()
def add_tool_later(name: str, ms: float) -> str:
    """Register a tool `name` `ms` milliseconds after answering: the client hears of it
    (notifications/tools/list_changed) between calls, with no request of its own."""
    def add() -> None:
        def added() -> str:
            """A tool added late."""
            return name

        server.add_tool(added, name=name)

    timer = threading.Timer(ms / 1000, add)
    timer.daemon = True
    timer.start()
    return "later"


@server.tool()
def thread_count() -> int:
    """How many threads the server runs now."""
    return threading.active_count()


if __name__ == "__main__":
    if "--banner" in sys.argv:
        sys.stdout.write("Welcome to the testing server!\n")
        sys.stdout.flush()
    import minimcp.engine.reading
    if "--slow-watch" in sys.argv:
        minimcp.engine.reading.WATCH_TICK = 3600.0
    if "--all-quick" in sys.argv:
        minimcp.engine.reading.QUICK = 3600.0
    server.run()
