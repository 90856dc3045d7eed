"""Ready token verifiers for :class:`~minimcp.server.auth.protection.ProtectedResource`.

A verifier takes the bearer token a client sent and returns the
:class:`~minimcp.server.auth.protection.Principal` it stands for, or raises
:class:`~minimcp.server.auth.protection.InvalidToken` (the client gets 401 ``invalid_token``) or
:class:`~minimcp.server.auth.protection.VerifierUnavailable` (503: it cannot tell now).

- :class:`JWTVerifier`: a JWT access token (RFC 9068) checked locally, against the keys the
  authorization server publishes (its JWKS). Needs PyJWT: ``pip install 'PyJWT[crypto]>=2.8'`` (the ``auth`` extra).
- :class:`IntrospectionVerifier`: ask the authorization server (RFC 7662 token introspection),
  for opaque tokens, or for a revocation to count at once.
- :class:`DPoPProofs`: the proofs that come with a DPoP-bound token (RFC 9449), checked by
  :class:`~minimcp.server.auth.protection.ProtectedResource` whatever the verifier.

Both remember what they decided for a little while (:class:`TokenCache`), so a session's calls
cost a dictionary lookup, not a signature check or a round trip. Every request they make has a
timeout, and no lock is held while it runs.
"""

import base64
import hashlib
import json
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from ...logs import get_logger
from .protection import InvalidDPoPProof, InvalidToken, Principal, VerifierUnavailable, scope_list

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: What a verifier decided about a token: who it stands for, or why it is refused.
Decision = Union[Principal, InvalidToken]


def media_type(typ: str) -> str:
    """A JOSE ``typ`` as the media type it names, for comparing: RFC 7515 §4.1.9 lets the
    ``application/`` prefix be left out of a value with no other ``/``, and media type names
    ignore case (RFC 2045 §5.1): ``at+jwt``, ``AT+JWT`` and ``application/at+jwt`` are one type."""
    typ = typ.strip().lower()
    return typ if "/" in typ else "application/" + typ


def _import_jwt() -> Any:
    try:
        import jwt  # PyJWT
        import jwt.algorithms  # noqa: F401  (its crypto half: RSA and EC keys need `cryptography`)
    except ImportError as exc:
        raise ImportError("JWTVerifier needs PyJWT with its crypto extra: pip install 'PyJWT[crypto]>=2.8' "
                          f"(minimcp's auth extra); {exc}") from None
    if not getattr(jwt.algorithms, "has_crypto", False):
        raise ImportError("JWTVerifier needs the `cryptography` package for RSA/EC signatures: "
                          "pip install 'PyJWT[crypto]>=2.8'")
    return jwt


class TokenCache:
    """What a verifier decided about recent tokens: a principal, or the reason it refused.

    An entry lives ``seconds`` at most, and never past the token's own expiry; at ``size``
    entries the oldest go. A refusal is kept too, so a client retrying a bad token (or a flood
    of forged ones) does not cost a round trip each.
    """

    def __init__(self, seconds: float, size: int = 1024) -> None:
        self.seconds: float = seconds
        self.size: int = size
        self._entries: Dict[str, Tuple[float, Decision]] = {}
        self._lock = threading.Lock()

    def get(self, token: str) -> Optional[Decision]:
        """The principal (or the :class:`InvalidToken`) remembered for ``token``, else None."""
        entry = self._entries.get(token)
        if entry is None or entry[0] <= time.time():
            return None
        return entry[1]

    def put(self, token: str, decision: Decision, expires_at: Optional[float] = None) -> None:
        """Remember ``decision`` for ``token`` until ``seconds`` from now, or ``expires_at`` if sooner."""
        if self.seconds <= 0:
            return
        until = time.time() + self.seconds
        if expires_at is not None:
            until = min(until, expires_at)
        with self._lock:
            if len(self._entries) >= self.size:
                now = time.time()
                for key in [k for k, (end, _) in self._entries.items() if end <= now] or list(self._entries)[:1]:
                    del self._entries[key]
            self._entries[token] = (until, decision)


def _get_json(session: Any, url: str, timeout: float, what: str) -> Dict[str, Any]:
    """GET a JSON object, or raise :class:`VerifierUnavailable` saying what failed."""
    import requests  # late: only a server that checks tokens loads it

    try:
        response = (session or requests).get(url, timeout=timeout, headers={"Accept": "application/json"})
        response.raise_for_status()
        body = response.json()
    except requests.Timeout:
        raise VerifierUnavailable(f"{what} at {url} did not answer within {timeout:g}s") from None
    except (requests.RequestException, ValueError) as exc:
        raise VerifierUnavailable(f"{what} at {url} failed: {exc}") from None
    if not isinstance(body, dict):
        raise VerifierUnavailable(f"{what} at {url} is not a JSON object")
    return body


class _KeySet:
    """The authorization server's signing keys (its JWKS), fetched when needed.

    Rotation: a token signed with a key id not in the set makes the set be fetched again, and the
    set is refreshed once it is ``jwks_ttl`` old; either at most once every ``refetch_interval``
    seconds counted from the *start* of the last fetch (so forged key ids cannot make us hammer the
    server, and a fetch under way is not started again). One fetch at a time, run by the request
    that found it due, and no lock is held while it runs.

    Who waits for a fetch another request runs: only a request that cannot be answered without it
    (no keys yet, or a key id the set lacks), bounded by the fetch's timeouts. A request whose key
    is in the set is answered at once with it: a refresh only adds or rotates keys. While the
    endpoint is known to be down (the last fetch failed) nobody queues behind the retry: 503 at
    once when there are no keys. A failure with no keys at all is remembered ``failure_backoff``
    seconds from the *end* of the fetch that failed: counted from its start, a back-off no longer
    than the fetch timeout (the defaults: 5 s each) would be over before the failure was known.
    """

    def __init__(self, verifier: "JWTVerifier") -> None:
        self.verifier = verifier
        self.keys: Optional[Dict[Optional[str], Any]] = None
        self.fetched_at: float = float("-inf")  # when the keys we hold were fetched (their age: jwks_ttl)
        self.started_at: float = float("-inf")  # when the last fetch started (is another one due?)
        self.ended_at: float = float("-inf")    # when the last fetch ended, whatever its outcome (the back-off)
        self.fetches: int = 0
        self._failed: Optional[str] = None      # why the last fetch failed (None: it did not)
        self._lock = threading.Lock()
        self._inflight: Optional[threading.Event] = None

    def key_for(self, kid: Optional[str]) -> Any:
        """The key for ``kid`` (a lone key answers a token with no ``kid``)."""
        keys = self.keys
        key = None if keys is None else self._pick(keys, kid)
        if key is None:
            # No keys yet, or not this one (a rotation?): only a fetch can tell, so wait for one.
            self._refresh(wait=True)  # VerifierUnavailable when there are no keys and none can be fetched
            key = self._pick(self.keys or {}, kid)
            if key is None:
                raise InvalidToken(f"the token is signed with a key ({kid!r}) the authorization server does not list")
        elif time.monotonic() - self.fetched_at > self.verifier.jwks_ttl:
            self._refresh(wait=False)  # a refresh is due: run it if none runs, but never wait on another's
        return key

    @staticmethod
    def _pick(keys: Dict[Optional[str], Any], kid: Optional[str]) -> Any:
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        return keys.get(kid)

    def _refresh(self, wait: bool) -> None:
        """Fetch the keys if a fetch is due, or (``wait``) wait for the one under way."""
        with self._lock:
            running, now = self._inflight, time.monotonic()
            if running is None:
                if self.keys is None:
                    if self._failed and now - self.ended_at < self.verifier.failure_backoff:
                        raise VerifierUnavailable(self._failed)  # it just failed: answer at once
                elif now - self.started_at < self.verifier.refetch_interval:
                    return  # fetched (or tried) lately: use the keys we have
                self._inflight = mine = threading.Event()
                self.started_at = now
            elif self._failed is not None or not wait:
                # A retry of a failed fetch runs (do not queue behind it), or this request has its key.
                if self.keys is None:
                    raise VerifierUnavailable(self._failed or "the signing keys are being fetched; try again")
                return
        if running is not None:
            running.wait(self._longest_fetch())
            if self.keys is None:
                raise VerifierUnavailable(self._failed or "the signing keys are being fetched; try again")
            return
        try:
            keys = self._fetch()
            self.keys, self.fetched_at, self._failed = keys, time.monotonic(), None
        except VerifierUnavailable as exc:
            self._failed = str(exc)
            log.error("cannot fetch the signing keys: %s", exc)
            if self.keys is None:
                raise
        finally:
            with self._lock:
                self.ended_at = time.monotonic()  # the back-off counts from here
                self._inflight = None
            mine.set()

    def _longest_fetch(self) -> float:
        """How long one fetch may take: each GET (the metadata at two well-known URLs when there is
        no ``jwks_uri`` yet, then the JWKS) has ``timeout`` to connect and ``timeout`` to answer."""
        gets = 1 if self.verifier.jwks_uri else 3
        return 2 * gets * self.verifier.timeout

    def _fetch(self) -> Dict[Optional[str], Any]:
        jwt = _import_jwt()
        verifier = self.verifier
        self.fetches += 1
        uri = verifier.jwks_uri or verifier.discover_jwks_uri()
        document = _get_json(verifier.session, uri, verifier.timeout, "the JWKS")
        keys: Dict[Optional[str], Any] = {}
        for entry in document.get("keys") or []:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                keys[entry.get("kid")] = jwt.PyJWK(entry)
            except Exception as exc:  # an algorithm we cannot use: skip that key, keep the others
                log.debug("JWKS key %r skipped: %s", entry.get("kid"), exc)
        if not keys:
            raise VerifierUnavailable(f"the JWKS at {uri} has no signing key minimcp can use")
        log.info("fetched %d signing key(s) from %s", len(keys), uri)
        return keys


class JWTVerifier:
    """Check JWT access tokens locally: ``typ``, signature (the issuer's JWKS), ``iss``, ``aud``, ``exp``, ``nbf``.

    Example::

        verifier = JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp")

    Args:
        issuer: the authorization server's issuer URL; a token's ``iss`` must equal it.
        audience: this server's resource URL; a token's ``aud`` must name it (RFC 8707).
        jwks_uri: where the keys are; default: the ``jwks_uri`` of the issuer's metadata
            (OpenID discovery, then RFC 8414).
        algorithms: signature algorithms accepted (never ``none``, never HMAC: the keys are public).
        accept_typ: the header ``typ`` values taken for an access token: ``at+jwt`` (RFC 9068 §2.1),
            with or without ``application/``, in any case. Add ``"JWT"`` for an issuer that types
            its access tokens so (other JWTs it signs, ID or logout tokens, could then pass too).
        allow_untyped: also take a token with no ``typ`` at all (an issuer that sends none). The
            first token refused for its ``typ`` is logged as a warning naming these two settings.
        leeway: seconds of clock skew allowed on ``exp`` and ``nbf``.
        timeout: seconds for each fetch of the metadata or the keys.
        refetch_interval: the least seconds between the starts of two fetches of the keys (for
            an unknown key id, or a refresh).
        jwks_ttl: seconds before the key set is fetched again anyway (by the request that finds it
            due; the others go on with the keys they have).
        failure_backoff: seconds from the end of a failed fetch (with no keys at all) during which
            requests get 503 at once instead of each waiting on a new fetch.
        cache_seconds: how long a verified token is remembered (never past its ``exp``).
        session: a ``requests.Session`` to fetch with (proxies, CA bundle); default: plain requests.
    """

    def __init__(self, issuer: str, audience: str, *, jwks_uri: Optional[str] = None,
                 algorithms: Sequence[str] = ("RS256", "PS256", "ES256", "ES384", "EdDSA"), leeway: float = 30.0,
                 timeout: float = 5.0, refetch_interval: float = 60.0, jwks_ttl: float = 3600.0,
                 failure_backoff: float = 5.0, cache_seconds: float = 300.0, session: Any = None,
                 accept_typ: Sequence[str] = ("at+jwt",), allow_untyped: bool = False) -> None:
        self.jwt: Any = _import_jwt()  # the PyJWT module; fail at configuration time, naming the extra
        self.issuer: str = issuer
        self.audience = audience
        self.jwks_uri: Optional[str] = jwks_uri
        self.algorithms: List[str] = [a for a in algorithms if a != "none" and not a.startswith("HS")]
        self.accept_typ: Tuple[str, ...] = tuple(accept_typ)
        self._types: FrozenSet[str] = frozenset(media_type(t) for t in accept_typ)
        self.allow_untyped = allow_untyped
        self.leeway: float = leeway
        self.timeout = timeout
        self.session = session
        self.refetch_interval: float = refetch_interval
        self.jwks_ttl = jwks_ttl
        self.failure_backoff = failure_backoff
        self.cache: TokenCache = TokenCache(cache_seconds)
        self.keys: _KeySet = _KeySet(self)
        self._lock = threading.Lock()
        self._typ_warned = False  # the typ warning is given once per verifier

    def __repr__(self) -> str:
        return f"<JWTVerifier issuer={self.issuer} audience={self.audience}>"

    def discover_jwks_uri(self) -> str:
        """The issuer's ``jwks_uri``, from its OpenID or RFC 8414 metadata (whose ``issuer`` must match)."""
        base = self.issuer.rstrip("/")
        split = base.split("/", 3)
        origin, path = "/".join(split[:3]), ("/" + split[3] if len(split) > 3 else "")
        failures = []
        urls = (f"{base}/.well-known/openid-configuration", f"{origin}/.well-known/oauth-authorization-server{path}")
        for url in urls:
            try:
                metadata = _get_json(self.session, url, self.timeout, "the authorization server metadata")
            except VerifierUnavailable as exc:
                failures.append(str(exc))
                continue
            if metadata.get("issuer") != self.issuer or not isinstance(metadata.get("jwks_uri"), str):
                failures.append(f"{url} names issuer {metadata.get('issuer')!r} and no usable jwks_uri")
                continue
            self.jwks_uri = metadata["jwks_uri"]
            return self.jwks_uri
        raise VerifierUnavailable("no jwks_uri for " + self.issuer + ": " + "; ".join(failures))

    def _warn_typ(self, typ: Any) -> None:
        """Say once, as a warning, that tokens are refused for their ``typ``: each refusal is only
        logged at info, and an issuer that types its access tokens otherwise (Keycloak, Entra ID and
        Auth0 send ``JWT``; Okta and Cognito send none) would otherwise see every client refused
        with no hint at the setting."""
        with self._lock:
            if self._typ_warned:
                return
            self._typ_warned = True
        if typ is None:
            fix = "JWTVerifier(..., allow_untyped=True)"
        else:
            fix = f"JWTVerifier(..., accept_typ={tuple(self.accept_typ) + (str(typ),)!r})"
        log.warning("%r refused a token whose header typ is %r: access tokens must be typed %s (RFC 9068 §2.1, "
                    "RFC 8725 §3.11). If %s types its access tokens so, build the verifier with %s "
                    "(logged once)", self, typ, " or ".join(self.accept_typ), self.issuer, fix)

    def verify(self, token: str) -> Principal:
        """The principal of a valid token; :class:`InvalidToken` (or :class:`VerifierUnavailable`)."""
        decision = self.cache.get(token)
        if decision is not None:
            if isinstance(decision, InvalidToken):
                raise decision
            return decision
        jwt = self.jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a JWT") from None
        if header.get("alg") not in self.algorithms:
            raise InvalidToken(f"the token's algorithm {header.get('alg')!r} is not accepted")
        # RFC 9068 §4 and RFC 8725 §3.11 (explicit typing): an access token says it is one, so
        # another JWT of the same issuer for this audience (an ID, logout or DPoP token) is no key.
        typ = header.get("typ")
        if not (typ is None and self.allow_untyped) and (
                not isinstance(typ, str) or media_type(typ) not in self._types):
            wanted = " or ".join(self.accept_typ)
            self._warn_typ(typ)
            raise InvalidToken(f"the token is not an access token: its typ is {typ!r}, not {wanted}")
        key = self.keys.key_for(header.get("kid"))
        try:
            claims = jwt.decode(token, key, algorithms=[header["alg"]], audience=self.audience, issuer=self.issuer,
                                leeway=self.leeway, options={"require": ["exp", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet (nbf/iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken(f"the token was not issued for {self.audience}") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken(f"the token was not issued by {self.issuer}") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("the token's signature does not verify") from None
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"the token is not valid: {exc}") from None
        audience = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        principal = Principal(str(claims.get("sub") or claims.get("client_id") or ""),
                              scope_list(claims.get("scope", claims.get("scp"))),
                              client_id=claims.get("client_id") or claims.get("azp"), issuer=claims["iss"],
                              audience=audience, expires_at=float(claims["exp"]), claims=claims)
        if not principal.subject:
            raise InvalidToken("the token names no subject (sub)")
        self.cache.put(token, principal, principal.expires_at)
        return principal


#: The OAuth errors with which an introspection endpoint refuses the *token* (RFC 7009 §2.2.1
#: ``unsupported_token_type``, RFC 6750 §3.1 ``invalid_token``, RFC 6749 §5.2 ``invalid_grant``):
#: a 4xx with another error is about the request this server made, not the token.
TOKEN_REFUSALS = frozenset({"unsupported_token_type", "invalid_token", "invalid_grant"})


class IntrospectionVerifier:
    """Ask the authorization server about each token (RFC 7662), remembering answers briefly.

    Example::

        verifier = IntrospectionVerifier("https://auth.example.com/token/introspection",
                                         client_id="mcp-server", client_secret=os.environ["SECRET"],
                                         audience="https://mcp.example.com/mcp")

    Args:
        endpoint: the introspection endpoint.
        client_id, client_secret: this server's own credentials at the authorization server
            (introspection is for registered resource servers), sent as HTTP Basic
            (``client_secret_basic``) or in the body (``auth_method="client_secret_post"``).
        audience: this server's resource URL; the answer's ``aud`` must name it (RFC 8707).
        issuer: when given, the answer's ``iss`` (if any) must equal it.
        timeout: seconds for one introspection request.
        cache_seconds: how long an answer is remembered (never past the token's ``exp``); a
            revoked token keeps working at most this long.
        session: a ``requests.Session`` to post with; default: one of its own.
    """

    def __init__(self, endpoint: str, client_id: str, client_secret: str, *, audience: Optional[str] = None,
                 issuer: Optional[str] = None, auth_method: str = "client_secret_basic", timeout: float = 5.0,
                 cache_seconds: float = 30.0, session: Any = None) -> None:
        import requests  # late: only a server that checks tokens loads it

        self.endpoint: str = endpoint
        self.client_id = client_id
        self._secret = client_secret
        self.audience: Optional[str] = audience
        self.issuer = issuer
        self.auth_method: str = auth_method
        self.timeout: float = timeout
        self.session: Any = session or requests.Session()  # a requests.Session, or one like it
        self.cache: TokenCache = TokenCache(cache_seconds)

    def __repr__(self) -> str:
        return f"<IntrospectionVerifier {self.endpoint} as {self.client_id}>"

    def verify(self, token: str) -> Principal:
        """The principal of an active token; :class:`InvalidToken` (or :class:`VerifierUnavailable`)."""
        decision = self.cache.get(token)
        if decision is None:
            decision = self._introspect(token)
            self.cache.put(token, decision, getattr(decision, "expires_at", None))
        if isinstance(decision, InvalidToken):
            raise decision
        return decision

    def _introspect(self, token: str) -> Any:
        import requests

        data = {"token": token, "token_type_hint": "access_token"}
        auth = None
        if self.auth_method == "client_secret_post":
            data.update(client_id=self.client_id, client_secret=self._secret)
        else:
            auth = (self.client_id, self._secret)
        try:
            response = self.session.post(self.endpoint, data=data, auth=auth, timeout=self.timeout,
                                         headers={"Accept": "application/json"})
        except requests.Timeout:
            raise VerifierUnavailable(f"token introspection at {self.endpoint} did not answer "
                                      f"within {self.timeout:g}s") from None
        except requests.RequestException as exc:
            raise VerifierUnavailable(f"token introspection at {self.endpoint} failed: {exc}") from None
        status = response.status_code
        if 400 <= status < 500:
            return self._refused(response)
        try:
            response.raise_for_status()
            body = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise VerifierUnavailable(f"token introspection at {self.endpoint} failed: {exc}") from None
        if not isinstance(body, dict):
            raise VerifierUnavailable(f"token introspection at {self.endpoint} answered no JSON object")
        return self._decide(body)

    def _refused(self, response: Any) -> InvalidToken:
        """What a 4xx from the introspection endpoint means: a refusal of the token, or (raised)
        :class:`VerifierUnavailable` when it says nothing about the token.

        RFC 7662 §2.2 wants ``active: false`` for any token the caller may not know about, yet
        servers answer some with an OAuth error instead (oidc-provider: 400
        ``unsupported_token_type`` for a JWT). Only the errors that refuse *the token*
        (:data:`TOKEN_REFUSALS`, in a 4xx other than 401, 403, 429) are a definite no: the client
        hears 401 ``invalid_token`` (RFC 6750 §3.1), and the answer is cached. Every other 4xx is
        about *our* request (400 ``invalid_request``; 401, 403 or ``invalid_client``: this
        server's credentials, RFC 7662 §2.3, RFC 6749 §5.2), or says nothing about the token
        (429, a 404 page: a wrong endpoint URL): 503, not cached, and logged as an error saying
        what the authorization server answered, so that no client throws a good token away
        while the operator has something to fix.
        """
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        description = body.get("error_description") if isinstance(body, dict) else None
        if isinstance(error, str) and error:
            said = error + (f" ({description})" if isinstance(description, str) and description else "")
        else:  # not the body itself: an error page may echo the request, and with it the token
            said = f"no OAuth error (a {response.headers.get('Content-Type') or 'untyped'} body)"
        said = "".join(c if c.isprintable() else "?" for c in said[:300])  # one log line, whatever it sent
        if status in (401, 403) or error in ("invalid_client", "unauthorized_client"):
            # RFC 7662 §2.1: a 401 is the endpoint refusing *us*, whatever the error (an
            # invalid_token there would be about a bearer token this server presented).
            fix = f"it refuses this server's own credentials: check client_id {self.client_id!r}, " \
                  "client_secret and auth_method"
        elif error in TOKEN_REFUSALS and status != 429:
            return InvalidToken(f"the authorization server refused the token: {said}")
        elif status == 429:
            fix = "it is rate limiting this server; raise cache_seconds or ask for a higher limit"
        elif isinstance(error, str) and error:
            fix = "check the endpoint URL and auth_method, and what the authorization server expects"
        else:
            fix = "check the endpoint URL: this does not look like an introspection endpoint"
        log.error("token introspection at %s answered HTTP %d, %s: %s", self.endpoint, status, said, fix)
        raise VerifierUnavailable(f"token introspection at {self.endpoint} answered HTTP {status}: {said}")

    def _decide(self, body: Dict[str, Any]) -> Any:
        """A principal for an active token's answer, else the :class:`InvalidToken` to raise."""
        if body.get("active") is not True:
            return InvalidToken("the token is not active (expired, revoked, or never issued)")
        now = time.time()
        exp, nbf = body.get("exp"), body.get("nbf")
        if isinstance(exp, (int, float)) and exp <= now:
            return InvalidToken("the token has expired")
        if isinstance(nbf, (int, float)) and nbf > now + 30:
            return InvalidToken("the token is not valid yet (nbf in the future)")
        if self.issuer is not None and body.get("iss") not in (None, self.issuer):
            return InvalidToken(f"the token was not issued by {self.issuer}")
        aud = body.get("aud")
        audience = aud if isinstance(aud, list) else ([aud] if isinstance(aud, str) else [])
        if self.audience is not None and self.audience.rstrip("/") not in [a.rstrip("/") for a in audience]:
            return InvalidToken(f"the token was not issued for {self.audience}")
        subject = body.get("sub") or body.get("client_id")
        if not isinstance(subject, str) or not subject:
            return InvalidToken("the introspection answer names no subject (sub)")
        return Principal(subject, scope_list(body.get("scope")), client_id=body.get("client_id"),
                         issuer=body.get("iss"), audience=audience,
                         expires_at=float(exp) if isinstance(exp, (int, float)) else None, claims=body)


# -- DPoP (RFC 9449) ----------------------------------------------------------------------------------

#: The members a public key's RFC 7638 thumbprint is computed over, by key type (RFC 7638 §3.2;
#: RFC 8037 §2 for OKP).
THUMBPRINT_MEMBERS: Dict[str, Tuple[str, ...]] = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"),
                                                   "OKP": ("crv", "kty", "x")}
#: JWK members only a private (or symmetric) key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
PRIVATE_MEMBERS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})
#: The longest DPoP header taken: a proof with an RSA-4096 key is under 3 KB.
MAX_PROOF = 8192


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwk_thumbprint(jwk: Dict[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url: what a DPoP-bound token's
    ``cnf.jkt`` holds (RFC 9449 §6.1). Raises ValueError for a key it cannot identify."""
    kty = jwk.get("kty")
    members = THUMBPRINT_MEMBERS.get(kty) if isinstance(kty, str) else None
    if members is None or not all(isinstance(jwk.get(name), str) for name in members):
        raise ValueError(f"no thumbprint for a JWK of type {jwk.get('kty')!r} with these members")
    # RFC 7638 §3.3: the required members only, in lexicographic order, no whitespace.
    text = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(text.encode("utf-8")).digest())


def token_hash(access_token: str) -> str:
    """A DPoP proof's ``ath`` for ``access_token``: base64url(SHA-256(its ASCII)), RFC 9449 §4.2."""
    return _b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def htu_form(url: str) -> str:
    """``url`` as a DPoP ``htu`` is compared (RFC 9449 §4.3 check 9): no query or fragment, and
    normalized as RFC 3986 §6.2.2 and §6.2.3 say (scheme and host in lower case, no default
    port, an empty path is ``/``). An unparsable URL compares equal to nothing."""
    try:
        parts = urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:
        return "\0" + url
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    if port is not None and (scheme, port) not in (("http", 80), ("https", 443)):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path or '/'}"


class DPoPProofs:
    """Check the DPoP proof that comes with a DPoP-bound access token (RFC 9449 §4.3, §7.1).

    :class:`~minimcp.server.auth.protection.ProtectedResource` makes one (``dpop=``) and asks it
    about every request sent with ``Authorization: DPoP <token>``. A proof must be a JWT typed
    ``dpop+jwt``, signed with an asymmetric algorithm of ``algorithms`` by the public key in its
    own ``jwk`` header; it must name this request's method (``htm``) and URL (``htu``), be dated
    (``iat``) within ``window`` seconds of now, carry the hash of the access token (``ath``), and
    its key must be the one the token is bound to (``cnf.jkt``: the key's RFC 7638 thumbprint).
    Each proof is taken once: its ``jti`` is remembered until its ``iat`` is out of the window, for
    at most ``cache_size`` proofs at a time (beyond that the oldest are forgotten, and logged).
    PyJWT is imported when the first proof is checked (:attr:`jwt`), not when this is made.

    Args:
        algorithms: the ``alg`` values taken (never ``none``, never HMAC: the key is public); also
            the ``algs`` of the ``WWW-Authenticate: DPoP`` challenge.
        window: seconds a proof's ``iat`` may be from now, either way (clock skew included).
        cache_size: proofs remembered at once, against replay.
    """

    def __init__(self, algorithms: Sequence[str] = ("ES256", "ES384", "PS256", "RS256", "EdDSA"), *,
                 window: float = 300.0, cache_size: int = 65536) -> None:
        self._jwt: Any = None  # PyJWT, imported when the first proof is checked (see the jwt property)
        self.algorithms: List[str] = [a for a in algorithms if a != "none" and not a.startswith("HS")]
        self.window = window
        self.cache_size = cache_size
        self._seen: Dict[str, float] = {}  # key id + jti -> until when; oldest first
        self._lock = threading.Lock()
        self._warned = False

    def __repr__(self) -> str:
        return f"<DPoPProofs algs={' '.join(self.algorithms)} window={self.window:g}s>"

    @property
    def jwt(self) -> Any:
        """The PyJWT module, imported on first use (ImportError naming the ``auth`` extra): a
        server that never sees a DPoP proof, an introspection-only one say, never loads it."""
        if self._jwt is None:
            self._jwt = _import_jwt()
        return self._jwt

    def check(self, proof: str, method: str, urls: Sequence[str], access_token: str, jkt: str) -> None:
        """Accept ``proof`` for one request (``method``, its URL: one of ``urls``) with ``access_token``,
        bound to the key whose thumbprint is ``jkt``; raise :class:`InvalidDPoPProof`, or
        :class:`InvalidToken` when the proof is good but made with another key than the token's."""
        jwt = self.jwt
        # RFC 9449 §4.3, the checks in its order. 1: one DPoP header (two were joined by a comma).
        if "," in proof or len(proof) > MAX_PROOF:
            raise InvalidDPoPProof("send one DPoP proof, a compact JWT")
        try:  # 2: a well-formed JWT
            header = jwt.get_unverified_header(proof)
        except jwt.PyJWTError:
            raise InvalidDPoPProof("the DPoP proof is not a JWT") from None
        typ, alg, jwk = header.get("typ"), header.get("alg"), header.get("jwk")
        if not isinstance(typ, str) or media_type(typ) != "application/dpop+jwt":  # 4
            raise InvalidDPoPProof(f"the DPoP proof's typ is {typ!r}, not dpop+jwt")
        if alg not in self.algorithms:  # 5: asymmetric, not none, one we take
            raise InvalidDPoPProof(f"the DPoP proof's algorithm {alg!r} is not one of {' '.join(self.algorithms)}")
        if not isinstance(jwk, dict) or jwk.get("kty") not in THUMBPRINT_MEMBERS:
            raise InvalidDPoPProof("the DPoP proof has no public key (jwk) in its header")
        if PRIVATE_MEMBERS.intersection(jwk):  # 7: a public key only
            raise InvalidDPoPProof("the DPoP proof's jwk holds a private key")
        try:  # 6: the signature, with the header's own key
            key = jwt.PyJWK(jwk, algorithm=alg)
            claims = jwt.decode(proof, key.key, algorithms=[alg], leeway=self.window,
                                options={"require": ["jti", "htm", "htu", "iat"], "verify_aud": False})
        except jwt.InvalidSignatureError:
            raise InvalidDPoPProof("the DPoP proof's signature does not verify") from None
        except Exception as exc:  # a key PyJWT cannot use for alg, a missing claim, an expired proof...
            raise InvalidDPoPProof(f"the DPoP proof is not valid: {exc}") from None
        jti, htm, htu, iat = claims["jti"], claims["htm"], claims["htu"], claims["iat"]
        if not isinstance(jti, str) or not 0 < len(jti) <= 256:  # 3 (the claims it needs)
            raise InvalidDPoPProof("the DPoP proof's jti is not a string of 1 to 256 characters")
        if htm != method:  # 8: methods are case-sensitive (RFC 9110 §9.1)
            raise InvalidDPoPProof(f"the DPoP proof is for {htm!r}, not this {method} request")
        if not isinstance(htu, str) or htu_form(htu) not in {htu_form(url) for url in urls}:  # 9
            raise InvalidDPoPProof(f"the DPoP proof is for {htu!r}, not {urls[0]}")
        now = time.time()
        if not isinstance(iat, (int, float)) or abs(now - iat) > self.window:  # 11 (§11.1: a short window)
            raise InvalidDPoPProof(f"the DPoP proof's iat is more than {self.window:g}s from now")
        if claims.get("ath") != token_hash(access_token):  # 12 (§7.1: the proof names its token)
            raise InvalidDPoPProof("the DPoP proof's ath is not the hash of this access token")
        if jwk_thumbprint(jwk) != jkt:  # 12: the token's key; RFC 9449 §7.1 answers it invalid_token
            raise InvalidToken("Invalid DPoP key binding: the proof is signed with another key than the token's")
        if not self._first_use(jkt + " " + jti, iat + self.window, now):  # §11.1: no replay
            raise InvalidDPoPProof("the DPoP proof was used before (its jti is not new)")

    def _first_use(self, key: str, until: float, now: float) -> bool:
        """Remember ``key`` until ``until``; False when it is remembered already (a replay)."""
        with self._lock:
            seen = self._seen
            if seen.get(key, now) > now:
                return False
            seen.pop(key, None)
            while seen:  # insertion order is near enough expiry order: drop from the oldest end
                oldest, end = next(iter(seen.items()))
                if end > now and len(seen) < self.cache_size:
                    break
                if end > now and not self._warned:
                    self._warned = True
                    log.warning("more than %d DPoP proofs in %gs: the oldest are forgotten before their "
                                "window ends (raise DPoPProofs(cache_size=...))", self.cache_size, self.window)
                del seen[oldest]
            seen[key] = until
            return True
