"""Where to authorize: the challenge, the protected resource, the authorization server.

spec basic/authorization "Authorization Server Discovery" (2025-06-18 on):

1. The server answers 401 with ``WWW-Authenticate: Bearer resource_metadata="…",
   scope="…"`` (``parse_challenges()``).
2. The client reads the Protected Resource Metadata (RFC 9728) from that URL,
   else from the path-based well-known URL, else from the root one
   (``resource_metadata()``). Its ``resource`` must name the server we talk
   to, or we stop: a server cannot send us to get a token for another one.
3. The client reads the authorization server's metadata (RFC 8414, then
   OpenID Connect Discovery, in the spec's order, path-insertion first for an
   issuer with a path: ``authorization_server_metadata()``) and checks that
   its ``issuer`` is the one we asked for (RFC 8414 §3.3: a mix-up defence).

A server of the 2025-03-26 revision publishes no resource metadata: its
origin is the authorization server, with the default endpoints ``/authorize``,
``/token`` and ``/register`` when it has no metadata either (``fallback_metadata()``).

Every URL a challenge or a metadata document names passes ``urls.check_url()``
before it is fetched (https, or http on loopback; no loopback or private address
from a remote server), and is fetched with the server that named it
(``named_by=``), so that the address a host name resolves to is judged too: a
hostile server cannot steer the client.
"""

import re
from typing import Any, Dict, List, NamedTuple, Optional
from urllib.parse import urlsplit, urlunsplit

from ...errors import AuthError
from .http import AuthHTTP
from .urls import check_endpoints, check_url

_PARAM = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(r'\s*,?\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)(?:\s+|$)')


class Challenge(NamedTuple):
    """One ``WWW-Authenticate`` challenge: its scheme (lower case) and parameters."""

    scheme: str
    params: Dict[str, str]

    @property
    def scopes(self) -> Optional[List[str]]:
        """The ``scope`` parameter as a list, or ``None`` when absent."""
        scope = self.params.get("scope")
        return scope.split() if scope else None


def parse_challenges(header: str) -> List[Challenge]:
    """``Bearer error="insufficient_scope", scope="a b", DPoP …`` -> one ``Challenge`` per scheme."""
    found: List[Challenge] = []
    position = 0
    for _ in range(len(header) + 1):  # each turn consumes a scheme or a parameter
        if position >= len(header.rstrip()):
            break
        param = _PARAM.match(header, position)
        if param and found:
            value = param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            found[-1].params[param.group(1).lower()] = value
            position = param.end()
            continue
        scheme = _SCHEME.match(header, position)
        if not scheme:
            break
        found.append(Challenge(scheme.group(1).lower(), {}))
        position = scheme.end()
    return found


def origin_of(url: str) -> str:
    """``https://Host:443/x`` -> ``https://host:443``: scheme and authority, lower case."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def canonical_uri(url: str) -> str:
    """The canonical URI of an MCP server (spec: lower-case scheme and host, no fragment)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_allowed(resource: str, server_url: str) -> bool:
    """Does a metadata ``resource`` name this server: same origin, and a path that contains ours?"""
    if not isinstance(resource, str) or origin_of(resource) != origin_of(server_url):
        return False
    prefix, path = urlsplit(resource).path.rstrip("/"), urlsplit(server_url).path
    return path == prefix or path.startswith(prefix + "/")


def resource_metadata(http: AuthHTTP, server_url: str, metadata_url: Optional[str]) -> Optional[Dict[str, Any]]:
    """The server's Protected Resource Metadata, or ``None`` when it publishes none.

    Raises:
        AuthError: the metadata is malformed, or names another resource; or the
            challenge's ``metadata_url`` is one the client may not fetch (``urls``).
    """
    parts = urlsplit(server_url)
    origin = origin_of(server_url)
    if metadata_url:  # named by the server's challenge: checked before anything is fetched
        check_url(metadata_url, f"the resource_metadata of {server_url}'s challenge", server_url)
    candidates = [metadata_url] if metadata_url else []
    path = parts.path.rstrip("/")
    if path:
        candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    for url in candidates:
        status, document = http.get_json(url, what="the protected resource metadata request", named_by=server_url)
        if status != 200:
            continue
        if (not isinstance(document, dict) or not isinstance(document.get("resource"), str)
                or not _strings(document.get("authorization_servers"))):
            raise AuthError(f"the protected resource metadata at {url} is malformed: it needs a 'resource' "
                            f"string and an 'authorization_servers' list (RFC 9728); ask the server's operator")
        if not resource_allowed(document["resource"], server_url):
            raise AuthError(f"the protected resource metadata at {url} is for {document['resource']!r}, not for "
                            f"{server_url}; refusing to get a token for another resource (RFC 9728 §3.3)")
        return document
    return None


def metadata_urls(issuer: str) -> List[str]:
    """Where an issuer's metadata may be, in the spec's order (2025-11-25 "Authorization Server Metadata Discovery")."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


def authorization_server_metadata(http: AuthHTTP, issuer: str,
                                  named_by: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The metadata of the authorization server ``issuer``, or ``None`` when none of its URLs has any.

    ``named_by`` is the MCP server whose metadata named ``issuer`` (``None``: the user did).

    Raises:
        AuthError: the document is malformed, or its ``issuer`` is not ``issuer``; or
            ``issuer``, or an endpoint the document lists, is a URL the client may not use (``urls``).
    """
    check_url(issuer, f"the authorization server of {named_by}" if named_by else "the authorization server",
              named_by)
    for url in metadata_urls(issuer):
        status, document = http.get_json(url, what="the authorization server metadata request", named_by=named_by)
        if status != 200:
            continue
        if not isinstance(document, dict) or not isinstance(document.get("token_endpoint"), str):
            raise AuthError(f"the authorization server metadata at {url} is malformed (no 'token_endpoint'); "
                            f"ask the operator of {issuer}")
        if document.get("issuer") != issuer:
            raise AuthError(f"the authorization server metadata at {url} says its issuer is "
                            f"{document.get('issuer')!r}, not {issuer!r}; refusing it (RFC 8414 §3.3)")
        check_endpoints(document)  # before any endpoint gets a person, a code or a secret
        return document
    return None


def fallback_metadata(http: AuthHTTP, server_url: str) -> Dict[str, Any]:
    """2025-03-26: the server's origin is its authorization server, with default endpoints if need be."""
    origin = origin_of(server_url)
    document = authorization_server_metadata(http, origin, server_url)  # (the defaults below share its origin)
    if document is not None:
        return document
    return {"issuer": origin, "authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
            "registration_endpoint": f"{origin}/register", "fallback_defaults": True}


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)
