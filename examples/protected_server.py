"""A server only callers with an OAuth access token can use: minimcp as an OAuth 2.1 resource server.

Tokens come from your authorization server (Keycloak, Auth0, Entra ID, oidc-provider …);
this server checks them and tells clients where to get one (RFC 9728 metadata)::

    MCP_ISSUER=https://auth.example.com python examples/protected_server.py
    # JWT access tokens, checked against the issuer's keys (pip install 'PyJWT[crypto]>=2.8', or '.[auth]' from a checkout)

    MCP_ISSUER=https://auth.example.com MCP_INTROSPECTION=https://auth.example.com/introspect \\
        MCP_CLIENT_ID=notes-server MCP_CLIENT_SECRET=... python examples/protected_server.py
    # opaque tokens, asked about at the introspection endpoint (RFC 7662)

A client without a token gets 401 and ``WWW-Authenticate: Bearer resource_metadata="…"``;
``write_note`` needs the ``notes:write`` scope (403 ``insufficient_scope`` otherwise, so the
client can ask for it). Each caller sees only its own notes: ``ctx.principal`` is who the
token says is calling. Optional: ``MCP_RESOURCE`` (this server's public URL; default
``http://127.0.0.1:PORT/mcp``), ``PORT`` (8000), ``MCP_JWKS_URI``.
"""

import os
import sys
from typing import Dict, Tuple

from minimcp import Context, Server
from minimcp.server.auth.protection import ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier, JWTVerifier

server = Server("notes")
NOTES: Dict[Tuple[str, str], str] = {}


@server.tool()
def whoami(ctx: Context) -> dict:
    """Who the access token says you are, and what it lets you do."""
    return {"subject": ctx.principal.subject, "scopes": sorted(ctx.principal.scopes)}


@server.tool(scopes=["notes:read"])
def read_note(title: str, ctx: Context) -> str:
    """Read one of your notes."""
    return NOTES.get((ctx.principal.subject, title), f"you have no note called {title!r}")


@server.tool(scopes=["notes:write"])
def write_note(title: str, text: str, ctx: Context) -> str:
    """Write (or replace) one of your notes."""
    NOTES[(ctx.principal.subject, title)] = text
    return f"saved {title!r}"


def protection(port: int) -> ProtectedResource:
    """The resource server settings, from the environment."""
    issuer = os.environ.get("MCP_ISSUER")
    if not issuer:
        sys.exit("set MCP_ISSUER to your authorization server's issuer URL (see this file's docstring)")
    resource = os.environ.get("MCP_RESOURCE", f"http://127.0.0.1:{port}/mcp")
    if os.environ.get("MCP_INTROSPECTION"):
        verifier = IntrospectionVerifier(os.environ["MCP_INTROSPECTION"], os.environ["MCP_CLIENT_ID"],
                                         os.environ["MCP_CLIENT_SECRET"], audience=resource, issuer=issuer)
    else:
        verifier = JWTVerifier(issuer, resource, jwks_uri=os.environ.get("MCP_JWKS_URI"))
    return ProtectedResource(verifier, resource=resource, authorization_servers=[issuer],
                             scopes_supported=["notes:read", "notes:write"], resource_name="Notes")


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8000"))
    server.run("http", port=port, auth=protection(port))
