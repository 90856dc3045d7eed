"""How many Python frames of minimcp code one steady ``tools/call`` runs through, client and server together.

    python benchmarks/frames.py              # the table; about a second
    python benchmarks/frames.py --verbose    # and every function entered, in order, with its file and thread

Cases: Streamable HTTP on the 2025-11-25 and 2026-07-28 wires, each with ``echo(text)`` and
``echo_ctx(text, ctx: Context)``; stdio with both tools, at the client's default protocol (``auto``, which
is 2026-07-28 against a minimcp server; ``--stdio-protocol 2025-11-25`` for the handshake era).

Over HTTP the server is ``server.wsgi_app()`` served in this process by the standard library's
``wsgiref.simple_server`` (a ``WSGIServer`` with ``ThreadingMixIn``, 127.0.0.1, port 0, on a background
thread) and the client is ``minimcp.connect("http://127.0.0.1:PORT/mcp", protocol=...)``, so one
profiler sees both sides. Over stdio the server is a child process (a small server script written to a
temporary directory) that runs the same profile function on all its threads from its start and writes
what it saw to a file when it exits; the client is counted here, and the figures are client + server.

How it counts: a profile function records each ``'call'`` event (Python frames only, not C calls) whose
``frame.f_code.co_filename`` lies in the imported minimcp package: (time, thread, file, function).
``threading.setprofile`` installs it before the server and client start, so all their threads carry it
(on 3.12+ ``threading.setprofile_all_threads`` also reaches threads started earlier), and
``sys.setprofile`` on the calling thread for the call only; it records only while a flag is up. Each
repeat makes ``--warmup`` calls, then the one measured call, with the flag up from just before it until
``--settle`` seconds (1 ms) after it returned, so that work the server finishes after the answer left is
counted too (and the same pause before it, so that the previous call's is not); the child keeps the events inside that window (the monotonic clock is shared by the
processes on Linux and macOS). The settle is kept short on purpose: the stdio client's reader thread looks
at the pipe 5 ms after a call and then at doubling intervals (5 frames a look), which is not the call's
work; when one lands in a window anyway, that repeat counts ~5 more, which the range shows and the median
(over ``--repeat`` calls, 5) leaves out. "after" is how many frames were entered after the call returned.

Public API only (``Server``, ``tool``, ``Context``, ``wsgi_app``, ``connect``, ``call_tool``), so it keeps
working when the package's modules move. Runs the minimcp package of this checkout.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]  # benchmarks/http.py would shadow the standard library's http package
sys.path.insert(0, REPO)  # this checkout's minimcp

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import socketserver  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server  # noqa: E402

import minimcp  # noqa: E402
from minimcp import Context, Server  # noqa: E402

PKG = os.path.join(os.path.dirname(os.path.abspath(minimcp.__file__)), "")
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"
MAX_EVENTS = 200_000  # a bound on what one window records (a steady call is ~100)
TIMEOUT = 30.0  # every call, connect and close


class Counter:
    """The profile function and what it saw while ``on``."""

    def __init__(self):
        self.on = False
        self.events = []  # (monotonic time, thread ident, thread name, filename, function)

    def profile(self, frame, event, arg):
        if event == "call" and self.on:
            filename = frame.f_code.co_filename
            if filename.startswith(PKG) and len(self.events) < MAX_EVENTS:
                self.events.append((time.monotonic(), threading.get_ident(), threading.current_thread().name,
                                    filename, frame.f_code.co_name))


COUNTER = Counter()


def measure(call, settle):
    """Make the one call under the profiler; return (events, call start, call return, window end)."""
    COUNTER.events = []
    all_threads = getattr(threading, "setprofile_all_threads", None)  # 3.12+
    if all_threads:
        all_threads(COUNTER.profile)
    sys.setprofile(COUNTER.profile)
    start = time.monotonic()
    COUNTER.on = True
    try:
        result = call()
        returned = time.monotonic()
        time.sleep(settle)  # (a C call: the sleep itself is not counted)
    finally:
        COUNTER.on = False
        end = time.monotonic()
        sys.setprofile(None)
        if all_threads:
            all_threads(None)
            threading.setprofile(COUNTER.profile)  # threads started later still carry it (gated by on)
    check(result)  # (outside the window: reading the result is the caller's own work)
    return list(COUNTER.events), start, returned, end


def check(result):
    assert result.text == "hello" and not result.is_error, result


def make_server_object():
    server = Server("frames")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def echo_ctx(text: str, ctx: Context) -> str:
        """Return the text; takes the request's context."""
        return text

    return server


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a handler stuck on a stream must not keep the process alive


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # no access log on stderr
        pass


def summarize(name, events, returned, extra=None):
    """One row: frames, distinct files, distinct threads, frames entered after the call returned."""
    extra = extra or []  # (label, events) of the child: other threads, other process
    rows = [("", e) for e in events] + extra
    files = {e[3] for _, e in rows}
    threads = {(label, e[1]) for label, e in rows}
    after = sum(1 for e in events if e[0] > returned) + sum(1 for _, e in extra if e[0] > returned)
    return {"case": name, "frames": len(rows), "files": len(files), "threads": len(threads), "after": after,
            "events": sorted(rows, key=lambda r: r[1][0])}


def run_http(args, server, results):
    app = server.wsgi_app()
    httpd = make_server("127.0.0.1", 0, app, server_class=ThreadingWSGIServer,
                        handler_class=QuietHandler)
    serving = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                               name="wsgiref-serve", daemon=True)
    serving.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    try:
        for wire in (HANDSHAKE, MODERN):
            with minimcp.connect(url, protocol=wire, timeout=TIMEOUT) as client:
                assert client.protocol_version == wire, client.protocol_version
                for tool in ("echo", "echo_ctx"):
                    results.append(run_case(args, f"http {wire} {tool}", client, tool))
    finally:
        httpd.shutdown()
        serving.join(TIMEOUT)
        app.close()  # ends its sessions and joins its worker threads
        httpd.server_close()


CHILD = textwrap.dedent('''\
    import json, os, sys, threading, time
    sys.path.insert(0, os.environ["FRAMES_REPO"])
    import minimcp
    from minimcp import Context, Server

    PKG = os.path.join(os.path.dirname(os.path.abspath(minimcp.__file__)), "")
    events = []

    def profile(frame, event, arg):  # always on (a bounded list); the parent picks its windows
        if event == "call" and len(events) < {max_events}:
            filename = frame.f_code.co_filename
            if filename.startswith(PKG):
                events.append((time.monotonic(), threading.get_ident(), threading.current_thread().name,
                               filename, frame.f_code.co_name))

    server = Server("frames")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @server.tool()
    def echo_ctx(text: str, ctx: Context) -> str:
        """Return the text; takes the request's context."""
        return text

    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        server.run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        with open(os.environ["FRAMES_OUT"], "w") as out:
            json.dump({{"pkg": PKG, "events": events}}, out)
''').format(max_events=MAX_EVENTS)


def run_stdio(args, results):
    tmp = tempfile.mkdtemp(prefix="minimcp-frames-")
    try:
        script, out = os.path.join(tmp, "frames_server.py"), os.path.join(tmp, "events.json")
        with open(script, "w") as f:
            f.write(CHILD)
        stderr = []
        pending = []  # (case name, client events, start, returned, end): the child's part comes at its exit
        with minimcp.connect([sys.executable, script], env={"FRAMES_OUT": out, "FRAMES_REPO": REPO},
                             on_stderr=stderr.append, timeout=TIMEOUT, protocol=args.stdio_protocol) as client:
            wire = client.protocol_version
            for tool in ("echo", "echo_ctx"):
                pending.append((f"stdio {wire} {tool}", run_case(args, None, client, tool)))
        if not os.path.exists(out):
            raise RuntimeError("the stdio server wrote no events; its stderr:\n" + "\n".join(stderr[-20:]))
        with open(out) as f:
            child = json.load(f)
        if child["pkg"] != PKG:
            print(f"note: the child imported minimcp from {child['pkg']}, this process from {PKG}", file=sys.stderr)
        for name, windows in pending:
            rows = []
            for events, start, returned, end in windows:
                theirs = [tuple(e) for e in child["events"] if start <= e[0] <= end]
                rows.append(summarize(name, events, returned, extra=[("server", e) for e in theirs]))
                rows[-1]["split"] = (len(events), len(theirs))
            results.append(combine(name, rows))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_case(args, name, client, tool):
    def call():
        return client.call_tool(tool, {"text": "hello"}, timeout=TIMEOUT)
    windows = []
    for _ in range(args.repeat):
        for _ in range(args.warmup):  # right before each measured call: it comes in a steady stream
            check(call())
        time.sleep(args.settle)  # the last warm-up call's tail (the server's, after its answer) is not ours
        windows.append(measure(call, args.settle))
    if name is None:  # stdio: the child's half is joined later
        return windows
    return combine(name, [summarize(name, events, returned) for events, _, returned, _ in windows])


def combine(name, rows):
    """The median row (by frames) over the repeats, with the ranges."""
    rows = sorted(rows, key=lambda r: r["frames"])
    median = dict(rows[len(rows) // 2])
    for key in ("frames", "files", "threads", "after"):
        values = [r[key] for r in rows]
        median[key + "_range"] = (min(values), max(values))
        median[key] = statistics.median_low(values)
    return median


def cell(row, key):
    low, high = row[key + "_range"]
    return str(row[key]) if low == high else f"{row[key]} ({low}-{high})"


def report(results, args):
    if args.verbose:
        for row in results:
            print(f"\n== {row['case']}: {row['frames']} frames (the median repeat)")
            first = row["events"][0][1][0] if row["events"] else 0.0
            for label, (t, _, thread, filename, function) in row["events"]:
                where = os.path.relpath(filename, os.path.dirname(PKG.rstrip(os.sep)))
                side = f"{label}:" if label else ""
                print(f"  {1e3 * (t - first):8.3f} ms  {side}{thread:<28} {where}:{function}")
        print()
    head = f"{'case':<32} {'frames':>10} {'files':>8} {'threads':>8}   after return / split"
    print(head)
    print("-" * len(head))
    for row in results:
        note = f"{row['after']} after"
        if "split" in row:
            note += f"; client {row['split'][0]} + server {row['split'][1]}"
        print(f"{row['case']:<32} {cell(row, 'frames'):>10} {cell(row, 'files'):>8} {cell(row, 'threads'):>8}   {note}")
    print(f"\n(Python {sys.version.split()[0]}, minimcp {minimcp.__version__} from {PKG}; {args.warmup} warm-up calls, "
          f"{args.repeat} measured calls per case, {args.settle}s settle)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--verbose", action="store_true", help="list every function entered, in order")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls before the first measured one")
    parser.add_argument("--repeat", type=int, default=5, help="measured calls per case (one call per window)")
    parser.add_argument("--settle", type=float, default=0.001,
                        help="seconds the profiler keeps counting after the call returned")
    parser.add_argument("--stdio-protocol", default="auto",
                        help="what the stdio client asks for (default auto: 2026-07-28 from a minimcp server)")
    parser.add_argument("--no-stdio", action="store_true")
    parser.add_argument("--no-http", action="store_true")
    args = parser.parse_args()

    before = set(threading.enumerate())
    threading.setprofile(COUNTER.profile)  # before any server or client thread starts (gated by COUNTER.on)
    results = []
    try:
        if not args.no_http:
            run_http(args, make_server_object(), results)
        if not args.no_stdio:
            run_stdio(args, results)
    finally:
        threading.setprofile(None)
        sys.setprofile(None)
    report(results, args)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and set(threading.enumerate()) - before:
        time.sleep(0.05)
    left = set(threading.enumerate()) - before
    if left:
        print(f"warning: threads left over: {sorted(t.name for t in left)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
