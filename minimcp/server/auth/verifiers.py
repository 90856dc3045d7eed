"""Ready token verifiers for :class:`~minimcp.server.auth.protection.ProtectedResource`.

A verifier takes the bearer token a client sent and returns the
:class:`~minimcp.server.auth.protection.Principal` it stands for, or raises
:class:`~minimcp.server.auth.protection.InvalidToken` (the client gets 401 ``invalid_token``) or
:class:`~minimcp.server.auth.protection.VerifierUnavailable` (503: it cannot tell now).

- :class:`JWTVerifier`: a JWT access token (RFC 9068) checked locally, against the keys the
  authorization server publishes (its JWKS). Needs PyJWT: ``pip install 'minimcp-sync[auth]'``.
- :class:`IntrospectionVerifier`: ask the authorization server (RFC 7662 token introspection),
  for opaque tokens, or for a revocation to count at once.

Both remember what they decided for a little while (:class:`TokenCache`), so a session's calls
cost a dictionary lookup, not a signature check or a round trip. Every request they make has a
timeout, and no lock is held while it runs.
"""

import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from ...logs import get_logger
from .protection import InvalidToken, Principal, VerifierUnavailable, scope_list

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: What a verifier decided about a token: who it stands for, or why it is refused.
Decision = Union[Principal, InvalidToken]


def _import_jwt() -> Any:
    try:
        import jwt  # PyJWT
        import jwt.algorithms  # noqa: F401  (its crypto half: RSA and EC keys need `cryptography`)
    except ImportError as exc:
        raise ImportError("JWTVerifier needs PyJWT with its crypto extra: pip install 'minimcp-sync[auth]' "
                          f"(or pip install 'PyJWT[crypto]'); {exc}") from None
    if not getattr(jwt.algorithms, "has_crypto", False):
        raise ImportError("JWTVerifier needs the `cryptography` package for RSA/EC signatures: "
                          "pip install 'minimcp-sync[auth]'")
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

    Rotation: a token signed with a key id not in the set makes the set be fetched again, at most
    once every ``refetch_interval`` seconds (so forged key ids cannot make us hammer the server);
    the set is also refreshed once it is ``ttl`` old. One fetch at a time: other requests wait
    for it (up to the timeout), and no lock is held while it runs.
    """

    def __init__(self, verifier: "JWTVerifier") -> None:
        self.verifier = verifier
        self.keys: Optional[Dict[Optional[str], Any]] = None
        self.fetched_at: float = float("-inf")
        self.tried_at: float = float("-inf")
        self.fetches: int = 0
        self._failed: Optional[str] = None
        self._lock = threading.Lock()
        self._inflight: Optional[threading.Event] = None

    def key_for(self, kid: Optional[str]) -> Any:
        """The key for ``kid`` (a lone key answers a token with no ``kid``)."""
        now = time.monotonic()
        if self.keys is None:
            self._refresh(now, must=True)  # VerifierUnavailable when it cannot be fetched
        elif now - self.tried_at >= self.verifier.refetch_interval and (
                self._pick(self.keys, kid) is None or now - self.fetched_at > self.verifier.jwks_ttl):
            self._refresh(now, must=False)  # a failure keeps the keys we have
        key = self._pick(self.keys or {}, kid)
        if key is None:
            raise InvalidToken(f"the token is signed with a key ({kid!r}) the authorization server does not list")
        return key

    @staticmethod
    def _pick(keys: Dict[Optional[str], Any], kid: Optional[str]) -> Any:
        if kid is None and len(keys) == 1:
            return next(iter(keys.values()))
        return keys.get(kid)

    def _refresh(self, now: float, must: bool) -> None:
        with self._lock:
            event = self._inflight
            if event is None:
                if must and self._failed and now - self.tried_at < self.verifier.failure_backoff:
                    raise VerifierUnavailable(self._failed)  # it just failed: answer at once
                self._inflight = event = threading.Event()
                self.tried_at = now
                mine = True
            else:
                mine = False
        if not mine:
            event.wait(self.verifier.timeout * 2)
            if self.keys is None:
                raise VerifierUnavailable(self._failed or "the signing keys are being fetched; try again")
            return
        try:
            self.keys = self._fetch()
            self.fetched_at, self._failed = time.monotonic(), None
        except VerifierUnavailable as exc:
            self._failed = str(exc)
            log.error("cannot fetch the signing keys: %s", exc)
            if must or self.keys is None:
                raise
        finally:
            with self._lock:
                self._inflight = None
            event.set()

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
    """Check JWT access tokens locally: signature (the issuer's JWKS), ``iss``, ``aud``, ``exp``, ``nbf``.

    Example::

        verifier = JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp")

    Args:
        issuer: the authorization server's issuer URL; a token's ``iss`` must equal it.
        audience: this server's resource URL; a token's ``aud`` must name it (RFC 8707).
        jwks_uri: where the keys are; default: the ``jwks_uri`` of the issuer's metadata
            (OpenID discovery, then RFC 8414).
        algorithms: signature algorithms accepted (never ``none``, never HMAC: the keys are public).
        leeway: seconds of clock skew allowed on ``exp`` and ``nbf``.
        timeout: seconds for each fetch of the metadata or the keys.
        refetch_interval: the least seconds between two fetches for an unknown key id.
        jwks_ttl: seconds before the key set is fetched again anyway.
        failure_backoff: after a failed fetch with no keys at all, seconds during which requests
            get 503 at once instead of waiting on another fetch.
        cache_seconds: how long a verified token is remembered (never past its ``exp``).
        session: a ``requests.Session`` to fetch with (proxies, CA bundle); default: plain requests.
    """

    def __init__(self, issuer: str, audience: str, *, jwks_uri: Optional[str] = None,
                 algorithms: Sequence[str] = ("RS256", "PS256", "ES256", "ES384", "EdDSA"), leeway: float = 30.0,
                 timeout: float = 5.0, refetch_interval: float = 60.0, jwks_ttl: float = 3600.0,
                 failure_backoff: float = 5.0, cache_seconds: float = 300.0, session: Any = None) -> None:
        self.jwt: Any = _import_jwt()  # the PyJWT module; fail at configuration time, naming the extra
        self.issuer: str = issuer
        self.audience = audience
        self.jwks_uri: Optional[str] = jwks_uri
        self.algorithms: List[str] = [a for a in algorithms if a != "none" and not a.startswith("HS")]
        self.leeway: float = leeway
        self.timeout = timeout
        self.session = session
        self.refetch_interval: float = refetch_interval
        self.jwks_ttl = jwks_ttl
        self.failure_backoff = failure_backoff
        self.cache: TokenCache = TokenCache(cache_seconds)
        self.keys: _KeySet = _KeySet(self)

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
        if response.status_code in (400, 401, 403):
            log.error("the introspection endpoint refused minimcp's client %r (HTTP %d): check client_id "
                      "and client_secret", self.client_id, response.status_code)
        try:
            response.raise_for_status()
            body = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise VerifierUnavailable(f"token introspection at {self.endpoint} failed: {exc}") from None
        if not isinstance(body, dict):
            raise VerifierUnavailable(f"token introspection at {self.endpoint} answered no JSON object")
        return self._decide(body)

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
