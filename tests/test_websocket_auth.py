"""A WebSocket upgrade goes through the HTTP app's auth, DPoP included (RFC 9449): the auth hook
is given the upgrade GET's method and URL, which a DPoP proof must name (§4.3, checks 8-9).

A real :class:`~minimcp.server.http.wsgiserver.BackgroundServer` with a WebSocket route beside
a protected app, tokens signed by a test issuer whose JWKS is served on 127.0.0.1, and
minimcp's WebSocket client sending ``Authorization: DPoP`` with a proof.
"""

import pytest
from test_token_checks import ISSUER, Holder, Issuer, jwks_server, whoami_server

import minimcp
from minimcp.errors import ConnectionClosed
from minimcp.server.auth.protection import ProtectedResource
from minimcp.server.auth.verifiers import JWTVerifier
from minimcp.server.http.wsgiserver import BackgroundServer


def test_a_dpop_bound_token_opens_a_websocket_with_a_proof_of_the_upgrade_get():
    """The proof names ``GET`` and the upgrade's http:// URL (the handshake is an HTTP request,
    RFC 6455 §4.1): the session opens and its tools see the token's subject. A proof naming
    another URL is refused at the upgrade, with 401."""
    issuer, holder = Issuer(), Holder()
    resource = "http://127.0.0.1:8123/mcp"  # the resource's public URL: the tokens' audience
    with jwks_server(issuer) as jwks:
        auth = ProtectedResource(JWTVerifier(ISSUER, resource, jwks_uri=jwks), resource, [ISSUER])
        server = whoami_server()
        app = server.wsgi_app(auth=auth)
        try:
            with BackgroundServer(app, websockets={"/ws": server}) as running:
                upgrade = running.url + "/ws"
                token = issuer.token(resource, cnf={"jkt": holder.jkt})

                def headers(url):
                    return {"Authorization": f"DPoP {token}", "DPoP": holder.proof("GET", url, token)}

                with minimcp.connect(upgrade.replace("http://", "ws://"), headers=headers(upgrade),
                                     timeout=10) as client:
                    assert "alice" in client.call_tool("whoami").text
                with pytest.raises(ConnectionClosed, match="401"):
                    minimcp.connect(upgrade.replace("http://", "ws://"), headers=headers(running.url + "/other"),
                                    timeout=10)
        finally:
            app.close()
