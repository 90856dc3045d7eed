"""The raw client: plain ``subprocess`` + ``json``, write a line, read a line.

Two uses:

- imported by ``benchmarks/stdio.py``, whose process drives every *server*
  contender with :class:`RawClient` (and times their cold starts);
- run as a script, it is the raw contender of the *client* comparison, with
  the same command line and protocol as ``minimcp_client.py`` and
  ``official_client.py`` (see :func:`run_blocks`).
"""

import json
import os
import subprocess
import sys
import time

PROTOCOL_VERSION = "2025-06-18"  # a handshake version every contender speaks


class RawClient:
    """A stdio MCP client with nothing in it: one request, then block on its answer.

    ``stderr`` is where the server's stderr goes (a file, or ``DEVNULL``);
    a host such as a desktop app keeps it in a log file too.
    """

    def __init__(self, command, env=None, stderr=subprocess.DEVNULL):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=stderr, env=env)
        self._write = self.process.stdin.write
        self._flush = self.process.stdin.flush
        self._readline = self.process.stdout.readline
        self._next_id = 0

    def request(self, method, params=None):
        """Send one request and return its ``result`` (raise on an error or EOF)."""
        self._next_id += 1
        request_id = self._next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(json.dumps(message).encode() + b"\n")
        self._flush()
        while True:
            line = self._readline()
            if not line:
                raise ConnectionError(f"the server closed its stdout (exit code {self.process.poll()})")
            reply = json.loads(line)
            if reply.get("id") != request_id or "method" in reply:
                continue  # a notification or a server request: not ours to wait for
            if "error" in reply:
                raise RuntimeError(f"{method} failed: {reply['error']}")
            return reply["result"]

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(json.dumps(message).encode() + b"\n")
        self._flush()

    def initialize(self):
        """The handshake, then ``tools/list``; check that ``echo`` is there."""
        result = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                             "clientInfo": {"name": "raw-bench-client", "version": "0"}})
        self.notify("notifications/initialized")
        tools = self.request("tools/list")["tools"]
        if "echo" not in [tool["name"] for tool in tools]:
            raise RuntimeError(f"the server has no echo tool: {tools}")
        return result

    def echo(self, text):
        """Call the ``echo`` tool and return the text it answered."""
        result = self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        return result["content"][0]["text"]

    def close(self):
        """Close stdin, wait for the server to exit, and return the CPU seconds it used in all.

        A blocking wait (``Popen.wait(timeout)`` polls with sleeps of up to
        50 ms, which would be counted into every cold start); ``os.wait4``
        also hands back the child's resource usage, to the microsecond.
        """
        self.process.stdin.close()
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.process.stdout.close()
        return usage.ru_utime + usage.ru_stime


def summarize(latencies, cpu_s, wall_s):
    """The report every client contender prints at the end: one JSON line."""
    latencies = sorted(latencies)
    n = len(latencies)
    return {"calls": n, "cpu_s": cpu_s, "wall_s": wall_s,
            "p50_s": latencies[n // 2], "p99_s": latencies[min(n - 1, (n * 99) // 100)]}


def parse_args(argv):
    """``--warmup W --text TEXT -- SERVER COMMAND...`` (shared by the client scripts)."""
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    values = dict(zip(options[::2], options[1::2]))
    return int(values["--warmup"]), values["--text"], command


def run_blocks(echo, warmup, text, commands=sys.stdin, out=sys.stdout):
    """Warm up, then time blocks of sequential ``echo(text)`` calls as the driver asks.

    The protocol with ``benchmarks/stdio.py``, one line each way: this
    process says ``ready`` after ``warmup`` untimed calls; then each line
    ``N`` it reads runs N timed calls and is answered ``ok``; at ``end`` it
    prints the :func:`summarize` report. The driver thus interleaves the
    client contenders block by block, so a burst of load on the host hits
    them all alike.

    CPU time is ``time.process_time()`` around each block: this process's
    own CPU, every thread included, the server's not at all. Every client
    contender runs this same loop (the official one its async twin).
    """
    for _ in range(warmup):
        echo(text)
    if echo(text) != text:
        raise RuntimeError("the echo tool answered something else")
    latencies = []
    cpu = wall = 0.0
    clock, cpu_clock, append = time.perf_counter, time.process_time, latencies.append
    out.write("ready\n")
    out.flush()
    for line in commands:
        if line.strip() == "end":
            break
        cpu0, wall0 = cpu_clock(), clock()
        for _ in range(int(line)):
            t0 = clock()
            echo(text)
            append(clock() - t0)
        wall += clock() - wall0
        cpu += cpu_clock() - cpu0
        out.write("ok\n")
        out.flush()
    return summarize(latencies, cpu, wall)


def main():
    warmup, text, command = parse_args(sys.argv[1:])
    client = RawClient(command)
    client.initialize()
    report = run_blocks(client.echo, warmup, text)
    client.close()
    report["version"] = "stdlib json + subprocess"
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
