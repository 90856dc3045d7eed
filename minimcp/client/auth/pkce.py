"""PKCE (RFC 7636) and the ``state`` value: what ties an authorization response to its request.

The client keeps ``verifier`` secret and sends ``challenge`` =
BASE64URL(SHA-256(verifier)) with the authorization request; the token
request then proves it started the flow by sending ``verifier``. MCP
requires the ``S256`` method, and a client must refuse an authorization
server that does not list it (spec 2025-11-25 "Authorization Code Protection").
"""

import base64
import hashlib
import secrets
from typing import NamedTuple


class PKCE(NamedTuple):
    """One flow's verifier, challenge and state. Its ``repr`` shows the challenge only: the verifier
    is what proves the flow is ours (RFC 7636 §7.1), and the state guards the redirect."""

    verifier: str
    challenge: str
    state: str

    def __repr__(self) -> str:
        return f"PKCE(verifier=[redacted], challenge={self.challenge!r}, state=[redacted])"


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 §2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_pkce() -> PKCE:
    """A fresh verifier (86 characters of 64 random bytes), its S256 challenge, and a random state."""
    verifier = b64url(secrets.token_bytes(64))
    challenge = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
    return PKCE(verifier, challenge, secrets.token_urlsafe(24))
