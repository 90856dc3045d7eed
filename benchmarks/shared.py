"""Several workers sharing a RedisBackend: what it costs, and how far it scales.

    python benchmarks/shared.py                      # everything (needs redis-server, haproxy, valgrind)
    python benchmarks/shared.py --no-callgrind --rounds 3

It starts its own ``redis-server`` and HAProxy on free ports (Debian's packages) and
workers of ``shared_parts/worker.py``, and prints:

1. **task round trip** (``tools/call`` of a task tool: create, poll, completed, result) with the
   Redis backend against the memory backend, interleaved in one run: ms per task and the ratio;
   then instructions per task of the server process (callgrind: N tasks minus none, over N);
2. **notification fan-out**: a listener on worker A, a tool on worker B that changes the tool
   list; the time from B's call to A's listener callback, p50 / p99;
3. **stateless ``tools/call`` req/s** with 1, 2 and 3 workers behind HAProxy (round-robin), against
   one worker without a balancer (``http_parts/load.py``, K threads): req/s, and CPU per request
   of the workers and of HAProxy;
4. **Redis commands per task-free call** (``INFO stats`` before and after): it must be 0.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PARTS = os.path.join(HERE, "shared_parts")
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

import callgrind  # noqa: E402  (benchmarks/callgrind.py)
from instructions_http import free_port, stop, wait_listening  # noqa: E402

import minimcp  # noqa: E402

WORKER = os.path.join(PARTS, "worker.py")


def env_for(redis_url):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "MINIMCP_TRACE"}
    env["PYTHONPATH"] = REPO
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def start_worker(redis_url, port=None):
    """A built-in-server worker; (process, port)."""
    port = port or free_port()
    process = subprocess.Popen([sys.executable, WORKER, str(port)], env=env_for(redis_url),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(process, port, time.monotonic() + 30)
    return process, port


def start_redis():
    port = free_port()
    process = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
                                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(process, port, time.monotonic() + 30)
    return process, port


def start_haproxy(ports, workdir):
    port = free_port()
    servers = "".join(f"    server w{n} 127.0.0.1:{p}\n" for n, p in enumerate(ports))
    config = os.path.join(workdir, f"haproxy-{len(ports)}.cfg")
    with open(config, "w") as f:
        f.write("global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 2s\n"
                "    timeout client 30s\n    timeout server 30s\n    option http-keep-alive\n"
                f"frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend workers\n"
                f"backend workers\n    balance roundrobin\n{servers}")
    process = subprocess.Popen([shutil.which("haproxy") or "/usr/sbin/haproxy", "-db", "-f", config],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(process, port, time.monotonic() + 30)
    return process, port


def end(process, sig=signal.SIGTERM):
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client(port, **handlers):
    return minimcp.connect(f"http://127.0.0.1:{port}/mcp", protocol="2026-07-28", timeout=30, **handlers)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# -- 1. task round trip -------------------------------------------------------------------------


def task_round_trip(redis_url, rounds, tasks):
    memory, redis_backed = start_worker(None), start_worker(redis_url)
    per = {"memory": [], "redis": []}
    try:
        with client(memory[1]) as m, client(redis_backed[1]) as r:
            for c in (m, r):
                for n in range(20):  # warm up
                    assert c.call_tool("quick", {"n": n}).structured == {"result": n}
            for round_ in range(rounds):
                for name, c in ((("memory", m), ("redis", r)) if round_ % 2 == 0 else (("redis", r), ("memory", m))):
                    started = time.perf_counter()
                    for n in range(tasks):
                        c.call_tool("quick", {"n": n})
                    per[name].append((time.perf_counter() - started) / tasks)
    finally:
        end(memory[0])
        end(redis_backed[0])
    ratios = [r / m for m, r in zip(per["memory"], per["redis"])]
    print(f"1. task round trip ({tasks} tasks x {rounds} rounds, interleaved): memory "
          f"{1e3 * statistics.median(per['memory']):.2f} ms/task, redis {1e3 * statistics.median(per['redis']):.2f} "
          f"ms/task: redis/memory = {statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})")


def count_tasks(redis_url, tasks, workdir, tag):
    """Instructions of one worker process (under callgrind) that answers ``tasks`` task round trips."""
    log = os.path.join(workdir, f"callgrind-{tag}-{tasks}.log")
    port = free_port()
    command = [sys.executable, WORKER, str(port)]
    saved = os.environ.pop("REDIS_URL", None)
    if redis_url:  # start_counted() passes this process's environment on
        os.environ["REDIS_URL"] = redis_url
    try:
        process = callgrind.start_counted(command, log, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    finally:
        os.environ.pop("REDIS_URL", None)
        if saved is not None:
            os.environ["REDIS_URL"] = saved
    try:
        wait_listening(process, port, time.monotonic() + 300)
        with client(port) as c:
            for n in range(tasks):
                c.call_tool("quick", {"n": n})
    finally:
        stop(process, 300)
    return callgrind.collected(log, command)


def task_instructions(redis_url, tasks, runs, workdir):
    figures = {}
    for name, url in (("memory", None), ("redis", redis_url)):
        without = [count_tasks(url, 0, workdir, f"{name}{i}") for i in range(runs)]
        with_tasks = [count_tasks(url, tasks, workdir, f"{name}{i}") for i in range(runs)]
        figures[name] = callgrind.start_and_per_call(without, with_tasks, tasks)
    m, r = figures["memory"][1], figures["redis"][1]
    print(f"   instructions per task round trip (server process, callgrind, {tasks} tasks, median of {runs}): "
          f"memory {m / 1e3:,.0f}k, redis {r / 1e3:,.0f}k: {r / m:.2f}x")


# -- 2. notification fan-out --------------------------------------------------------------------


def fan_out(redis_url, changes):
    a, b = start_worker(redis_url), start_worker(redis_url)
    heard = threading.Event()
    latencies = []
    try:
        with client(a[1], on_tools_changed=heard.set) as listener, client(b[1]) as changer:
            listener.listen(tools=True)
            for n in range(changes + 10):
                heard.clear()
                started = time.perf_counter()
                changer.call_tool("touch", {"name": f"t{n}"})
                if not heard.wait(10):
                    sys.exit("a change on worker B did not reach the listener on worker A within 10 s")
                if n >= 10:  # the first ten warm up
                    latencies.append(time.perf_counter() - started)
    finally:
        end(a[0])
        end(b[0])
    print(f"2. notification fan-out B -> A ({changes} changes; from B's tools/call to A's listener callback): "
          f"p50 {1e3 * statistics.median(latencies):.2f} ms, p99 {1e3 * percentile(latencies, 99):.2f} ms")


# -- 3. stateless req/s with 1, 2, 3 workers ----------------------------------------------------------


def scaling(redis_url, rounds, seconds, threads, workdir):
    from importlib import util

    spec = util.spec_from_file_location("load", os.path.join(HERE, "http_parts", "load.py"))
    load = util.module_from_spec(spec)
    spec.loader.exec_module(load)
    workers = [start_worker(redis_url) for _ in range(3)]
    balancers = {n: start_haproxy([port for _, port in workers[:n]], workdir) for n in (1, 2, 3)}
    cells = {"direct": (workers[0][1], [workers[0][0].pid], None)}
    for n, (process, port) in balancers.items():
        cells[f"haproxy {n}"] = (port, [w.pid for w, _ in workers[:n]], process.pid)
    results = {name: [] for name in cells}
    try:
        for round_ in range(rounds):
            for name in (list(cells) if round_ % 2 == 0 else list(reversed(cells))):
                port, pids, proxy = cells[name]
                def open_thread(port=port):
                    connection = load.RawConnection(f"http://127.0.0.1:{port}/mcp", load.MODERN, "hello")
                    connection.start()
                    return connection.call, connection.close

                # Server side: the workers, and HAProxy when it is in front.
                out = load.run_cell(open_thread, threads, 0.3, seconds, pids + ([proxy] if proxy else []))
                if out["failed"]:
                    sys.exit(f"{name}: {out['failed']} requests failed")
                results[name].append(out)
    finally:
        for process, _ in balancers.values():
            end(process, signal.SIGUSR1)
        for process, _ in workers:
            end(process)
    print(f"3. stateless tools/call, K={threads} client threads, {rounds} rounds of {seconds} s "
          f"({os.cpu_count()} cores; the load generator shares them):")
    direct = statistics.median(c["req_s"] for c in results["direct"])
    for name, cells_ in results.items():
        rate = statistics.median(c["req_s"] for c in cells_)
        cpu = statistics.median(1e6 * c["server_cpu_s"] / c["requests"] for c in cells_)
        client_cpu = statistics.median(1e6 * c["client_cpu_s"] / c["requests"] for c in cells_)
        print(f"   {name:<10} {rate:>8,.0f} req/s ({rate / direct:.2f}x direct); server side "
              f"({'workers + haproxy' if name != 'direct' else 'the worker'}) {cpu:.0f} us CPU/req, "
              f"load generator {client_cpu:.0f} us CPU/req")


# -- 4. Redis commands per task-free call ---------------------------------------------------------------


def commands_per_call(redis_url, calls):
    import redis

    r = redis.Redis.from_url(redis_url)
    worker = start_worker(redis_url)
    try:
        with client(worker[1]) as c:
            c.call_tool("echo", {"text": "warm"})
            before = r.info("stats")["total_commands_processed"]
            for n in range(calls):
                c.call_tool("echo", {"text": str(n)})
            after = r.info("stats")["total_commands_processed"]
    finally:
        end(worker[0])
        r.close()
    print(f"4. Redis commands per task-free tools/call: {(after - before - 1) / calls:g} "
          f"({after - before - 1} in {calls} calls, INFO itself not counted)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=200, help="task round trips per round (default 200)")
    parser.add_argument("--changes", type=int, default=200, help="changes for the fan-out figure (default 200)")
    parser.add_argument("--seconds", type=float, default=1.5, help="timed window per req/s cell (default 1.5)")
    parser.add_argument("--threads", type=int, default=8, help="client threads for req/s (default 8)")
    parser.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start", flush=True)
    redis_process, redis_port = start_redis()
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    try:
        with tempfile.TemporaryDirectory() as workdir:
            task_round_trip(redis_url, args.rounds, args.tasks)
            if not args.no_callgrind:
                task_instructions(redis_url, 50, 3, workdir)
            fan_out(redis_url, args.changes)
            scaling(redis_url, args.rounds, args.seconds, args.threads, workdir)
            commands_per_call(redis_url, 1000)
    finally:
        end(redis_process)
    print(f"(load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
