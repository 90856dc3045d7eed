"""Profile minimcp's built-in HTTP server under the raw generator's load: where does a request's time go?

    python benchmarks/http_parts/profile_server.py                          # 2025-11-25, K=8, 5 s
    python benchmarks/http_parts/profile_server.py --wire 2026-07-28 --threads 1 --top 40
    python benchmarks/http_parts/profile_server.py --builtin-only           # no profiler: the baseline

It starts ``echo_app.py``'s server (sessions on, as ``benchmarks/http.py``'s
contender (a)) in a child process with ``cProfile`` on *every* thread (each
thread gets its own profiler when it starts; they are merged at the end),
drives it with ``load.py`` (the same cell as the benchmark's, in a process of
its own), stops it by its PID and prints the merged profile: the top functions
by own time and by cumulative time, per request. cProfile slows Python code
down more than C calls, so read the shares, not the absolute times; the
req/s with and without the profiler says how much.

``--serve PORT OUT`` is the child's role (internal).
"""

import argparse
import json
import os
import pstats
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def serve(port, out, profile):
    """The child: the echo server, every thread profiled; dump the merged stats at SIGTERM."""
    import cProfile
    import threading

    profiles = []

    def start_profiling(frame, event, arg):
        sys.setprofile(None)
        profile_ = cProfile.Profile()
        profiles.append(profile_)
        profile_.enable()

    if profile:
        threading.setprofile(start_profiling)  # every thread started from now on
        main_profile = cProfile.Profile()
        profiles.append(main_profile)
        main_profile.enable()
    sys.path.insert(0, HERE)
    from echo_app import server  # noqa: E402

    try:
        server.run("http", port=port)  # returns at SIGTERM, after a graceful stop
    finally:
        if profile:
            stats = None
            for profile_ in profiles:
                try:
                    profile_.create_stats()
                except Exception:
                    continue
                if not profile_.stats:
                    continue
                stats = pstats.Stats(profile_) if stats is None else stats.add(profile_)
            if stats is not None:
                stats.dump_stats(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wire", default="2025-11-25", choices=["2025-11-25", "2026-07-28"])
    parser.add_argument("--threads", type=int, default=8, help="client threads K (default 8)")
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds (default 5)")
    parser.add_argument("--top", type=int, default=30, help="functions to list (default 30)")
    parser.add_argument("--builtin-only", action="store_true", help="run without the profiler (a baseline)")
    parser.add_argument("--minimcp-from", default=REPO, metavar="DIR")
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--no-profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], not args.no_profile)
        return

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tempfile.mktemp(suffix=".pstats", prefix="minimcp-http-profile-")
    command = [sys.executable, os.path.abspath(__file__), "--serve", str(port), out]
    if args.builtin_only:
        command.append("--no-profile")
    server = subprocess.Popen(command, env=dict(env, PYTHONPATH=os.path.abspath(args.minimcp_from)),
                              start_new_session=True)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        cell = {"url": f"http://127.0.0.1:{port}/mcp", "wire": args.wire, "threads": args.threads,
                "warmup": 0.5, "seconds": args.seconds, "text": "hello from the benchmark", "pids": [server.pid]}
        load = subprocess.run([sys.executable, os.path.join(HERE, "load.py")], input=json.dumps(cell) + "\n",
                              capture_output=True, text=True, env=env, cwd=HERE)
        result = json.loads(load.stdout)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
    if "error" in result:
        sys.exit(f"the load failed: {result['error']}")
    n = result["requests"]
    print(f"{args.wire}, K={args.threads}: {result['req_s']:,.0f} req/s, p50 {result['p50_s'] * 1e3:.2f} ms, "
          f"server CPU {1e6 * result['server_cpu_s'] / n:.0f} us/req, "
          f"{'no profiler' if args.builtin_only else 'with cProfile on every thread'}")
    if args.builtin_only:
        return
    stats = pstats.Stats(out)
    os.unlink(out)
    calls = stats.total_calls
    print(f"{calls:,} function calls in the server's life (warm-up and set-up included); "
          f"{result['requests']:,} requests timed")
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
