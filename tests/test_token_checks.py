"""Every token is checked as its RFC says (issue 29): the JWT's type, the introspection
endpoint's refusals, the JWKS back-off, and DPoP-bound tokens (RFC 9449).

The issuer here is ours (an EC key from ``cryptography``, its JWKS served by ``http.server`` on
127.0.0.1), so a test can sign what a real authorization server would not: a logout token
for this resource, an access token bound to another key. Where a real authorization server
shows the behaviour, it is oidc-provider (tests/oidc/README.md).
"""

import base64
import contextlib
import hashlib
import http.server
import json
import logging
import re
import secrets
import socket
import subprocess
import sys
import threading
import time

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import ec
from oidc.provider import RESOURCE_SERVER
from test_protection import jwks_server as counting_jwks_server

from minimcp import Context, Server, Unauthorized, connect
from minimcp.client.auth import ClientCredentials, MemoryTokenStore
from minimcp.server.auth.protection import InvalidToken, ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier, JWTVerifier
from minimcp.server.http.wsgiserver import BackgroundServer

ISSUER = "https://auth.example.com"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}


class Issuer:
    """An authorization server's signing key (ES256, kid ``k1`` unless told) and the JWTs it signs."""

    def __init__(self, kid="k1"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.kid = kid

    def jwks(self):
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [dict(jwk, kid=self.kid, use="sig", alg="ES256")]}

    def token(self, audience, typ="at+jwt", lifetime=300, **claims):
        """A JWT with header ``typ`` (None: no typ at all) and the claims of an access token."""
        now = int(time.time())
        body = {"iss": ISSUER, "sub": "alice", "aud": audience, "iat": now, "exp": now + lifetime,
                "scope": "mcp", "client_id": "app", "jti": secrets.token_urlsafe(8)}
        body.update(claims)
        return jwt.encode(body, self.key, algorithm="ES256", headers={"kid": self.kid, "typ": typ})


@contextlib.contextmanager
def jwks_server(issuer):
    """Serve ``issuer.jwks()`` at ``/jwks`` on a free port: its URL (test_protection's server,
    whose fetch count these tests do not need)."""
    with counting_jwks_server(issuer) as (url, _fetches):
        yield url


@contextlib.contextmanager
def held_jwks_server(*documents):
    """Serve ``documents[n]`` as the JWKS at the n-th fetch (the last one from then on): the first
    answer at once, every later one only once the test sets ``release``. Yields (its URL, an Event
    set when a second fetch has begun, ``release``, the list of fetches begun)."""
    refreshing, release, fetches = threading.Event(), threading.Event(), []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            fetches.append(self.path)
            n = len(fetches)
            if n > 1:
                refreshing.set()
                release.wait(30)  # held: the refresh is under way until the test says
            body = json.dumps(documents[min(n, len(documents)) - 1]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="held-jwks-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks", refreshing, release, fetches
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def in_thread(call, name):
    """Run ``call()`` in a started thread: (the thread, a dict that gets its "answer" or "error",
    an Event set when it has one)."""
    result, answered = {}, threading.Event()

    def run():
        try:
            result["answer"] = call()
        except Exception as exc:
            result["error"] = exc
        finally:
            answered.set()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread, result, answered


@contextlib.contextmanager
def introspection_server(answers):
    """An RFC 7662 endpoint that answers each token as ``answers[token]`` says: (status, body);
    its URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            form = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            token = dict(pair.split("=", 1) for pair in form.split("&"))["token"]
            status, body = answers[token]
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html" if isinstance(body, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="introspection-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/introspect"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@contextlib.contextmanager
def silent_port():
    """A listening socket that accepts connections (the kernel's backlog) and never answers:
    (a URL on it, the socket)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", listener
    finally:
        listener.close()


def connections_made(listener):
    """The connections queued at ``listener`` so far (taken off the queue and closed)."""
    listener.setblocking(False)
    made = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return made
        conn.close()
        made += 1


def whoami_server():
    server = Server("checks")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the token says is calling."""
        return str(ctx.principal)

    return server


@contextlib.contextmanager
def serve(verifier_for, path="/mcp", issuer=ISSUER, seen=None, **options):
    """``whoami_server()`` on a free port, protected by ``verifier_for(url)``: its MCP URL.
    ``seen``: a list to add each request's (method, Authorization scheme, has a DPoP header) to."""
    slot = {}

    def app(environ, start_response):
        if seen is not None:
            seen.append((environ["REQUEST_METHOD"], environ.get("HTTP_AUTHORIZATION", "").partition(" ")[0],
                         "HTTP_DPOP" in environ))
        return slot["app"](environ, start_response)

    running = BackgroundServer(app)
    url = running.url + path
    auth = ProtectedResource(verifier_for(url), resource=url, authorization_servers=[issuer], **options)
    slot["app"] = whoami_server().wsgi_app(path=path, auth=auth)
    try:
        with running:
            yield url
    finally:
        slot["app"].close()


def post(url, authorization=None, **headers):
    headers = dict(HEADERS, **headers)
    if authorization is not None:
        headers["Authorization"] = authorization
    return requests.post(url, json=INITIALIZE, headers=headers, timeout=30)


def challenges(response):
    """``{scheme: {param: value}}`` of the ``WWW-Authenticate`` challenges (quoted values only)."""
    found = {}
    for challenge in re.split(r",\s*(?=(?:Bearer|DPoP) )", response.headers.get("WWW-Authenticate", "")):
        scheme, _, params = challenge.partition(" ")
        found[scheme] = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', params))
    return found


def refusal(response):
    """(status, the ``error`` and ``error_description`` of the Bearer challenge)."""
    bearer = challenges(response).get("Bearer", {})
    return response.status_code, bearer.get("error", ""), bearer.get("error_description", "")


# -- 1. the JWT's type: an access token says it is one (RFC 9068 §2.1, §4; RFC 8725 §3.11) ------------

def test_a_jwt_that_is_not_an_access_token_is_refused_by_its_typ():
    issuer = Issuer()
    with jwks_server(issuer) as jwks, serve(lambda url: JWTVerifier(ISSUER, url, jwks_uri=jwks)) as url:
        # signed by the issuer's key, for this resource, every claim right: but a logout token
        for typ in ("logout+jwt", "JWT", None, "application/jwt", "text/at+jwt"):
            status, error, description = refusal(post(url, f"Bearer {issuer.token(url, typ=typ)}"))
            assert (status, error) == (401, "invalid_token"), typ
            assert "typ" in description and "at+jwt" in description, description
        # RFC 7515 §4.1.9: "application/" may be left out, and media types ignore case
        for typ in ("at+jwt", "application/at+jwt", "AT+JWT", "Application/At+Jwt"):
            assert post(url, f"Bearer {issuer.token(url, typ=typ)}").status_code == 200, typ

    # an issuer that types its access tokens "JWT", or not at all, is allowed by name
    with jwks_server(issuer) as jwks:
        loose = JWTVerifier(ISSUER, "http://mcp.test/mcp", jwks_uri=jwks, accept_typ=("at+jwt", "JWT"))
        assert loose.verify(issuer.token("http://mcp.test/mcp", typ="JWT")).subject == "alice"
        assert loose.verify(issuer.token("http://mcp.test/mcp", typ="at+jwt")).subject == "alice"
        for typ in ("logout+jwt", None):
            with pytest.raises(Exception, match="typ"):
                loose.verify(issuer.token("http://mcp.test/mcp", typ=typ))
        untyped = JWTVerifier(ISSUER, "http://mcp.test/mcp", jwks_uri=jwks, allow_untyped=True)
        assert untyped.verify(issuer.token("http://mcp.test/mcp", typ=None)).subject == "alice"
        with pytest.raises(Exception, match="typ"):
            untyped.verify(issuer.token("http://mcp.test/mcp", typ="logout+jwt"))


def test_the_first_token_refused_for_its_typ_is_logged_once_as_a_warning_naming_the_fix(caplog):
    """Keycloak, Entra ID and Auth0 type their access tokens ``JWT``, Okta and Cognito not at all:
    with the strict default every client of theirs is refused, and each refusal is only logged at
    info. The first one is a warning (once per verifier, not per request) naming the setting."""
    issuer, audience = Issuer(), "http://mcp.test/mcp"
    with jwks_server(issuer) as jwks, caplog.at_level("INFO", logger="minimcp.server.auth"):
        auth = ProtectedResource(JWTVerifier(ISSUER, audience, jwks_uri=jwks), audience, [ISSUER])
        for _ in range(2):  # two requests of a Keycloak-like issuer
            with pytest.raises(Unauthorized, match="typ"):
                auth({"authorization": f"Bearer {issuer.token(audience, typ='JWT')}"})
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "accept_typ=('at+jwt', 'JWT')" in warnings[0] and "'JWT'" in warnings[0], warnings
        untyped = JWTVerifier(ISSUER, audience, jwks_uri=jwks)  # an Okta-like issuer: a verifier of its own
        for _ in range(2):
            with pytest.raises(InvalidToken, match="typ"):
                untyped.verify(issuer.token(audience, typ=None))
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 2 and "allow_untyped=True" in warnings[1], warnings


# -- 2. the introspection endpoint's answers: a "no" is a 401, "cannot tell" a 503 (RFC 7662 §2.3) --------

def test_a_token_the_introspection_endpoint_refuses_with_a_400_is_a_401_not_a_503(oidc_provider):
    """oidc-provider answers 400 ``unsupported_token_type`` for a JWT access token (here: one
    issued for another resource): a definite no, which the client must hear as invalid_token."""
    verifier = lambda url: IntrospectionVerifier(oidc_provider.endpoint("introspection"), *RESOURCE_SERVER,  # noqa: E731
                                                 audience=url, issuer=oidc_provider.issuer, cache_seconds=0)
    with serve(verifier) as url:
        other = oidc_provider.client_credentials("mcp", resource=url.replace("/mcp", "/jwt/mcp"))["access_token"]
        assert other.count(".") == 2  # a JWT, which oidc-provider does not introspect
        answer = requests.post(oidc_provider.endpoint("introspection"), data={"token": other}, auth=RESOURCE_SERVER,
                               timeout=10)
        assert answer.status_code == 400 and answer.json()["error"] == "unsupported_token_type"
        response = post(url, f"Bearer {other}")
        status, error, description = refusal(response)
        assert (status, error) == (401, "invalid_token"), response.text
        assert "unsupported_token_type" in description
        assert "Retry-After" not in response.headers


def test_introspection_4xx_refusals_are_401_and_outages_or_our_own_credentials_are_503():
    answers = {"wrong-type": (400, {"error": "unsupported_token_type"}),
               "invalid-token": (400, {"error": "invalid_token"}),
               "invalid-grant": (400, {"error": "invalid_grant"}),
               "inactive": (200, {"active": False}),
               "outage": (500, {"error": "server_error"}),
               "unavailable": (503, "<h1>down for maintenance</h1>"),
               "our-credentials": (401, {"error": "invalid_client"}),
               "our-bearer": (401, {"error": "invalid_token"}),  # RFC 7662 §2.1: a 401 is about *us*
               "not-an-oauth-endpoint": (404, "<h1>Not Found</h1>"),
               "rate-limited": (429, {"error": "slow_down"})}
    with introspection_server(answers) as endpoint:
        verifier = lambda url: IntrospectionVerifier(endpoint, "rs", "secret", audience=url, timeout=5)  # noqa: E731
        with serve(verifier) as url:
            for token in ("wrong-type", "invalid-token", "invalid-grant", "inactive"):
                response = post(url, f"Bearer {token}")
                assert refusal(response)[:2] == (401, "invalid_token"), (token, response.text)
            # the authorization server cannot tell now, or does not accept *us*: the token may be fine
            for token in ("outage", "unavailable", "our-credentials", "our-bearer", "not-an-oauth-endpoint",
                          "rate-limited"):
                response = post(url, f"Bearer {token}")
                assert response.status_code == 503 and response.headers["Retry-After"], (token, response.text)


def test_an_introspection_400_about_our_request_is_a_logged_503_and_not_cached(caplog):
    """``invalid_request`` (or any error that does not refuse the token) means the request *this
    server* made is wrong: the client's token may be fine, so 503, an error in the log saying what
    the authorization server answered, and the token asked about again once that is fixed."""
    token = "opaque-7f3a9c51"
    answers = {token: (400, {"error": "invalid_request", "error_description": "token_type_hint not supported"})}
    with introspection_server(answers) as endpoint:
        verifier = lambda url: IntrospectionVerifier(endpoint, "rs", "secret", audience=url,  # noqa: E731
                                                     cache_seconds=300)
        with serve(verifier) as url, caplog.at_level("ERROR", logger="minimcp.server.auth.verifiers"):
            response = post(url, f"Bearer {token}")
            assert response.status_code == 503 and response.headers["Retry-After"], response.text
            assert "invalid_request" in response.text
            said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
            assert len(said) == 1 and "HTTP 400" in said[0] and "invalid_request" in said[0], said
            assert "token_type_hint not supported" in said[0] and token not in said[0], said
            # the operator fixes it: the same token now works (the 503 was not remembered as a refusal)
            answers[token] = (200, {"active": True, "sub": "alice", "aud": url, "scope": "mcp"})
            assert post(url, f"Bearer {token}").status_code == 200


# -- 3. the JWKS back-off counts from the end of the failed fetch ------------------------------------------

def test_a_silent_jwks_endpoint_costs_one_timeout_not_one_per_request():
    """``failure_backoff`` equal to the fetch ``timeout``, as the defaults are (5 s and 5 s): the
    back-off must count from the end of the failed fetch, or it is over before it starts."""
    issuer, timeout = Issuer(), 1.0
    with silent_port() as (base, listener), serve(
            lambda url: JWTVerifier(ISSUER, url, jwks_uri=base + "/jwks", timeout=timeout,
                                    failure_backoff=timeout)) as url:
        token = issuer.token(url)
        answers = [post(url, f"Bearer {token}") for _ in range(4)]
        assert [a.status_code for a in answers] == [503] * 4
        assert all(a.headers["Retry-After"] for a in answers)
        # one fetch, one timeout: requests 2-4 had the failure remembered (each new fetch would
        # have opened a connection here)
        assert connections_made(listener) == 1


def test_while_a_failed_jwks_fetch_is_retried_other_requests_get_503_at_once():
    """The keys have never been fetched and the last try failed: a request that comes while the
    retry runs is answered 503 at once (the endpoint is known to be down), not queued behind it.
    The retry's fetch is held open by the test until that answer has come (event ordering)."""
    issuer = Issuer()
    with silent_port() as (base, listener), serve(
            lambda url: JWTVerifier(ISSUER, url, jwks_uri=base + "/jwks", timeout=30, failure_backoff=0)) as url:
        token = issuer.token(url)
        listener.settimeout(10)
        thread, first, _ = in_thread(lambda: post(url, f"Bearer {token}"), "first")
        try:
            listener.accept()[0].close()  # the first fetch fails at once: the connection is closed
        finally:
            thread.join(30)
        assert first["answer"].status_code == 503
        retry_thread, retry, _ = in_thread(lambda: post(url, f"Bearer {token}"), "retry")
        held = None
        try:
            held, _ = listener.accept()  # the retry's fetch has begun, and lasts until `held` is closed
            second_thread, second, answered = in_thread(lambda: post(url, f"Bearer {token}"), "second")
            assert answered.wait(20), "the second request was queued behind the retry"
            assert retry_thread.is_alive()  # the retry still waits on its fetch: the 503 did not
            assert second["answer"].status_code == 503, second["answer"].text
            assert "failed" in second["answer"].text  # the first failure, remembered
        finally:
            if held is not None:
                held.close()  # the retry's fetch fails now
            retry_thread.join(30)
            if held is not None:
                second_thread.join(30)
        assert retry["answer"].status_code == 503


def test_a_request_whose_key_is_known_does_not_wait_for_a_jwks_refresh():
    """A refresh of the keys is under way (here for a token of a rotated-in key, with the set due
    for its ttl refresh too): a request whose key the set holds is answered with it at once, and
    only the request that needs the new key waits for the fetch. The JWKS server holds the
    refresh's answer until the test releases it, so "at once" is "before the release"."""
    old, new, audience = Issuer(), Issuer(kid="k2"), "http://mcp.test/mcp"
    rotated_set = {"keys": old.jwks()["keys"] + new.jwks()["keys"]}
    with held_jwks_server(old.jwks(), rotated_set) as (jwks, refreshing, release, fetches):
        verifier = JWTVerifier(ISSUER, audience, jwks_uri=jwks, timeout=20, jwks_ttl=0, refetch_interval=0)
        assert verifier.verify(old.token(audience)).subject == "alice"  # the first fetch: answered at once
        rotated_thread, rotated, rotated_done = in_thread(lambda: verifier.verify(new.token(audience)), "rotated")
        known_thread = None
        try:
            assert refreshing.wait(20), "the token of an unknown key did not make the keys be fetched again"
            known_thread, known, known_done = in_thread(lambda: verifier.verify(old.token(audience)), "known")
            assert known_done.wait(10), "a request whose key is known waited for the refresh"
            assert known.get("answer") is not None and known["answer"].subject == "alice", known
            assert not rotated_done.is_set()  # the one that needs the new key waits for it
        finally:
            release.set()
            rotated_thread.join(30)
            if known_thread is not None:
                known_thread.join(30)
        assert rotated.get("answer") is not None and rotated["answer"].subject == "alice", rotated
        assert len(fetches) == 2  # the known-key request started no fetch of its own


# -- 4. DPoP-bound tokens (RFC 9449) ---------------------------------------------------------------------

def thumbprint(jwk):
    """RFC 7638 §3: SHA-256 over the required members, sorted, no whitespace; base64url."""
    members = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}[jwk["kty"]]
    text = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(text.encode()).digest())


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Holder:
    """A client's DPoP key pair and the proofs it signs (RFC 9449 §4.2), each part overridable."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
        self.jkt = thumbprint(self.jwk)

    def proof(self, method, url, token, signer=None, alg="ES256", header=None, **claims):
        body = {"jti": secrets.token_urlsafe(12), "htm": method, "htu": url, "iat": int(time.time()),
                "ath": b64url(hashlib.sha256(token.encode()).digest())}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        headers = {"typ": "dpop+jwt", "jwk": self.jwk}
        headers.update(header or {})
        return jwt.encode(body, signer if signer is not None else self.key, algorithm=alg, headers=headers)


def refused_by(auth, headers, method="POST", url=None):
    """The challenges (``{scheme: params}``) of the 401 ``auth`` raises for this request."""
    with pytest.raises(Exception) as refused:
        auth(headers, method, url)
    return challenges(type("Response", (), {"headers": {"WWW-Authenticate": refused.value.www_authenticate}}))


def test_a_dpop_bound_token_sent_as_bearer_is_refused_and_every_401_offers_dpop():
    """RFC 9449 §7.2: a bound token is no bearer token, or stealing it would be enough to use it;
    §7.1: the 401s name the DPoP scheme and the proof algorithms, next to Bearer."""
    issuer, holder = Issuer(), Holder()
    with jwks_server(issuer) as jwks:
        for options in ({}, {"dpop": False}):  # refused as a bearer token even where DPoP is not taken at all
            dpop = options.get("dpop")
            with serve(lambda url: JWTVerifier(ISSUER, url, jwks_uri=jwks), **options) as url:  # noqa: B023
                bound = issuer.token(url, cnf={"jkt": holder.jkt})
                response = post(url, f"Bearer {bound}")
                status, error, description = refusal(response)
                assert (status, error) == (401, "invalid_token"), response.text
                assert "DPoP-bound" in description
                offered = challenges(post(url))
                assert set(offered) == ({"Bearer", "DPoP"} if dpop is None else {"Bearer"})
                if dpop is None:
                    assert offered["DPoP"] == {"algs": "ES256 ES384 PS256 RS256 EdDSA"}
                    assert offered["Bearer"]["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
                    # a token bound to a key no proof can show (a cnf with no usable jkt) is refused too
                    assert refusal(post(url, f"Bearer {issuer.token(url, cnf={'jkt': 7})}"))[:2] == (401, "invalid_token")
                assert post(url, f"Bearer {issuer.token(url)}").status_code == 200  # an unbound one still works


def test_dpop_proofs_are_checked_as_rfc_9449_section_4_3_says():
    issuer, holder, other = Issuer(), Holder(), Holder()
    url = "http://127.0.0.1:8123/mcp"
    with jwks_server(issuer) as jwks:
        auth = ProtectedResource(JWTVerifier(ISSUER, url, jwks_uri=jwks), url, [ISSUER])
        token = issuer.token(url, cnf={"jkt": holder.jkt})

        def dpop(proof, scheme="DPoP", access=token):
            return {"authorization": f"{scheme} {access}", "dpop": proof}

        good = holder.proof("POST", url, token)
        assert auth(dpop(good), "POST", url).subject == "alice"
        # the same URL as RFC 3986 §6.2.2-6.2.3 normalizes it, and with a query (RFC 9449 §4.3: ignored)
        assert auth(dpop(holder.proof("POST", "HTTP://127.0.0.1:8123/mcp?x=1#f", token)), "POST", url)
        proof_errors = {
            "used before": good,  # replayed: its jti was seen
            "one DPoP proof": good + "," + holder.proof("POST", url, token),
            "typ": holder.proof("POST", url, token, header={"typ": "JWT"}),
            "algorithm 'HS256'": holder.proof("POST", url, token, signer="k" * 32, alg="HS256"),
            "private key": holder.proof("POST", url, token, header={"jwk": dict(holder.jwk, d="c2VjcmV0")}),
            "signature": holder.proof("POST", url, token, signer=other.key),
            "for 'GET'": holder.proof("GET", url, token),
            "not http://127.0.0.1:8123/mcp": holder.proof("POST", url + "/other", token),
            "iat": holder.proof("POST", url, token, iat=int(time.time()) - 600),
            "iat ": holder.proof("POST", url, token, iat=int(time.time()) + 600),
            "ath": holder.proof("POST", url, token, ath=b64url(hashlib.sha256(b"another token").digest())),
            "ath ": holder.proof("POST", url, token, ath=None),
            "jti": holder.proof("POST", url, token, jti=None),
            "not a JWT": "not-a-jwt",
        }
        for says, proof in proof_errors.items():
            refused = refused_by(auth, dpop(proof), url=url)["DPoP"]
            assert refused["error"] == "invalid_dpop_proof", (says, refused)
            assert says.strip() in refused["error_description"], (says, refused)
        alg_none = jwt.encode({"jti": "n", "htm": "POST", "htu": url, "iat": int(time.time())}, None,
                              algorithm="none", headers={"typ": "dpop+jwt", "jwk": holder.jwk})
        assert refused_by(auth, dpop(alg_none), url=url)["DPoP"]["error"] == "invalid_dpop_proof"
        # a good proof by another key than the token's (RFC 9449 §7.1's example answer)
        refused = refused_by(auth, dpop(other.proof("POST", url, token)), url=url)["DPoP"]
        assert refused["error"] == "invalid_token" and "Invalid DPoP key binding" in refused["error_description"]
        assert refused["algs"] == "ES256 ES384 PS256 RS256 EdDSA"
        # no proof at all; an unbound token presented as DPoP
        refused = refused_by(auth, {"authorization": f"DPoP {token}"}, url=url)["DPoP"]
        assert refused["error"] == "invalid_dpop_proof" and "DPoP proof" in refused["error_description"]
        unbound = issuer.token(url)
        refused = refused_by(auth, dpop(holder.proof("POST", url, unbound), access=unbound), url=url)["DPoP"]
        assert refused["error"] == "invalid_token" and "not DPoP-bound" in refused["error_description"]
        # a hook called without the request (a plain auth(headers)) cannot check a proof: refused
        with pytest.raises(Exception, match="cannot be checked"):
            auth(dpop(holder.proof("POST", url, token)))
        # behind a proxy the server sees another origin: the resource's is taken for the same path
        assert auth(dpop(holder.proof("GET", url, token)), "GET", "http://10.0.0.7:8000/mcp")


def test_a_refused_dpop_request_has_the_dpop_challenge_first():
    """A client reads the first ``WWW-Authenticate`` challenge (many read only that one): for a
    request sent as DPoP it is the DPoP challenge, with the error (RFC 9449 §7.1); for one sent as
    Bearer, the Bearer one."""
    issuer, holder = Issuer(), Holder()
    with jwks_server(issuer) as jwks, serve(lambda url: JWTVerifier(ISSUER, url, jwks_uri=jwks)) as url:
        token = issuer.token(url, cnf={"jkt": holder.jkt})
        response = post(url, f"DPoP {token}", DPoP=holder.proof("POST", url + "/elsewhere", token))
        lines = response.raw.headers.getlist("WWW-Authenticate")
        assert response.status_code == 401 and len(lines) == 2, lines
        assert lines[0].startswith("DPoP ") and 'error="invalid_dpop_proof"' in lines[0], lines
        assert lines[1].startswith("Bearer ") and "error=" not in lines[1], lines
        lines = post(url, "Bearer not-a-jwt").raw.headers.getlist("WWW-Authenticate")
        assert lines[0].startswith("Bearer ") and 'error="invalid_token"' in lines[0], lines
        assert lines[1].startswith("DPoP ") and "error=" not in lines[1], lines


def test_behind_a_proxy_that_strips_a_path_prefix_a_proof_may_name_resource():
    """The client's proof names the public URL (``resource``); the WSGI server sees the proxy's
    request, without the ``/api`` prefix the proxy took off (RFC 9449 §4.3 check 9)."""
    issuer, holder, public = Issuer(), Holder(), "https://mcp.example.com/api/mcp"
    with jwks_server(issuer) as jwks:
        auth = ProtectedResource(JWTVerifier(ISSUER, public, jwks_uri=jwks), public, [ISSUER])
        token = issuer.token(public, cnf={"jkt": holder.jkt})

        def dpop(proof):
            return {"authorization": f"DPoP {token}", "dpop": proof}

        seen = "http://10.0.0.7:8000/mcp"  # the request as the proxy forwards it
        assert auth(dpop(holder.proof("POST", public, token)), "POST", seen).subject == "alice"
        assert auth(dpop(holder.proof("POST", seen, token)), "POST", seen).subject == "alice"
        # another public path is no stand-in, nor is `resource` for another path of this server
        for htu, request in (("https://mcp.example.com/api/other", seen), (public, "http://10.0.0.7:8000/messages/"),
                             (public, "http://10.0.0.7:8000/")):
            refused = refused_by(auth, dpop(holder.proof("POST", htu, token)), url=request)["DPoP"]
            assert refused["error"] == "invalid_dpop_proof" and "is for" in refused["error_description"], refused


LAZY_PYJWT = """
import sys
from minimcp.server.auth.protection import Principal, ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier

R = "http://127.0.0.1:9/mcp"
auth = ProtectedResource(IntrospectionVerifier("http://127.0.0.1:9/introspect", "rs", "secret", audience=R),
                         R, ["https://auth.example.com"])
print("built", "jwt" in sys.modules)
try:
    auth({})
except Exception as exc:
    print("challenges", " | ".join(exc.challenges))
print("refused", "jwt" in sys.modules)
bound = ProtectedResource(lambda token: Principal("alice", audience=[R], claims={"cnf": {"jkt": "x"}}),
                          R, ["https://auth.example.com"])
try:
    bound({"authorization": "DPoP t0ken", "dpop": "not-a-jwt"}, "POST", R)
except Exception as exc:
    print("proof", exc.challenges[0])
print("proof checked", "jwt" in sys.modules)
"""


def test_pyjwt_is_imported_when_the_first_dpop_proof_is_checked_not_when_the_resource_is_built():
    """An introspection-only server never needs PyJWT: building ``ProtectedResource`` and refusing
    requests does not load it (the 401s still offer DPoP, RFC 9449 §7.1); the first proof does."""
    done = subprocess.run([sys.executable, "-c", LAZY_PYJWT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "built False" and lines[2] == "refused False", done.stdout
    assert lines[1].startswith("challenges Bearer ") and ' | DPoP algs="ES256' in lines[1], lines[1]
    assert lines[3].startswith("proof DPoP error=\"invalid_dpop_proof\""), lines[3]
    assert lines[4] == "proof checked True", done.stdout


def test_minimcp_client_with_dpop_calls_a_server_that_checks_its_proofs(oidc_provider):
    """End to end: oidc-provider binds the token to the client's key (RFC 9449 §5, ``cnf.jkt``),
    minimcp's client sends ``Authorization: DPoP`` with a fresh proof on every request, and the
    server checks each. Stolen, the token is refused as a bearer token and with a proof of
    another key."""
    seen = []
    for path, verifier in (("/mcp", lambda url: JWTVerifier(oidc_provider.issuer, url)),
                           ("/opaque/mcp", lambda url: IntrospectionVerifier(
                               oidc_provider.endpoint("introspection"), *RESOURCE_SERVER, audience=url,
                               issuer=oidc_provider.issuer))):
        with serve(verifier, path=path, issuer=oidc_provider.issuer, seen=seen) as url:
            auth = ClientCredentials("service", client_secret="service-secret", dpop=True,
                                     store=MemoryTokenStore(), http_timeout=20)
            with connect(url, auth=auth, timeout=20) as client:
                assert client.call_tool("whoami").text == "service"
                assert client.call_tool("whoami").text == "service"  # a new proof each time
            token = auth.token_for(url)
            assert token.token_type == "DPoP"
            response = post(url, f"Bearer {token.access_token}")
            assert refusal(response)[:2] == (401, "invalid_token") and "DPoP-bound" in refusal(response)[2]
            thief = Holder()
            response = post(url, f"DPoP {token.access_token}", DPoP=thief.proof("POST", url, token.access_token))
            assert challenges(response)["DPoP"]["error"] == "invalid_token", response.text
    sent = [request for request in seen if request[1] == "DPoP"]
    assert len(sent) >= 6 and all(has_proof for _, _, has_proof in sent), seen
