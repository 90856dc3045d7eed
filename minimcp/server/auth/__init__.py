"""The server as an OAuth 2.1 resource server (MCP authorization; RFC 9728, RFC 6750).

- :mod:`~minimcp.server.auth.protection`: :class:`ProtectedResource` (the metadata it
  serves, the 401/403 challenges it answers), :class:`Principal` (who a token names), the
  scope checks of tools, resources and prompts;
- :mod:`~minimcp.server.auth.verifiers`: :class:`~minimcp.server.auth.verifiers.JWTVerifier`
  (JWTs against the issuer's JWKS) and
  :class:`~minimcp.server.auth.verifiers.IntrospectionVerifier` (RFC 7662); PyJWT, the
  ``auth`` extra, is imported only there, when a JWT is first checked.
"""

from .protection import InvalidToken, Principal, ProtectedResource, VerifierUnavailable
from .verifiers import IntrospectionVerifier, JWTVerifier

__all__ = ["ProtectedResource", "Principal", "JWTVerifier", "IntrospectionVerifier", "InvalidToken",
           "VerifierUnavailable"]
