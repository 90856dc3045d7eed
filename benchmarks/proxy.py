"""What a call through a minimcp proxy costs against a direct call: interleaved, same run.

    python benchmarks/proxy.py [ROUNDS] [CALLS]      # default 20 rounds of 200 calls

Two setups, each measured in alternating batches (direct, proxied, direct, ...):
- stdio: a client starts examples/weather_server.py, vs a client that starts
  `python -m minimcp proxy -- python examples/weather_server.py`;
- memory: a Server in process, vs a ProxyServer in process mounting it.
Prints the median per-call time of each and the ratio.
"""
import os
import statistics
import sys
import time

import minimcp
from minimcp.integrations.proxy import ProxyServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WEATHER = [sys.executable, os.path.join(ROOT, "examples", "weather_server.py")]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def batch(client):
    started = time.perf_counter()
    for _ in range(CALLS):
        client.call_tool("get_weather", {"city": "Paris"})
    return (time.perf_counter() - started) / CALLS


def compare(name, direct, proxied, protocol):
    times = {"direct": [], "proxied": []}
    for client in (direct, proxied):
        batch(client)  # warm up
    for _ in range(ROUNDS):
        times["direct"].append(batch(direct))
        times["proxied"].append(batch(proxied))
    d, p = statistics.median(times["direct"]), statistics.median(times["proxied"])
    print(f"{name:7} {protocol:10}  direct {d * 1e6:7.1f} us/call   proxied {p * 1e6:7.1f} us/call   "
          f"ratio {p / d:.2f}x   (+{(p - d) * 1e6:.1f} us)")


def main():
    """Each protocol era, over stdio and in memory."""
    for protocol in ("auto", "2025-11-25"):
        with minimcp.connect(WEATHER, protocol=protocol) as direct, \
                minimcp.connect([sys.executable, "-m", "minimcp", "proxy", "--", *WEATHER], protocol=protocol) as proxied:
            compare("stdio", direct, proxied, direct.protocol_version)
        sys.path.insert(0, os.path.join(ROOT, "examples"))
        from weather_server import server as weather

        proxy = ProxyServer("gw")
        proxy.mount("", weather, protocol=protocol)
        with proxy, minimcp.connect("memory", server=weather, protocol=protocol) as direct, \
                minimcp.connect("memory", server=proxy, protocol=protocol) as proxied:
            compare("memory", direct, proxied, direct.protocol_version)


if __name__ == "__main__":
    main()
