"""A minimcp server as an OAuth 2.1 resource server: who called, with which scopes, and the
HTTP answers that tell a client how to get a better token.

spec basic/authorization (2025-06-18 on): the MCP server is a *resource server*. It does not
issue tokens; an authorization server does. The server's part is small, and all of it is here:

- publish its protected resource metadata (RFC 9728) at
  ``/.well-known/oauth-protected-resource<path>`` (and at the root one), naming the
  ``authorization_servers`` a client gets tokens from;
- take ``Authorization: Bearer <token>`` on every request, have a *verifier* check it
  (:mod:`minimcp.server.auth.verifiers`: a JWT against the issuer's keys, or RFC 7662
  introspection), and accept only tokens issued for itself (the RFC 8707 audience);
- take a DPoP-bound token (RFC 9449) as ``Authorization: DPoP <token>`` with a ``DPoP`` proof
  of possession of its key, and never as a bearer token (RFC 9449 §7.2);
- answer 401 with ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"`` (plus
  ``error="invalid_token"`` when a token was sent and refused) and ``DPoP algs="…"`` (the
  challenge of the scheme the request used first, with the error), and 403
  ``error="insufficient_scope"`` naming the scopes an operation needs, so a client can step up;
- never pass the client's token on: a verifier sees it, a handler never does (``ctx.principal``
  holds what the token *says*, not the token).

Required scopes are declared where a tool, resource or prompt is (``@server.tool(scopes=[…])``)
and checked before its function runs: by the HTTP app (a 403 step-up challenge, on Streamable
HTTP and on the 2024-11-05 ``/messages/`` POST) and, for a transport with no HTTP status to give
(WebSocket), by the connection (a JSON-RPC error ``-32003``,
:data:`~minimcp.protocol.jsonrpc.INSUFFICIENT_SCOPE`).
"""

import json
import time
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from ...errors import (
    InvalidToken as InvalidToken,  # (re-exported: raised by this module, importable where its feature lives)
)
from ...errors import RPCError, Unauthorized
from ...errors import (
    VerifierUnavailable as VerifierUnavailable,  # (re-exported: raised by this module, importable where its feature lives)
)
from ...logs import get_logger
from ...protocol.jsonrpc import INSUFFICIENT_SCOPE

if TYPE_CHECKING:
    from logging import Logger

    from .verifiers import DPoPProofs

log: "Logger" = get_logger(__name__)

#: The well-known path prefix of RFC 9728 §3.
WELL_KNOWN = "/.well-known/oauth-protected-resource"
#: The requests that reach a function which may declare scopes.
SCOPED_METHODS = frozenset({"tools/call", "resources/read", "resources/subscribe", "prompts/get"})


class InvalidDPoPProof(InvalidToken):
    """A DPoP proof that does not pass RFC 9449 §4.3: the client gets 401 with
    ``WWW-Authenticate: DPoP error="invalid_dpop_proof"`` (RFC 9449 §7.1, §12.2)."""


class Refused(Unauthorized):
    """A 401 with one ``WWW-Authenticate`` challenge per scheme the resource takes, the one the
    request used first (RFC 9110 §11.6.1 lets a response carry several; RFC 9449 §7.1 shows
    Bearer and DPoP together)."""

    def __init__(self, message: str, challenges: Sequence[str]) -> None:
        super().__init__(message, ", ".join(challenges))
        self.challenges: List[str] = list(challenges)


class Principal:
    """Who a verified access token says is calling, and what it may do (``ctx.principal``).

    Two principals are equal when issuer and subject are: a session opened with one token
    stays usable with a refreshed or stepped-up token of the same user (and with no other's).

    Attributes:
        subject: the token's ``sub`` (a user, or the client itself for client credentials).
        scopes: the scopes granted.
        client_id: the OAuth client the token was issued to, if the token says.
        issuer: the authorization server that issued it.
        audience: the resources it was issued for (RFC 8707 ``resource``, the JWT ``aud``).
        expires_at: Unix time it expires, or None.
        claims: everything the token (or the introspection answer) said.
    """

    __slots__ = ("subject", "scopes", "client_id", "issuer", "audience", "expires_at", "claims")

    def __init__(self, subject: str, scopes: Iterable[str] = (), *, client_id: Optional[str] = None,
                 issuer: Optional[str] = None, audience: Iterable[str] = (), expires_at: Optional[float] = None,
                 claims: Optional[Dict[str, Any]] = None) -> None:
        self.subject: str = subject
        self.scopes: FrozenSet[str] = frozenset(scopes)
        self.client_id: Optional[str] = client_id
        self.issuer: Optional[str] = issuer
        self.audience: Tuple[str, ...] = tuple(audience)
        self.expires_at: Optional[float] = expires_at
        self.claims: Dict[str, Any] = claims or {}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Principal) and other.subject == self.subject
                and other.issuer == self.issuer)

    def __hash__(self) -> int:
        return hash((self.subject, self.issuer))

    def __str__(self) -> str:
        return self.subject

    def __repr__(self) -> str:
        return f"<Principal {self.subject!r} scopes={sorted(self.scopes)} client={self.client_id!r}>"


def scope_list(value: Any) -> List[str]:
    """Scopes as a token carries them: a space-separated ``scope`` string, or a list (``scp``)."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, str)]
    return []


def canonical(uri: str) -> str:
    """A resource URI as RFC 8707 compares it: lower-case scheme and host, no fragment, and no
    trailing slash (``https://mcp.example.com/`` and ``…com`` are the same resource)."""
    parts = urlsplit(uri)
    text = f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}"
    text = text + ("?" + parts.query if parts.query else "")
    return text.rstrip("/")


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _description(text: str) -> str:
    """``text`` as RFC 6750 §3 lets an ``error_description`` be: printable ASCII, no ``"`` or ``\\``
    (so no message, whatever a library put in it, can break the header)."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "'" if c == '"' else "?" for c in text)


class ProtectedResource:
    """The resource server settings, and the ``auth`` hook that enforces them.

    Pass it as ``auth`` to ``server.wsgi_app()`` or ``server.run("http")``::

        auth = ProtectedResource(
            JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp"),
            resource="https://mcp.example.com/mcp",
            authorization_servers=["https://auth.example.com"],
            scopes_supported=["files:read", "files:write"])
        server.run("http", auth=auth)

    Args:
        verifier: ``verify(token) -> Principal`` (an object with that method, or a plain
            callable); it raises :class:`InvalidToken` or :class:`VerifierUnavailable`.
        resource: this server's canonical URL, the MCP endpoint (``https://host/mcp``): the
            metadata's ``resource`` and the audience a token must name.
        authorization_servers: the issuer URLs clients get tokens from.
        scopes_supported: the scopes this server knows (in the metadata; also the 401's ``scope``
            when ``required_scopes`` is empty).
        required_scopes: scopes every request needs (a tool's own come on top).
        check_audience: refuse a token whose audience does not name ``resource`` (RFC 8707;
            turn off only where the verifier checks it another way).
        resource_name, resource_documentation: optional metadata fields.
        dpop: take DPoP-bound tokens (RFC 9449) with their proofs: a
            :class:`~minimcp.server.auth.verifiers.DPoPProofs` (its algorithms, time window and
            replay cache), ``True`` for the default one, ``False`` for none; by default, when
            PyJWT (the ``auth`` extra) is installed. DPoP taken, every 401 also carries a
            ``WWW-Authenticate: DPoP algs="..."`` challenge (RFC 9449 §7.1). PyJWT is imported
            when the first proof is checked (at once for ``True`` or a ``DPoPProofs``, so that a
            missing extra fails here). Either way a DPoP-bound token sent as a bearer token is
            refused (RFC 9449 §7.2).
    """

    def __init__(self, verifier: Any, resource: str, authorization_servers: Sequence[str], *,
                 scopes_supported: Sequence[str] = (), required_scopes: Sequence[str] = (),
                 check_audience: bool = True, resource_name: Optional[str] = None,
                 resource_documentation: Optional[str] = None,
                 dpop: Union[bool, "DPoPProofs", None] = None) -> None:
        if not authorization_servers:
            raise ValueError("name at least one authorization server (its issuer URL): clients need it "
                             "to get a token")
        self.verify: Callable[[str], Principal] = getattr(verifier, "verify", verifier)
        self.resource = resource
        self.authorization_servers: List[str] = list(authorization_servers)
        self.scopes_supported: List[str] = list(scopes_supported)
        self.required_scopes: Tuple[str, ...] = tuple(required_scopes)
        self.check_audience = check_audience
        parts = urlsplit(resource)
        path = parts.path.rstrip("/")
        #: Where the metadata is served: the RFC 9728 path-based URL first, then the root one.
        self.metadata_paths: Tuple[str, ...] = (WELL_KNOWN + path, WELL_KNOWN) if path else (WELL_KNOWN,)
        self.metadata_url: str = f"{parts.scheme}://{parts.netloc}{self.metadata_paths[0]}"
        document: Dict[str, Any] = {"resource": resource, "authorization_servers": self.authorization_servers,
                                    "bearer_methods_supported": ["header"]}
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        if resource_name:
            document["resource_name"] = resource_name
        if resource_documentation:
            document["resource_documentation"] = resource_documentation
        self.metadata_body: bytes = json.dumps(document).encode()
        self._audience = canonical(resource)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._path = path
        #: The DPoP proof checker, or None: DPoP-bound tokens are then refused (no proof can be checked).
        self.dpop: Optional[DPoPProofs] = _dpop_proofs(dpop)

    def __repr__(self) -> str:
        return f"<ProtectedResource {self.resource} by {', '.join(self.authorization_servers)}>"

    def challenge(self, error: Optional[str] = None, description: Optional[str] = None,
                  scopes: Sequence[str] = ()) -> str:
        """The ``WWW-Authenticate`` value: where the metadata is, the scopes wanted, the error."""
        parts = [f"resource_metadata={_quote(self.metadata_url)}"]
        scopes = scopes or self.required_scopes or self.scopes_supported
        if scopes:
            parts.append(f"scope={_quote(' '.join(scopes))}")
        if error:
            parts.append(f"error={_quote(error)}")
        if description:
            parts.append(f"error_description={_quote(_description(description))}")
        return "Bearer " + ", ".join(parts)

    def dpop_challenge(self, error: Optional[str] = None, description: Optional[str] = None) -> str:
        """The ``WWW-Authenticate: DPoP`` challenge (RFC 9449 §7.1): the error, if any, and the
        proof algorithms this server takes."""
        parts = [f"error={_quote(error)}"] if error else []
        if error and description:
            parts.append(f"error_description={_quote(_description(description))}")
        parts.append(f"algs={_quote(' '.join(self.dpop.algorithms if self.dpop else ()))}")
        return "DPoP " + ", ".join(parts)

    def refuse(self, message: str, error: Optional[str] = None, description: Optional[str] = None,
               scheme: str = "bearer") -> Refused:
        """The 401 to raise: a Bearer challenge, and a DPoP one when DPoP is taken. ``error`` and
        ``description`` go in the challenge of the ``scheme`` the request used, and that challenge
        comes first: a client that reads only the first one (many do) still finds the error."""
        if scheme == "dpop" and self.dpop is not None:
            return Refused(message, [self.dpop_challenge(error, description), self.challenge()])
        challenges = [self.challenge(error, description)]
        if self.dpop is not None:
            challenges.append(self.dpop_challenge())
        return Refused(message, challenges)

    def __call__(self, headers: Dict[str, str], method: Optional[str] = None, url: Optional[str] = None) -> Principal:
        """The ``auth`` hook: the principal of the request's access token, or a refusal.

        ``method`` and ``url`` (the request's, without its query) are what a DPoP proof must name;
        without them a request sent with ``Authorization: DPoP`` is refused.
        """
        scheme, token = credentials(headers, self)
        if scheme == "dpop" and not headers.get("dpop"):  # RFC 9449 §7.1: the proof comes with the token
            raise self.refuse("invalid DPoP proof: none sent", "invalid_dpop_proof",
                              "send a DPoP proof (the DPoP header) with Authorization: DPoP", scheme)
        try:
            principal = self.verify(token)
        except InvalidToken as exc:
            log.info("token refused: %s", exc)
            raise self.refuse(f"invalid token: {exc}", "invalid_token", str(exc), scheme) from None
        except VerifierUnavailable as exc:
            log.warning("cannot check tokens now: %s", exc)
            raise _http_error(503, f"Service Unavailable: the token cannot be checked now ({exc}); "
                              "try again shortly", [("Retry-After", "5")]) from None
        problem = self._problem(principal)
        if problem:
            log.info("token refused: %s", problem)
            raise self.refuse(f"invalid token: {problem}", "invalid_token", problem, scheme)
        bound = bound_key(principal)
        if scheme == "dpop":
            self._check_proof(headers["dpop"], method, url, token, bound)
        elif bound is not None:  # RFC 9449 §7.2: else a stolen DPoP-bound token works as a bearer token
            text = "the token is DPoP-bound: send it as Authorization: DPoP, with a DPoP proof (RFC 9449)"
            log.info("token refused: %s", text)
            raise self.refuse(f"invalid token: {text}", "invalid_token", text)
        if self.required_scopes and not principal.scopes.issuperset(self.required_scopes):
            raise self.insufficient_scope(self.required_scopes, "every request")
        return principal

    def _check_proof(self, proof: str, method: Optional[str], url: Optional[str], token: str,
                     bound: Optional[str]) -> None:
        """RFC 9449 §7.1: a token sent as ``DPoP`` is bound to a key, and the proof shows that key."""
        if bound is None:
            text = "the token is not DPoP-bound: send it as Authorization: Bearer"
            raise self.refuse(f"invalid token: {text}", "invalid_token", text, "dpop")
        if self.dpop is None or method is None or url is None:
            text = ("DPoP proofs cannot be checked here (the auth hook was not given the request's method and URL)"
                    if self.dpop is not None else "this server takes no DPoP proof")
            raise self.refuse(f"invalid DPoP proof: {text}", "invalid_dpop_proof", text, "dpop")
        try:
            self.dpop.check(proof, method, self.proof_urls(url), token, bound)
        except ImportError as exc:  # PyJWT was found when this was built, but cannot be loaded
            log.error("cannot check DPoP proofs: %s", exc)
            raise _http_error(503, f"Service Unavailable: DPoP proofs cannot be checked now ({exc})",
                              [("Retry-After", "60")]) from None
        except InvalidDPoPProof as exc:
            log.info("DPoP proof refused: %s", exc)
            raise self.refuse(f"invalid DPoP proof: {exc}", "invalid_dpop_proof", str(exc), "dpop") from None
        except InvalidToken as exc:
            log.info("token refused: %s", exc)
            raise self.refuse(f"invalid token: {exc}", "invalid_token", str(exc), "dpop") from None

    def proof_urls(self, url: str) -> List[str]:
        """The URLs a DPoP proof's ``htu`` may name for a request to ``url`` (RFC 9449 §4.3 check 9):
        the proof names the URL the *client* used, which behind a proxy is the public one.

        - ``url`` itself: the request's URL as the WSGI server sees it (``wsgi.url_scheme``, the
          ``Host`` header, ``SCRIPT_NAME`` + ``PATH_INFO``), without its query;
        - the origin of ``resource`` with the same path (a proxy that changes scheme, host or port);
        - ``resource`` itself, when the request's path is the end of ``resource``'s path (a proxy
          that strips a path prefix: ``https://example.com/api/mcp`` served as ``/mcp``).
        """
        path = urlsplit(url).path
        urls = [url, self._origin + path]
        trimmed = path.rstrip("/")
        if trimmed and self._path != trimmed and self._path.endswith(trimmed) and trimmed.startswith("/"):
            urls.append(self.resource)
        return urls

    def _problem(self, principal: Any) -> Optional[str]:
        """What is wrong with a verified token whatever the verifier: expiry and audience."""
        if not isinstance(principal, Principal):
            raise TypeError(f"a verifier must return a Principal, not {type(principal).__name__}")
        if principal.expires_at is not None and principal.expires_at <= time.time():
            return "the token has expired"
        if self.check_audience and self.resource not in principal.audience and (
                self._audience not in {canonical(a) for a in principal.audience}):
            return f"the token was not issued for {self.resource} (its audience: {list(principal.audience)})"
        return None

    def insufficient_scope(self, needed: Sequence[str], what: str) -> Exception:
        """The 403 step-up challenge: the scopes ``what`` needs (RFC 6750 §3.1: those of this
        operation, not the ones already granted; spec 2026-07-28 has the client add them up)."""
        scopes = " ".join(needed)
        return _http_error(403, f"Forbidden: insufficient scope: {what} needs scope {scopes!r}; "
                           "get a token with it and retry",
                           [("WWW-Authenticate", self.challenge("insufficient_scope", f"{what} needs {scopes}",
                                                                needed))], INSUFFICIENT_SCOPE)

    def serve_metadata(self, path: str, method: str, start_response: Callable[..., Any]) -> Optional[Iterable[bytes]]:
        """Answer a GET of one of the well-known metadata URLs (None for another path)."""
        if path.rstrip("/") not in self.metadata_paths:
            return None
        if method not in ("GET", "HEAD"):
            raise _http_error(405, "Method Not Allowed: GET the protected resource metadata",
                              [("Allow", "GET")])
        start_response("200 OK", [("Content-Type", "application/json"), ("Cache-Control", "max-age=300"),
                                  ("Access-Control-Allow-Origin", "*"),
                                  ("Content-Length", str(len(self.metadata_body)))])
        return [self.metadata_body] if method == "GET" else []


def bound_key(principal: Principal) -> Optional[str]:
    """The RFC 7638 thumbprint of the key a token is bound to (its ``cnf.jkt``, RFC 9449 §6), or
    None for a token that is not DPoP-bound. A ``cnf`` with a ``jkt`` that is no string binds to
    a key no proof can show."""
    cnf = principal.claims.get("cnf")
    if not isinstance(cnf, dict) or "jkt" not in cnf:
        return None
    jkt = cnf["jkt"]
    return jkt if isinstance(jkt, str) and jkt else "\0"


def credentials(headers: Dict[str, str], protection: ProtectedResource) -> Tuple[str, str]:
    """The scheme (``"bearer"``, or ``"dpop"`` when the resource takes DPoP) and the token of the
    ``Authorization`` header (RFC 6750 §2.1, RFC 9449 §7.1); 401 without one, 400 when the header
    is malformed (``invalid_request``)."""
    value = headers.get("authorization")
    if not value:
        raise protection.refuse("an access token is required")
    scheme, _, token = value.strip().partition(" ")
    scheme = scheme.lower()  # RFC 9110 §11.1: auth schemes are case-insensitive
    if scheme != "bearer" and not (scheme == "dpop" and protection.dpop is not None):
        also = " (or DPoP <token> with a DPoP proof)" if protection.dpop is not None else ""
        raise protection.refuse(f"send Authorization: Bearer <token>{also}, not {value.partition(' ')[0]!r}")
    token = token.strip()
    # RFC 6750 b64token (RFC 9449 §7.1: the same token68 for DPoP): printable ASCII, no space (the
    # string methods run at C speed; a token with another odd character is the verifier's to
    # refuse, as invalid_token).
    if not token or not token.isascii() or not token.isprintable() or " " in token:
        text = f"malformed Authorization header: expected {'DPoP' if scheme == 'dpop' else 'Bearer'} and one token"
        challenge = protection.dpop_challenge("invalid_request", text) if scheme == "dpop" else \
            protection.challenge("invalid_request", text)
        raise _http_error(400, f"Bad Request: {text}", [("WWW-Authenticate", challenge)])
    return scheme, token


def _dpop_proofs(dpop: Union[bool, "DPoPProofs", None]) -> Optional["DPoPProofs"]:
    """``ProtectedResource(dpop=...)`` as the checker it means (None: DPoP is not taken)."""
    if dpop is False:
        return None
    from .verifiers import DPoPProofs  # late: verifiers imports this module

    if dpop is None:
        # The default: DPoP when PyJWT could be imported. Only look: importing it would cost
        # every server (an introspection-only one too) its load time, and most never see a proof.
        if find_spec("jwt") is None or find_spec("cryptography") is None:
            log.debug("DPoP is off: PyJWT (the auth extra) is not installed")
            return None
        return DPoPProofs()
    proofs = DPoPProofs() if dpop is True else dpop
    _ = proofs.jwt  # asked for: fail now, naming the extra, rather than at the first proof
    return proofs


def _http_error(status: int, message: str, headers: List[Tuple[str, str]], code: Optional[int] = None) -> Exception:
    from ..http.replies import HTTPError  # late: this module is also read by non-HTTP transports

    return HTTPError(status, message, headers=headers) if code is None else HTTPError(status, message, code, headers)


# -- required scopes, per tool, resource and prompt ---------------------------------------------

def scopes_needed(server: Any, method: Optional[str], params: Any) -> Tuple[Tuple[str, ...], str]:
    """The scopes a request's tool, resource or prompt declares, and what it is (for messages)."""
    if method not in SCOPED_METHODS or type(params) is not dict:
        return (), ""
    if method == "tools/call":
        item, what = server.get_tool(params.get("name")), f"tool {params.get('name')!r}"
    elif method == "prompts/get":
        name = params.get("name")
        item, what = (server.get_prompt(name) if isinstance(name, str) else None), f"prompt {name!r}"
    else:
        uri = params.get("uri")
        found = server.find_resource(uri) if isinstance(uri, str) else None
        item, what = (found[0] if found else None), f"resource {uri!r}"
    return getattr(item, "scopes", ()), what


def granted(principal: Any) -> FrozenSet[str]:
    """The scopes a principal holds (a plain ``auth`` hook's principal holds none)."""
    return getattr(principal, "scopes", None) or frozenset()


def require_scopes(needed: Sequence[str], principal: Any, what: str) -> None:
    """Refuse (JSON-RPC ``-32003``) a call whose caller lacks a scope ``what`` declares.

    The check for transports with no HTTP status to answer: the HTTP app refuses first, with a
    403 a client can step up from. A connection with no principal (stdio, in-memory: nobody
    authenticates there, spec basic/authorization says so) is not checked.
    """
    if not needed or principal is None:
        return
    have = granted(principal)
    missing = [scope for scope in needed if scope not in have]
    if missing:
        scopes = " ".join(needed)
        raise RPCError(INSUFFICIENT_SCOPE, f"Forbidden: insufficient scope: {what} needs scope {scopes!r}",
                       {"error": "insufficient_scope", "scope": scopes})


def check_request_scopes(app: Any, messages: Iterable[Any], principal: Any, tool: Any = None) -> None:
    """The HTTP app's check before any handler runs: 403 for a request whose tool, resource or
    prompt needs a scope the token lacks, with a step-up challenge when the app is protected.
    ``tool``: the one a lone tools/call names, when the app has looked it up already."""
    for message in messages:
        method = getattr(message, "method", None)
        if method not in SCOPED_METHODS:
            continue
        if tool is not None and method == "tools/call":
            if not tool.scopes:
                continue
            needed, what = tuple(tool.scopes), f"tool {tool.name!r}"
        else:
            needed, what = scopes_needed(app.server, method, getattr(message, "params", None))
        if not needed or all(scope in granted(principal) for scope in needed):
            continue
        if isinstance(app.auth, ProtectedResource):
            raise app.auth.insufficient_scope(tuple(app.auth.required_scopes) + tuple(needed), what)
        if app.auth is None:  # fail closed: a scope means "only some callers", and nobody is known
            raise _http_error(403, f"Forbidden: {what} needs scope {' '.join(needed)!r}, and this server "
                              "authenticates nobody; pass auth= to wsgi_app()", [], INSUFFICIENT_SCOPE)
        scopes = " ".join(needed)
        raise _http_error(403, f"Forbidden: insufficient scope: {what} needs scope {scopes!r}",
                          [("WWW-Authenticate", f'Bearer error="insufficient_scope", scope={_quote(scopes)}')],
                          INSUFFICIENT_SCOPE)
