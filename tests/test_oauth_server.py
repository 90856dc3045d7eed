"""A minimcp server as an OAuth resource server, against a real authorization server: oidc-provider.

Tokens come from oidc-provider (npm; see tests/oidc/README.md) with plain ``requests``: client
credentials, and the authorization code flow with PKCE, the test playing the browser on the
provider's own login and consent pages. A minimcp server protected by the JWT verifier, and
separately by the introspection verifier, must take the right token, refuse expired, forged,
wrong-audience and wrong-issuer ones with 401 ``invalid_token``, refuse a call needing a scope
the token lacks with 403 ``insufficient_scope`` naming it, and tell the tool who called.
"""

import base64
import contextlib
import hashlib
import json
import os
import secrets
import subprocess
import time
from urllib.parse import urlencode

import pytest
import requests
from oidc.provider import RESOURCE_SERVER, SERVICE, SHORT_LIVED, wait_until_expired

import minimcp
from minimcp import Context, RPCError, Server
from minimcp.server.auth.protection import ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier, JWTVerifier
from minimcp.server.http.wsgiserver import BackgroundServer

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2025-11-25"}


def files_server() -> Server:
    """A server whose tools, resource and prompt need scopes; ``whoami`` tells who called."""
    server = Server("files")

    @server.tool()
    def whoami(ctx: Context) -> dict:
        """Who the token says is calling."""
        return {"subject": ctx.principal.subject, "client": ctx.principal.client_id,
                "scopes": sorted(ctx.principal.scopes)}

    @server.tool(scopes=["files:read"])
    def read_file(name: str) -> str:
        """Read a file."""
        return f"contents of {name}"

    @server.tool(scopes=["files:write"])
    def write_file(name: str, text: str) -> str:
        """Write a file."""
        return f"wrote {len(text)} characters to {name}"

    @server.resource("files://{name}", scopes=["files:read"])
    def file(name: str) -> str:
        return f"contents of {name}"

    @server.prompt(scopes=["files:write"])
    def edit(name: str) -> str:
        return f"Edit {name}"

    return server


@contextlib.contextmanager
def protected(provider, make_verifier, path="/mcp"):
    """Serve ``files_server()`` on a free port, protected by ``make_verifier(resource_url)``."""
    slot = {}
    running = BackgroundServer(lambda environ, start_response: slot["app"](environ, start_response))
    url = running.url + path
    auth = ProtectedResource(make_verifier(url), resource=url, authorization_servers=[provider.issuer],
                             scopes_supported=["mcp", "files:read", "files:write"], required_scopes=["mcp"])
    slot["app"] = files_server().wsgi_app(path=path, auth=auth)
    try:
        with running:
            yield url
    finally:
        slot["app"].close()


def jwt_verifier(provider, **options):
    return lambda url: JWTVerifier(options.pop("issuer", provider.issuer), url, **options)


def introspection(provider):
    return lambda url: IntrospectionVerifier(provider.endpoint("introspection"), *RESOURCE_SERVER, audience=url,
                                             issuer=provider.issuer, cache_seconds=0)


def call(url, token, name, arguments=None, session=None):
    """One raw tools/call (stateless enough: a session id if given), as plain requests."""
    headers = dict(HEADERS, Authorization=f"Bearer {token}")
    if session:
        headers["Mcp-Session-Id"] = session
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}
    return requests.post(url, json=body, headers=headers, timeout=10)


def initialize(url, token):
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    response = requests.post(url, json=body, headers=dict(HEADERS, Authorization=f"Bearer {token}"), timeout=10)
    assert response.status_code == 200, response.text
    return response.headers["Mcp-Session-Id"]


def challenge(response) -> dict:
    """The parameters of a ``WWW-Authenticate: Bearer k="v", ...`` header."""
    value = response.headers["WWW-Authenticate"].split(", DPoP ")[0]  # (the first challenge: Bearer)
    assert value.startswith("Bearer ")
    params = {}
    for part in value[len("Bearer "):].split('", '):
        key, _, raw = part.partition("=")
        params[key.strip()] = raw.strip('"')
    return params


def authorization_code(provider, resource, scope, login="alice", client=None):
    """The token response of the authorization code flow with PKCE S256 and ``resource``, the
    test playing the browser on the provider's pages; a public client registered on the fly (DCR)."""
    redirect = "http://127.0.0.1:9/callback"  # never reached: the browser stops at the redirect
    client = client or provider.register(redirect)
    verifier = secrets.token_urlsafe(32)
    code_challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    state = secrets.token_urlsafe(8)
    query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect, "scope": scope,
             "state": state, "code_challenge": code_challenge, "code_challenge_method": "S256",
             "resource": resource, "prompt": "consent"}
    back = provider.play_browser(provider.endpoint("authorization") + "?" + urlencode(query), login, redirect)
    assert back["state"] == state and back["iss"] == provider.issuer  # RFC 9207
    response = provider.token(grant_type="authorization_code", code=back["code"], redirect_uri=redirect,
                              client_id=client["client_id"], code_verifier=verifier, resource=resource)
    assert response.status_code == 200, response.text
    return dict(response.json(), client_id=client["client_id"])


def forged(token: str) -> str:
    """The token with another subject in its payload and the signature left as it was."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["sub"] = "mallory"
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{payload}.{signature}"


# -- the JWT verifier ---------------------------------------------------------------------------

def test_metadata_and_the_401_challenge_lead_a_client_to_the_provider(oidc_provider):
    with protected(oidc_provider, jwt_verifier(oidc_provider)) as url:
        refused = requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=HEADERS, timeout=10)
        assert refused.status_code == 401
        params = challenge(refused)
        origin = url[:-len("/mcp")]
        assert params == {"resource_metadata": f"{origin}/.well-known/oauth-protected-resource/mcp", "scope": "mcp"}
        for where in (params["resource_metadata"], f"{origin}/.well-known/oauth-protected-resource"):
            metadata = requests.get(where, timeout=10).json()  # RFC 9728, path-based and root
            assert metadata["resource"] == url
            assert metadata["authorization_servers"] == [oidc_provider.issuer]
            assert metadata["scopes_supported"] == ["mcp", "files:read", "files:write"]
        as_metadata = requests.get(metadata["authorization_servers"][0] + "/.well-known/openid-configuration",
                                   timeout=10).json()
        assert as_metadata["issuer"] == oidc_provider.issuer and "S256" in as_metadata["code_challenge_methods_supported"]


def test_a_client_credentials_token_calls_tools_and_is_refused_a_scope_it_lacks(oidc_provider):
    with protected(oidc_provider, jwt_verifier(oidc_provider)) as url:
        token = oidc_provider.client_credentials("mcp files:read", resource=url)["access_token"]
        with minimcp.connect(url, headers={"Authorization": f"Bearer {token}"}) as client:
            who = client.call_tool("whoami").structured
            assert who == {"subject": "service", "client": "service", "scopes": ["files:read", "mcp"]}
            assert client.call_tool("read_file", {"name": "a.txt"}).text == "contents of a.txt"
            assert client.read_resource("files://a.txt").text == "contents of a.txt"
            with pytest.raises(RPCError) as refused:
                client.call_tool("write_file", {"name": "a.txt", "text": "hi"})
            assert refused.value.data["httpStatus"] == 403 and "files:write" in refused.value.message
            with pytest.raises(RPCError) as refused:
                client.get_prompt("edit", {"name": "a.txt"})
            assert refused.value.data["httpStatus"] == 403
            assert client.call_tool("read_file", {"name": "b"}).text == "contents of b"  # the session lives on
        response = call(url, token, "write_file", {"name": "a", "text": "b"})
        assert response.status_code == 403
        params = challenge(response)
        assert params["error"] == "insufficient_scope" and params["scope"] == "mcp files:write"
        assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")


def test_authorization_code_flow_refresh_and_step_up_keep_the_session(oidc_provider):
    with protected(oidc_provider, jwt_verifier(oidc_provider)) as url:
        first = authorization_code(oidc_provider, url, "openid offline_access mcp files:read")
        with minimcp.connect(url, headers={"Authorization": f"Bearer {first['access_token']}"}) as client:
            who = client.call_tool("whoami").structured
            assert who == {"subject": "alice", "client": first["client_id"], "scopes": ["files:read", "mcp"]}
        sid = initialize(url, first["access_token"])
        # a refreshed token of the same user drives the same session
        refreshed = oidc_provider.token(grant_type="refresh_token", refresh_token=first["refresh_token"],
                                        client_id=first["client_id"], resource=url).json()
        assert refreshed["access_token"] != first["access_token"]
        assert call(url, refreshed["access_token"], "read_file", {"name": "x"}, sid).status_code == 200
        refused = call(url, refreshed["access_token"], "write_file", {"name": "x", "text": "y"}, sid)
        assert refused.status_code == 403 and challenge(refused)["scope"] == "mcp files:write"
        # step up: authorize again with the scope the challenge named, same user, same session
        wider = authorization_code(oidc_provider, url, "openid mcp files:read files:write",
                                   client={"client_id": first["client_id"]})
        stepped = call(url, wider["access_token"], "write_file", {"name": "x", "text": "y"}, sid)
        assert stepped.status_code == 200 and "wrote 1 characters" in stepped.text
        # another user's token cannot drive alice's session (bound to the principal that opened it)
        bob = authorization_code(oidc_provider, url, "openid mcp files:read", login="bob",
                                 client={"client_id": first["client_id"]})
        foreign = call(url, bob["access_token"], "read_file", {"name": "x"}, sid)
        assert foreign.status_code == 403 and "another principal" in foreign.text


def test_expired_forged_wrong_audience_and_wrong_issuer_jwts_get_401_invalid_token(oidc_provider):
    with protected(oidc_provider, jwt_verifier(oidc_provider, leeway=0)) as url:
        good = oidc_provider.client_credentials("mcp files:read", resource=url)["access_token"]
        assert call(url, good, "read_file", {"name": "x"}, initialize(url, good)).status_code == 200
        short = oidc_provider.client_credentials("mcp", resource=url, client=SHORT_LIVED)
        other = oidc_provider.client_credentials("mcp", resource=url.replace("/mcp", "/other"))["access_token"]
        opaque = oidc_provider.client_credentials("mcp", resource=url + "/opaque")["access_token"]
        wait_until_expired(_claims(short["access_token"])["exp"])
        for token, description in ((short["access_token"], "expired"), (forged(good), "signature does not verify"),
                                   (other, "not issued for"), (opaque, "not a JWT")):
            response = call(url, token, "read_file", {"name": "x"})
            assert response.status_code == 401, (description, response.text)
            params = challenge(response)
            assert params["error"] == "invalid_token" and description in params["error_description"]
            assert params["resource_metadata"].endswith("/mcp")
    with protected(oidc_provider, jwt_verifier(oidc_provider, issuer="https://elsewhere.example", jwks_uri=oidc_provider.jwks_uri)) as url:
        token = oidc_provider.client_credentials("mcp", resource=url)["access_token"]
        params = challenge(call(url, token, "whoami"))
        assert params["error"] == "invalid_token" and "not issued by https://elsewhere.example" in params["error_description"]


def _claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


# -- the introspection verifier -------------------------------------------------------------------

def test_introspection_takes_an_active_token_and_refuses_the_rest(oidc_provider):
    with protected(oidc_provider, introspection(oidc_provider), path="/opaque/mcp") as url:
        token = oidc_provider.client_credentials("mcp files:read", resource=url)["access_token"]
        assert token.count(".") == 0  # opaque: only the authorization server can tell what it means
        with minimcp.connect(url, headers={"Authorization": f"Bearer {token}"}) as client:
            assert client.call_tool("whoami").structured["subject"] == "service"
            assert client.call_tool("read_file", {"name": "a"}).text == "contents of a"
        refused = call(url, token, "write_file", {"name": "a", "text": "b"})
        assert refused.status_code == 403 and challenge(refused)["scope"] == "mcp files:write"
        user = authorization_code(oidc_provider, url, "openid mcp files:read", login="carol")
        answer = call(url, user["access_token"], "whoami", session=initialize(url, user["access_token"])).json()
        assert answer["result"]["structuredContent"]["subject"] == "carol"
        short = oidc_provider.client_credentials("mcp", resource=url, client=SHORT_LIVED)
        short_expiry = time.time() + short["expires_in"]  # at the latest
        other = oidc_provider.client_credentials("mcp", resource=url.replace("/opaque/mcp", "/opaque/other"))
        revoked = oidc_provider.client_credentials("mcp", resource=url)["access_token"]
        assert call(url, revoked, "whoami", session=initialize(url, revoked)).status_code == 200
        requests.post(oidc_provider.metadata["revocation_endpoint"], data={"token": revoked}, auth=SERVICE,
                      timeout=10).raise_for_status()
        wait_until_expired(short_expiry)
        for token, description in ((short["access_token"], "not active"), (revoked, "not active"),
                                   (other["access_token"], "not issued for"), ("made-up-token", "not active")):
            response = call(url, token, "whoami")
            assert response.status_code == 401, (description, response.text)
            params = challenge(response)
            assert params["error"] == "invalid_token" and description in params["error_description"]



# -- interop: the official Python SDK's client ------------------------------------------------------

OFFICIAL_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interop", "official_oauth_client.py")


def run_official(python, *args):
    done = subprocess.run([python, OFFICIAL_CLIENT, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_the_official_client_reads_our_challenge_and_metadata_and_calls_with_a_token(oidc_provider,
                                                                                     official_sdk):
    with protected(oidc_provider, jwt_verifier(oidc_provider)) as url:
        token = oidc_provider.client_credentials("mcp", resource=url)["access_token"]
        challenge_step, call_step = run_official(official_sdk, "static", url, token)
        origin = url[:-len("/mcp")]
        assert challenge_step == {"step": "challenge", "status": 401, "scope": "mcp",
                                  "resource_metadata": f"{origin}/.well-known/oauth-protected-resource/mcp",
                                  "discovery": [f"{origin}/.well-known/oauth-protected-resource/mcp"] * 2
                                  + [f"{origin}/.well-known/oauth-protected-resource"],
                                  "resource": url, "authorization_servers": [oidc_provider.issuer]}
        assert json.loads(call_step["text"])["subject"] == "service"


def test_the_official_clients_own_oauth_flow_logs_in_calls_and_steps_up(oidc_provider, official_sdk):
    with protected(oidc_provider, jwt_verifier(oidc_provider)) as url:
        steps = run_official(official_sdk, "oauth", url)
    authorize = [s for s in steps if s["step"] == "authorize"]
    assert authorize[0]["resource"] == url and authorize[0]["code_challenge_method"] == "S256"
    assert "mcp" in authorize[0]["scope"].split()
    call_step = next(s for s in steps if s["step"] == "call")
    assert json.loads(call_step["text"])["subject"] == "dana"
    # the 403 named files:write; the SDK authorized again with it and the retried call went through
    assert len(authorize) == 2 and "files:write" in authorize[1]["scope"].split()
    assert next(s for s in steps if s["step"] == "step-up") == {"step": "step-up", "is_error": False,
                                                               "text": "wrote 1 characters to a"}
