"""Instruction counts of the stdio echo servers: the floor, minimcp, and minimcp from another tree.

Run by hand (it is not a test)::

    python benchmarks/instructions.py                          # floor and this tree, about 1.5 minutes
    python benchmarks/instructions.py --baseline ../before     # + minimcp@baseline, about 2 minutes

Wall-clock figures on a shared 2-core machine move 2-3x with the host's load;
instruction counts hardly do, so their ratios are the steady figures to quote
next to ``stdio.py``'s. Each server (the ``stdio_parts/`` scripts that
``stdio.py`` measures) runs under valgrind's callgrind, which counts the
instructions it executes, and gets the same messages:

- cold start: ``initialize``, ``notifications/initialized``, ``tools/list``,
  one ``tools/call`` echo; the whole process, start to exit;
- per call: (init + N pipelined ``tools/call`` echo, minus init alone) / N;

each figure the median of ``--repeat`` runs, printed with its min-max spread.

One difference from that tool, on purpose: its stdin is a file, so the
server reads EOF right after the last request, and then gives the handlers
still running a grace time (2 s of wall-clock) before cancelling them. Under
valgrind (~50x slower) on a loaded host that cut off up to a fifth of 2000
pipelined calls, a different number every run, and the per-call count moved
by 8%. Here stdin is a pipe, written by a thread as fast as the server takes
it, and closed only once every request has its answer: what is counted is
the same work every time. A run where an answer is missing fails.

Set-up, as that tool asks: each server runs on this interpreter, by absolute
path, from a ``venv --without-pip`` made for the run (no .pth files, no
editable-install finder), with the tree's ``minimcp/`` package copied into
its site-packages (a regular install, as it were) and byte-compiled first,
so no counted run compiles it; the floor's venv has no package at all. The
servers get no ``PYTHON*`` variables (``PYTHONDONTWRITEBYTECODE`` would make
every start compile).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

import callgrind
from trees import git_commit

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "stdio_parts")
REPO = os.path.dirname(HERE)

# The messages every server gets.
INIT = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "instructions", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def echo_call(i):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": f"hello {i}"}}}


def scripts(calls):
    return {"cold": INIT + [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, echo_call(2)],
            "init": INIT,
            "calls": INIT + [echo_call(i) for i in range(1, calls + 1)]}


# -- counting ---------------------------------------------------------------------------


def count(command, messages, workdir, timeout=900):
    """Instructions the server executes for ``messages``: stdin is closed once all are answered."""
    log = os.path.join(workdir, "callgrind.log")
    process = callgrind.start_counted(command, log, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    data = b"".join(json.dumps(message).encode() + b"\n" for message in messages)

    def write():  # on a thread of its own: a pipe holds 64 kB, the answers must be read meanwhile
        process.stdin.write(data)
        process.stdin.flush()

    writer = threading.Thread(target=write)
    writer.start()
    wanted = {message["id"] for message in messages if "id" in message}
    answered = set()
    for line in process.stdout:
        reply = json.loads(line)
        if "method" not in reply and ("result" in reply or "error" in reply):
            answered.add(reply.get("id"))
            if answered >= wanted:
                break
    writer.join()
    process.stdin.close()  # EOF now, with nothing left in flight
    process.stdout.read()
    process.wait()
    watchdog.cancel()
    if not answered >= wanted:
        sys.exit(f"{' '.join(command)}: {len(wanted - answered)} of {len(wanted)} requests unanswered "
                 f"(exit code {process.returncode})")
    return callgrind.collected(log, command)


def measure(command, calls, repeat, workdir):
    """Cold start and per-call counts: each a list of ``repeat`` runs (per call: one per pair of runs)."""
    messages = scripts(calls)
    cold = [count(command, messages["cold"], workdir) for _ in range(repeat)]
    init = statistics.median(count(command, messages["init"], workdir) for _ in range(repeat))
    per_call = [(count(command, messages["calls"], workdir) - init) / calls for _ in range(repeat)]
    return {"cold": cold, "per_call": per_call}


def measure_all(servers, calls, repeat, workdir):
    """:func:`measure` each ``(name, command)`` of ``servers`` in turn, saying which on stderr:
    ``(results, medians)``, each by name (medians: the median of each figure's runs)."""
    results = {}
    for name, command in servers:
        print(f"  counting {name} ...", file=sys.stderr, flush=True)
        results[name] = measure(command, calls, repeat, workdir)
    medians = {name: {key: statistics.median(values) for key, values in r.items()} for name, r in results.items()}
    return results, medians


# -- reporting --------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="pipelined calls for the per-call figure "
                                                                "(default 2000)")
    callgrind.add_run_options(parser, jobs=False)
    callgrind.add_tree_options(parser, REPO)
    args = parser.parse_args()
    trees = callgrind.trees_to_count(parser, args)

    print(f"instruction counts (valgrind callgrind): median of {args.repeat} runs, {args.calls} pipelined calls; "
          f"CPython {sys.version.split()[0]}, {sys.executable}, in venvs without site-packages")
    callgrind.print_setup(trees, git_commit, " (copied into its venv's site-packages)")

    workdir = tempfile.mkdtemp(prefix="minimcp-instructions-")
    try:
        servers = [("floor", [callgrind.make_venv(workdir, "floor"), os.path.join(PARTS, "floor_server.py")])]
        servers += [(name, [callgrind.make_venv(workdir, name, root), os.path.join(PARTS, "minimcp_server.py")])
                    for name, root in trees]
        results, medians = measure_all(servers, args.calls, args.repeat, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    floor = medians["floor"]
    print()
    print(f"{'':<18}{'cold start':>12}{'x floor':>9}{'spread':>14}{'per call':>11}{'x floor':>9}{'spread':>14}")
    for name, m in medians.items():
        print(f"{name:<18}{m['cold'] / 1e6:>11.1f}M{m['cold'] / floor['cold']:>8.2f}x"
              f"{callgrind.spread(results[name]['cold']):>14}"
              f"{m['per_call'] / 1e3:>10.1f}k{m['per_call'] / floor['per_call']:>8.2f}x"
              f"{callgrind.spread(results[name]['per_call']):>14}")
    if callgrind.BASELINE in medians:
        mine, theirs = medians["minimcp"], medians[callgrind.BASELINE]
        print()
        print(f"minimcp / {callgrind.BASELINE}: cold start {mine['cold'] / theirs['cold']:.3f}x, "
              f"per call {mine['per_call'] / theirs['per_call']:.3f}x (instructions: lower is better)")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
