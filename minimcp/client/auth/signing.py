"""Signed JWTs the client makes: ``private_key_jwt`` client assertions and DPoP proofs.

Signing needs PyJWT with its ``crypto`` extra (``pip install 'PyJWT[crypto]>=2.8'``, the ``auth`` extra);
it is imported here, and only when a flow that signs is used, so everything
else works without it.
"""

import hashlib
import json
import secrets
import time
from typing import Any, Dict, Optional
from urllib.parse import urlsplit, urlunsplit

from ...errors import AuthError
from .pkce import b64url


def pyjwt() -> Any:
    """The ``jwt`` module (PyJWT), or an error that names the extra to install."""
    import importlib.util

    try:
        import jwt

        if importlib.util.find_spec("cryptography") is None:  # PyJWT alone signs no EC or RSA
            raise ImportError("cryptography")
    except ImportError as exc:
        raise AuthError("signing JWTs (private_key_jwt, DPoP) needs PyJWT with its crypto extra: "
                        "pip install 'PyJWT[crypto]>=2.8' (minimcp's auth extra)") from exc
    return jwt


def client_assertion(client_id: str, audience: str, private_key: Any, algorithm: str) -> str:
    """An RFC 7523 client assertion: ``iss`` = ``sub`` = the client id, ``aud`` = the authorization server's issuer."""
    jwt = pyjwt()
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 300,
              "jti": secrets.token_urlsafe(16)}
    try:
        assertion: str = jwt.encode(claims, private_key, algorithm=algorithm)
        return assertion
    except (ValueError, TypeError, jwt.exceptions.PyJWTError) as exc:
        raise AuthError(f"cannot sign the client assertion with {algorithm}: {exc}; "
                        f"pass a PEM private key that matches the algorithm") from exc


class DPoPKey:
    """A key pair that DPoP-binds tokens (RFC 9449), and the proofs made with it.

    One per auth object; the access token is bound to its public key's
    thumbprint, so every request carries a fresh proof signed with it.
    """

    def __init__(self, algorithm: str = "ES256") -> None:
        jwt = pyjwt()
        from cryptography.hazmat.primitives.asymmetric import ec

        if algorithm != "ES256":
            raise AuthError(f"DPoP with {algorithm} is not supported; minimcp signs DPoP proofs with ES256")
        self.algorithm = algorithm
        self._jwt = jwt
        self._key = ec.generate_private_key(ec.SECP256R1())
        public = jwt.algorithms.ECAlgorithm.to_jwk(self._key.public_key())
        self.jwk: Dict[str, str] = json.loads(public) if isinstance(public, str) else dict(public)
        #: The latest nonce each server asked for (RFC 9449 §8, §9), by origin.
        self.nonces: Dict[str, str] = {}

    def proof(self, method: str, url: str, access_token: Optional[str] = None) -> str:
        """A fresh proof for one request: ``htm``, ``htu`` (no query, no fragment), a new ``jti``, and ``ath``."""
        parts = urlsplit(url)
        claims: Dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method.upper(),
                                  "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
                                  "iat": int(time.time())}
        nonce = self.nonces.get(f"{parts.scheme}://{parts.netloc}".lower())
        if nonce:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode("ascii")).digest())
        proof: str = self._jwt.encode(claims, self._key, algorithm=self.algorithm,
                                      headers={"typ": "dpop+jwt", "jwk": self.jwk})
        return proof

    def remember_nonce(self, url: str, nonce: Optional[str]) -> bool:
        """Keep a server's ``DPoP-Nonce``; True when it is a new one (worth a retry)."""
        if not nonce:
            return False
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        new = self.nonces.get(origin) != nonce
        self.nonces[origin] = nonce
        return new
