"""stdio benchmark: minimcp vs the official ``mcp`` SDK vs a plain-Python floor.

Run by hand (it is not a test)::

    python benchmarks/stdio.py            # about 1-3 minutes
    python benchmarks/stdio.py --quick    # about 20-40 seconds

What it measures, all in one run (see benchmarks/README.md for the setup):

SERVER comparison. Three stdio servers expose one tool, ``echo(text: str) ->
str``: the floor (``stdio_parts/floor_server.py``: a ``json`` + ``sys`` loop,
the least a server can do), minimcp (``stdio_parts/minimcp_server.py``:
``from minimcp import Server``) and the official SDK's high-level server
(``stdio_parts/official_server.py``: ``MCPServer``, formerly ``FastMCP``). This
process drives each of them with the same raw client
(``stdio_parts/raw_client.py``: write a line, read a line) and measures

- sequential ``tools/call`` echo: calls/s over the timed calls, p50/p99
  latency (after the handshake, ``tools/list`` and an untimed warm-up);
- the server's CPU per call: its whole-life CPU (``os.wait4`` rusage, to the
  microsecond) minus the median CPU of its cold starts (the same life without
  the warm-up and timed calls), over the number of those calls. It tells
  work done from time spent waiting (thread wake-ups);
- idle RSS: the server's ``VmRSS`` from ``/proc/PID/status`` after the
  handshake and the warm-up calls, before the timed calls;
- cold start: spawn -> initialize -> tools/list -> one call -> close stdin ->
  the child has exited (blocking ``os.wait4``), timed here, with the server's
  CPU for it; ``python -c pass`` is timed alongside for reference.

CLIENT comparison. Three client processes each spawn the floor server and
make the same sequential echo calls: the raw client, minimcp
(``minimcp.connect`` + ``client.call_tool``) and the official SDK
(``ClientSession`` over ``stdio_client``, asyncio). Each measures itself, in
process: ``time.process_time()`` around its timed calls (all of its threads;
the server's CPU is not counted) and wall time per call.

Method, because absolute numbers on a shared 2-core machine move 2-3x between
runs, and even within one run (benchmarks/README.md):

- Interleaved, finely: in each repeat, every contender is started and warmed
  up, then they take turns at blocks of ``BLOCK`` (50) timed calls, the order
  rotated every turn, until each has made ``--calls``; so a burst of load on
  the host hits them all alike. (The client processes take their turns on
  the driver's word: see ``run_blocks`` in ``stdio_parts/raw_client.py``.)
  Cold starts alternate contender by contender. Ratios are taken within a
  repeat (contender / floor of that same repeat), and the report gives their
  median over repeats, with the min-max range for the targets. Quote the
  ratios, not the absolute numbers.
- Interpreters by absolute path, never the ``python`` on PATH (it may be a
  pyenv shim, a bash script). Floor, raw client and minimcp run on this
  interpreter, but from a throwaway ``venv --without-pip`` made for the run:
  same binary and stdlib, no site-packages. Otherwise every process would pay
  for the ``.pth`` files of this interpreter's site-packages (an editable
  install's import finder pulls in pathlib & co. at every start) and the
  floor's cold start would absorb them. minimcp is imported from this work
  tree (or ``--minimcp-from``) through ``PYTHONPATH``, as if installed
  normally. ``--as-is`` turns this off. The official SDK runs on ``benchmarks/.venv-mcp/bin/python`` (or
  ``--mcp-python``); without it, that part is skipped.
- The environment passed down has no ``PYTHON*`` variables but minimcp's
  ``PYTHONPATH``: a ``PYTHONDONTWRITEBYTECODE=1`` (set on the project's
  machines) would make every start compile minimcp from source, and
  ``PYTHONUNBUFFERED=1`` would change how the servers write.
- Each server is started once, untimed, before the first repeat (page
  cache, ``.pyc`` files); a client's own start is never timed. The
  contenders' stderr goes to a file, as a desktop host would keep a server's.

BEFORE / AFTER. ``--baseline DIR`` adds a fourth contender on each side,
``minimcp@baseline``: the same server and client scripts, importing the
``minimcp`` package under DIR (an older checkout) instead of this tree's. It
takes its turns in the same blocks and rotation as the others, so the
report can put ``minimcp / minimcp@baseline`` beside the ratios to the
floor, taken within each repeat like them. DIR's package is copied into the
run's temporary directory first and imported from there (``PYTHONPATH``),
so that no ``.pyc`` is written into DIR.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "stdio_parts")
REPO = os.path.dirname(HERE)
DEFAULT_MCP_PYTHON = os.path.join(HERE, ".venv-mcp", "bin", "python")
REFERENCE = "python -c pass"  # timed with the cold starts: the interpreter's own share
BLOCK = 50  # timed calls each contender makes in its turn before the next one's turn
BASELINE = "minimcp@baseline"  # the contender name of --baseline DIR's minimcp

sys.path.insert(0, PARTS)
from raw_client import RawClient  # noqa: E402
from trees import copy_package, git_commit  # noqa: E402

# The targets of the performance issue (issue 14), for minimcp.
SERVER_CALLS_TARGET = 0.95   # server calls/s >= 0.95x the floor's
CLIENT_CPU_TARGET = 1.5      # client CPU per call <= 1.5x the raw client's
RSS_TARGET = 1.10            # idle server RSS <= 1.10x the floor's
COLD_START_TARGET = 1.30     # cold start <= 1.30x the floor's


class Contender:
    """One program under test: which interpreter runs which script, in which environment."""

    def __init__(self, name, python, script, env):
        self.name = name
        self.python = python
        self.script = script
        self.env = env

    def command(self):
        return [self.python, os.path.join(PARTS, self.script)]


# -- setting up -------------------------------------------------------------------------


def clean_env(**extra):
    """os.environ without PYTHON* variables (a stray PYTHONPATH would skew imports), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(extra)
    return env


def make_plain_python(workdir):
    """A ``venv --without-pip`` of this interpreter: its binary and stdlib, no site-packages."""
    target = os.path.join(workdir, "plain-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", target], check=True)
    return os.path.join(target, "bin", "python")


def is_script(path):
    """True if ``path`` is a text script (a pyenv shim), not an interpreter binary."""
    try:
        with open(os.path.realpath(path), "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def mcp_version(python):
    """The ``mcp`` version installed for ``python``, or None if it has none."""
    code = "import importlib.metadata as m, sys; print(m.version('mcp'), sys.version.split()[0])"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60,
                             env=clean_env())
    except OSError:
        return None
    return out.stdout.split() if out.returncode == 0 else None


def minimcp_version(root):
    """``__version__`` of the minimcp package under ``root``, read without importing it."""
    with open(os.path.join(root, "minimcp", "__init__.py")) as f:
        match = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    return match.group(1) if match else "?"




# -- measuring --------------------------------------------------------------------------


def read_rss_kb(pid):
    """The process's resident set size in kB (``VmRSS``), or None where /proc has none."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def percentile(sorted_values, pct):
    """Nearest-rank percentile of an already sorted list."""
    return sorted_values[min(len(sorted_values) - 1, (len(sorted_values) * pct) // 100)]


def blocks(calls):
    """Split ``calls`` into the blocks that the contenders take turns at."""
    return [min(BLOCK, calls - done) for done in range(0, calls, BLOCK)]


def serve_interleaved(servers, calls, warmup, text, stderr, repeat):
    """Drive every server with its own raw client, taking turns block by block.

    Each server is started, handshaken and warmed up, and its idle RSS read;
    then the servers take turns at blocks of ``BLOCK`` timed calls (order
    rotated every turn), so that a burst of load on the host hits them all
    alike. Returns, per server: calls/s over its timed blocks, p50/p99, the
    idle RSS and ``cpu_s``, its CPU over its whole life (which :func:`run`
    turns into CPU per call by taking away a cold start's).
    """
    clients, results = {}, {}
    try:
        for contender in servers:
            client = clients[contender.name] = RawClient(contender.command(), env=contender.env, stderr=stderr)
            client.initialize()
            for _ in range(warmup):
                client.echo(text)
            if client.echo(text) != text:
                raise RuntimeError(f"{contender.name}: the echo tool answered something else")
            results[contender.name] = {"rss_kb": read_rss_kb(client.process.pid), "latencies": [], "wall": 0.0}
        clock = time.perf_counter
        for turn, n in enumerate(blocks(calls)):
            for contender in rotated(servers, repeat + turn):
                echo, result = clients[contender.name].echo, results[contender.name]
                append = result["latencies"].append
                start = clock()
                for _ in range(n):
                    t0 = clock()
                    echo(text)
                    append(clock() - t0)
                result["wall"] += clock() - start
    finally:
        for name, client in clients.items():
            results.setdefault(name, {})["cpu_s"] = client.close()
    for result in results.values():
        latencies = sorted(result.pop("latencies"))
        result["calls_s"] = calls / result.pop("wall")
        result["p50_s"] = percentile(latencies, 50)
        result["p99_s"] = percentile(latencies, 99)
    return results


def cold_start(contender, text, stderr):
    """Time from spawn to the child's exit: initialize, tools/list, one call, close stdin.

    Returns (seconds, the server's CPU seconds).
    """
    start = time.perf_counter()
    client = RawClient(contender.command(), env=contender.env, stderr=stderr)
    try:
        client.initialize()
        if client.echo(text) != text:
            raise RuntimeError(f"{contender.name}: the echo tool answered something else")
    finally:
        cpu_s = client.close()
    return time.perf_counter() - start, cpu_s


def interpreter_start(python, env):
    """Seconds for ``python -c pass``: the interpreter's own share of any cold start."""
    start = time.perf_counter()
    subprocess.run([python, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


def clients_interleaved(clients, server_command, calls, warmup, text, stderr, repeat):
    """Run every client process against its own floor server, taking turns block by block.

    Each client process warms up and says ``ready``; then they take turns at
    blocks of ``BLOCK`` timed calls (the protocol of ``run_blocks`` in
    ``stdio_parts/raw_client.py``), and at the end each reports its own CPU
    and latencies over its timed blocks.
    """
    processes = {}

    def talk(name, line=None):
        process = processes[name]
        if line is not None:
            process.stdin.write(line + "\n")
            process.stdin.flush()
        answer = process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the {name} client exited (code {process.wait()}); see its stderr below")
        return answer.strip()

    try:
        for contender in clients:
            command = contender.command() + ["--warmup", str(warmup), "--text", text, "--", *server_command]
            processes[contender.name] = subprocess.Popen(
                command, env=contender.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                text=True)
            if talk(contender.name) != "ready":
                raise RuntimeError(f"the {contender.name} client did not say ready")
        for turn, n in enumerate(blocks(calls)):
            for contender in rotated(clients, repeat + turn):
                talk(contender.name, str(n))
        reports = {}
        for contender in clients:
            report = reports[contender.name] = json.loads(talk(contender.name, "end"))
            report["calls_s"] = report["calls"] / report["wall_s"]
            report["cpu_per_call_s"] = report["cpu_s"] / report["calls"]
        return reports
    finally:
        for process in processes.values():
            process.stdin.close()
            process.wait()
            process.stdout.close()


def rotated(items, by):
    """``items`` starting at index ``by`` (wrapping): who goes first changes every turn."""
    by %= len(items)
    return items[by:] + items[:by]


# -- reporting --------------------------------------------------------------------------


def ratios(per_repeat, name, base, key):
    """``name``'s value of ``key`` divided by ``base``'s, one ratio per repeat."""
    return [mine[key] / theirs[key] for mine, theirs in zip(per_repeat[name], per_repeat[base])
            if mine.get(key) and theirs.get(key)]


def median_of(per_repeat, name, key):
    values = [run[key] for run in per_repeat[name] if run.get(key) is not None]
    return statistics.median(values) if values else None


def fmt(value, spec, scale=1.0):
    return "n/a" if value is None else format(value * scale, spec)


def fmt_ratio(values):
    return "n/a" if not values else f"{statistics.median(values):.2f}x"


def verdict(values, bound, at_least):
    if not values:
        return "n/a"
    value = statistics.median(values)
    ok = value >= bound if at_least else value <= bound
    return "OK" if ok else "MISS"


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f}" if values else "n/a"


def table(title, rows, columns, results, base):
    """Print one table: a row per contender; a column per (heading, key, format, scale, width,
    with a ratio column?), each cell the median over repeats, each ratio the median per-repeat ratio."""
    first = max(16, max(len(name) for name in rows) + 2)
    print()
    print(title)
    print(f"{'':<{first}}" + "".join(f"{heading:>{width}}" + (f"{'x ' + base:>9}" if ratio else "")
                                    for heading, _, _, _, width, ratio in columns))
    for name in rows:
        cells = []
        for _, key, spec, scale, width, ratio in columns:
            cells.append(f"{fmt(median_of(results, name, key), spec, scale):>{width}}")
            if ratio:
                cells.append(f"{fmt_ratio(ratios(results, name, base, key)):>9}")
        print(f"{name:<{first}}" + "".join(cells))


def print_report(server, client, args, names, official_skip):
    """Print the tables: medians over repeats, and ratios to the floor taken within each repeat."""
    per_call = [("calls/s", "calls_s", ",.0f", 1, 9, True),
                ("p50 us", "p50_s", ".0f", 1e6, 9, False),
                ("p99 us", "p99_s", ".0f", 1e6, 9, False),
                ("CPU us/call", "cpu_per_call_s", ".1f", 1e6, 13, True)]
    table(f"SERVER: sequential tools/call echo, driven by the raw client (median of {args.repeats} repeats; "
          f"CPU = the server process's)", names["server"], per_call, server, "floor")
    table("SERVER: footprint (cold start = spawn, initialize, tools/list, one call, exit)",
          names["server"] + [REFERENCE],
          [("cold start ms", "cold_s", ".1f", 1e3, 15, True),
           ("its CPU ms", "cold_cpu_s", ".1f", 1e3, 12, True),
           ("idle RSS MB", "rss_kb", ".1f", 1 / 1024, 13, True)], server, "floor")
    table(f"CLIENT: sequential tools/call echo against the floor server (median of {args.repeats} repeats; "
          f"CPU = the client process's)", names["client"], per_call, client, "raw")

    targets = [
        ("server calls/s", f">= {SERVER_CALLS_TARGET:.2f}x floor",
         ratios(server, "minimcp", "floor", "calls_s"), SERVER_CALLS_TARGET, True),
        ("client CPU per call", f"<= {CLIENT_CPU_TARGET:.2f}x raw",
         ratios(client, "minimcp", "raw", "cpu_per_call_s"), CLIENT_CPU_TARGET, False),
        ("idle server RSS", f"<= {RSS_TARGET:.2f}x floor",
         ratios(server, "minimcp", "floor", "rss_kb"), RSS_TARGET, False),
        ("cold start", f"<= {COLD_START_TARGET:.2f}x floor",
         ratios(server, "minimcp", "floor", "cold_s"), COLD_START_TARGET, False),
    ]
    print()
    print("TARGETS for minimcp (median of the per-repeat ratios; min-max over repeats)")
    for label, target, values, bound, at_least in targets:
        print(f"  {label:<22}{target:<17}{fmt_ratio(values):>7}   ({spread(values)})   "
              f"{verdict(values, bound, at_least)}")

    print()
    print("RATIOS to quote (from this one run)")
    lines = [("server calls/s", server, "floor", "calls_s", "floor calls/s"),
             ("server CPU per call", server, "floor", "cpu_per_call_s", "floor CPU per call"),
             ("server cold start", server, "floor", "cold_s", "floor cold start"),
             ("server idle RSS", server, "floor", "rss_kb", "floor RSS"),
             ("client calls/s", client, "raw", "calls_s", "raw client calls/s"),
             ("client CPU per call", client, "raw", "cpu_per_call_s", "raw client CPU per call")]
    for label, results, base, key, base_label in lines:
        text = f"  {label + ':':<22}minimcp = {fmt_ratio(ratios(results, 'minimcp', base, key))} {base_label}"
        for other in (BASELINE, "official"):
            if other in results:
                text += f", {other} = {fmt_ratio(ratios(results, other, base, key))}"
        print(text)
    if BASELINE in server:
        print_before_after(server, client)
    if official_skip:
        print(f"\n  official SDK: skipped ({official_skip})")


def print_before_after(server, client):
    """One line per measure: this tree's minimcp over the baseline's, taken within each repeat."""
    measures = [("server calls/s", server, "calls_s", "higher"),
                ("server p50 latency", server, "p50_s", "lower"),
                ("server p99 latency", server, "p99_s", "lower"),
                ("server CPU per call", server, "cpu_per_call_s", "lower"),
                ("server cold start", server, "cold_s", "lower"),
                ("server cold-start CPU", server, "cold_cpu_s", "lower"),
                ("server idle RSS", server, "rss_kb", "lower"),
                ("client calls/s", client, "calls_s", "higher"),
                ("client p50 latency", client, "p50_s", "lower"),
                ("client CPU per call", client, "cpu_per_call_s", "lower")]
    print()
    print(f"minimcp / {BASELINE}, this tree over the baseline (median of the per-repeat ratios; "
          f"min-max over repeats)")
    for label, results, key, better in measures:
        values = ratios(results, "minimcp", BASELINE, key)
        print(f"  {label + ':':<24}{fmt_ratio(values):>7}   ({spread(values)})   {better} is better")


# -- the run ------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="round-robin repeats (default 5)")
    parser.add_argument("--cold", type=int, default=3, help="cold starts per contender per repeat (default 3)")
    parser.add_argument("--quick", action="store_true", help="short run: --calls 400 --repeats 3 --cold 2")
    parser.add_argument("--text", default="hello from the benchmark", help="the text echoed in every call")
    parser.add_argument("--mcp-python", default=DEFAULT_MCP_PYTHON,
                        help="an interpreter with the official mcp SDK (default: benchmarks/.venv-mcp/bin/python)")
    parser.add_argument("--no-official", action="store_true", help="leave the official SDK out")
    parser.add_argument("--minimcp-from", default=REPO, metavar="DIR",
                        help="the directory holding the minimcp package to test (default: this work tree)")
    parser.add_argument("--baseline", metavar="DIR",
                        help=f"also measure the minimcp package under DIR (an older checkout) as {BASELINE}, "
                             "in the same interleaved run, and print this tree's ratios to it")
    parser.add_argument("--as-is", action="store_true",
                        help="run floor/raw/minimcp on this interpreter as is, site-packages and .pth files included")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement to FILE")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.repeats, args.cold = 400, 3, 2
    args.minimcp_from = os.path.abspath(args.minimcp_from)
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        if not os.path.isfile(os.path.join(args.baseline, "minimcp", "__init__.py")):
            parser.error(f"--baseline {args.baseline}: no minimcp/__init__.py there")
    warmup = min(200, max(20, args.calls // 10))

    workdir = tempfile.mkdtemp(prefix="minimcp-bench-")
    try:
        run(args, warmup, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def find_official(args):
    """The interpreter for the official SDK, its mcp and Python versions; or why it is skipped."""
    if args.no_official:
        return None, None, "--no-official"
    # Absolute but not resolved: a venv's bin/python is a symlink, and only
    # through it does the interpreter find the venv's site-packages.
    python = os.path.abspath(args.mcp_python)
    if not os.path.exists(python):
        return None, None, f"{python} not found; set it up as benchmarks/README.md says"
    versions = mcp_version(python)
    if versions is None:
        return None, None, f"{python} has no mcp package"
    return python, versions, None


def run(args, warmup, workdir):
    python = sys.executable if args.as_is else make_plain_python(workdir)
    plain = clean_env()
    with_minimcp = clean_env(PYTHONPATH=args.minimcp_from)
    mcp_python, mcp_versions, official_skip = find_official(args)

    servers = [Contender("floor", python, "floor_server.py", plain),
               Contender("minimcp", python, "minimcp_server.py", with_minimcp)]
    clients = [Contender("raw", python, "raw_client.py", plain),
               Contender("minimcp", python, "minimcp_client.py", with_minimcp)]
    if args.baseline:
        with_baseline = clean_env(PYTHONPATH=copy_package(args.baseline, workdir, "baseline"))
        servers.append(Contender(BASELINE, python, "minimcp_server.py", with_baseline))
        clients.append(Contender(BASELINE, python, "minimcp_client.py", with_baseline))
    if mcp_python:
        servers.append(Contender("official", mcp_python, "official_server.py", plain))
        clients.append(Contender("official", mcp_python, "official_client.py", plain))
    floor_command = servers[0].command()

    print(f"stdio benchmark: {args.calls} timed calls per run after {warmup} warm-up calls, "
          f"{args.repeats} repeats (round-robin, order rotated), {args.cold} cold starts per contender "
          f"per repeat, echo text of {len(args.text)} chars")
    print(f"  floor, raw, minimcp{', ' + BASELINE if args.baseline else ''}: CPython {sys.version.split()[0]}, "
          f"{sys.executable}"
          + (" as is (site-packages and .pth files included)" if args.as_is else
             ", in a venv without site-packages made for this run"))
    print(f"  minimcp {minimcp_version(args.minimcp_from)} from {args.minimcp_from}{git_commit(args.minimcp_from)} "
          f"(PYTHONPATH)")
    if args.baseline:
        print(f"  {BASELINE}: minimcp {minimcp_version(args.baseline)} from {args.baseline}"
              f"{git_commit(args.baseline)} (a copy of its minimcp/, on PYTHONPATH)")
    if mcp_python:
        print(f"  official: mcp {mcp_versions[0]} (MCPServer, ClientSession) on CPython {mcp_versions[1]}, "
              f"{mcp_python}")
    else:
        print(f"  official: SKIPPED ({official_skip})")
    for interpreter in (python, mcp_python):
        if interpreter and is_script(interpreter):
            print(f"  WARNING: {interpreter} is a script (a pyenv shim?), not an interpreter binary")
    sys.stdout.flush()

    stderr_path = os.path.join(workdir, "stderr.log")  # every server's and client's
    server = {name: [] for name in [c.name for c in servers] + [REFERENCE]}
    client = {c.name: [] for c in clients}
    began = time.perf_counter()
    with open(stderr_path, "ab") as stderr:
        try:
            # Untimed: a first start of each fills the page cache and writes any missing .pyc.
            for contender in servers:
                cold_start(contender, args.text, stderr)
            interpreter_start(python, plain)
            for repeat in range(args.repeats):
                runs = {name: {} for name in server}
                runs.update(serve_interleaved(servers, args.calls, warmup, args.text, stderr, repeat))
                for name, measured in clients_interleaved(clients, floor_command, args.calls, warmup,
                                                          args.text, stderr, repeat).items():
                    client[name].append(measured)
                colds = {name: [] for name in server}
                cold_cpus = {name: [] for name in server}
                for _ in range(args.cold):
                    for contender in rotated(servers, repeat):
                        seconds, cpu_s = cold_start(contender, args.text, stderr)
                        colds[contender.name].append(seconds)
                        cold_cpus[contender.name].append(cpu_s)
                    colds[REFERENCE].append(interpreter_start(python, plain))
                for name, times in colds.items():
                    runs[name]["cold_s"] = statistics.median(times)
                    runs[name]["cold_all_s"] = times
                    if cold_cpus[name]:
                        runs[name]["cold_cpu_s"] = statistics.median(cold_cpus[name])
                        runs[name]["cold_cpu_all_s"] = cold_cpus[name]
                    server[name].append(runs[name])
                print(f"  repeat {repeat + 1}/{args.repeats} done, {time.perf_counter() - began:.0f} s",
                      file=sys.stderr, flush=True)
        except Exception:
            stderr.flush()
            with open(stderr_path, "rb") as f:
                tail = f.read()[-3000:].decode("utf-8", "replace")
            print(f"a contender failed; the contenders' stderr ended with:\n{tail}", file=sys.stderr)
            raise

    # Server CPU per call: a throughput run's life is a cold start's plus the
    # warm-up and timed calls, so take away the median cold start's CPU (over
    # every repeat: one cold start is a noisy baseline).
    for contender in servers:
        runs = server[contender.name]
        baseline = statistics.median(cpu for run in runs for cpu in run["cold_cpu_all_s"])
        for run in runs:
            run["cpu_per_call_s"] = max(0.0, run["cpu_s"] - baseline) / (warmup + args.calls)

    names = {"server": [c.name for c in servers], "client": [c.name for c in clients]}
    print_report(server, client, args, names, official_skip)
    print(f"\n(took {time.perf_counter() - began:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": vars(args), "warmup": warmup, "python": sys.version,
                       "mcp": mcp_versions, "server": server, "client": client}, f, indent=1)


if __name__ == "__main__":
    main()
