"""Who the client is to an authorization server, in the spec's order (2025-11-25 "Client Registration"):

1. credentials registered beforehand (``OAuth(client_id=..., client_secret=...)``);
2. a Client ID Metadata Document: an https URL as the ``client_id``, when the
   server advertises ``client_id_metadata_document_supported``;
3. Dynamic Client Registration (RFC 7591) where the server offers a
   ``registration_endpoint`` (the result is stored per issuer and reused);
4. otherwise an error that says what to configure.

Registration state is per authorization server: credentials from one are
never shown to another (2026-07-28, SEP-2352), so a server that moves to a
new authorization server gets a new registration there.

A registration's ``scope`` (RFC 7591 §2) limits what the client may ask for
later, and servers such as oidc-provider enforce it: a step-up to a scope
outside it is refused (``invalid_scope``). So the client registers for every
scope the authorization server lists (``scopes_supported``) as well as the
ones it needs now, records what it registered for, and registers again when
a later request needs a scope outside that.
"""

from typing import Any, Dict, List, Optional

from ...errors import AuthError
from .http import AuthHTTP, redacted
from .store import TokenStore
from .tokens import ClientAuth, choose_method


class ClientSettings:
    """What the user told us about this client (all optional)."""

    def __init__(self, client_id: Optional[str] = None, client_secret: Optional[str] = None,
                 issuer: Optional[str] = None, client_metadata_url: Optional[str] = None,
                 client_name: str = "minimcp", private_key: Any = None, signing_algorithm: str = "RS256") -> None:
        self.client_id: Optional[str] = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.client_metadata_url: Optional[str] = client_metadata_url
        self.client_name: str = client_name
        self.private_key = private_key
        self.signing_algorithm: str = signing_algorithm

    def __repr__(self) -> str:
        return (f"ClientSettings(client_id={self.client_id!r}, client_secret={redacted(self.client_secret)}, "
                f"issuer={self.issuer!r}, client_metadata_url={self.client_metadata_url!r}, "
                f"client_name={self.client_name!r}, private_key={redacted(self.private_key)}, "
                f"signing_algorithm={self.signing_algorithm!r})")


def identify(http: AuthHTTP, metadata: Dict[str, Any], settings: ClientSettings, store: TokenStore,
             redirect_uris: List[str], grant_types: List[str], scopes: Optional[List[str]],
             fresh: bool = False) -> ClientAuth:
    """This client's identity at the authorization server ``metadata`` describes.

    A stored registration is reused when it has the redirect URIs and covers
    ``scopes``; ``fresh=True`` registers anew all the same.

    Raises:
        AuthError: no way to identify the client; the message lists what to configure.
    """
    issuer = metadata["issuer"]
    if settings.client_id and (settings.issuer is None or settings.issuer == issuer):
        method = choose_method(metadata, settings.client_secret, settings.private_key)
        return ClientAuth(settings.client_id, settings.client_secret, method, settings.private_key,
                          settings.signing_algorithm)
    if settings.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
        return ClientAuth(settings.client_metadata_url, None, "none")
    saved = None if fresh else store.load(("client", issuer))
    if (saved and isinstance(saved.get("client_id"), str) and set(redirect_uris) <= set(saved.get("redirect_uris", []))
            and covers(saved, scopes)):
        return ClientAuth(saved["client_id"], saved.get("client_secret"), saved.get("method", "none"))
    if metadata.get("registration_endpoint"):
        return register(http, metadata, settings, store, redirect_uris, grant_types, scopes)
    raise AuthError(f"the authorization server {issuer} does not offer dynamic client registration"
                    f"{'' if not metadata.get('client_id_metadata_document_supported') else ' and no client_metadata_url was given'};"
                    f" register a client there and pass OAuth(client_id=..., client_secret=...) "
                    f"(or, for minimcp login, --client-id and --client-secret)")


def covers(saved: Dict[str, Any], scopes: Optional[List[str]]) -> bool:
    """May the stored registration ``saved`` ask for ``scopes``? (Yes when its scope was not recorded:
    the server's ``invalid_scope``, if it comes, makes ``OAuth`` register again.)"""
    registered = saved.get("scope")
    return not isinstance(registered, list) or set(scopes or []) <= set(registered)


def register(http: AuthHTTP, metadata: Dict[str, Any], settings: ClientSettings, store: TokenStore,
             redirect_uris: List[str], grant_types: List[str], scopes: Optional[List[str]]) -> ClientAuth:
    """Dynamic Client Registration (RFC 7591); the registration, and the scope it was made for, is stored
    under the issuer. The scope registered is ``scopes`` and every scope the server lists."""
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    method = "none" if "none" in supported else choose_method(metadata, "secret-to-come")
    loopback = all(uri.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")) for uri in redirect_uris)
    body = {"client_name": settings.client_name, "redirect_uris": redirect_uris, "grant_types": grant_types,
            "response_types": ["code"] if "authorization_code" in grant_types else [],
            "token_endpoint_auth_method": method,
            # 2026-07-28: native for loopback redirects, web otherwise (SEP-837)
            "application_type": "native" if loopback else "web"}
    # RFC 7591 §2: the scope a client registers with is all it may ask for later; a server that enforces it
    # would refuse a step-up beyond the first challenge's scope. Requesting a token still asks for no more
    # than the challenge names (MCP Security Best Practices, "Scope Minimization").
    offered = metadata.get("scopes_supported")
    registering = list(scopes or [])
    if isinstance(offered, list):
        registering += [s for s in offered if isinstance(s, str) and s not in registering]
    if registering:
        body["scope"] = " ".join(registering)
    endpoint = metadata["registration_endpoint"]
    response = http.request("POST", endpoint, what="the client registration", json=body,
                            headers={"Accept": "application/json"}, named_by=metadata.get("issuer") or None)
    with response:
        try:
            answer = response.json()
        except ValueError:
            answer = None
    if response.status_code not in (200, 201) or not isinstance(answer, dict) or not isinstance(
            answer.get("client_id"), str):
        detail = answer.get("error_description") or answer.get("error") if isinstance(answer, dict) else None
        raise AuthError(f"the client registration at {endpoint} failed (HTTP {response.status_code}"
                        f"{': ' + str(detail) if detail else ''}); register a client by hand and pass "
                        f"OAuth(client_id=..., client_secret=...)")
    secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
    method = answer.get("token_endpoint_auth_method") or (method if secret or method == "none" else "none")
    if method != "none" and secret is None:
        method = "none"
    store.save(("client", metadata["issuer"]), {"client_id": answer["client_id"], "client_secret": secret,
                                                 "method": method, "redirect_uris": redirect_uris,
                                                 "scope": registering})
    return ClientAuth(answer["client_id"], secret, method)
