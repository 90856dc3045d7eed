"""What protection costs a call: a minimcp HTTP server with and without an OAuth ``auth``.

Run by hand (it is not a test)::

    python benchmarks/auth.py              # about 30 seconds
    python benchmarks/auth.py --rounds 3   # quicker

Two measurements, both in this process, both on 127.0.0.1:

1. The ``auth`` hook alone, per request (``timeit``): no hook; the static
   ``bearer_token_auth``; ``ProtectedResource`` with a ``JWTVerifier`` whose token is
   cached (the steady state of a session: a dictionary lookup, the audience and expiry
   checks); and the same verifier on a token it has not seen (an RS256 signature check,
   the cost of a session's first request or of a new token).
2. End to end: ``client.call_tool("echo")`` with minimcp's client over Streamable HTTP to
   the built-in server, unprotected vs protected (JWT, cached), in interleaved rounds; the
   median of each round's µs per call, and the median of the per-round differences.

The keys and the JWKS endpoint are local (an RSA key from ``cryptography``, ``http.server``),
so no authorization server is needed and nothing is timed but minimcp.
"""

import os
import sys

# This folder has an http.py (the HTTP benchmark): put the work tree in its place on sys.path.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import http.server  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402

import jwt  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

import minimcp  # noqa: E402
from minimcp import Server  # noqa: E402
from minimcp.server.auth.protection import ProtectedResource  # noqa: E402
from minimcp.server.auth.verifiers import JWTVerifier  # noqa: E402
from minimcp.server.http.security import bearer_token_auth  # noqa: E402
from minimcp.server.http.wsgiserver import BackgroundServer  # noqa: E402

ISSUER = "https://auth.example.com"


def jwks_server(key):
    """Serve the public key as a JWKS at /jwks; returns (url, stop)."""
    jwk = dict(json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key())), kid="k1", use="sig")
    body = json.dumps({"keys": [jwk]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()

    def stop():
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)

    return f"http://127.0.0.1:{httpd.server_address[1]}/jwks", stop


def token(key, audience, n=0):
    now = int(time.time())
    return jwt.encode({"iss": ISSUER, "sub": f"user{n}", "aud": audience, "iat": now, "exp": now + 3600,
                       "scope": "mcp", "jti": str(n)}, key, algorithm="RS256", headers={"kid": "k1", "typ": "at+jwt"})


def echo_server():
    server = Server("echo")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def hook_costs(key, jwks, number):
    """µs per call of each auth hook."""
    resource = "http://127.0.0.1:1/mcp"
    protected = ProtectedResource(JWTVerifier(ISSUER, resource, jwks_uri=jwks), resource, [ISSUER])
    good = token(key, resource)
    headers = {"authorization": f"Bearer {good}", "host": "127.0.0.1:1"}
    protected(headers)  # fetch the keys, cache the token
    static = bearer_token_auth("s3cret")
    static_headers = {"authorization": "Bearer s3cret"}
    fresh = [token(key, resource, n) for n in range(1, 201)]
    uncached = ProtectedResource(JWTVerifier(ISSUER, resource, jwks_uri=jwks, cache_seconds=0), resource, [ISSUER])
    uncached({"authorization": f"Bearer {fresh[0]}"})
    rows = [("bearer_token_auth (static token)", lambda: static(static_headers)),
            ("ProtectedResource + JWTVerifier, cached token", lambda: protected(headers))]
    results = [(name, min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6) for name, fn in rows]
    cycle = iter(fresh * (number // len(fresh) + 2))
    verify = min(timeit.repeat(lambda: uncached({"authorization": f"Bearer {next(cycle)}"}), number=200, repeat=3))
    results.append(("ProtectedResource + JWTVerifier, new token (RS256 check)", verify / 200 * 1e6))
    return results


def end_to_end(key, jwks, rounds, calls):
    """Median µs per call_tool, unprotected vs protected, per round (interleaved)."""
    plain_running = BackgroundServer(echo_server().wsgi_app()).start()
    slot = {}
    protected_running = BackgroundServer(lambda environ, start: slot["app"](environ, start)).start()
    resource = protected_running.url + "/mcp"
    slot["app"] = echo_server().wsgi_app(auth=ProtectedResource(JWTVerifier(ISSUER, resource, jwks_uri=jwks),
                                                                resource, [ISSUER]))
    clients = {"unprotected": minimcp.connect(plain_running.url + "/mcp", protocol="2025-11-25"),
               "protected": minimcp.connect(resource, protocol="2025-11-25",
                                            headers={"Authorization": f"Bearer {token(key, resource)}"})}
    per_round = {name: [] for name in clients}
    try:
        for round_number in range(rounds):
            order = list(clients) if round_number % 2 == 0 else list(reversed(clients))
            for name in order:
                client = clients[name]
                for _ in range(50):
                    client.call_tool("echo", {"text": "warm"})
                samples = []
                for _ in range(calls):
                    started = time.perf_counter()
                    client.call_tool("echo", {"text": "hi"})
                    samples.append((time.perf_counter() - started) * 1e6)
                per_round[name].append(statistics.median(samples))
    finally:
        for client in clients.values():
            client.close()
        plain_running.stop()
        protected_running.stop()
        slot["app"].close()
    return per_round


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks, stop = jwks_server(key)
    try:
        print("the auth hook alone, µs per request (best of 5):")
        for name, micros in hook_costs(key, jwks, args.number):
            print(f"  {micros:8.1f}  {name}")
        per_round = end_to_end(key, jwks, args.rounds, args.calls)
    finally:
        stop()
    print(f"\ncall_tool over Streamable HTTP, median µs per call, {args.rounds} rounds x {args.calls} calls:")
    for name, values in per_round.items():
        print(f"  {name:12s} median {statistics.median(values):7.0f}  (rounds: {min(values):.0f}-{max(values):.0f})")
    differences = [p - u for p, u in zip(per_round["protected"], per_round["unprotected"])]
    print(f"  protected - unprotected, median of per-round differences: {statistics.median(differences):+.0f} µs "
          f"(rounds: {min(differences):+.0f} to {max(differences):+.0f})")


if __name__ == "__main__":
    main()
