"""Tokens, and the token request that every grant ends with (OAuth 2.1 §3.2).

``request_token()`` posts a grant to the token endpoint with the client's
authentication (``client_secret_basic``, ``client_secret_post``,
``private_key_jwt`` or ``none``: whichever the registration says), and a
DPoP proof when the flow uses DPoP (retrying once with the server's nonce
when it answers ``use_dpop_nonce``, RFC 9449 §8). A response without an
``access_token`` is an error that says so; nothing is kept from it.
"""

import base64
import time
from typing import Any, Dict, List, NamedTuple, Optional
from urllib.parse import quote

from ...errors import AuthError
from .http import AuthHTTP, redacted
from .signing import DPoPKey, client_assertion

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class Token(NamedTuple):
    """What a token endpoint issued, and for whom. Its ``repr`` (and so ``str``) shows no token."""

    access_token: str
    token_type: str = "Bearer"
    expires_at: Optional[float] = None
    refresh_token: Optional[str] = None
    scopes: Optional[List[str]] = None
    issuer: str = ""
    resource: str = ""

    def __repr__(self) -> str:
        return (f"Token(access_token={redacted(self.access_token)}, token_type={self.token_type!r}, "
                f"expires_at={self.expires_at!r}, refresh_token={redacted(self.refresh_token)}, "
                f"scopes={self.scopes!r}, issuer={self.issuer!r}, resource={self.resource!r})")

    def expires_soon(self, margin: float = 30.0) -> bool:
        """True when the token expires within ``margin`` seconds (or has)."""
        return self.expires_at is not None and time.time() > self.expires_at - margin

    def to_dict(self) -> Dict[str, Any]:
        """The token as JSON, for a store."""
        return self._asdict()

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> Optional["Token"]:
        """A token read back from a store, or ``None`` if the record is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
            return None
        fields: Dict[str, Any] = {field: data.get(field, cls._field_defaults.get(field)) for field in cls._fields}
        return cls(**fields)


class ClientAuth(NamedTuple):
    """How this client identifies itself to one authorization server. Its ``repr`` shows no secret or key."""

    client_id: str
    client_secret: Optional[str] = None
    method: str = "none"  # client_secret_basic | client_secret_post | private_key_jwt | none
    private_key: Any = None
    signing_algorithm: str = "RS256"

    def __repr__(self) -> str:
        return (f"ClientAuth(client_id={self.client_id!r}, client_secret={redacted(self.client_secret)}, "
                f"method={self.method!r}, private_key={redacted(self.private_key)}, "
                f"signing_algorithm={self.signing_algorithm!r})")


def choose_method(metadata: Dict[str, Any], secret: Optional[str], private_key: Any = None) -> str:
    """The token endpoint auth method to use, from what the server lists (RFC 8414 default: basic)."""
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if private_key is not None:
        return "private_key_jwt"
    if secret:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "client_secret_basic"
    return "none"


def _authenticate(client: ClientAuth, form: Dict[str, str], headers: Dict[str, str], issuer: str) -> None:
    if client.method == "client_secret_basic" and client.client_secret is not None:
        pair = f"{quote(client.client_id, safe='')}:{quote(client.client_secret, safe='')}"  # RFC 6749 §2.3.1
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif client.method == "client_secret_post" and client.client_secret is not None:
        form.update(client_id=client.client_id, client_secret=client.client_secret)
    elif client.method == "private_key_jwt":
        form.update(client_id=client.client_id, client_assertion_type=ASSERTION_TYPE,
                    client_assertion=client_assertion(client.client_id, issuer, client.private_key,
                                                      client.signing_algorithm))
    else:
        form["client_id"] = client.client_id


def request_token(http: AuthHTTP, metadata: Dict[str, Any], client: Optional[ClientAuth], form: Dict[str, str], *,
                  resource: str, dpop: Optional[DPoPKey] = None, what: str = "the token request",
                  requested: Optional[List[str]] = None) -> Token:
    """POST ``form`` (a grant) to the token endpoint; the token it issues.

    Raises:
        AuthError: the server refused (``error`` carries its OAuth error code), or
            answered something that is not a token.
    """
    endpoint = metadata["token_endpoint"]
    for attempt in range(2):  # the second try only after a use_dpop_nonce
        body, headers = dict(form), {"Accept": "application/json"}
        if client is not None:
            _authenticate(client, body, headers, metadata.get("issuer", ""))
        if dpop is not None:
            headers["DPoP"] = dpop.proof("POST", endpoint)
        response = http.request("POST", endpoint, what=what, data=body, headers=headers,
                                named_by=metadata.get("issuer") or None)  # (the issuer's metadata named it)
        with response:
            try:
                answer = response.json()
            except ValueError:
                answer = None
        if response.status_code == 200:
            break
        error = answer.get("error", "") if isinstance(answer, dict) else ""
        if (dpop is not None and error == "use_dpop_nonce" and attempt == 0
                and dpop.remember_nonce(endpoint, response.headers.get("DPoP-Nonce"))):
            continue
        detail = answer.get("error_description") if isinstance(answer, dict) else None
        raise AuthError(f"{what} to {endpoint} was refused (HTTP {response.status_code}"
                        f"{': ' + error if error else ''}{': ' + detail if detail else ''})", error)
    if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str) or not answer["access_token"]:
        raise AuthError(f"{what} to {endpoint} answered without an 'access_token'; nothing was stored "
                        f"(is {endpoint} really a token endpoint?)")
    expires_in = answer.get("expires_in")
    scope = answer.get("scope")
    token_type = str(answer.get("token_type") or "Bearer")
    return Token(answer["access_token"], "DPoP" if token_type.lower() == "dpop" else "Bearer",
                 time.time() + expires_in if isinstance(expires_in, (int, float)) and expires_in > 0 else None,
                 answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None,
                 scope.split() if isinstance(scope, str) else requested, metadata.get("issuer", ""), resource)
