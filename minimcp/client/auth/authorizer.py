"""The hook between an HTTP transport and OAuth: a ``requests`` auth object.

The MCP transports send every request through a ``requests.Session``
whose ``auth`` is this object, so each request passes through
``__call__()`` (which adds ``Authorization``, and a fresh DPoP proof when the
token is DPoP-bound: a dictionary lookup and a header on the hot path), and
each response through ``_on_response()``, which lets everything but a 401
or a 403 through untouched. On those it does what the spec says and sends
the request again:

- 401: discover (``discovery``), then refresh the token, or get a new one
  from the grant this object is for (``obtain()``, written by each flow in
  ``flows``); a 401 ``use_dpop_nonce`` is retried with the server's nonce;
- 403 ``insufficient_scope``: step up, asking for the union of the scopes
  held and the scopes the challenge names (2026-07-28), at most twice per request.

A token is kept per authorization server and resource (``store``), and is
sent only to the origin of the resource it was issued for.
"""

import threading
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional

import requests
import requests.auth  # (loaded by requests itself; named so that type checkers know it)

from ...errors import AuthError
from ...logs import get_logger
from .discovery import (
    Challenge,
    authorization_server_metadata,
    canonical_uri,
    fallback_metadata,
    origin_of,
    parse_challenges,
    resource_metadata,
)
from .http import AuthHTTP
from .signing import DPoPKey
from .store import MemoryTokenStore, TokenStore
from .tokens import ClientAuth, Token, request_token
from .urls import check_url

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: Step-ups (403 insufficient_scope) per request before giving up (spec: "implement retry limits").
MAX_STEP_UPS = 2


class Grant(NamedTuple):
    """What discovery found, handed to a flow's ``obtain()``."""

    metadata: Dict[str, Any]          # the authorization server's metadata (RFC 8414)
    resource: str           # the RFC 8707 resource: the protected resource metadata's value, as published
    scopes: Optional[List[str]]
    server_url: str


class Authorizer(requests.auth.AuthBase):
    """The base of every OAuth flow; a flow writes ``obtain()`` (and ``client_for()`` if it refreshes)."""

    #: A 401 or 403 is answered by the flow (transports/http/streamable.py sends a refused direct
    #: POST again through it).
    answers_challenges = True

    def __init__(self, *, scopes: Optional[List[str]] = None, store: Optional[TokenStore] = None,
                 dpop: Optional[bool] = None, http_timeout: float = 30.0) -> None:
        self.scopes: Optional[List[str]] = list(scopes) if scopes else None
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.dpop = dpop
        self.http: AuthHTTP = AuthHTTP(http_timeout)
        self._lock = threading.RLock()  # one discovery and one flow at a time; requests go on meanwhile
        self._tokens: Dict[str, Token] = {}      # origin -> the token for the resource there
        self._servers: Dict[str, str] = {}       # origin -> the MCP server URL first seen there
        self._metadata: Dict[str, Dict[str, Any]] = {}     # issuer -> its metadata
        self._dpop_key: Optional[DPoPKey] = None
        self._last = ("", "")                    # (url, origin) of the last request: urlsplit once per URL

    # -- what a flow provides -----------------------------------------------------------------

    def obtain(self, grant: Grant) -> Token:
        """A new token for ``grant`` (the flow's own grant: authorization code, client credentials ...)."""
        raise NotImplementedError

    def prepare(self, url: str, trace: Optional[bool] = None) -> None:
        """Called by ``connect()`` before the first request to ``url`` (``OAuth`` logs a person in then);
        ``trace=True`` (``connect(trace=True)``, ``--trace``) traces the OAuth requests too."""
        if trace:
            self.http.trace = True

    def client_for(self, metadata: Dict[str, Any]) -> Optional[ClientAuth]:
        """The client identity a refresh request authenticates with (``None``: a public client with no id)."""
        return None

    # -- every request --------------------------------------------------------------------------

    def __call__(self, request: "requests.PreparedRequest") -> "requests.PreparedRequest":
        """Add the token (and a DPoP proof) to one request, and watch its response."""
        url = request.url or ""
        origin = self._origin(url)
        token = self._tokens.get(origin)
        if token is None and origin not in self._servers:
            token = self._load(url, origin)
        elif token is not None and token.expires_at is not None and token.expires_soon():
            token = self._renew(origin, token)
        if token is not None:
            self._attach(request, token)
        request.register_hook("response", self._on_response)  # type: ignore[no-untyped-call]  # unannotated in types-requests
        return request

    def _origin(self, url: str) -> str:
        """``origin_of(url)``, parsed once per URL (every request asks)."""
        last = self._last  # read once: another thread may replace it (with another server's origin)
        if last[0] == url:
            return last[1]
        origin = origin_of(url)
        self._last = (url, origin)
        return origin

    def direct_headers(self, url: str) -> Optional[Dict[str, str]]:
        """The header that carries a fresh Bearer token for ``url``, for a POST that skips
        ``requests`` (transports/http/direct.py): an authorized call then costs that header alone. None
        when the request must go through :meth:`__call__` (no token yet, one to renew, DPoP)."""
        origin = self._origin(url)
        token = self._tokens.get(origin)
        if token is None or token.token_type == "DPoP" or token.expires_soon():
            return None
        return {"Authorization": "Bearer " + token.access_token}

    def _attach(self, request: "requests.PreparedRequest", token: Token) -> None:
        if token.token_type == "DPoP" and self._dpop_key is not None:
            request.headers["Authorization"] = "DPoP " + token.access_token
            request.headers["DPoP"] = self._dpop_key.proof(request.method or "POST", request.url or "",
                                                           token.access_token)
        else:
            request.headers["Authorization"] = "Bearer " + token.access_token

    def _on_response(self, response: "requests.Response", **options: Any) -> "requests.Response":
        status = response.status_code
        if status != 401 and status != 403:
            if self._dpop_key is not None:
                self._dpop_key.remember_nonce(response.url, response.headers.get("DPoP-Nonce"))
            return response
        return self._challenged(response, options)

    def _challenged(self, response: "requests.Response", options: Dict[str, Any]) -> "requests.Response":
        """Answer 401 and 403 challenges, then send the request again (every loop bounded)."""
        request = response.request
        step_ups = authorizations = 0
        for _ in range(MAX_STEP_UPS + 4):
            sent = request.headers.get("Authorization")
            challenge = _main_challenge(response.headers.get("WWW-Authenticate", ""), sent)
            error = challenge.params.get("error", "")
            if response.status_code == 401:
                nonce = response.headers.get("DPoP-Nonce")
                if not (error == "use_dpop_nonce" and self._dpop_key is not None
                        and self._dpop_key.remember_nonce(request.url or "", nonce)):
                    if authorizations >= 2:
                        raise AuthError(f"{request.url} still answers 401 after authorization"
                                        f"{': ' + challenge.params['error_description'] if 'error_description' in challenge.params else ''}"
                                        f"; the token it was given is not accepted")
                    authorizations += 1
                    self.authorize(request.url or "", challenge, sent)
            elif response.status_code == 403 and error == "insufficient_scope":
                if step_ups >= MAX_STEP_UPS:
                    raise AuthError(f"{request.url} still needs more scope ({challenge.params.get('scope', '?')}) "
                                    f"after {step_ups} step-up authorizations; giving up")
                step_ups += 1
                self.authorize(request.url or "", challenge, sent, step_up=True)
            else:
                return response
            _ = response.content  # read the refusal to its end, so its connection goes back to the pool
            response.close()
            request = request.copy()
            request.headers.pop("Authorization", None)
            request.headers.pop("DPoP", None)
            token = self._tokens.get(origin_of(request.url or ""))
            if token is not None:
                self._attach(request, token)
            response = response.connection.send(request, **options)
            if response.status_code not in (401, 403):
                return self._on_response(response)
        raise AuthError(f"{request.url} kept refusing the request after authorization")

    # -- getting a token --------------------------------------------------------------------------

    def authorize(self, url: str, challenge: Optional[Challenge] = None, sent: Optional[str] = None,
                  step_up: bool = False) -> Token:
        """Discover, then refresh or obtain a token for the MCP server at ``url``; the token.

        ``sent`` is the ``Authorization`` the refused request carried: when the
        token has changed since (another thread got a new one), that one is used.

        Raises:
            AuthError: discovery or the flow failed; the message says what to fix.
        """
        challenge = challenge or Challenge("bearer", {})
        origin = origin_of(url)
        with self._lock:
            current = self._tokens.get(origin)
            if current is not None and sent != self._header(current):
                return current
            server_url = self._servers.setdefault(origin, canonical_uri(url))
            document = resource_metadata(self.http, server_url, challenge.params.get("resource_metadata"))
            if document is not None:
                issuer = document["authorization_servers"][0]
                metadata = self._issuer_metadata(issuer, server_url)
                resource = document["resource"]
            else:
                metadata, resource, document = fallback_metadata(self.http, server_url), server_url, {}
            scopes = self.scopes or challenge.scopes or _strings(document.get("scopes_supported"))
            if step_up and current is not None:
                held = current.scopes or self.scopes or []
                scopes = held + [s for s in challenge.scopes or [] if s not in held]
            self._choose_dpop(challenge, document, metadata)
            token = None
            if (current is not None and not step_up and current.refresh_token
                    and current.issuer == metadata.get("issuer")):
                token = self._refresh(metadata, current)
            if token is None:
                token = self.obtain(Grant(metadata, resource, scopes, server_url))
            self._keep(origin, server_url, token)
            return token

    def _issuer_metadata(self, issuer: str, named_by: Optional[str]) -> Dict[str, Any]:
        """``issuer``'s metadata (kept per issuer); ``named_by``: the MCP server whose metadata named it."""
        # checked here as well as at the first fetch: a cached issuer may be named again by another server
        check_url(issuer, f"the authorization server of {named_by}" if named_by else "the authorization server",
                  named_by)
        metadata = self._metadata.get(issuer)
        if metadata is None:
            metadata = authorization_server_metadata(self.http, issuer, named_by)
            if metadata is None:
                raise AuthError(f"the authorization server {issuer} publishes no metadata at any of the "
                                f"well-known URLs (RFC 8414, OpenID Connect Discovery); ask its operator")
            self._metadata[issuer] = metadata
        return metadata

    def _choose_dpop(self, challenge: Challenge, document: Dict[str, Any], metadata: Dict[str, Any]) -> None:
        wanted = self.dpop
        if wanted is None:  # automatic: when the resource asks for DPoP and the server can issue it
            wanted = (challenge.scheme == "dpop" or document.get("dpop_bound_access_tokens_required") is True) \
                and bool(metadata.get("dpop_signing_alg_values_supported"))
        if wanted and self._dpop_key is None:
            self._dpop_key = DPoPKey()

    @property
    def dpop_key(self) -> Optional[DPoPKey]:
        """The DPoP key the tokens are bound to, once DPoP is in use."""
        return self._dpop_key

    def _refresh(self, metadata: Dict[str, Any], token: Token) -> Optional[Token]:
        """A refreshed token, or ``None`` when the server refused the refresh token (then: a new flow)."""
        form = {"grant_type": "refresh_token", "refresh_token": token.refresh_token or "", "resource": token.resource}
        try:
            new = request_token(self.http, metadata, self.client_for(metadata), form, resource=token.resource,
                                dpop=self._dpop_key, what="the token refresh", requested=token.scopes)
        except AuthError as exc:
            log.info("refreshing the token failed (%s); authorizing again", exc)
            return None
        return new._replace(refresh_token=new.refresh_token or token.refresh_token)

    def _renew(self, origin: str, token: Token) -> Optional[Token]:
        """Before expiry: refresh, or drop the token (the 401 that follows starts a new flow)."""
        with self._lock:
            if self._tokens.get(origin) is not token:
                return self._tokens.get(origin)
            new = None
            if token.refresh_token:
                try:
                    new = self._refresh(self._issuer_metadata(token.issuer, self._servers.get(origin)), token)
                except AuthError as exc:
                    log.info("cannot refresh before expiry: %s", exc)
            if new is None:
                self._tokens.pop(origin, None)
                return None
            self._keep(origin, self._servers.get(origin, ""), new)
            return new

    # -- keeping tokens -----------------------------------------------------------------------------

    def _header(self, token: Token) -> str:
        return ("DPoP " if token.token_type == "DPoP" and self._dpop_key is not None else "Bearer ") + token.access_token

    def _keep(self, origin: str, server_url: str, token: Token) -> None:
        self._tokens[origin] = token
        if token.token_type == "DPoP":
            return  # bound to a key that lives in this process only: useless to the next one
        self.store.save(("token", token.issuer, token.resource), token.to_dict())
        self.store.save(("server", server_url), {"issuer": token.issuer, "resource": token.resource})

    def _load(self, url: str, origin: str) -> Optional[Token]:
        with self._lock:
            server_url = self._servers.setdefault(origin, canonical_uri(url))
            where = self.store.load(("server", server_url))
            if not where:
                return None
            token = Token.from_dict(self.store.load(("token", where.get("issuer", ""), where.get("resource", "")))
                                    or {})
            if token is None or origin_of(token.resource or server_url) != origin:
                return None
            self._tokens[origin] = token
        if token.expires_soon():
            return self._renew(origin, token)
        return token

    def forget(self, url: str) -> bool:
        """Drop the token kept for the MCP server at ``url`` (here and in the store); True if there was one."""
        server_url = canonical_uri(url)
        with self._lock:
            self._tokens.pop(origin_of(url), None)
            where = self.store.load(("server", server_url))
            self.store.delete(("server", server_url))
            if where:
                self.store.delete(("token", where.get("issuer", ""), where.get("resource", "")))
        return bool(where)

    def token_for(self, url: str) -> Optional[Token]:
        """The token this object holds (or has stored) for the MCP server at ``url``, if any."""
        origin = origin_of(url)
        return self._tokens.get(origin) or self._load(url, origin)

    def close(self) -> None:
        """Close the connections to authorization servers."""
        self.http.close()


def _main_challenge(header: str, sent: Optional[str] = None) -> Challenge:
    """The Bearer or DPoP challenge of a ``WWW-Authenticate`` that answers the request.

    A server that takes both schemes sends both challenges (RFC 9449 §7.1), and
    puts the error in the one for the scheme the request used (§7.1, §9; minimcp's
    own server: ``Bearer resource_metadata=…, scope=…, DPoP error="use_dpop_nonce",
    algs=…``): so the one with an ``error`` wins, then the one of ``sent``'s scheme
    (``sent``: the request's ``Authorization``), then the first. A
    ``resource_metadata`` or ``scope`` only another of them carries is kept (MCP
    servers name them on the Bearer challenge).
    """
    found = [challenge for challenge in parse_challenges(header) if challenge.scheme in ("bearer", "dpop")]
    if not found:
        return Challenge("bearer", {})
    used = sent.split(" ", 1)[0].lower() if sent else ""
    best = max(found, key=lambda c: ("error" in c.params, c.scheme == used))  # (max keeps the first of equals)
    params = dict(best.params)
    for other in found:
        for name in ("resource_metadata", "scope"):
            if name in other.params:
                params.setdefault(name, other.params[name])
    return Challenge(best.scheme, params)


def _strings(value: Any) -> Optional[List[str]]:
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    return None
