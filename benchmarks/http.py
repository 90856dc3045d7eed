"""HTTP benchmark: minimcp's Streamable HTTP servers vs the official ``mcp`` SDK vs a stdlib floor.

Run by hand (it is not a test)::

    python benchmarks/http.py            # about 2-3 minutes
    python benchmarks/http.py --quick    # about 1 minute

What it measures, all in one run (see benchmarks/README.md for the setup):

SERVER comparison. Four HTTP servers expose one tool, ``echo(text: str) ->
str``, at ``http://127.0.0.1:PORT/mcp``:

- the floor (``http_parts/floor_server.py``): ``http.server.ThreadingHTTPServer``
  with keep-alive and ``TCP_NODELAY``, parse the body, answer in one send;
- (a) minimcp's built-in server (``http_parts/echo_app.py``:
  ``server.run("http", port=...)``, sessions on);
- (b) minimcp's ``sessionless_app`` under gunicorn ``gthread`` (2 workers x 16
  threads by default);
- (c) the official SDK's ``MCPServer`` (``http_parts/official_server.py``) in
  its fastest mode, ``stateless_http=True, json_response=True``, under uvicorn
  (access log off, log level WARNING: no line written per request).

Each (but the floor) is measured in both wires: the 2025-11-25 handshake wire
(``initialize``, then the ``Mcp-Session-Id`` if the server hands one out) and
the stateless 2026-07-28 wire (``_meta`` in every request, the
``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers, no
handshake). One raw load generator drives them all
(``http_parts/load.py``: ``http.client``, one keep-alive connection per
thread): K threads (1, 8, 32) POST ``tools/call`` echo as fast as they can
for a fixed time. Per cell (contender x K): requests/s, p50/p99 latency,
the server processes' CPU (``/proc/PID/stat``, gunicorn's master and workers
summed) and the load generator's CPU (``time.process_time``) over the timed
window, so a client-bound cell shows as one.

CLIENT comparison. minimcp's own client (``http_parts/minimcp_load.py``:
``minimcp.connect(url, protocol=...)`` shared by the K threads,
``call_tool``) against the floor server, next to the raw generator's numbers
on the floor in the same round, at K = 1 and 8: the client-side cost.

Method, because absolute numbers on a shared 2-core machine move 2-3x between
runs, and even within one run (benchmarks/README.md):

- Interleaved: every server is started once and stays up; each round runs
  every cell once, K by K, the contenders' order rotated every round and K,
  each cell a short warm-up then ``--seconds`` timed (requests that
  *complete* in the window count). Ratios are taken within a round and K
  (contender / floor, minimcp / official of that same round), and the report
  gives their median over rounds, with the min-max range for the targets.
  Quote the ratios, not the absolute numbers.
- A cell's connections are new (and handshaken, untimed); the generator
  DELETEs its sessions at the end, so none pile up in a server.
- Every process is started by absolute path with no ``PYTHON*`` variables
  but minimcp's ``PYTHONPATH`` (this work tree, or ``--minimcp-from``); the
  official SDK runs on ``benchmarks/.venv-mcp/bin/python`` (or
  ``--mcp-python``); without it that part is skipped. Start-up is not
  timed here, so everything else runs on this interpreter as it is.
- CPUs apart (``--no-pin`` to share them): on a machine with two CPUs or more, the load
  processes run on the first and every server on the others (their affinity, set before
  they start). Two processes bound by their GILs on the same two cores preempt each other
  at every wake-up, and at K=8 that swings a server between two speeds, 2-3x apart, with
  ~4 context switches per request instead of ~1: it measured the scheduler, not the server
  (the floor itself fell into the slow mode in one round). Apart, every K is steady. Each
  server gets the same CPUs, so gunicorn's 2 workers share one core on a 2-core machine:
  ``scale.py`` measures how it scales over cores.
- Servers listen on 127.0.0.1 only, each in its own session (so a Ctrl-C
  reaches this process alone), and are stopped by their PIDs at the end,
  also on Ctrl-C or SIGTERM (gunicorn's workers too, should its master leave
  any behind). Their stderr goes to a file, shown if something fails.

BEFORE / AFTER. ``--baseline DIR`` adds (a) and (b) again, and the minimcp
client, as ``minimcp@baseline`` / ``gunicorn@baseline``: the same parts,
importing the ``minimcp`` package under DIR (an older checkout), measured in
the same rounds and rotation as every other cell. The report then gives
this tree's ratios to the baseline per wire and K, beside the ratios to the
floor and to the official SDK. DIR's package is copied into the run's
temporary directory and imported from there (``PYTHONPATH``), so that no
``.pyc`` is written into DIR.

This file is named like the standard library's ``http`` package; its own
directory is taken off ``sys.path`` first thing, so nothing here can import
it by mistake.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    del sys.path[0]  # else "import http" anywhere in this process would find this file

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

sys.path.append(HERE)  # (at the end: this folder's http.py must not shadow the standard library's)
from trees import copy_package, git_commit  # noqa: E402

PARTS = os.path.join(HERE, "http_parts")
REPO = os.path.dirname(HERE)
DEFAULT_MCP_PYTHON = os.path.join(HERE, ".venv-mcp", "bin", "python")
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"
WIRES = (HANDSHAKE, MODERN)
CLIENT_KS = (1, 8)  # the client comparison's thread counts
CLIENT_BOUND = 0.90  # a cell whose load generator used this much of a core is marked: client-bound
BASELINE = "@baseline"  # appended to the names of the --baseline DIR contenders: minimcp@baseline, ...

# The targets: the first wave's against the official SDK, the performance issue's (issue 14) against the floor.
VS_OFFICIAL_TARGET = 1.00  # (a) >= official at K=1 and K=8; (b) >= official at K=32
VS_FLOOR_TARGET = 0.90     # >= 0.90x the floor at every K


class Server:
    """One server process under test: how to start it, where it listens, which wires it is measured in."""

    def __init__(self, name, label, command, env, wires):
        self.name, self.label, self.command, self.env, self.wires = name, label, command, env, list(wires)
        self.process = None
        self.port = None
        self.seen_pids = set()  # every PID it ever had (gunicorn workers): all are stopped at the end

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/mcp"

    def pids(self):
        """The processes whose CPU counts: this one and its children (gunicorn's workers)."""
        pids = [self.process.pid] + children_of(self.process.pid)
        self.seen_pids.update(pids)
        return pids


class Cell:
    """One thing measured at each K: a server in one wire (driven by the raw generator), or a client."""

    def __init__(self, name, server, wire, client="raw"):
        self.name, self.server, self.wire, self.client = name, server, wire, client


# -- processes --------------------------------------------------------------------------


#: CPUs for the load processes and for the servers (``--no-pin``: None, they share them all).
PINNED = {"load": None, "servers": None}


def pinned(command, role):
    """``command``, started on the CPUs of its role (``PINNED``): through this interpreter,
    which sets its affinity and execs it, so every thread and worker it starts inherits it."""
    cpus = PINNED[role]
    if cpus is None:
        return command
    pin = f"import os, sys; os.sched_setaffinity(0, {sorted(cpus)!r}); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", pin, *command]


def clean_env(**extra):
    """os.environ without PYTHON* variables (a stray PYTHONPATH would skew imports), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(extra)
    return env


def free_port():
    """A port that is free on 127.0.0.1 now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children_of(pid):
    """PIDs whose parent is ``pid`` (from /proc/*/stat)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def start_server(server, stderr, minimum_processes=1, timeout=60.0):
    """Start ``server`` on a free port and wait until it accepts connections (and has its workers)."""
    server.port = free_port()
    command = pinned([part.replace("{port}", str(server.port)) for part in server.command], "servers")
    server.process = subprocess.Popen(command, env=server.env, cwd=PARTS, stdin=subprocess.DEVNULL,
                                      stdout=stderr, stderr=stderr, start_new_session=True)
    server.seen_pids.add(server.process.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.label} exited at start (code {server.process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            if len(server.pids()) >= minimum_processes:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{server.label} did not listen on port {server.port} within {timeout:.0f} s")


def stop_process(process, timeout=10.0):
    """SIGTERM one process by its PID, wait for it (blocking), SIGKILL it if it takes too long."""
    if process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
    except ProcessLookupError:
        return
    watchdog = threading.Timer(timeout, lambda: process.poll() is None and process.kill())
    watchdog.start()
    try:
        process.wait()  # blocking: Popen.wait(timeout) polls with sleeps
    finally:
        watchdog.cancel()


def stop_server(server):
    """Stop the server by its PID, then any of its workers still alive, by theirs."""
    if server.process is None:
        return
    stop_process(server.process)
    for pid in server.seen_pids - {server.process.pid}:
        try:
            os.kill(pid, 0)
        except OSError:
            continue  # gone, as it should be
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"gunicorn" not in f.read():
                    continue  # the PID was reused by something else: not ours
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class LoadProcess:
    """A load process (``load.py`` or ``minimcp_load.py``): one JSON cell in, one JSON result out."""

    def __init__(self, command, env, stderr):
        self.process = subprocess.Popen(pinned(command, "load"), env=env, cwd=PARTS, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True)

    def run(self, **cell):
        self.process.stdin.write(json.dumps(cell) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a load process exited (code {self.process.wait()})")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()  # EOF: it exits
            watchdog = threading.Timer(10.0, lambda: self.process.poll() is None and self.process.kill())
            watchdog.start()
            self.process.wait()
            watchdog.cancel()
        self.process.stdout.close()


def mcp_version(python):
    """The ``mcp`` version installed for ``python`` and the Python version, or None if it has no mcp."""
    code = "import importlib.metadata as m, sys; print(m.version('mcp'), sys.version.split()[0])"
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env=clean_env())
    except OSError:
        return None
    return out.stdout.split() if out.returncode == 0 else None


def module_version(python, module, env):
    code = f"import {module}; print({module}.__version__)"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=PARTS)
    return out.stdout.strip() if out.returncode == 0 else None


def gunicorn_quiet(python, env):
    """``--no-control-socket`` where gunicorn has one (23+): no socket left in ~/.gunicorn."""
    out = subprocess.run([python, "-m", "gunicorn", "--help"], capture_output=True, text=True, env=env, cwd=PARTS)
    return ["--no-control-socket"] if "--no-control-socket" in out.stdout else []


def minimcp_version(root):
    """``__version__`` of the minimcp package under ``root``, read without importing it."""
    with open(os.path.join(root, "minimcp", "__init__.py")) as f:
        match = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M)
    return match.group(1) if match else "?"




# -- measuring --------------------------------------------------------------------------


def measure(cell, threads, args, loads, warmup=None, seconds=None):
    """Run one cell once; return its result with the derived numbers (raise if it failed)."""
    result = loads[cell.client].run(url=cell.server.url, wire=cell.wire, threads=threads, text=args.text,
                                    warmup=args.warmup if warmup is None else warmup,
                                    seconds=args.seconds if seconds is None else seconds,
                                    pids=cell.server.pids() if cell.client == "raw" else [])
    if "error" in result:
        raise RuntimeError(f"{cell.name} at K={threads}: {result['error']}")
    window, n = result["window_s"], result["requests"]
    result["server_cpu_pct"] = 100 * result["server_cpu_s"] / window
    result["client_cpu_pct"] = 100 * result["client_cpu_s"] / window
    result["server_us"] = 1e6 * result["server_cpu_s"] / n
    result["client_us"] = 1e6 * result["client_cpu_s"] / n
    return result


def rotated(items, by):
    """``items`` starting at index ``by`` (wrapping): who goes first changes every round and K."""
    by %= len(items)
    return items[by:] + items[:by]


# -- reporting --------------------------------------------------------------------------


def ratios(per_round, name, base, key):
    """``name``'s value of ``key`` divided by ``base``'s, one ratio per round."""
    return [mine[key] / theirs[key] for mine, theirs in zip(per_round.get(name, []), per_round.get(base, []))
            if mine.get(key) and theirs.get(key)]


def median_of(per_round, name, key):
    values = [run[key] for run in per_round.get(name, []) if run.get(key) is not None]
    return statistics.median(values) if values else None


def fmt(value, spec, scale=1.0):
    return "n/a" if value is None else format(value * scale, spec)


def fmt_ratio(values):
    return "n/a" if not values else f"{statistics.median(values):.2f}x"


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f}" if values else "n/a"


def verdict(values, bound):
    return "n/a" if not values else ("OK" if statistics.median(values) >= bound else "MISS")


def table(title, rows, columns, per_round, base, labels, base_label=None):
    """Print one table: a row per cell; a column per (heading, key, format, scale, width, ratio to
    ``base``?), each value the median over rounds, each ratio the median of the per-round ratios."""
    first = max(24, max(len(labels[name]) for name in rows if name in per_round) + 1)
    print()
    print(title)
    print(f"{'':<{first}}" + "".join(f"{heading:>{width}}" + (f"{'x ' + (base_label or base):>9}" if ratio else "")
                               for heading, _, _, _, width, ratio in columns))
    for name in rows:
        if name not in per_round:
            continue
        cells = []
        for _heading, key, spec, scale, width, ratio in columns:
            text = fmt(median_of(per_round, name, key), spec, scale)
            if key == "req_s" and (median_of(per_round, name, "client_cpu_pct") or 0) >= 100 * CLIENT_BOUND:
                text += "*"
            cells.append(f"{text:>{width}}")
            if ratio:
                cells.append(f"{fmt_ratio(ratios(per_round, name, base, key)):>9}")
        print(f"{labels[name]:<{first}}" + "".join(cells))


def print_report(results, args, cells, labels, skipped):
    server_rows = [c.name for c in cells if c.client == "raw"]
    columns = [("req/s", "req_s", ",.0f", 1, 8, True),
               ("p50 ms", "p50_s", ".2f", 1e3, 8, False),
               ("p99 ms", "p99_s", ".2f", 1e3, 8, False),
               ("srv CPU%", "server_cpu_pct", ".0f", 1, 10, False),
               ("srv us/req", "server_us", ".0f", 1, 11, True),
               ("cli CPU%", "client_cpu_pct", ".0f", 1, 10, False),
               ("failed", "failed", ".0f", 1, 8, False)]
    for k in args.threads:
        table(f"SERVER, K={k} client threads (one keep-alive connection each), tools/call echo "
              f"(median of {args.rounds} rounds)", server_rows, columns, results[k], "floor", labels)
    print(f"  * the load generator used >= {CLIENT_BOUND:.0%} of a core there: client-bound, the server "
          f"may have more to give. CPU% is of one core ({os.cpu_count()} cores).")
    resets = [f"{labels[name]} K={k}: {total}" for k in args.threads for name in server_rows
              for total in [sum(run.get("connect_retries", 0) for run in results[k].get(name, []))] if total]
    if resets:
        print("  connects reset at set-up (retried, untimed; all rounds): " + "; ".join(resets))

    client_rows = ["floor"] + [c.name for c in cells if c.client != "raw"]
    if len(client_rows) > 1:
        client_labels = dict(labels, floor="raw http.client")
        for k in [k for k in CLIENT_KS if k in args.threads]:
            table(f"CLIENT against the floor server, K={k} threads (median of {args.rounds} rounds; "
                  f"CPU = the client process's)", client_rows,
                  [("req/s", "req_s", ",.0f", 1, 8, True),
                   ("p50 ms", "p50_s", ".2f", 1e3, 8, False),
                   ("p99 ms", "p99_s", ".2f", 1e3, 8, False),
                   ("CPU us/req", "client_us", ".0f", 1, 11, True),
                   ("CPU%", "client_cpu_pct", ".0f", 1, 7, False)],
                  results[k], "floor", client_labels, base_label="raw")

    width = 38 + (len(BASELINE) if any(BASELINE in name for name in labels) else 0)
    print()
    print("RATIOS, req/s, same wire (median of the per-round ratios; min-max over rounds)")
    print(f"{'':<{width}}" + "".join(f"{'K=' + str(k):>21}" for k in args.threads))
    for who, base in (("minimcp", "official"), ("minimcp" + BASELINE, "official"),
                      ("gunicorn", "official"), ("gunicorn" + BASELINE, "official"),
                      ("minimcp", "floor"), ("minimcp" + BASELINE, "floor"),
                      ("gunicorn", "floor"), ("gunicorn" + BASELINE, "floor"), ("official", "floor")):
        for wire in WIRES:
            name, base_name = f"{who} {wire}", base if base == "floor" else f"{base} {wire}"
            if name not in labels or base_name not in labels:
                continue
            row = ""
            for k in args.threads:
                values = ratios(results[k], name, base_name, "req_s")
                row += f"{fmt_ratio(values) + ' (' + spread(values) + ')':>21}"
            print(f"  {who + ' / ' + base + ', ' + wire:<{width - 2}}{row}")
    if any(BASELINE in name for name in labels):
        print_before_after(results, args, labels)

    targets = []
    for wire in WIRES:
        for k in (1, 8):
            targets.append((f"(a) minimcp {wire}, K={k}", ">= official", k, f"minimcp {wire}", f"official {wire}",
                            VS_OFFICIAL_TARGET))
        targets.append((f"(b) gunicorn {wire}, K=32", ">= official", 32, f"gunicorn {wire}", f"official {wire}",
                        VS_OFFICIAL_TARGET))
        for k in args.threads:
            targets.append((f"(a) minimcp {wire}, K={k}", f">= {VS_FLOOR_TARGET:.2f}x floor", k, f"minimcp {wire}",
                            "floor", VS_FLOOR_TARGET))
    print()
    print("TARGETS (req/s; median of the per-round ratios; min-max over rounds)")
    for label, target, k, name, base, bound in targets:
        if k not in results or name not in labels or base not in labels:
            continue
        values = ratios(results[k], name, base, "req_s")
        print(f"  {label:<30}{target:<17}{fmt_ratio(values):>7}   ({spread(values)})   {verdict(values, bound)}")
    for reason in skipped:
        print(f"\n  skipped: {reason}")


def print_before_after(results, args, labels):
    """One line per measure and wire: this tree's number over the baseline's, per K (same round and K)."""
    measures = [("(a) built-in", "minimcp", "req/s", "req_s", "higher"),
                ("(a) built-in", "minimcp", "srv us/req", "server_us", "lower"),
                ("(b) gunicorn", "gunicorn", "req/s", "req_s", "higher"),
                ("(b) gunicorn", "gunicorn", "srv us/req", "server_us", "lower"),
                ("client", "client", "req/s", "req_s", "higher"),
                ("client", "client", "cli us/req", "client_us", "lower")]
    print()
    print(f"minimcp / minimcp{BASELINE}, this tree over the baseline (median of the per-round ratios; "
          f"min-max over rounds)")
    print(f"{'':<44}" + "".join(f"{'K=' + str(k):>21}" for k in args.threads))
    for who, name, heading, key, better in measures:
        for wire in WIRES:
            mine, theirs = f"{name} {wire}", f"{name}{BASELINE} {wire}"
            if mine not in labels or theirs not in labels:
                continue
            row = ""
            for k in args.threads:
                values = ratios(results[k], mine, theirs, key)
                row += f"{fmt_ratio(values) + ' (' + spread(values) + ')' if values else '-':>21}"
            print(f"  {who + ' ' + heading + ', ' + wire:<42}{row}   {better} is better")


# -- the run ------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, help="timed seconds per cell (default 0.8)")
    parser.add_argument("--warmup", type=float, help="untimed seconds before each cell (default 0.25)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="short run: --seconds 0.5 --warmup 0.15 --rounds 3 (unless given)")
    parser.add_argument("--threads", default="1,8,32", help="client thread counts K (default 1,8,32)")
    parser.add_argument("--text", default="hello from the benchmark", help="the text echoed in every call")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (default 2)")
    parser.add_argument("--worker-threads", type=int, default=16, help="gunicorn threads per worker (default 16)")
    parser.add_argument("--mcp-python", default=DEFAULT_MCP_PYTHON,
                        help="an interpreter with the official mcp SDK (default: benchmarks/.venv-mcp/bin/python)")
    parser.add_argument("--no-official", action="store_true", help="leave the official SDK out")
    parser.add_argument("--no-gunicorn", action="store_true", help="leave gunicorn out")
    parser.add_argument("--no-client", action="store_true", help="leave the client comparison out")
    parser.add_argument("--minimcp-from", default=REPO, metavar="DIR",
                        help="the directory holding the minimcp package to test (default: this work tree)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also measure the minimcp package under DIR (an older checkout) as minimcp@baseline "
                             "(and gunicorn@baseline), in the same rounds, and print this tree's ratios to it")
    parser.add_argument("--no-pin", action="store_true",
                        help="let the load processes and the servers share every CPU (default: apart)")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement to FILE")
    args = parser.parse_args()
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
        if not os.path.isfile(os.path.join(args.baseline, "minimcp", "__init__.py")):
            parser.error(f"--baseline {args.baseline}: no minimcp/__init__.py there")
    for name, default, quick in (("seconds", 0.8, 0.5), ("warmup", 0.25, 0.15), ("rounds", 5, 3)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else default)
    args.threads = [int(k) for k in args.threads.split(",")]
    args.minimcp_from = os.path.abspath(args.minimcp_from)
    cpus = sorted(os.sched_getaffinity(0))
    if not args.no_pin and len(cpus) >= 2:
        PINNED.update(load={cpus[0]}, servers=set(cpus[1:]))

    # SIGTERM ends the run like Ctrl-C does: through the finally blocks that stop the servers.
    signal.signal(signal.SIGTERM, interrupted)
    workdir = tempfile.mkdtemp(prefix="minimcp-http-bench-")
    try:
        run(args, workdir)
    except KeyboardInterrupt:
        print("\ninterrupted; every server was stopped", file=sys.stderr)
        sys.exit(130)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def find_official(args):
    """The interpreter for the official SDK and its mcp and Python versions; or why it is skipped."""
    if args.no_official:
        return None, None, "official SDK: --no-official"
    python = os.path.abspath(args.mcp_python)  # not resolved: only through the venv's symlink is mcp found
    if not os.path.exists(python):
        return None, None, f"official SDK: {python} not found; set it up as benchmarks/README.md says"
    versions = mcp_version(python)
    if versions is None:
        return None, None, f"official SDK: {python} has no mcp package"
    return python, versions, None


def run(args, workdir):
    python = sys.executable
    plain = clean_env()
    with_minimcp = clean_env(PYTHONPATH=args.minimcp_from)
    mcp_python, mcp_versions, official_skip = find_official(args)
    skipped = [official_skip] if official_skip else []

    # Each minimcp tree under test: this one, and --baseline's (its contenders' names end in @baseline).
    trees = [("", with_minimcp)]
    if args.baseline:
        trees.append((BASELINE, clean_env(PYTHONPATH=copy_package(args.baseline, workdir, "baseline"))))

    servers = [Server("floor", "floor", [python, "floor_server.py", "{port}"], plain, [HANDSHAKE])]
    for suffix, env in trees:
        servers.append(Server("minimcp" + suffix, "(a) minimcp" + suffix, [python, "echo_app.py", "{port}"], env,
                              WIRES))
    gunicorn = None if args.no_gunicorn else module_version(python, "gunicorn", plain)
    if gunicorn:
        for suffix, env in trees:
            servers.append(Server("gunicorn" + suffix, "(b) gunicorn" + suffix, [
                python, "-m", "gunicorn", "-k", "gthread", "-w", str(args.workers),
                "--threads", str(args.worker_threads), "-b", "127.0.0.1:{port}", "--graceful-timeout", "5",
                *gunicorn_quiet(python, plain), "echo_app:sessionless_app"], env, WIRES))
    else:
        skipped.append("gunicorn: --no-gunicorn" if args.no_gunicorn else f"gunicorn: not installed for {python}")
    if mcp_python:
        servers.append(Server("official", "(c) official", [mcp_python, "official_server.py", "{port}"], plain, WIRES))

    cells = [Cell("floor" if s.name == "floor" else f"{s.name} {wire}", s, wire) for s in servers for wire in s.wires]
    floor = servers[0]
    if not args.no_client:
        cells += [Cell(f"client{suffix} {wire}", floor, wire, client="minimcp" + suffix)
                  for suffix, _ in trees for wire in WIRES]
    labels = {c.name: ("floor" if c.server is floor and c.client == "raw" else
                       f"{c.client} client {c.wire}" if c.client != "raw" else
                       f"{c.server.label} {c.wire}") for c in cells}

    ks = args.threads
    per_round = sum(len([c for c in cells if c.client == "raw" or k in CLIENT_KS]) for k in ks)
    estimate = args.rounds * per_round * (args.seconds + args.warmup + 0.12)
    print(f"HTTP benchmark: K = {', '.join(map(str, ks))} client threads, {args.rounds} rounds (interleaved, "
          f"order rotated), each cell {args.warmup:g} s warm-up + {args.seconds:g} s timed; "
          f"echo text of {len(args.text)} chars; about {estimate / 60:.1f} min")
    print(f"  floor, minimcp, load generators: CPython {sys.version.split()[0]}, {python}")
    print(f"  minimcp {minimcp_version(args.minimcp_from)} from {args.minimcp_from}{git_commit(args.minimcp_from)} "
          f"(PYTHONPATH); (a) built-in server, sessions on; "
          + (f"(b) gunicorn {gunicorn} -k gthread -w {args.workers} --threads {args.worker_threads}, sessionless_app"
             if gunicorn else "(b) skipped"))
    if args.baseline:
        print(f"  minimcp{BASELINE}, gunicorn{BASELINE}, minimcp{BASELINE} client: minimcp "
              f"{minimcp_version(args.baseline)} from {args.baseline}{git_commit(args.baseline)} "
              f"(a copy of its minimcp/, on PYTHONPATH)")
    if mcp_python:
        print(f"  (c) official: mcp {mcp_versions[0]} MCPServer, stateless_http + json_response, uvicorn "
              f"{module_version(mcp_python, 'uvicorn', plain)}, on CPython {mcp_versions[1]}, {mcp_python}")
    print(f"  machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start; "
          + (f"load processes on CPU {sorted(PINNED['load'])}, servers on CPUs {sorted(PINNED['servers'])}"
             if PINNED["load"] else "every process on every CPU (--no-pin, or one CPU)"))
    sys.stdout.flush()

    stderr_path = os.path.join(workdir, "stderr.log")  # every server's and load process's
    results = {k: {} for k in ks}
    loads = {}
    began = time.perf_counter()
    with open(stderr_path, "ab") as stderr:
        try:
            for server in servers:
                workers = args.workers if server.name.startswith("gunicorn") else 0
                start_server(server, stderr, minimum_processes=1 + workers)
            loads["raw"] = LoadProcess([python, "load.py"], plain, stderr)
            if not args.no_client:
                for suffix, env in trees:
                    loads["minimcp" + suffix] = LoadProcess([python, "minimcp_load.py"], env, stderr)
            # Untimed: each cell once (code paths warm, gunicorn's workers loaded), and does it work at all?
            for cell in list(cells):
                try:
                    measure(cell, min(8, max(ks)), args, loads, warmup=0.1, seconds=0.3)
                except RuntimeError as exc:
                    if cell.server.name != "official" or cell.wire != MODERN:
                        raise
                    cells.remove(cell)
                    skipped.append(f"official {MODERN}: {exc}")
            for round_ in range(args.rounds):
                for index, k in enumerate(ks):
                    todo = [c for c in cells if c.client == "raw" or k in CLIENT_KS]
                    for cell in rotated(todo, round_ + index):
                        results[k].setdefault(cell.name, []).append(measure(cell, k, args, loads))
                print(f"  round {round_ + 1}/{args.rounds} done, {time.perf_counter() - began:.0f} s",
                      file=sys.stderr, flush=True)
        except Exception:
            stderr.flush()
            with open(stderr_path, "rb") as f:
                tail = f.read()[-3000:].decode("utf-8", "replace")
            print(f"a contender failed; the servers' stderr ended with:\n{tail}", file=sys.stderr)
            raise
        finally:
            for load in loads.values():
                load.close()
            for server in servers:
                stop_server(server)

    print_report(results, args, cells, labels, skipped)
    print(f"\n(took {time.perf_counter() - began:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": vars(args), "python": sys.version, "mcp": mcp_versions, "gunicorn": gunicorn,
                       "results": {str(k): v for k, v in results.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
