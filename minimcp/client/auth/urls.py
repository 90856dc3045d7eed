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
2. when a *remote* (non-loopback) server named it, its host is not link-local,
   private or a cloud metadata address, even over https: a request forgery
   defence, the client-side twin of the SSRF precautions the Client ID
   Metadata Document draft (§6) asks of authorization servers. A server
   naming its own host is let through (an intranet server at a private
   address points at itself), as is anything a loopback server names.

Hosts are judged as written (with the spellings the system resolver also
reads as IPv4: ``2852039166``, ``0xa9.0xfe.0xa9.0xfe``); names are not
resolved, so a DNS name that resolves to a private address is not caught.
"""

import ipaddress
import re
import socket
from typing import Any, Dict, Optional, Union
from urllib.parse import urlsplit

from ...errors import AuthError

Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

HTTPS_RULE = ("an authorization URL must be https (or http on a loopback address) — "
              "MCP authorization, Communication Security (OAuth 2.1 §1.5)")

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
_LINK_LOCAL = [ipaddress.ip_network(n) for n in ("169.254.0.0/16", "fe80::/10")]
_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")]
_THIS_HOST = [ipaddress.ip_network(n) for n in ("0.0.0.0/8", "::/128")]  # connecting to 0.0.0.0 reaches this host
_NUMERIC_V4 = re.compile(r"[0-9a-fA-FxX.]+")
_PRINTABLE = re.compile(r"[\x21-\x7e]+")  # no spaces, controls, or non-ASCII: parsers that disagree on them


def address_of(host: str) -> Optional[Address]:
    """The IP address ``host`` (a URL's hostname) stands for, or ``None`` for a DNS name.

    An IPv4-mapped IPv6 address is its IPv4 address; an IPv6 zone (``%eth0``)
    is dropped; the legacy IPv4 spellings ``inet_aton`` accepts (what the
    system resolver, and so ``requests``, connects to) are read as it reads them.
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
    """What kind of non-public address ``host`` is ("a cloud metadata address" ...), or ``None``."""
    name = host.rstrip(".").lower()
    if name in _METADATA_NAMES:
        return "a cloud metadata address"
    address = address_of(name)
    if address is None:
        return None
    if address in _METADATA_ADDRESSES:
        return "a cloud metadata address"
    if any(address in network for network in _LINK_LOCAL):
        return "a link-local address"
    if any(address in network for network in _PRIVATE):
        return "a private address"
    if any(address in network for network in _THIS_HOST):
        return "this machine's unspecified address"
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
    if named_by is not None:
        naming_host = urlsplit(named_by).hostname or ""
        kind = internal_kind(host)
        if kind and not is_loopback(naming_host) and not _same_host(host, naming_host):
            raise AuthError(f"refused {shown} as {what}: {host} is {kind}, and {naming_host} is a remote server; "
                            f"a remote server may not send the client to a link-local, private or cloud metadata "
                            f"address (server-side request forgery)")
    return url


def check_endpoints(metadata: Dict[str, Any]) -> None:
    """Every endpoint in an authorization server's metadata passes :func:`check_url`, named by its issuer.

    Raises:
        AuthError: the first endpoint that does not.
    """
    issuer = str(metadata.get("issuer", ""))
    for key in ENDPOINTS:
        if metadata.get(key) is not None:  # absent or null: not offered
            check_url(metadata[key], f"the {key} of {issuer}", issuer)
