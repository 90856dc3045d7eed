"""Instruction counts of the stdio echo servers: the floor, minimcp, and minimcp from another tree.

Run by hand (it is not a test)::

    python benchmarks/instructions.py                          # floor and this tree, about 1.5 minutes
    python benchmarks/instructions.py --baseline ../before     # + minimcp@baseline, about 2 minutes

Wall-clock figures on a shared 2-core machine move 2-3x with the host's load;
instruction counts hardly do, so their ratios are the steady figures to quote
next to ``stdio.py``'s. Each server (the ``stdio_parts/`` scripts that
``stdio.py`` measures) runs under valgrind's callgrind, which counts the
instructions it executes, and gets the same messages as with the project's
tool, ``shared/perf/instructions.py``:

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
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading

from trees import git_commit

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "stdio_parts")
REPO = os.path.dirname(HERE)
BASELINE = "minimcp@baseline"

# The messages of shared/perf/instructions.py.
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


# -- setting up -------------------------------------------------------------------------


def make_venv(workdir, name, minimcp_root=None, dependencies=()):
    """A ``venv --without-pip`` of this interpreter, with ``minimcp_root``'s package installed by copy.

    ``dependencies`` are top-level modules this interpreter can import (``requests``, ...),
    copied in the same way, for a part that needs them.
    """
    target = os.path.join(workdir, name)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True)
    python = os.path.join(target, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    sources = [os.path.join(minimcp_root, "minimcp")] if minimcp_root else []
    for module in dependencies:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.origin:
            sys.exit(f"{module} is not installed for {sys.executable}: pip install {module}")
        sources.append(os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin)
    for source in sources:
        copy = os.path.join(site, os.path.basename(source))
        if os.path.isdir(source):
            shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, copy)
        subprocess.run([python, "-m", "compileall", "-q", copy], check=True)
    return python



# -- counting ---------------------------------------------------------------------------


def start_counted(command, log, **popen):
    """Start ``command`` under callgrind (its report to ``log``), with no ``PYTHON*`` variables.

    Only this process is counted: a child it starts runs natively (valgrind's default).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    return subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                             f"--log-file={log}", *command], stderr=subprocess.DEVNULL, env=env, **popen)


def collected(log, command):
    """The instructions callgrind counted, from its ``log`` (the process has exited)."""
    with open(log) as f:
        text = f.read()
    match = re.search(r"Collected : (\d+)", text)
    if not match:
        sys.exit(f"valgrind gave no count for {' '.join(command)}:\n{text[-2000:]}")
    return int(match.group(1))


def count(command, messages, workdir, timeout=900):
    """Instructions the server executes for ``messages``: stdin is closed once all are answered."""
    log = os.path.join(workdir, "callgrind.log")
    process = start_counted(command, log, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
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
    return collected(log, command)


def measure(command, calls, repeat, workdir):
    """Cold start and per-call counts: each a list of ``repeat`` runs (per call: one per pair of runs)."""
    messages = scripts(calls)
    cold = [count(command, messages["cold"], workdir) for _ in range(repeat)]
    init = statistics.median(count(command, messages["init"], workdir) for _ in range(repeat))
    per_call = [(count(command, messages["calls"], workdir) - init) / calls for _ in range(repeat)]
    return {"cold": cold, "per_call": per_call}


# -- reporting --------------------------------------------------------------------------


def spread(values):
    """The min-max range around the median, in per cent."""
    middle = statistics.median(values)
    return f"{100 * (min(values) / middle - 1):+.1f}/{100 * (max(values) / middle - 1):+.1f}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="pipelined calls for the per-call figure "
                                                                "(default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the median kept (default 3)")
    parser.add_argument("--minimcp-from", default=REPO, metavar="DIR",
                        help="the directory holding the minimcp package to count (default: this work tree)")
    parser.add_argument("--baseline", metavar="DIR",
                        help=f"also count the minimcp package under DIR (an older checkout) as {BASELINE}")
    args = parser.parse_args()
    trees = [("minimcp", os.path.abspath(args.minimcp_from))]
    if args.baseline:
        trees.append((BASELINE, os.path.abspath(args.baseline)))
    for _, root in trees:
        if not os.path.isfile(os.path.join(root, "minimcp", "__init__.py")):
            parser.error(f"{root}: no minimcp/__init__.py there")
    if not shutil.which("valgrind"):
        sys.exit("valgrind is not installed (apt-get install valgrind)")

    print(f"instruction counts (valgrind callgrind): median of {args.repeat} runs, {args.calls} pipelined calls; "
          f"CPython {sys.version.split()[0]}, {sys.executable}, in venvs without site-packages")
    for name, root in trees:
        print(f"  {name}: {root}{git_commit(root)} (copied into its venv's site-packages)")
    print(f"  machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    sys.stdout.flush()

    results = {}
    workdir = tempfile.mkdtemp(prefix="minimcp-instructions-")
    try:
        servers = [("floor", make_venv(workdir, "floor"), "floor_server.py")]
        servers += [(name, make_venv(workdir, name, root), "minimcp_server.py") for name, root in trees]
        for name, python, script in servers:
            print(f"  counting {name} ...", file=sys.stderr, flush=True)
            results[name] = measure([python, os.path.join(PARTS, script)], args.calls, args.repeat, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    medians = {name: {key: statistics.median(values) for key, values in r.items()} for name, r in results.items()}
    floor = medians["floor"]
    print()
    print(f"{'':<18}{'cold start':>12}{'x floor':>9}{'spread':>14}{'per call':>11}{'x floor':>9}{'spread':>14}")
    for name, m in medians.items():
        print(f"{name:<18}{m['cold'] / 1e6:>11.1f}M{m['cold'] / floor['cold']:>8.2f}x"
              f"{spread(results[name]['cold']):>14}"
              f"{m['per_call'] / 1e3:>10.1f}k{m['per_call'] / floor['per_call']:>8.2f}x"
              f"{spread(results[name]['per_call']):>14}")
    if BASELINE in medians:
        mine, theirs = medians["minimcp"], medians[BASELINE]
        print()
        print(f"minimcp / {BASELINE}: cold start {mine['cold'] / theirs['cold']:.3f}x, "
              f"per call {mine['per_call'] / theirs['per_call']:.3f}x (instructions: lower is better)")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
