"""The server as an OAuth 2.1 resource server (MCP authorization; RFC 9728, RFC 6750, RFC 9449).

- :mod:`~minimcp.server.auth.protection`: :class:`ProtectedResource` (the metadata it
  serves, the 401/403 challenges it answers, DPoP-bound tokens), :class:`Principal` (who a
  token names), the scope checks of tools, resources and prompts;
- :mod:`~minimcp.server.auth.verifiers`: :class:`~minimcp.server.auth.verifiers.JWTVerifier`
  (JWTs against the issuer's JWKS),
  :class:`~minimcp.server.auth.verifiers.IntrospectionVerifier` (RFC 7662) and
  :class:`~minimcp.server.auth.verifiers.DPoPProofs` (RFC 9449 proofs of possession); PyJWT,
  the ``auth`` extra, is imported only there: when a ``JWTVerifier`` is made, when the first DPoP
  proof is checked, or when DPoP is asked for explicitly (``ProtectedResource(dpop=True)``).
"""

from .protection import InvalidDPoPProof, InvalidToken, Principal, ProtectedResource, VerifierUnavailable
from .verifiers import DPoPProofs, IntrospectionVerifier, JWTVerifier

__all__ = ["ProtectedResource", "Principal", "JWTVerifier", "IntrospectionVerifier", "DPoPProofs", "InvalidToken",
           "InvalidDPoPProof", "VerifierUnavailable"]
