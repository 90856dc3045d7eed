"""What authorization costs a call: the client's CPU per tools/call with and without a token.

    python benchmarks/auth_cost.py [--calls 2000] [--rounds 3]
    python benchmarks/auth_cost.py --instructions [--calls 200]   # valgrind's callgrind: steady under load

A minimcp server runs in a child process on 127.0.0.1 (Streamable HTTP),
once open and once behind a static bearer token. The client, in this
process, makes the same calls four ways, and the figure is this process's
CPU time (every thread: the caller, the poster, the reader) per call, the
best of ``--rounds`` rounds:

  none         no auth, open server
  header       headers={"Authorization": "Bearer ..."} (a fixed header: the floor)
  bearer       auth="..." (minimcp.client.auth.BearerToken: a requests auth hook)
  oauth        auth=OAuth(...) holding a stored token (the hook of every OAuth flow:
               a token lookup, the header, a response hook that passes a 200 through)

Then the hook alone: microseconds to prepare one request with each, no network.
CPU time, not wall time, so the load on the machine moves it less; with
``--instructions`` each way runs in a client process under callgrind twice
(20 calls, then 20 + ``--calls``), and the figure is the instructions the
extra calls cost, per call: a count that the machine's load does not move.
"""

import argparse
import os
import socket
import subprocess
import sys
import time

# the repository, not benchmarks/ (whose http.py would shadow the standard library's http)
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import requests  # noqa: E402

import minimcp  # noqa: E402
from minimcp.client.auth import BearerToken, MemoryTokenStore, OAuth, Token  # noqa: E402

TOKEN = "benchmark-token-0123456789abcdef"
SERVER = """
import sys
from minimcp import Server
from minimcp.server.http.security import bearer_token_auth
server = Server("bench")

@server.tool()
def echo(text: str) -> str:
    '''Echo.'''
    return text

options = {"auth": bearer_token_auth(sys.argv[2])} if len(sys.argv) > 2 else {}
server.run("http", port=int(sys.argv[1]), **options)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(protected: bool):
    port = free_port()
    child = subprocess.Popen([sys.executable, "-c", SERVER, str(port)] + ([TOKEN] if protected else []),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return child, f"http://127.0.0.1:{port}/mcp"


def oauth_holding_token(url: str) -> OAuth:
    store = MemoryTokenStore()
    store.save(("server", url), {"issuer": "https://as.example", "resource": url})
    store.save(("token", "https://as.example", url), Token(TOKEN, issuer="https://as.example", resource=url).to_dict())
    return OAuth(store=store, interactive=False)


def cpu_per_call(url: str, calls: int, **options) -> float:
    with minimcp.connect(url, timeout=30, **options) as client:
        for _ in range(50):  # warm up: connections, caches
            client.call_tool("echo", {"text": "warm"})
        started = time.process_time()
        for i in range(calls):
            client.call_tool("echo", {"text": f"hello {i}"})
        return (time.process_time() - started) / calls * 1e6


def prepare_cost(auth, rounds: int = 20000) -> float:
    session = requests.Session()
    session.trust_env = False
    session.auth = auth
    request = requests.Request("POST", "http://127.0.0.1:1/mcp", data=b"{}", headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    for _ in range(rounds):
        session.prepare_request(request)
    return (time.perf_counter() - started) / rounds * 1e6


def options_for(way: str, url: str) -> dict:
    """The connect() options of one way to call."""
    return {"none": {}, "header": {"headers": {"Authorization": "Bearer " + TOKEN}}, "bearer": {"auth": TOKEN},
            "oauth": {"auth": oauth_holding_token(url)} if way == "oauth" else {}}[way]


def one(way: str, url: str, calls: int) -> None:
    """The client alone (what callgrind measures): connect, warm up, ``calls`` calls."""
    if url == "prepare":  # the hook alone: prepare requests, no network
        auth = (options_for(way, "http://127.0.0.1:1/mcp").get("auth") if way != "header" else None)
        prepare_cost(BearerToken(auth) if isinstance(auth, str) else auth, calls)
        return
    with minimcp.connect(url, timeout=60, **options_for(way, url)) as client:
        for i in range(calls):
            client.call_tool("echo", {"text": f"hello {i}"})


def instructions(way: str, url: str, calls: int) -> int:
    """Instructions of a client process making ``calls`` calls, counted by callgrind."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out",
                               sys.executable, os.path.abspath(__file__), "--one", way, url, str(calls)],
                              capture_output=True, text=True, timeout=1800, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"callgrind failed: {done.stderr[-500:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--one", nargs=3, metavar=("WAY", "URL", "CALLS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.one[0], args.one[1], int(args.one[2]))
    open_server, open_url = start(False)
    locked_server, locked_url = start(True)
    try:
        if args.instructions:
            calls = args.calls or 200
            print(f"client instructions per tools/call (callgrind; 20 + {calls} calls minus 20 calls):")
            figures = {}
            for way in ("none", "header", "bearer", "oauth"):
                url = open_url if way == "none" else locked_url
                figures[way] = (instructions(way, url, 20 + calls) - instructions(way, url, 20)) / calls
                print(f"  {way:<7} {figures[way]:10.0f}   ({figures[way] - figures['none']:+8.0f} over none)",
                      flush=True)
            print("instructions to prepare one request (the hook alone: 2200 minus 200 requests):")
            for way in ("none", "bearer", "oauth"):
                figures[way] = (instructions(way, "prepare", 2200) - instructions(way, "prepare", 200)) / 2000
                print(f"  {way:<7} {figures[way]:10.0f}   ({figures[way] - figures['none']:+8.0f} over none)",
                      flush=True)
            return
        args.calls = args.calls or 2000
        ways = {"none": (open_url, {}), "header": (locked_url, {"headers": {"Authorization": "Bearer " + TOKEN}}),
                "bearer": (locked_url, {"auth": TOKEN}), "oauth": (locked_url, None)}
        best = {}
        for _ in range(args.rounds):
            for name, (url, options) in ways.items():
                options = {"auth": oauth_holding_token(url)} if options is None else options
                figure = cpu_per_call(url, args.calls, **options)
                best[name] = min(best.get(name, figure), figure)
        print(f"client CPU per tools/call, best of {args.rounds} x {args.calls} calls:")
        for name, figure in best.items():
            print(f"  {name:<7} {figure:8.1f} µs   ({figure - best['none']:+6.1f} µs over none)")
        print("preparing one request (the hook alone, no network):")
        floor = prepare_cost(None)
        for name, auth in (("none", None), ("bearer", BearerToken(TOKEN)), ("oauth", oauth_holding_token(locked_url))):
            figure = prepare_cost(auth)
            print(f"  {name:<7} {figure:8.2f} µs   ({figure - floor:+5.2f} µs)")
    finally:
        for child in (open_server, locked_server):
            child.terminate()
            child.wait(10)


if __name__ == "__main__":
    main()
