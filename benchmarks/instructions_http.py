"""Instruction counts of the HTTP echo servers: the stdlib floor, minimcp's built-in server, minimcp from another tree.

Run by hand (it is not a test)::

    python benchmarks/instructions_http.py                          # floor and this tree, both wires
    python benchmarks/instructions_http.py --baseline ../before     # + minimcp@baseline

The steady twin of ``http.py``'s server rows. Each server (``http_parts/floor_server.py``,
the ``ThreadingHTTPServer`` floor, and ``http_parts/echo_app.py``, minimcp's built-in
server with sessions on) runs under valgrind's callgrind while this process drives it
with a fixed request script, with the raw generator's connection (``load.RawConnection``):

- for each wire, 2025-11-25 (``initialize``, ``notifications/initialized``, then the
  session id) and 2026-07-28 (``_meta`` and the headers in every request, no handshake):
  ``--threads`` keep-alive connections open one at a time, each one ``tools/call`` echo,
  then together N (``--calls``) more split among them, then each DELETEs its session (if
  any) and the server gets SIGTERM;
- per request: (the run with N calls - the run with none) / N; the run with none is
  the start-up figure (start, handshakes, one call each, stop).

Each figure is the median of ``--repeat`` runs, printed with its min-max spread. The
count does not move with the host's load, so ``--jobs`` runs go side by side (default 2).
With ``--threads`` above 1 the requests meet in the server's threads (valgrind runs one
thread at a time, but switches between them), so that figure spreads a little more.

Set-up as in ``instructions.py``: this interpreter, a ``venv --without-pip`` per
contender with the tree's ``minimcp/`` copied in and byte-compiled, no ``PYTHON*``
variables. It needs valgrind.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]  # benchmarks/http.py is not http
import argparse  # noqa: E402
import http.client  # noqa: E402,F401  (the standard library's, before benchmarks/ goes back on the path)
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

sys.path.append(HERE)
sys.path.append(os.path.join(HERE, "http_parts"))
import callgrind  # noqa: E402
from load import RawConnection  # noqa: E402
from trees import git_commit  # noqa: E402

PARTS = os.path.join(HERE, "http_parts")
REPO = os.path.dirname(HERE)
WIRES = ("2025-11-25", "2026-07-28")


def free_port():
    """A port the OS says is free now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(process, port, deadline):
    """Until ``port`` accepts a connection; fail if the server exits or the deadline passes."""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)  # polling an external process, bounded by the deadline
    raise RuntimeError(f"the server did not listen on {port} in time")


def stop(process, timeout):
    """SIGTERM until it exits: valgrind may hand a signal to any thread, and a server whose main
    thread sleeps in a wait for it then misses it (natively Linux gives it to the main thread)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
            return
        except subprocess.TimeoutExpired:
            continue
    process.kill()
    process.wait()
    raise RuntimeError("the server did not stop at SIGTERM")


def count(python, script, wire, calls, threads, workdir, tag, timeout=900):
    """Instructions of one server process for the request script (see the module docstring)."""
    log = os.path.join(workdir, f"callgrind-{tag}.log")
    port = free_port()
    command = [python, os.path.join(PARTS, script), str(port)]
    process = callgrind.start_counted(command, log, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        wait_listening(process, port, time.monotonic() + timeout)
        url = f"http://127.0.0.1:{port}/mcp"
        connections = []
        for _ in range(threads):  # one at a time, as load.py does (a small listen backlog)
            connection = RawConnection(url, wire, "hello")
            connection.start()
            connections.append(connection)
        shares = [calls // threads + (i < calls % threads) for i in range(threads)]

        def run(pair):
            connection, n = pair
            return sum(connection.call() for _ in range(n))

        with ThreadPoolExecutor(threads) as pool:
            answered = sum(pool.map(run, zip(connections, shares)))
        for connection in connections:
            connection.close()
        if answered != calls:
            raise RuntimeError(f"{calls - answered} of {calls} calls not answered right")
    finally:
        stop(process, timeout)
    return callgrind.collected(log, command)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000, help="requests for the per-request figure (default 1000)")
    parser.add_argument("--threads", type=int, default=1, help="connections the calls are split among (default 1)")
    callgrind.add_run_options(parser)
    parser.add_argument("--wires", default=",".join(WIRES), help="comma-separated (default: both)")
    callgrind.add_tree_options(parser, REPO)
    args = parser.parse_args()
    wires = args.wires.split(",")
    trees = callgrind.trees_to_count(parser, args)

    print(f"HTTP server instruction counts (valgrind callgrind): median of {args.repeat} runs, {args.calls} "
          f"requests over {args.threads} connection(s); CPython {sys.version.split()[0]}, in venvs without "
          f"site-packages")
    callgrind.print_setup(trees, git_commit)

    workdir = tempfile.mkdtemp(prefix="minimcp-instructions-http-")
    try:
        servers = [("floor", callgrind.make_venv(workdir, "floor"), "floor_server.py")]
        servers += [(name, callgrind.make_venv(workdir, name, root), "echo_app.py") for name, root in trees]
        tasks = [(name, python, script, wire, n, r) for name, python, script in servers for wire in wires
                 for n in (0, args.calls) for r in range(args.repeat)]

        def run(task):
            name, python, script, wire, n, r = task
            tag = f"{name}-{wire}-{n}-{r}".replace("@", "_")
            result = count(python, script, wire, n, args.threads, workdir, tag)
            print(f"  {name} {wire} {n} calls: {result / 1e6:.1f}M", file=sys.stderr, flush=True)
            return result

        counts = callgrind.count_side_by_side(tasks, run, args.jobs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    def runs(name, wire, n):
        return [c for (nm, _, _, w, k, _), c in counts.items() if (nm, w, k) == (name, wire, n)]

    names = [name for name, _, _ in servers]
    print()
    print(f"{'':<18}{'wire':<12}{'start-up':>11}{'x floor':>9}{'per request':>13}{'x floor':>9}{'spread':>14}")
    medians = {}
    for wire in wires:
        for name in names:
            medians[wire, name] = callgrind.start_and_per_call(runs(name, wire, 0), runs(name, wire, args.calls),
                                                               args.calls)
        floor = medians[wire, "floor"]
        for name in names:
            start, per, values = medians[wire, name]
            print(f"{name:<18}{wire:<12}{start / 1e6:>10.1f}M{start / floor[0]:>8.2f}x"
                  f"{per / 1e3:>12.1f}k{per / floor[1]:>8.2f}x{callgrind.spread(values):>14}")
    if args.baseline:
        callgrind.print_baseline_ratios(medians, wires, "request")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
