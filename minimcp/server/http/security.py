"""Who may talk to the MCP endpoint: the Host and Origin checks, and the ``auth`` hook.

spec basic/transports "Security Warning": a server must validate ``Origin``
(403 since 2025-11-25) so a web page cannot drive a local server, and should
bind to localhost; the ``Host`` check (421) stops DNS rebinding, where a
hostile name resolves to 127.0.0.1. The ``auth`` hook turns the request's
headers into a principal, or refuses with 401 and ``WWW-Authenticate``.
"""

import secrets
from typing import Any, Callable, Dict, Iterable, Optional
from urllib.parse import urlsplit
from wsgiref.util import request_uri

from ...errors import Unauthorized
from ..auth.protection import ProtectedResource
from .replies import HTTPError

__all__ = ["LOCAL_HOSTS", "Unauthorized", "authenticate", "bearer_token_auth", "check_host_and_origin",
           "check_owner", "is_local_origin"]

#: ``Host`` names accepted by default.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]", "::1")


def bearer_token_auth(token: str) -> Callable[[Dict[str, str]], str]:
    """An ``auth`` hook that accepts one static bearer token (the principal is ``"bearer"``).

    ``server.wsgi_app(auth=bearer_token_auth(os.environ["MCP_TOKEN"]))``
    """
    expected = f"Bearer {token}".encode()

    def check(headers: Dict[str, str]) -> str:
        given = headers.get("authorization", "").encode()
        if not secrets.compare_digest(given, expected):  # constant time: no timing oracle
            raise Unauthorized("a valid bearer token is required", 'Bearer error="invalid_token"')
        return "bearer"

    return check


def host_name(value: str) -> str:
    """``host:port`` -> host (brackets kept for IPv6 literals)."""
    if value.startswith("["):
        return value[:value.find("]") + 1]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def is_local_origin(origin: str) -> bool:
    """True for an ``Origin`` on this machine (a page served from localhost)."""
    return urlsplit(origin).hostname in ("localhost", "127.0.0.1", "::1")


def check_host_and_origin(headers: Dict[str, str], allowed_hosts: Iterable[str],
                          allowed_origins: Iterable[str]) -> None:
    """Refuse a ``Host`` not allowed (421) or a present ``Origin`` neither local nor allowed (403,
    ``null`` included).

    ``headers`` has lower-case names; ``"*"`` in either list accepts anything.
    """
    host = host_name(headers.get("host", "localhost"))
    if "*" not in allowed_hosts and host not in allowed_hosts:
        raise HTTPError(421, f"Misdirected Request: host {host!r} is not allowed; add it to allowed_hosts")
    origin = headers.get("origin")
    # "null" is an opaque origin (a sandboxed iframe, a file:// page): any page can send it, so it is
    # refused like a foreign one unless listed; an absent Origin is a client that is no browser.
    if origin is not None and origin not in allowed_origins and "*" not in allowed_origins:
        if origin == "null" or not is_local_origin(origin):
            raise HTTPError(403, f"Forbidden: origin {origin!r} is not allowed; add it to allowed_origins")


def authenticate(auth: Optional[Callable[[Dict[str, str]], Any]], headers: Dict[str, str],
                 environ: Optional[Dict[str, Any]] = None) -> Any:
    """The principal the ``auth`` hook finds in ``headers`` (None without a hook); 401 if none.

    ``environ``: the request's WSGI environ, when there is one. A
    :class:`~minimcp.server.auth.protection.ProtectedResource` is then given the request's method
    and URL for a request that carries a DPoP proof, which must name both (RFC 9449 §4.3).
    """
    if auth is None:
        return None
    try:
        if environ is not None and "dpop" in headers and isinstance(auth, ProtectedResource):
            principal = auth(headers, environ.get("REQUEST_METHOD", "GET"),
                             request_uri(environ, include_query=False))
        else:
            principal = auth(headers)
    except Unauthorized as exc:
        # One header line per challenge (ProtectedResource sends Bearer and DPoP ones).
        challenges = getattr(exc, "challenges", None) or [exc.www_authenticate]
        raise HTTPError(401, f"Unauthorized: {exc}",
                        headers=[("WWW-Authenticate", challenge) for challenge in challenges]) from None
    if principal is None:
        raise HTTPError(401, "Unauthorized: credentials are required", headers=[("WWW-Authenticate", "Bearer")])
    return principal


def check_owner(owner: Any, principal: Any) -> None:
    """Refuse (403) a request whose principal is not the one that opened the session.

    A session id is not a credential: it travels in logs and proxies, and with
    it alone bob's token could drive alice's session. Principals are compared
    with ``==`` (so an ``auth`` hook should return a user id, or anything that
    compares equal for the same user).
    """
    if owner != principal:
        raise HTTPError(403, "Forbidden: this session belongs to another principal; "
                        "send initialize to open your own")
