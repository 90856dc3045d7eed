"""The resource server's own rules, without an authorization server: bad headers, verifiers whose
endpoints fail, key rotation, the plain ``auth`` hook, and scopes on non-HTTP transports.

The keys and the JWKS endpoint here are ours (an RSA key from ``cryptography``, served by
``http.server`` on 127.0.0.1), so a test can rotate them and count the fetches; the tests
against a real authorization server are in test_oauth_server.py.
"""

import contextlib
import http.server
import json
import logging
import socket
import threading
import time

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

import minimcp
from minimcp import Context, RPCError, Server
from minimcp.protocol.jsonrpc import INSUFFICIENT_SCOPE
from minimcp.server.auth.protection import InvalidToken, Principal, ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier, JWTVerifier
from minimcp.server.http.security import bearer_token_auth
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.transports.memory import pair

from conftest import free_port

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
ISSUER = "https://auth.example.com"


class Keys:
    """RSA signing keys and the JWKS that lists some of them."""

    def __init__(self):
        self.private = {}
        self.listed = []

    def add(self, kid, listed=True):
        self.private[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if listed:
            self.listed.append(kid)
        return kid

    def jwks(self):
        keys = []
        for kid in self.listed:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private[kid].public_key()))
            keys.append(dict(jwk, kid=kid, use="sig", alg="RS256"))
        return {"keys": keys}

    def token(self, kid, audience, scope="mcp", lifetime=300, **claims):
        now = int(time.time())
        body = {"iss": ISSUER, "sub": "alice", "aud": audience, "iat": now, "exp": now + lifetime, "scope": scope,
                "client_id": "app"}
        body.update(claims)
        return jwt.encode(body, self.private.get(kid) or self.private[next(iter(self.private))], algorithm="RS256",
                          headers={"kid": kid, "typ": "at+jwt"})


@contextlib.contextmanager
def jwks_server(keys):
    """Serve ``keys.jwks()`` at ``/jwks`` on a free port; counts the fetches."""
    fetches = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            fetches.append(self.path)
            body = json.dumps(keys.jwks()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="jwks-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks", fetches
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@contextlib.contextmanager
def silent_port():
    """A port that accepts connections (the kernel's backlog) and never answers: (its URL, the
    listening socket, to count the connections made with ``connections_made``)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", listener
    finally:
        listener.close()


def connections_made(listener: socket.socket) -> int:
    """The connections queued at ``listener`` since the last look (taken off the queue and closed)."""
    listener.setblocking(False)
    made = 0
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            return made
        conn.close()
        made += 1


def closed_port() -> str:
    """A URL on a port nothing listens on (connection refused)."""
    return f"http://127.0.0.1:{free_port()}"


def scoped_server() -> Server:
    server = Server("scoped")

    @server.tool()
    def whoami(ctx: Context) -> str:
        return str(ctx.principal)

    @server.tool(scopes=["files:write"])
    def write_file(name: str) -> str:
        return f"wrote {name}"

    return server


@contextlib.contextmanager
def serve(make_auth, server=None):
    """``server`` (default ``scoped_server()``) on a free port; ``make_auth(url)`` is its ``auth``."""
    slot = {}
    running = BackgroundServer(lambda environ, start_response: slot["app"](environ, start_response))
    url = running.url + "/mcp"
    slot["app"] = (server or scoped_server()).wsgi_app(auth=make_auth(url) if make_auth else None)
    try:
        with running:
            yield url
    finally:
        slot["app"].close()


def protect(verifier_for):
    return lambda url: ProtectedResource(verifier_for(url), resource=url, authorization_servers=[ISSUER],
                                         scopes_supported=["mcp", "files:write"])


def post(url, authorization=None, body=None, session=None):
    headers = dict(HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    if session:
        headers["Mcp-Session-Id"] = session
    body = body or {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "0"}}}
    return requests.post(url, json=body, headers=headers, timeout=10)


def tool_call(name, arguments=None):
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


# -- bad input ------------------------------------------------------------------------------------

def test_malformed_authorization_headers_get_a_clear_answer_and_the_server_lives_on():
    keys = Keys()
    kid = keys.add("k1")
    with jwks_server(keys) as (jwks, _):
        with serve(protect(lambda url: JWTVerifier(ISSUER, url, jwks_uri=jwks))) as url:
            for header, status, error in (("Bearer", 400, "invalid_request"), ("Bearer   ", 400, "invalid_request"),
                                          ("Bearer a b", 400, "invalid_request"), ("Basic dXNlcjpwdw==", 401, None),
                                          ("bearer", 400, "invalid_request"), ("Token abc", 401, None),
                                          ("Bearer not.a.jwt", 401, "invalid_token"),
                                          ("Bearer " + "x" * 8000, 401, "invalid_token"),
                                          ("Bearer \u00e9t\u00e9", 400, "invalid_request")):
                response = post(url, header.encode("utf-8").decode("latin-1"))
                assert response.status_code == status, (header[:20], response.text)
                assert "resource_metadata=" in response.headers["WWW-Authenticate"]
                assert (f'error="{error}"' in response.headers["WWW-Authenticate"]) == (error is not None)
                assert response.json()["error"]["message"]  # a JSON-RPC body that says what to fix
            good = post(url, f"Bearer {keys.token(kid, url)}")
            assert good.status_code == 200 and good.json()["result"]["serverInfo"]["name"] == "scoped"
            metadata = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            assert requests.post(metadata, timeout=10).status_code == 405
            assert requests.get(metadata + "/other", timeout=10).status_code == 401  # not ours: the usual rules
            assert requests.get(metadata, timeout=10).json()["resource"] == url


def test_a_jwks_endpoint_that_never_answers_is_a_503_after_the_timeout_not_a_hang(caplog):
    keys = Keys()
    kid = keys.add("k1")
    with silent_port() as (base, listener), serve(protect(lambda url: JWTVerifier(ISSUER, url, jwks_uri=base + "/jwks",
                                                                      timeout=0.5))) as url:
        caplog.set_level(logging.WARNING, logger="minimcp")
        token = keys.token(kid, url)
        started = time.monotonic()
        response = post(url, f"Bearer {token}")
        took = time.monotonic() - started
        assert response.status_code == 503 and response.headers["Retry-After"]
        assert "did not answer within 0.5s" in response.json()["error"]["message"]
        assert took < 5, took
        assert any("cannot fetch the signing keys" in r.getMessage() for r in caplog.records)
        assert connections_made(listener) >= 1
        # While it is down, the next request is answered at once, from the failure remembered:
        # no new connection to the silent port (a fetch could not take less than its 0.5 s).
        assert post(url, f"Bearer {token}").status_code == 503
        assert connections_made(listener) == 0


def test_an_introspection_endpoint_down_or_silent_is_a_503(caplog):
    caplog.set_level(logging.WARNING, logger="minimcp")
    with silent_port() as (silent, _):
        for endpoint, says in ((closed_port() + "/introspect", "failed"),
                               (silent + "/introspect", "did not answer within 0.5s")):
            with serve(protect(lambda url: IntrospectionVerifier(endpoint, "rs", "secret", audience=url,  # noqa: B023
                                                                 timeout=0.5))) as url:  # (built in this iteration)
                response = post(url, "Bearer some-opaque-token")
                assert response.status_code == 503, response.text
                assert says in response.json()["error"]["message"]
    assert any("cannot check tokens now" in r.getMessage() for r in caplog.records)


# -- the JWKS cache ---------------------------------------------------------------------------------

def test_key_rotation_refetches_the_jwks_and_unknown_kids_are_rate_limited():
    keys = Keys()
    old = keys.add("old")
    with jwks_server(keys) as (jwks, fetches):
        verifier = JWTVerifier(ISSUER, "http://mcp.test/mcp", jwks_uri=jwks, refetch_interval=0.0)
        assert verifier.verify(keys.token(old, "http://mcp.test/mcp")).subject == "alice"
        new = keys.add("new")  # the authorization server rotates: the new key is listed, then used
        assert verifier.verify(keys.token(new, "http://mcp.test/mcp", sub="bob")).subject == "bob"
        assert len(fetches) == 2
        token = keys.token(new, "http://mcp.test/mcp", sub="carol")
        assert verifier.verify(token) is verifier.verify(token)  # remembered: no second signature check
        assert len(fetches) == 2  # a known kid fetches nothing

    keys = Keys()
    first = keys.add("first")
    with jwks_server(keys) as (jwks, fetches):
        verifier = JWTVerifier(ISSUER, "http://mcp.test/mcp", jwks_uri=jwks, refetch_interval=3600)
        verifier.verify(keys.token(first, "http://mcp.test/mcp"))
        keys.add("unlisted", listed=False)
        for n in range(5):  # forged key ids: one refetch at most per interval, whatever the flood
            with pytest.raises(InvalidToken) as refused:
                verifier.verify(keys.token(f"made-up-{n}", "http://mcp.test/mcp"))
            assert "does not list" in str(refused.value)
        assert len(fetches) <= 2


def test_jwt_claims_are_checked_issuer_audience_expiry_nbf_and_algorithm():
    keys = Keys()
    kid = keys.add("k1")
    audience = "http://mcp.test/mcp"
    with jwks_server(keys) as (jwks, _):
        verifier = JWTVerifier(ISSUER, audience, jwks_uri=jwks, leeway=0)
        cases = ((keys.token(kid, audience, lifetime=-5), "expired"),
                 (keys.token(kid, audience, nbf=int(time.time()) + 600), "not valid yet"),
                 (keys.token(kid, "http://other.test/mcp"), "not issued for"),
                 (keys.token(kid, audience, iss="https://evil.example"), "not issued by"),
                 (jwt.encode({"iss": ISSUER, "aud": audience, "exp": time.time() + 60, "sub": "x"}, "k" * 32,
                             algorithm="HS256", headers={"kid": kid}), "algorithm 'HS256'"),
                 (keys.token(kid, audience, sub="", client_id=""), "no subject"))
        for token, says in cases:
            with pytest.raises(InvalidToken) as refused:
                verifier.verify(token)
            assert says in str(refused.value), (says, refused.value)
        principal = verifier.verify(keys.token(kid, [audience, "http://x"], scope="a b"))
        assert principal.scopes == {"a", "b"} and principal.client_id == "app" and principal.issuer == ISSUER


def test_a_missing_pyjwt_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_jwt(name, *args, **kwargs):
        if name == "jwt" or name.startswith("jwt."):
            raise ImportError("No module named 'jwt'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jwt)
    with pytest.raises(ImportError) as missing:
        JWTVerifier(ISSUER, "http://mcp.test/mcp")
    assert "pip install 'PyJWT[crypto]>=2.8'" in str(missing.value)  # (works before any release)


# -- the plain auth hook, and scopes elsewhere ---------------------------------------------------

def test_a_plain_auth_hook_still_works_and_scoped_tools_are_refused_to_it():
    with serve(lambda url: bearer_token_auth("s3cret")) as url:
        assert post(url, "Bearer wrong").status_code == 401
        with minimcp.connect(url, headers={"Authorization": "Bearer s3cret"}) as client:
            assert client.call_tool("whoami").text == "bearer"
            with pytest.raises(RPCError) as refused:
                client.call_tool("write_file", {"name": "x"})
            assert refused.value.code == INSUFFICIENT_SCOPE and refused.value.data["httpStatus"] == 403
    with serve(None) as url:  # no auth at all: a scoped tool is nobody's (fail closed)
        with minimcp.connect(url) as client:
            assert client.call_tool("whoami").text == "None"
            with pytest.raises(RPCError) as refused:
                client.call_tool("write_file", {"name": "x"})
            assert "authenticates nobody" in refused.value.message


def test_a_hook_returning_a_principal_with_scopes_passes_the_check():
    def hook(headers):
        scopes = ["files:write"] if headers.get("authorization") == "Bearer writer" else []
        return Principal("someone", scopes)

    with serve(lambda url: hook) as url:
        sid = post(url, "Bearer writer").headers["Mcp-Session-Id"]
        ok = post(url, "Bearer writer", tool_call("write_file", {"name": "x"}), sid)
        assert ok.status_code == 200 and "wrote x" in ok.text
        refused = post(url, "Bearer reader", tool_call("write_file", {"name": "x"}), sid)
        assert refused.status_code == 403
        assert refused.headers["WWW-Authenticate"] == 'Bearer error="insufficient_scope", scope="files:write"'


def test_off_http_a_missing_scope_is_a_json_rpc_error_and_no_principal_is_not_checked():
    server = scoped_server()
    for principal, allowed in ((Principal("alice", ["mcp"]), False), (Principal("bob", ["files:write"]), True),
                               (None, True)):
        client_end, server_end = pair()
        connection = server.serve(server_end, principal=principal)
        client = minimcp.Client(client_end)
        try:
            client.initialize()
            if allowed:
                assert client.call_tool("write_file", {"name": "x"}).text == "wrote x"
            else:
                with pytest.raises(RPCError) as refused:
                    client.call_tool("write_file", {"name": "x"})
                assert refused.value.code == INSUFFICIENT_SCOPE
                assert refused.value.data == {"error": "insufficient_scope", "scope": "files:write"}
                assert client.call_tool("whoami").text == "alice"  # the connection lives on
        finally:
            client.close()
            connection.session.close()


def test_the_metadata_urls_and_the_challenge_follow_the_resource_url():
    auth = ProtectedResource(lambda token: Principal("x"), "https://mcp.example.com/tenant/mcp/",
                             ["https://auth.example.com"], scopes_supported=["a"], required_scopes=["b"],
                             resource_name="Files")
    assert auth.metadata_paths == ("/.well-known/oauth-protected-resource/tenant/mcp",
                                   "/.well-known/oauth-protected-resource")
    assert auth.challenge("invalid_token", 'say "why"\r\nX-Evil: 1') == (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp", '
        'scope="b", error="invalid_token", error_description="say \'why\'??X-Evil: 1"')
    body = json.loads(auth.metadata_body)
    assert body == {"resource": "https://mcp.example.com/tenant/mcp/", "authorization_servers": ["https://auth.example.com"],
                    "bearer_methods_supported": ["header"], "scopes_supported": ["a"], "resource_name": "Files"}
    with pytest.raises(ValueError):
        ProtectedResource(lambda token: Principal("x"), "https://mcp.example.com/mcp", [])


def test_over_websocket_and_the_legacy_sse_endpoints_scopes_are_checked_too():
    """WebSocket has no HTTP status per call: the JSON-RPC error -32003; the 2024-11-05
    ``/messages/`` POST answers 403 like Streamable HTTP."""
    server = scoped_server()

    def hook(headers):
        return Principal("reader", ["files:read"]) if headers.get("authorization") == "Bearer reader" else None

    app = server.wsgi_app(auth=hook)
    try:
        with BackgroundServer(app, websockets={"/ws": server}) as running:
            url = running.url.replace("http://", "ws://") + "/ws"
            with minimcp.connect(url, headers={"Authorization": "Bearer reader"}) as client:
                with pytest.raises(RPCError) as refused:
                    client.call_tool("write_file", {"name": "x"})
                assert refused.value.code == INSUFFICIENT_SCOPE and "files:write" in refused.value.message
                assert client.call_tool("whoami").text == "reader"
            with minimcp.connect(running.url + "/sse", headers={"Authorization": "Bearer reader"}) as client:
                with pytest.raises(RPCError) as refused:
                    client.call_tool("write_file", {"name": "x"})
                assert "files:write" in refused.value.message
                assert client.call_tool("whoami").text == "reader"
    finally:
        app.close()
