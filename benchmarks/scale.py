"""Does the sessionless app scale with cores? gunicorn with 1 worker vs 2 workers, interleaved.

    python benchmarks/scale.py                    # 5 rounds, K = 8 and 32, 2026-07-28 wire
    python benchmarks/scale.py --rounds 3 --wire 2025-11-25

Both servers (``gunicorn -k gthread -w N --threads 16``, ``http_parts/echo_app:sessionless_app``)
stay up; each round drives each with ``http_parts/load.py`` (the cell of ``http.py``), the
order swapped every round. It prints req/s and the server's CPU per request for each, and the
median 2-worker / 1-worker ratio with its range. On a 2-core machine the load generator needs
a share of the same cores: the server's CPU per request says whether the second worker paid.
It needs gunicorn (``pip install gunicorn``) next to this interpreter.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "http_parts")
REPO = os.path.dirname(HERE)


def free_port():
    """A port the OS says is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(gunicorn, workers):
    """gunicorn with ``workers`` workers, in its own session; (process, port, pids of master and workers)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = REPO
    process = subprocess.Popen([gunicorn, "-k", "gthread", "-w", str(workers), "--threads", "16",
                                "-b", f"127.0.0.1:{port}", "--chdir", PARTS, "--log-level", "warning",
                                "echo_app:sessionless_app"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # polling an external process, bounded
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    children = []
    while time.monotonic() < deadline:  # the master forks its workers after it binds: count them all
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        if len(children) >= workers:
            break
        time.sleep(0.2)
    return process, port, [process.pid] + [int(pid) for pid in children]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.5, help="timed window per cell (default 1.5)")
    parser.add_argument("--wire", default="2026-07-28")
    parser.add_argument("--threads", default="8,32", help="client threads K, comma-separated")
    args = parser.parse_args()
    gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or shutil.which("gunicorn")
    if not gunicorn:
        sys.exit("gunicorn is not installed (pip install gunicorn)")
    ks = [int(k) for k in args.threads.split(",")]
    servers = {workers: start(gunicorn, workers) for workers in (1, 2)}
    load = subprocess.Popen([sys.executable, os.path.join(PARTS, "load.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    results = {(w, k): [] for w in (1, 2) for k in ks}
    print(f"gunicorn 1 vs 2 workers, sessionless app, wire {args.wire}; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at start", flush=True)
    try:
        for r in range(args.rounds):
            for k in ks:
                for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
                    _, port, pids = servers[workers]
                    cell = {"url": f"http://127.0.0.1:{port}/mcp", "wire": args.wire, "threads": k, "warmup": 0.3,
                            "seconds": args.seconds, "text": "hello", "pids": pids}
                    load.stdin.write(json.dumps(cell) + "\n")
                    load.stdin.flush()
                    out = json.loads(load.stdout.readline())
                    if "error" in out:
                        sys.exit(f"{workers} worker(s), K={k}: {out['error']}")
                    results[workers, k].append(out)
                    print(f"  round {r} K={k} workers={workers}: {out['req_s']:,.0f} req/s, server "
                          f"{1e6 * out['server_cpu_s'] / out['requests']:.0f} us CPU/req", flush=True)
    finally:
        load.stdin.close()
        load.wait()
        for process, _, _ in servers.values():
            os.killpg(process.pid, signal.SIGTERM)
            process.wait()
    for k in ks:
        one, two = results[1, k], results[2, k]
        ratios = [b["req_s"] / a["req_s"] for a, b in zip(one, two)]
        cpu = {w: statistics.median(1e6 * c["server_cpu_s"] / c["requests"] for c in results[w, k]) for w in (1, 2)}
        print(f"K={k}: 1 worker {statistics.median(c['req_s'] for c in one):,.0f} req/s ({cpu[1]:.0f} us CPU/req), "
              f"2 workers {statistics.median(c['req_s'] for c in two):,.0f} req/s ({cpu[2]:.0f} us CPU/req): "
              f"2/1 = {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})")
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
