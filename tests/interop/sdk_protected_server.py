"""The official Python SDK (mcp 2.3.0) as a protected MCP server, for tests/test_auth_client.py.

    SDK_PYTHON sdk_protected_server.py PORT ISSUER

Run with the python of a venv that has ``mcp``: serves Streamable HTTP at
http://127.0.0.1:PORT/mcp, a resource server of ISSUER (the test's
authorization server), checking each token with RFC 7662 introspection at
ISSUER/introspect; one tool, ``echo``, which needs scope ``mcp:read``.
"""

import json
import sys
import urllib.parse
import urllib.request

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

port, issuer = int(sys.argv[1]), sys.argv[2]
resource = f"http://127.0.0.1:{port}/mcp"


class IntrospectingVerifier:
    """A TokenVerifier: asks the authorization server whether a token is active, and for whom."""

    async def verify_token(self, token: str):
        def introspect() -> dict:
            body = urllib.parse.urlencode({"token": token}).encode()
            with urllib.request.urlopen(issuer + "/introspect", body, timeout=10) as response:
                return json.load(response)

        answer = await anyio.to_thread.run_sync(introspect)
        if not answer.get("active"):
            return None
        return AccessToken(token=token, client_id=answer.get("client_id", ""), scopes=answer.get("scope", "").split(),
                           expires_at=answer.get("exp"), resource=answer.get("aud"))


server = MCPServer("sdk-protected", token_verifier=IntrospectingVerifier(),
                   auth=AuthSettings(issuer_url=issuer, resource_server_url=resource, required_scopes=["mcp:read"],
                                     validate_token_resource=True))


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"sdk says {text}"


server.run("streamable-http", host="127.0.0.1", port=port)
