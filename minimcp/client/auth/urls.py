"""Which URLs the OAuth client will fetch, post a secret to, or open in a browser.

An MCP server's challenge and metadata name the URLs the client visits next
(the resource metadata, the authorization server, its endpoints), so a
malicious server could steer the client: to a cloud metadata service, to a
router's admin page, or to a plain-http endpoint where anyone on the path
reads the authorization code and the PKCE verifier. ``check_url()`` is the one
rule every such URL passes before it is used:

1. it is ``https``, or ``http`` on a loopback address (``127.0.0.0/8``,
   ``::1``, ``localhost``): MCP authorization, Security Considerations,
   "Communication Security", which requires OAuth 2.1 §1.5 (TLS for every
   OAuth URL; the loopback exception is the one RFC 8252 §7.3 redirects use);
2. when a *remote* (non-loopback) server named it, its host is a public
   address: not this machine (loopback: a local service such as a Docker
   socket on ``127.0.0.1:2375``), not a cloud metadata address, and nothing
   that is not globally reachable (``ipaddress``' ``is_global``: private,
   link-local, shared ``100.64/10``, site-local, multicast, reserved ...),
   even over https: a request forgery defence, the client-side twin of the
   SSRF precautions the Client ID Metadata Document draft (§6) asks of
   authorization servers. A server naming its own host is let through (an
   intranet server at a private address points at itself), as is anything
   a loopback server names (a local server, and the tests).

Hosts are judged as written (with the spellings the system resolver also
reads as IPv4: ``2852039166``, ``0xa9.0xfe.0xa9.0xfe``, and the IPv4 address
inside an IPv4-mapped, NAT64 or 6to4 IPv6 one) by :func:`check_url`, before
anything is sent; and a host *name* is judged again by the address it
resolved to, once connected and before a byte is sent (:func:`check_peer`,
called from ``http.AuthHTTP``), so neither a DNS name such as
``169.254.169.254.nip.io`` nor a DNS rebinding gets around rule 2.
"""

import ipaddress
import re
import socket
from typing import Any, Dict, Optional, Tuple, Union
from urllib.parse import urlsplit

from ...errors import AuthError

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

HTTPS_RULE = ("an authorization URL must be https (or http on a loopback address) — "
              "MCP authorization, Communication Security (OAuth 2.1 §1.5)")

_SSRF_RULE = ("a remote server may not send the client to this machine, or to a private, link-local or cloud "
              "metadata address (server-side request forgery)")

#: The metadata endpoints the client may call or send a person to (RFC 8414 §2, RFC 7591 §3).
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint",
             "introspection_endpoint", "jwks_uri")

_METADATA_ADDRESSES = {ipaddress.ip_address(a) for a in (
    "169.254.169.254",   # AWS, GCP, Azure, OpenStack, DigitalOcean ... instance metadata
    "169.254.170.2",     # AWS ECS task metadata
    "fd00:ec2::254",     # AWS instance metadata over IPv6
    "100.100.100.200",   # Alibaba Cloud instance metadata
)}
_METADATA_NAMES = {"metadata.google.internal"}
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 §2.1: the well-known prefix, the IPv4 address last
_NUMERIC_V4 = re.compile(r"[0-9a-fA-FxX.]+")
_PRINTABLE = re.compile(r"[\x21-\x7e]+")  # no spaces, controls, or non-ASCII: parsers that disagree on them


def address_of(host: str) -> Optional[Address]:
    """The IP address ``host`` (a URL's hostname) stands for, or ``None`` for a DNS name.

    An IPv4-mapped IPv6 address is its IPv4 address; an IPv6 zone (``%eth0``)
    is dropped; the legacy IPv4 spellings ``inet_aton`` accepts (what the
    system resolver, and so ``requests``, connects to) are read as it reads them.
    (NAT64 and 6to4 addresses stay IPv6 here: :func:`address_kind` looks inside them.)
    """
    host = host.split("%", 1)[0].rstrip(".")
    address: Optional[Address]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
        if _NUMERIC_V4.fullmatch(host) and any(c.isdigit() for c in host):
            try:
                address = ipaddress.IPv4Address(socket.inet_aton(host))
            except OSError:
                address = None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(host: str) -> bool:
    """Is ``host`` this machine's loopback interface (``127.0.0.0/8``, ``::1``, ``localhost``)?"""
    if host.rstrip(".").lower() == "localhost":
        return True
    address = address_of(host)
    return address is not None and address.is_loopback


def internal_kind(host: str) -> Optional[str]:
    """What kind of non-public host ``host`` (a URL's hostname) is ("this machine (a loopback
    address)", "a cloud metadata address" ...), or ``None`` for a public address or a DNS name."""
    name = host.rstrip(".").lower()
    if name in _METADATA_NAMES:
        return "a cloud metadata address"
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761 §6.3: loopback, however resolved
        return "this machine (a loopback address)"
    address = address_of(name)
    return None if address is None else address_kind(address)


def address_kind(address: Address) -> Optional[str]:
    """What kind of non-public address ``address`` is, or ``None`` when it is globally reachable.

    "Globally reachable" is ``ipaddress``' ``is_global`` (the IANA special-purpose
    registries, RFC 6890), and not multicast, reserved or IPv6 site-local, which
    some Python versions count as global. A NAT64 (``64:ff9b::/96``, RFC 6052) or
    6to4 (``2002::/16``, RFC 3056) address is judged by the IPv4 address it reaches.
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        elif address.sixtofour is not None:
            address = address.sixtofour
    if address in _METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return "this machine (a loopback address)"
    if address.is_unspecified:  # connecting to 0.0.0.0 or :: reaches this machine
        return "this machine's unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if (not address.is_global or address.is_multicast or address.is_reserved
            or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)):
        return "a private or special-purpose address (not globally reachable)"
    return None


def _same_host(first: str, second: str) -> bool:
    one, other = address_of(first), address_of(second)
    if one is not None or other is not None:
        return one == other
    return first.rstrip(".").lower() == second.rstrip(".").lower()


def check_url(url: Any, what: str, named_by: Optional[str] = None) -> str:
    """``url``, once it passes the rule in this module's docstring; an ``AuthError`` naming it otherwise.

    Args:
        url: the URL, as the challenge, the metadata or the caller gave it.
        what: what it is, for the message ("the token_endpoint of https://as.example").
        named_by: the URL of the server whose challenge or metadata named ``url``;
            ``None`` for a URL the user gave (only the https rule applies then).

    Raises:
        AuthError: "refused URL as WHAT: RULE".
    """
    if not isinstance(url, str):
        raise AuthError(f"refused {str(url)[:80]!r} as {what}: not a URL")
    shown = url if len(url) <= 200 else url[:200] + "…"  # a hostile server's megabyte URL stays out of the message
    if not _PRINTABLE.fullmatch(url) or "\\" in url:
        raise AuthError(f"refused {shown!r} as {what}: a URL with spaces, backslashes or non-ASCII characters "
                        f"(write an international host name in its xn-- form)")
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port  # .port raises ValueError for a port that is not a number
    except ValueError:
        host = None
    if not host:
        raise AuthError(f"refused {shown} as {what}: not an absolute URL with a host")
    if "@" in parts.netloc:  # credentials in an OAuth URL are never legitimate, and parsers split them differently
        raise AuthError(f"refused {parts.scheme}://…@{host}{parts.path} as {what}: a URL with credentials in it")
    scheme = parts.scheme.lower()
    if not (scheme == "https" or (scheme == "http" and is_loopback(host))):
        raise AuthError(f"refused {shown} as {what}: {HTTPS_RULE}")
    naming_host = _remote_namer(host, named_by)
    if naming_host is not None:
        kind = internal_kind(host)
        if kind:
            raise AuthError(f"refused {shown} as {what}: {host} is {kind}, and {naming_host} is a remote server; "
                            f"{_SSRF_RULE}")
    return url


def _remote_namer(host: str, named_by: Optional[str]) -> Optional[str]:
    """The host of the server that named ``host``, when rule 2 applies to it: a remote server
    (not loopback) naming a host other than its own; else ``None``."""
    if named_by is None:
        return None
    naming_host = urlsplit(named_by).hostname or ""
    if is_loopback(naming_host) or _same_host(host, naming_host):
        return None
    return naming_host


def peer_rule(url: str, what: str, named_by: Optional[str]) -> Optional[Tuple[str, str, str]]:
    """What :func:`check_peer` needs to judge the connection a request to ``url`` makes:
    ``(url, what, the naming server's host)``, or ``None`` when rule 2 does not apply (a URL the
    user gave, one a loopback server named, or one on the naming server's own host)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    naming_host = _remote_namer(host, named_by)
    return None if naming_host is None else (url, what, naming_host)


def check_peer(peer: str, rule: Tuple[str, str, str]) -> None:
    """Rule 2 for the address a connection reached (``socket.getpeername()[0]``): a host name is
    judged by what it resolved to, this time (so a DNS rebinding is judged too).

    Args:
        peer: the IP address connected to.
        rule: :func:`peer_rule`'s answer for the request.

    Raises:
        AuthError: ``peer`` is not a public address.
    """
    url, what, naming_host = rule
    address = address_of(peer)
    kind = address_kind(address) if address is not None else "not an IP address"
    if kind:
        shown = url if len(url) <= 200 else url[:200] + "…"
        host = urlsplit(url).hostname
        raise AuthError(f"refused {shown} ({what}): {host} resolved to {peer}, which is {kind}, and {naming_host} "
                        f"is a remote server; {_SSRF_RULE}. Nothing was sent to it")


def check_endpoints(metadata: Dict[str, Any]) -> None:
    """Every endpoint in an authorization server's metadata passes :func:`check_url`, named by its issuer.

    Raises:
        AuthError: the first endpoint that does not.
    """
    issuer = str(metadata.get("issuer", ""))
    for key in ENDPOINTS:
        if metadata.get(key) is not None:  # absent or null: not offered
            check_url(metadata[key], f"the {key} of {issuer}", issuer)
