"""Soak: minutes of mixed traffic, then are threads, file descriptors and RSS flat? (run by hand)

    python benchmarks/soak.py --minutes 10 [--workers 8] [--seed 0]

Worker threads each loop: connect (stdio to tests/servers/testing_server.py, or Streamable
HTTP to the built-in server in this process), in either era (2025-11-25 or 2026-07-28), make
a few calls (echo, a tool that reports progress, a call cancelled by a short timeout), then
leave: a clean close, a close while a call is in flight, or (stdio) the server killed.
Counts every request sent, answered right, timed out (on purpose), cut off by the close or
kill (on purpose) and lost (anything else: a wrong answer, an unexpected error, a hang).
Samples this process's threads, open fds and RSS after a warm-up and at the end, and says
whether they stayed flat (the HTTP app's handler pool apart: it may grow to its bound).
"""

import argparse
import collections
import importlib.util
import os
import random
import signal
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# sys.path[0] is benchmarks/, whose http.py would shadow the standard library's http.
sys.path[0] = ROOT
TESTING_SERVER = os.path.join(ROOT, "tests", "servers", "testing_server.py")

import minimcp  # noqa: E402
from minimcp.errors import ConnectionClosed, MCPError, Timeout  # noqa: E402
from minimcp.server.http.wsgiserver import BackgroundServer  # noqa: E402

ERAS = ("2025-11-25", "2026-07-28")


def sample() -> dict:
    """This process's thread count, open fds and RSS (kB), from /proc."""
    with open("/proc/self/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    # The HTTP app's handler pool (minimcp-handler-N) is bounded and keeps its threads once made:
    # it is counted apart, and may grow up to its max_workers without being a leak.
    pool = sum(1 for t in threading.enumerate() if t.name.startswith("minimcp-handler-"))
    return {"threads": threading.active_count() - pool, "pool": pool, "fds": len(os.listdir("/proc/self/fd")),
            "rss_kb": rss}


def settled(limit: float = 60.0, quiet: float = 6.0) -> dict:
    """A sample once threads and fds stopped falling for ``quiet`` seconds (bounded by ``limit``):
    a call cut off by a close still runs on the server until its ``wait_for_cancel`` (5 s) ends
    or it is cancelled, the HTTP server's connection threads end when they notice their client's
    socket closed, and a killed stdio child is reaped by its reaper thread, a moment after."""
    deadline = time.monotonic() + limit
    best, since = sample(), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.5)
        now = sample()
        if now["threads"] < best["threads"] or now["fds"] < best["fds"]:
            best, since = now, time.monotonic()
    return sample()


def thread_kinds() -> str:
    """The live threads by name, numbers dropped (minimcp-http-12 -> minimcp-http)."""
    kinds = collections.Counter(t.name.rstrip("0123456789").rstrip("-") for t in threading.enumerate())
    return ", ".join(f"{name} x{n}" for name, n in sorted(kinds.items()))


def where_threads_wait(prefix: str = "minimcp-http-") -> str:
    """Where the live threads named ``prefix``* are (their two innermost frames), counted."""
    import traceback
    frames = sys._current_frames()
    spots: collections.Counter = collections.Counter()
    for t in threading.enumerate():
        if t.name.startswith(prefix) and t.ident in frames:
            stack = traceback.extract_stack(frames[t.ident])
            spots[" <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in stack[-6:][::-1])] += 1
    return "\n".join(f"    x{n} {spot}" for spot, n in spots.most_common(5))


class Counts:
    """Thread-safe counters, and the first few surprises."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.n: collections.Counter = collections.Counter()
        self.surprises: list = []

    def add(self, key: str, detail: str = "") -> None:
        with self.lock:
            self.n[key] += 1
            if key == "lost" and len(self.surprises) < 10:
                self.surprises.append(detail)


def connect(kind: str, era: str, url: str) -> minimcp.Client:
    """A client over stdio or HTTP in the given era."""
    target = [sys.executable, TESTING_SERVER] if kind == "stdio" else url
    return minimcp.connect(target, protocol=era, timeout=10, on_stderr=lambda line: None)


def one_call(client: minimcp.Client, rng: random.Random, counts: Counts) -> None:
    """One request of a random kind, counted by how it ended."""
    what = rng.choice(["echo", "echo", "progress", "cancel"])
    counts.add("sent")
    try:
        if what == "echo":
            text = f"t{rng.random()}"
            ok = client.call_tool("echo", {"text": text}).text == text
        elif what == "progress":
            seen = []
            n = rng.randint(1, 5)
            ok = client.call_tool("count", {"n": n}, on_progress=seen.append).text == f"counted {n}"
        else:
            try:
                client.call_tool("wait_for_cancel", {"seconds": 5}, timeout=rng.uniform(0.05, 0.3))
                ok = False
            except Timeout:
                counts.add("timed out")
                return
        counts.add("answered" if ok else "lost", f"{what}: wrong answer")
    except ConnectionClosed:
        counts.add("cut off")
    except MCPError as exc:
        counts.add("lost", f"{what}: {exc!r}")


def leave(client: minimcp.Client, kind: str, rng: random.Random, counts: Counts) -> None:
    """End a client's life: cleanly, mid-call, or (stdio) by killing its server."""
    how = rng.choice(["clean", "mid-call", "kill"] if kind == "stdio" else ["clean", "mid-call"])
    counts.add(f"left {how}")
    if how == "clean":
        client.close()
        return
    if how == "kill":
        os.kill(client.session.transport.process.pid, signal.SIGKILL)
        one_call(client, rng, counts)  # it must fail at once (cut off), not hang
        client.close()
        return
    started = threading.Event()

    def in_flight() -> None:
        counts.add("sent")
        started.set()
        try:
            client.call_tool("wait_for_cancel", {"seconds": 5})
            counts.add("lost", "mid-call: answered after close")
        except (ConnectionClosed, Timeout):
            counts.add("cut off")
        except MCPError as exc:
            counts.add("lost", f"mid-call: {exc!r}")

    caller = threading.Thread(target=in_flight)
    caller.start()
    started.wait(5)
    time.sleep(rng.uniform(0, 0.05))  # land the close before, during or after the send
    client.close()
    caller.join(15)
    if caller.is_alive():
        counts.add("lost", "mid-call: the caller hung after close")


def worker(index: int, url: str, stop: threading.Event, seed: int, counts: Counts) -> None:
    """Loop: connect, call a few times, leave; until ``stop``."""
    rng = random.Random(seed * 1000 + index)
    kind = "stdio" if index % 2 == 0 else "http"
    while not stop.is_set():
        era = rng.choice(ERAS)
        try:
            client = connect(kind, era, url)
        except MCPError as exc:
            counts.add("lost", f"connect {kind} {era}: {exc!r}")
            continue
        counts.add(f"connects {kind} {era}")
        for _ in range(rng.randint(1, 20)):
            if stop.is_set():
                break
            one_call(client, rng, counts)
        leave(client, kind, rng, counts)


def run(url: str, seconds: float, workers: int, seed: int, counts: Counts) -> None:
    """Run ``workers`` workers for ``seconds``, then join them all."""
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(i, url, stop, seed, counts), name=f"soak-{i}")
               for i in range(workers)]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(60)


def main() -> int:
    """Warm up, sample, soak, sample, report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("testing_server", TESTING_SERVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.print = lambda *a, **k: None  # its wait_for_cancel reports on stderr: noise here
    counts = Counts()
    app = module.server.wsgi_app()
    with BackgroundServer(app) as running:
        url = running.url + "/mcp"
        run(url, 10, args.workers, args.seed + 1, Counts())  # warm-up: pools, caches, imports
        before = settled()
        kinds_before = thread_kinds()
        start = time.monotonic()
        run(url, args.minutes * 60, args.workers, args.seed, counts)
        elapsed = time.monotonic() - start
        after = settled()
        kinds_after = thread_kinds()
        waits = where_threads_wait()
    n = counts.n
    print(f"ran {elapsed / 60:.1f} min with {args.workers} workers (half stdio, half HTTP), seed {args.seed}")
    for key in sorted(n):
        print(f"  {key:28} {n[key]}")
    accounted = n["answered"] + n["timed out"] + n["cut off"] + n["lost"]
    print(f"requests: {n['sent']} sent, {n['answered']} answered right, {n['timed out']} timed out on purpose, "
          f"{n['cut off']} cut off by a close/kill on purpose, {n['lost']} lost; "
          f"unaccounted {n['sent'] - accounted}")
    print(f"threads {before['threads']} -> {after['threads']} (and the handler pool {before['pool']} -> "
          f"{after['pool']} of at most {app.workers.max_workers}), fds {before['fds']} -> {after['fds']}, "
          f"RSS {before['rss_kb'] / 1024:.1f} -> {after['rss_kb'] / 1024:.1f} MB")
    flat = (after["threads"] <= before["threads"] and after["pool"] <= app.workers.max_workers
            and after["fds"] <= before["fds"] + 2 and after["rss_kb"] <= before["rss_kb"] * 1.2 + 5 * 1024)
    if after["threads"] > before["threads"]:
        print(f"  threads before: {kinds_before}\n  threads after:  {kinds_after}")
        print(f"  where the HTTP connection threads are:\n{waits}")
    for line in counts.surprises:
        print(f"  lost: {line}")
    ok = flat and n["lost"] == 0 and n["sent"] == accounted
    print("verdict:", "FLAT, nothing lost" if ok else
          f"NOT OK ({'not flat' if not flat else 'flat'}, {n['lost']} lost, {n['sent'] - accounted} unaccounted)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
