"""The raw load generator: ``http.client``, one keep-alive connection per thread, nothing else.

Two uses:

- run as a script, it is the process that ``benchmarks/http.py`` drives every
  *server* with (and the raw contender of the *client* comparison);
- imported by ``minimcp_load.py``, which runs the same cells (:func:`run_cell`)
  with minimcp's client instead.

The protocol with the driver, one JSON line each way: this process reads a
cell ``{"url", "wire", "threads", "warmup", "seconds", "text", "pids"}`` and
answers with its measurements (see :func:`run_cell`); it exits at EOF.

Each thread opens its own connection and, on the handshake wire
(2025-11-25), runs ``initialize`` + ``notifications/initialized`` and keeps
the ``Mcp-Session-Id`` if the server gives one (stateless servers do not); on
the 2026-07-28 wire there is no handshake: every request carries ``_meta``
and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers.
Then it POSTs ``tools/call`` echo as fast as it can, and at the end DELETEs
its session, if it has one (untimed).
"""

import http.client
import json
import sys
import threading
import time
from urllib.parse import urlsplit

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
CLIENT_INFO = {"name": "raw-bench-client", "version": "0"}
TICK = 1 / 100  # /proc/PID/stat counts CPU time in clock ticks (os.sysconf("SC_CLK_TCK"), 100 on Linux)


def server_cpu(pids):
    """CPU seconds (user + system, every thread) used so far by these processes, from /proc."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone (a worker restarted): the driver notices the errors
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat(5))
    return total * TICK


class RawConnection:
    """One keep-alive connection speaking MCP over Streamable HTTP with ``http.client`` only."""

    def __init__(self, url, wire, text):
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)  # sets TCP_NODELAY
        self.wire = wire
        self.text = text
        self.expected = json.dumps(text)[1:-1].encode()  # how the text appears in any JSON answer
        self.session_id = None
        self.next_id = 0
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        params = {"name": "echo", "arguments": {"text": text}}
        if wire == MODERN:
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                               "io.modelcontextprotocol/clientCapabilities": {},
                               "io.modelcontextprotocol/clientInfo": CLIENT_INFO}
        # The tools/call body with a slot for its id: no json.dumps per call.
        self.template = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
                         + json.dumps(params, separators=(",", ":")).encode() + b"}")

    def post(self, message, headers=None):
        """POST one message; return (status, headers, body)."""
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.conn.request("POST", self.path, body, {**self.headers, **(headers or {})})
        response = self.conn.getresponse()
        return response.status, response, response.read()

    def start(self):
        """Connect and, on the handshake wire, run initialize; check that echo answers."""
        self.conn.connect()
        if self.wire == MODERN:
            self.headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
        else:
            status, response, body = self.post({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT_INFO}})
            if status != 200:
                raise RuntimeError(f"initialize: HTTP {status}: {body[:300]!r}")
            self.session_id = response.getheader("Mcp-Session-Id")
            if self.session_id:
                self.headers["Mcp-Session-Id"] = self.session_id
            self.headers["MCP-Protocol-Version"] = HANDSHAKE
            status, _, body = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
            if status != 202:
                raise RuntimeError(f"notifications/initialized: HTTP {status}: {body[:300]!r}")
        status, response, body = self.post(self.template % 1)
        reply = parse_answer(response, body)
        if status != 200 or reply.get("result", {}).get("content", [{}])[0].get("text") != self.text:
            raise RuntimeError(f"tools/call echo answered HTTP {status}: {body[:300]!r}")
        self.next_id = 2

    def call(self):
        """One tools/call echo; True if it answered 200 with the text."""
        self.next_id += 1
        self.conn.request("POST", self.path, self.template % self.next_id, self.headers)
        response = self.conn.getresponse()
        body = response.read()
        return response.status == 200 and self.expected in body

    def close(self):
        """DELETE the session, if there is one, and close the connection."""
        try:
            if self.session_id:
                self.conn.request("DELETE", self.path, headers=self.headers)
                self.conn.getresponse().read()
        finally:
            self.conn.close()


def parse_answer(response, body):
    """The JSON-RPC answer in a JSON body or in the last ``data:`` line of an SSE body."""
    if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
        lines = [line[5:].strip() for line in body.decode().splitlines() if line.startswith("data:")]
        body = lines[-1].encode() if lines else b"{}"
    return json.loads(body or b"{}")


def run_cell(open_thread, threads, warmup, seconds, pids):
    """Run ``threads`` threads, each calling as fast as it can; time a window after a warm-up.

    ``open_thread()`` is called on each thread and returns ``(call, close)``:
    ``call()`` makes one request and returns True if it was answered right.
    After every thread is ready (a barrier), ``warmup`` seconds go untimed;
    then the window of ``seconds``: the requests that *complete* inside it
    count, and their latencies. This thread samples the CPU of this process
    (``time.process_time``: every thread of it) and of the servers'
    processes (``pids``) at both ends of the window.

    Returns requests/s, p50/p99 latency (seconds), the server's and this
    process's CPU over the window (seconds), requests, failed requests and
    connection attempts that were reset and retried.
    """
    latencies = [[] for _ in range(threads)]
    failures = [0] * threads
    problems = []
    window = {}

    def set_window():
        window["start"] = time.perf_counter() + warmup
        window["end"] = window["start"] + seconds

    barrier = threading.Barrier(threads + 1, action=set_window)
    opening = threading.Lock()
    retries = [0]

    def worker(index):
        try:
            # One at a time: a burst of connects overflows a small listen backlog (the
            # stdlib servers' is 5), and the overflow shows as resets. A reset here is
            # retried and counted (``connect_retries``); the timed window is not affected.
            with opening:
                for attempt in range(10):
                    try:
                        call, close = open_thread()
                        break
                    except (ConnectionResetError, BrokenPipeError, ConnectionRefusedError):
                        if attempt == 9:
                            raise
                        retries[0] += 1
                        time.sleep(0.02 * (attempt + 1))
        except BaseException as exc:
            problems.append(repr(exc))
            barrier.abort()
            return
        try:
            barrier.wait()
            start, end = window["start"], window["end"]
            clock, mine, failed = time.perf_counter, latencies[index], 0
            while True:
                t0 = clock()
                ok = call()
                t1 = clock()
                if t1 >= start:
                    if t1 > end:
                        break
                    mine.append(t1 - t0)
                    failed += not ok
            failures[index] = failed
        except BaseException as exc:
            problems.append(repr(exc))
        finally:
            close()

    workers = [threading.Thread(target=worker, args=(i,), name=f"load-{i}") for i in range(threads)]
    for thread in workers:
        thread.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        for thread in workers:
            thread.join()
        raise RuntimeError("a thread could not start: " + "; ".join(problems)) from None
    time.sleep(max(0.0, window["start"] - time.perf_counter()))
    cpu0, server0, wall0 = time.process_time(), server_cpu(pids), time.perf_counter()
    time.sleep(max(0.0, window["end"] - time.perf_counter()))
    cpu1, server1, wall1 = time.process_time(), server_cpu(pids), time.perf_counter()
    for thread in workers:
        thread.join()
    if problems:
        raise RuntimeError("; ".join(problems[:3]))
    done = sorted(latency for mine in latencies for latency in mine)
    n = len(done)
    if not n:
        raise RuntimeError("no request completed in the window")
    return {"requests": n, "failed": sum(failures), "connect_retries": retries[0], "req_s": n / seconds,
            "p50_s": done[n // 2], "p99_s": done[min(n - 1, (n * 99) // 100)],
            "client_cpu_s": cpu1 - cpu0, "server_cpu_s": server1 - server0, "window_s": wall1 - wall0}


def serve_cells(open_for, after_cell=None):
    """Read cells from stdin, run each, print each result (or its error) as one JSON line.

    ``open_for(cell)`` returns the cell's ``open_thread`` (see :func:`run_cell`);
    ``after_cell()``, if given, runs after each cell (minimcp's client closes there).
    """
    for line in sys.stdin:
        cell = json.loads(line)
        try:
            result = run_cell(open_for(cell), cell["threads"], cell["warmup"], cell["seconds"], cell["pids"])
        except Exception as exc:
            result = {"error": str(exc)}
        finally:
            if after_cell is not None:
                after_cell()
        print(json.dumps(result), flush=True)


def main():
    def open_for(cell):
        def open_thread():
            connection = RawConnection(cell["url"], cell["wire"], cell["text"])
            try:
                connection.start()
            except BaseException:
                connection.conn.close()
                raise
            return connection.call, connection.close
        return open_thread

    serve_cells(open_for)


if __name__ == "__main__":
    main()
