"""The OAuth client against servers that try to steer it (issue 29), on real sockets.

A malicious MCP server, or the authorization server it names, controls the
URLs the client visits next. These tests stand such servers up on 127.0.0.1
(and, for a *remote* one, on this machine's non-loopback address) and check
that the client refuses, before any request, every URL that is not https or
loopback http, and every link-local, private or cloud metadata address a
remote server names. Then: no secret in a repr, the token store's folders,
and a step-up against an authorization server that pins a registered
client to the scopes it registered with (as oidc-provider does by default).
"""

import base64
import json
import os
import re
import socket
import stat
from typing import Any, Callable, Dict, Iterator, List, Optional
from urllib.parse import urlencode

import pytest
import requests
from oauth_fixture import AuthServer, protect
from test_auth_client import make_server  # the same protected server (read, write)

import minimcp
from minimcp.client.auth import (
    AuthError,
    BearerToken,
    ClientCredentials,
    EnterpriseAuth,
    FileTokenStore,
    JWTBearer,
    MemoryTokenStore,
    OAuth,
)
from minimcp.client.auth.flows import DEFAULT_REDIRECT
from minimcp.server.http.wsgiserver import BackgroundServer

#: Seconds an OAuth request may take here: short, so that a URL the client should have refused
#: (and so, before the fix, fetched) fails fast instead of hanging the test.
HTTP_TIMEOUT = 2.0




def follow(authorization_url: str) -> str:
    """A browser that logs in at once: the redirect's Location, not followed."""
    return requests.get(authorization_url, allow_redirects=False, timeout=10).headers["Location"]


class Browser:
    """``OAuth(browser=...)`` that records the URLs it was sent to, and logs in through ``follow``."""

    def __init__(self) -> None:
        self.opened: List[str] = []

    def __call__(self, url: str) -> str:
        self.opened.append(url)
        return follow(url)


class HostileAuthServer(AuthServer):
    """The fixture's authorization server, with its metadata changed as a test says."""

    def __init__(self, overrides: Optional[Dict[str, Any]] = None, **options: Any) -> None:
        super().__init__(**options)
        self.overrides = overrides or {}

    def metadata(self) -> dict:
        return dict(super().metadata(), **self.overrides)


class Protected:
    """An authorization server and a protected MCP server on 127.0.0.1, running."""

    def __init__(self, auth: AuthServer, tool_scopes: Optional[Dict[str, str]] = None) -> None:
        self.auth = auth
        self.app = make_server().wsgi_app()
        self.http = BackgroundServer(protect(self.app, self.auth, lambda: self.http.url, tool_scopes=tool_scopes))
        self.url = self.http.url + "/mcp"

    def __enter__(self) -> "Protected":
        self.auth.__enter__()
        self.http.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.http.stop()
        self.app.close()
        self.auth.__exit__()


class Challenger:
    """An MCP endpoint that answers every POST with 401 and ``challenge(url)``, and serves the
    protected resource metadata ``metadata(url)`` (``None``: 404); ``paths`` are the paths asked for."""

    def __init__(self, challenge: Callable[[str], str], metadata: Callable[[str], Optional[dict]],
                 host: str = "127.0.0.1") -> None:
        self.challenge, self.metadata = challenge, metadata
        self.paths: List[str] = []
        self.http = BackgroundServer(self, host=host)
        self.url = self.http.url + "/mcp"

    def __call__(self, environ: dict, start_response: Callable) -> List[bytes]:
        self.paths.append(environ["PATH_INFO"])
        if environ["PATH_INFO"].startswith("/.well-known/oauth-protected-resource"):
            document = self.metadata(self.url)
            if document is not None:
                body = json.dumps(document).encode()
                start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
                return [body]
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        start_response("401 Unauthorized", [("WWW-Authenticate", self.challenge(self.url)), ("Content-Length", "0")])
        return [b""]

    def __enter__(self) -> "Challenger":
        self.http.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.http.stop()


def oauth(**options: Any) -> OAuth:
    options.setdefault("store", MemoryTokenStore())
    options.setdefault("browser", Browser())
    options.setdefault("http_timeout", HTTP_TIMEOUT)
    return OAuth(**options)


def outward_address() -> Optional[str]:
    """An IPv4 address of this machine that is not loopback, where a "remote" server can listen; or None."""
    found = []
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # a UDP connect sends nothing: it only picks the outgoing interface
        found.append(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    try:
        found += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    return next((address for address in found if not address.startswith(("127.", "0."))), None)


@pytest.fixture
def remote_host() -> Iterator[str]:
    """This machine's non-loopback address: a server listening there is a remote one to the client."""
    address = outward_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address to play a remote server on")
    try:
        with socket.socket() as sock:
            sock.bind((address, 0))
    except OSError as exc:
        pytest.skip(f"cannot listen on {address}: {exc}")
    yield address


# -- 1. https, or http on loopback; no private addresses from a remote server ------------------------

def test_a_challenge_pointing_at_a_plain_http_metadata_address_is_refused_unfetched():
    evil = "http://169.254.169.254/latest/meta-data/"
    with Challenger(lambda url: f'Bearer resource_metadata="{evil}", scope="mcp:read"', lambda url: None) as server:
        with pytest.raises(AuthError) as refused:
            minimcp.connect(server.url, auth=oauth(), timeout=30)
        assert str(refused.value).startswith(f"refused {evil} as the resource_metadata of ")
        assert "must be https (or http on a loopback address)" in str(refused.value)
        assert "Communication Security" in str(refused.value)
        assert server.paths == ["/mcp"]  # no well-known fallback either: the challenge was hostile


@pytest.mark.parametrize("issuer", ["http://169.254.169.254/latest", "http://auth.evil.example"])
def test_a_plain_http_authorization_server_that_is_not_loopback_is_refused_unfetched(issuer):
    def metadata(url: str) -> dict:
        return {"resource": url, "authorization_servers": [issuer]}

    with Challenger(lambda url: f'Bearer resource_metadata="{url[:-4]}/.well-known/oauth-protected-resource/mcp"',
                    metadata) as server:
        with pytest.raises(AuthError, match=f"^refused {re.escape(issuer)} as the authorization server of "
                                            f"{re.escape(server.url)}: an authorization URL must be https"):
            minimcp.connect(server.url, auth=oauth(), timeout=30)


@pytest.mark.parametrize("key", ["authorization_endpoint", "token_endpoint", "registration_endpoint",
                                 "revocation_endpoint", "introspection_endpoint", "jwks_uri"])
def test_a_plain_http_endpoint_in_authorization_server_metadata_is_refused_before_any_use(key):
    evil = "http://evil.example/" + key
    with Protected(HostileAuthServer({key: evil})) as running:
        browser = Browser()
        with pytest.raises(AuthError, match=f"^refused {re.escape(evil)} as the {key} of {re.escape(running.auth.url)}: "
                                            f"an authorization URL must be https"):
            minimcp.connect(running.url, auth=oauth(browser=browser), timeout=30)
        # nothing was registered, no browser opened, no code or verifier sent anywhere
        assert browser.opened == [] and running.auth.log == []


def test_a_redirect_uri_must_be_https_or_loopback():
    for uri in ("http://evil.example/cb", "http://localhost.evil.example/cb", "http://127.0.0.1@evil.example/cb",
                "javascript:alert(1)", "http://169.254.169.254/cb"):
        with pytest.raises(AuthError, match="^refused .* as the redirect_uri: "):
            OAuth(redirect_uri=uri, headless=True, store=MemoryTokenStore())
    for uri in ("https://app.example/cb", "http://localhost:9/cb", "http://[::1]:9/cb"):
        assert OAuth(redirect_uri=uri, headless=True, store=MemoryTokenStore()).redirect_uri == uri
    with Protected(AuthServer()) as running:
        redirect = "http://127.0.0.1:9/cb"  # (nothing listens there: the test's browser reads the Location)
        with minimcp.connect(running.url, auth=oauth(redirect_uri=redirect), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
        [register] = running.auth.calls("/register")
        assert register["redirect_uris"] == [redirect] and register["application_type"] == "native"


@pytest.mark.parametrize("target", [
    "https://169.254.169.254/latest", "https://[fd00:ec2::254]/", "https://metadata.google.internal/",
    "https://10.0.0.1/", "https://172.16.0.1/", "https://192.168.1.1/", "https://[fe80::1]/", "https://[fc00::1]/",
    "https://2852039166/",              # 169.254.169.254 as one number: the resolver reads it so
    "https://[::ffff:169.254.169.254]/",
])
@pytest.mark.parametrize("where", ["challenge", "authorization_servers"])
def test_a_remote_server_may_not_send_the_client_to_a_private_or_metadata_address(remote_host, target, where):
    def challenge(url: str) -> str:  # without resource_metadata, the client reads the well-known URL
        return f'Bearer resource_metadata="{target}"' if where == "challenge" else 'Bearer scope="mcp:read"'

    def metadata(url: str) -> dict:
        return {"resource": url, "authorization_servers": [target]}

    with Challenger(challenge, metadata, host=remote_host) as server:
        with pytest.raises(AuthError) as refused:
            minimcp.connect(server.url, auth=oauth(), timeout=30)
    message = str(refused.value)
    assert message.startswith(f"refused {target} as the "), message
    assert f"and {remote_host} is a remote server" in message and "server-side request forgery" in message
    assert server.paths == (["/mcp"] if where == "challenge" else ["/mcp", "/.well-known/oauth-protected-resource/mcp"])


def test_the_url_rule_table():
    from minimcp.client.auth.urls import check_url

    remote, loopback, intranet = "https://mcp.example.com/mcp", "http://127.0.0.1:8/mcp", "https://10.0.0.5/mcp"
    allowed = [
        ("https://as.example/token", remote), ("HTTPS://AS.EXAMPLE/x", remote), ("https://8.8.8.8/x", remote),
        ("https://[2606:4700::1111]/x", remote),
        ("https://[64:ff9b::808:808]/x", remote), ("https://[2002:808:808::]/x", remote),  # NAT64, 6to4 of 8.8.8.8
        ("https://10.0.0.1/x", loopback),     # a loopback server (tests, a local proxy) may name its network
        ("http://127.0.0.1:5/x", loopback), ("http://localhost:5/x", loopback), ("http://[::1]:5/x", loopback),
        ("https://169.254.169.254/x", None),  # a URL the user gave: the https rule only
        ("http://127.0.0.1:5/x", None), ("http://127.1:5/x", None), ("http://0x7f000001/x", None),
        ("http://localhost:5/x", None), ("http://[::1]:5/x", None), ("http://[::ffff:127.0.0.1]:5/x", None),
        ("https://10.0.0.5/.well-known/x", intranet),  # a server pointing at its own host
    ]
    for url, named_by in allowed:
        assert check_url(url, "a test URL", named_by) == url
    refused = [
        ("http://as.example/token", None, HTTPS_WORDS), ("file:///etc/passwd", None, "not an absolute URL"),
        ("javascript:alert(1)", None, "not an absolute URL"), ("https://", None, "not an absolute URL"),
        ("https://as.example:port/", None, "not an absolute URL"), (42, None, "not a URL"),
        ("https://as.example/ x", None, "spaces"), ("https://аs.example/", None, "non-ASCII"),
        ("https://as.example\\@evil.example/", None, "backslashes"),
        ("https://user:pw@as.example/", None, "credentials"),
        ("http://localhost.evil.example/", None, HTTPS_WORDS), ("http://127.0.0.1.evil.example/", None, HTTPS_WORDS),
        ("https://169.254.169.254./x", remote, "cloud metadata"), ("https://0xa9.0xfe.0xa9.0xfe/", remote, "cloud"),
        ("https://169.254.43518/", remote, "cloud metadata"), ("https://METADATA.google.internal./", remote, "cloud"),
        ("https://100.100.100.200/", remote, "cloud"), ("https://[fe80::1%25eth0]/", remote, "link-local"),
        ("https://0.0.0.0/", remote, "unspecified"), ("https://[::]/", remote, "unspecified"),
        ("https://10.0.0.6/x", intranet, "private"),  # another host of the intranet: the server's own only
        # this machine, named by a remote server: a local service (a Docker API on 2375 ...), however spelled
        ("http://127.0.0.1:2375/containers/json", remote, LOOPBACK_WORDS), ("http://127.1:5/x", remote, "loopback"),
        ("http://0x7f000001/x", remote, "loopback"), ("http://localhost:5/x", remote, "loopback"),
        ("http://LOCALHOST./x", remote, "loopback"), ("https://app.localhost/x", remote, "loopback"),
        ("http://[::1]:5/x", remote, "loopback"), ("http://[::ffff:127.0.0.1]:5/x", remote, "loopback"),
        ("https://127.0.0.1/x", intranet, "loopback"),
        # what is not globally reachable, however it is reached (RFC 6890 registries; RFC 6052, RFC 3056)
        ("https://100.64.0.1/", remote, "private or special-purpose"),       # shared (carrier-grade NAT)
        ("https://[64:ff9b::a9fe:a9fe]/", remote, "cloud metadata"),        # NAT64 of 169.254.169.254
        ("https://[64:ff9b::a00:1]/", remote, "private"),                   # NAT64 of 10.0.0.1
        ("https://[2002:a9fe:a9fe::]/", remote, "cloud metadata"),          # 6to4 of 169.254.169.254
        ("https://[2002:7f00:1::]/", remote, "loopback"),                   # 6to4 of 127.0.0.1
        ("https://[fec0::1]/", remote, "private or special-purpose"),       # IPv6 site-local
        ("https://224.0.0.1/", remote, "private or special-purpose"),       # multicast
        ("https://[ff02::1]/", remote, "private or special-purpose"),
        ("https://255.255.255.255/", remote, "private or special-purpose"),  # broadcast
        ("https://240.0.0.1/", remote, "private or special-purpose"),       # reserved
        ("https://198.18.0.1/", remote, "private or special-purpose"),      # benchmarking
        ("https://[2001:db8::1]/", remote, "private or special-purpose"),   # documentation
        ("https://[::a9fe:a9fe]/", remote, "private or special-purpose"),   # IPv4-compatible (deprecated)
    ]
    for url, named_by, words in refused:
        with pytest.raises(AuthError, match=re.escape(words)):
            check_url(url, "a test URL", named_by)
    with pytest.raises(AuthError) as long:
        check_url("http://evil.example/" + "a" * 10_000, "a test URL")
    assert len(str(long.value)) < 500
    with pytest.raises(AuthError) as credentials:
        check_url("https://user:hunter2@as.example/token", "a test URL")
    assert "hunter2" not in str(credentials.value)


HTTPS_WORDS = "must be https (or http on a loopback address)"
LOOPBACK_WORDS = ("127.0.0.1 is this machine (a loopback address), and mcp.example.com is a remote server; "
                  "a remote server may not send the client to this machine")


class Recorder:
    """A service on this machine (a Docker API on 127.0.0.1:2375, say): records each request's path."""

    def __init__(self) -> None:
        self.paths: List[str] = []
        self.http = BackgroundServer(self)

    def __call__(self, environ: dict, start_response: Callable) -> List[bytes]:
        self.paths.append(environ["PATH_INFO"])
        body = b'{"resource": "pwned", "authorization_servers": ["https://evil.example"]}'
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


@pytest.mark.parametrize("where", ["challenge", "authorization_servers"])
def test_a_remote_server_may_not_send_the_client_to_this_machine(remote_host, where):
    local = Recorder()
    target = local.http.url + "/containers/json"  # loopback http: allowed by the https rule, not by a remote server

    def challenge(url: str) -> str:
        return f'Bearer resource_metadata="{target}"' if where == "challenge" else 'Bearer scope="mcp:read"'

    def metadata(url: str) -> dict:
        return {"resource": url, "authorization_servers": [target]}

    with local.http, Challenger(challenge, metadata, host=remote_host) as server:
        with pytest.raises(AuthError) as refused:
            minimcp.connect(server.url, auth=oauth(), timeout=30)
    message = str(refused.value)
    assert message.startswith(f"refused {target} as the "), message
    assert f"127.0.0.1 is this machine (a loopback address), and {remote_host} is a remote server" in message
    assert local.paths == []  # nothing reached the local service


def test_a_remote_issuer_may_not_name_this_machine_as_an_endpoint():
    from minimcp.client.auth.urls import check_endpoints

    for key in ("token_endpoint", "registration_endpoint", "authorization_endpoint", "jwks_uri"):
        with pytest.raises(AuthError, match=f"^refused http://127.0.0.1:2375/x as the {key} of https://as.example: "
                                            f"127.0.0.1 is this machine"):
            check_endpoints({"issuer": "https://as.example", key: "http://127.0.0.1:2375/x"})
    check_endpoints({"issuer": "http://127.0.0.1:8", "token_endpoint": "http://127.0.0.1:2375/x"})  # loopback: ok


def loopback_name() -> Optional[str]:
    """A host name the system resolver maps to this machine only, though no rule can tell from its
    spelling (this machine's own name often is, in /etc/hosts; Debian's ip6-localhost); or None."""
    from minimcp.client.auth.urls import address_of, internal_kind, is_loopback

    for name in (socket.gethostname(), "ip6-localhost", "ip6-loopback", "localhost.localdomain"):
        if not name or is_loopback(name) or internal_kind(name):
            continue
        try:
            found = [info[4][0] for info in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)]
        except OSError:
            continue
        addresses = [address_of(address) for address in found]
        if addresses and all(address is not None and address.is_loopback for address in addresses):
            return name
    return None


def test_a_host_name_that_resolves_to_this_machine_is_refused_once_connected_before_a_byte(remote_host):
    name = loopback_name()
    if name is None:
        pytest.skip("no host name here resolves to loopback only (this machine's name does not, nor "
                    "ip6-localhost): test_the_address_connected_to_is_checked_before_a_byte_is_sent covers "
                    "the check without DNS")
    family, _, _, _, address = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)[0]  # what is tried first
    with socket.create_server((address[0], 0), family=family) as listener:
        evil = f"https://{name}:{listener.getsockname()[1]}/.well-known/oauth-protected-resource"
        with Challenger(lambda url: f'Bearer resource_metadata="{evil}"', lambda url: None,
                        host=remote_host) as server:
            with pytest.raises(AuthError) as refused:
                minimcp.connect(server.url, auth=oauth(), timeout=30)
        message = str(refused.value)
        assert message.startswith(f"refused {evil} (the protected resource metadata request): {name} resolved to "
                                  f"{address[0]}, which is this machine (a loopback address), and {remote_host} "
                                  f"is a remote server"), message
        listener.settimeout(10)
        connection, _ = listener.accept()  # the client connected (so it could see where), then hung up...
        with connection:
            connection.settimeout(10)
            assert connection.recv(1024) == b""  # ... before a byte: not even a TLS ClientHello


def test_the_address_connected_to_is_checked_before_a_byte_is_sent():
    """The connect-time check with no DNS in the way: the URL's host is the address, 127.0.0.1."""
    from minimcp.client.auth.http import AuthHTTP

    local = Recorder()
    http = AuthHTTP(timeout=HTTP_TIMEOUT)
    url = local.http.url + "/token"
    try:
        with local.http:
            for named_by in ("https://mcp.example.com/mcp", "https://[2606:4700::1111]/", "https://10.0.0.5/mcp"):
                with pytest.raises(AuthError, match=r"resolved to 127\.0\.0\.1, which is this machine .* Nothing "
                                                    r"was sent to it$"):
                    http.request("POST", url, what="the token request", named_by=named_by, data={"code": "c"})
            assert local.paths == []
            # named by the user, by a loopback server, or by a server on that very host: sent
            for named_by in (None, "http://localhost:8/mcp", local.http.url + "/"):
                with http.request("POST", url, what="the token request", named_by=named_by) as response:
                    assert response.status_code == 200
            assert local.paths == ["/token"] * 3
    finally:
        http.close()


# -- 2. no secret in a repr, a str or an f-string ----------------------------------------------------

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-key-material\n-----END PRIVATE KEY-----\n"


def test_no_object_holding_a_secret_shows_it():
    from minimcp.client.auth.pkce import new_pkce
    from minimcp.client.auth.registration import ClientSettings
    from minimcp.client.auth.tokens import ClientAuth

    with Protected(AuthServer()) as running:
        auth = oauth()
        with minimcp.connect(running.url, auth=auth, timeout=30) as client:
            client.call_tool("read")
        token = auth.token_for(running.url)
        assert token is not None and token.refresh_token
        pkce = new_pkce()
        held = [
            (token, [token.access_token, token.refresh_token]),
            (token._replace(refresh_token=None), [token.access_token]),
            (ClientAuth("cid", "client-secret-1", "client_secret_basic", PEM), ["client-secret-1", "key-material"]),
            (pkce, [pkce.verifier]),
            (ClientSettings("cid", "client-secret-2", private_key=PEM), ["client-secret-2", "key-material"]),
            (OAuth(client_id="cid", client_secret="client-secret-3", store=MemoryTokenStore()), ["client-secret-3"]),
            (ClientCredentials("svc", "client-secret-4", private_key=PEM), ["client-secret-4", "key-material"]),
            (JWTBearer("assertion-jwt-5"), ["assertion-jwt-5"]),
            (EnterpriseAuth(id_token="id-token-6", idp_token_endpoint="https://idp.example/token", client_id="c",
                            client_secret="client-secret-7", idp_client_secret="idp-secret-8"),
             ["id-token-6", "client-secret-7", "idp-secret-8"]),
            (BearerToken("bearer-9"), ["bearer-9"]),
        ]
        for thing, secrets in held:
            shown = [repr(thing), str(thing), f"{thing}", f"{thing!r}", repr([thing]), "%s" % (thing,)]
            for text in shown:
                for secret in secrets:
                    assert secret not in text, f"{type(thing).__name__} shows a secret: {text}"
        # ... yet a repr still says which secrets are set, and keeps what is not secret
        assert re.fullmatch(r"Token\(access_token=\[redacted\], token_type='Bearer', expires_at=[0-9.]+, "
                            r"refresh_token=\[redacted\], scopes=\['mcp:read'\], issuer='[^']+', resource='[^']+'\)",
                            repr(token)), repr(token)
        assert "refresh_token=None" in repr(token._replace(refresh_token=None))
        assert repr(ClientAuth("cid")) == ("ClientAuth(client_id='cid', client_secret=None, method='none', "
                                           "private_key=None, signing_algorithm='RS256')")
        assert "client_secret=[redacted]" in repr(ClientAuth("cid", "s", "client_secret_post"))
        assert repr(pkce) == f"PKCE(verifier=[redacted], challenge={pkce.challenge!r}, state=[redacted])"
        # the values themselves are untouched
        assert token.to_dict()["access_token"] == token.access_token and running.auth.check(token.access_token)


# -- 3. the token store's folders -------------------------------------------------------------------

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


def mode(path: Any) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@posix_only
def test_under_umask_000_every_folder_the_store_makes_is_0700(tmp_path, monkeypatch):
    config = tmp_path / "config"  # $XDG_CONFIG_HOME does not exist yet: minimcp makes it, then minimcp/, then oauth/
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    previous = os.umask(0)
    try:
        store = FileTokenStore()
        store.save(("token", "https://as.example", "https://mcp.example/mcp"), {"access_token": "t"})
        [name] = os.listdir(store.folder)
        modes = [mode(config), mode(config / "minimcp"), mode(config / "minimcp" / "oauth"),
                 mode(os.path.join(store.folder, name))]
        inside = FileTokenStore(str(tmp_path / "a" / "b" / "c"))  # a folder of the user's own, three levels deep
        inside.save(("client", "https://as.example"), {"client_id": "x"})
        deep = [mode(tmp_path / "a"), mode(tmp_path / "a" / "b"), mode(tmp_path / "a" / "b" / "c")]
    finally:
        os.umask(previous)
    assert modes == [0o700, 0o700, 0o700, 0o600]
    assert deep == [0o700, 0o700, 0o700]
    assert store.load(("token", "https://as.example", "https://mcp.example/mcp")) == {"access_token": "t"}


@posix_only
@pytest.mark.parametrize("loose", [0o777, 0o770, 0o702, 0o720])
def test_a_store_folder_others_can_write_to_is_refused_until_fixed(tmp_path, loose):
    folder = tmp_path / "tokens"
    folder.mkdir()
    store = FileTokenStore(str(folder))
    store.save(("client", "https://as.example"), {"client_id": "kept"})
    os.chmod(folder, loose)
    for use in (lambda: store.load(("client", "https://as.example")),
                lambda: store.save(("client", "https://as.example"), {"client_id": "planted"}),
                lambda: list(store.items())):
        with pytest.raises(AuthError) as refused:
            use()
        message = str(refused.value)
        assert str(folder) in message and f"chmod go-w {folder}" in message, message
    os.chmod(folder, loose & ~0o022)  # what the message says to run
    assert store.load(("client", "https://as.example")) == {"client_id": "kept"}


@posix_only
def test_a_store_folder_another_user_owns_is_refused(tmp_path):
    folder = tmp_path / "tokens"
    folder.mkdir(mode=0o755)
    store = FileTokenStore(str(folder))
    store.save(("client", "https://as.example"), {"client_id": "kept"})  # a folder of one's own: used
    assert store.load(("client", "https://as.example")) == {"client_id": "kept"}
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user (chown); a folder of one's own was shown to pass")
    other = 65534  # nobody
    os.chown(folder, other, -1)
    try:
        for use in (lambda: store.load(("client", "https://as.example")),
                    lambda: store.save(("client", "https://as.example"), {"client_id": "planted"}),
                    lambda: list(store.items())):
            with pytest.raises(AuthError) as refused:
                use()
            message = str(refused.value)
            assert f"the token store folder {folder} belongs to another user (uid {other}; you are uid 0)" in message
    finally:
        os.chown(folder, 0, -1)  # root's own (and so, here, this user's): used again
    assert store.load(("client", "https://as.example")) == {"client_id": "kept"}


# -- 4. step-up against an authorization server that pins a client to its registered scopes ---------

class PinningAuthServer(AuthServer):
    """The fixture's authorization server, refusing (``invalid_scope``, in the redirect) an authorization
    request for a scope outside the client's registered ``scope``, as oidc-provider does unless told
    otherwise (tests/oidc/provider.mjs tells it otherwise); ``forbidden`` scopes are refused to all."""

    def __init__(self, forbidden: tuple = (), **options: Any) -> None:
        super().__init__(**options)
        self.forbidden = set(forbidden)
        self.pinned: Dict[str, Optional[str]] = {}   # client_id -> its registered scope (None: any)
        self.refused: List[dict] = []

    def _register(self, body: dict, start_response: Callable) -> List[bytes]:
        before = set(self.clients)
        answer = super()._register(body, start_response)
        [client_id] = set(self.clients) - before
        self.pinned[client_id] = body.get("scope")
        return answer

    def _authorize(self, query: dict, start_response: Callable) -> List[bytes]:
        registered = self.pinned.get(query.get("client_id", ""))
        asked = set(query.get("scope", "").split())
        if asked & self.forbidden or (registered is not None and not asked <= set(registered.split())):
            self.log.append(("/authorize", query))
            self.refused.append(query)
            params = {"error": "invalid_scope", "error_description": "requested scope is not allowed",
                      "state": query.get("state", ""), "iss": self.url}
            start_response("302 Found", [("Location", query["redirect_uri"] + "?" + urlencode(params)),
                                         ("Content-Length", "0")])
            return [b""]
        return super()._authorize(query, start_response)


@pytest.mark.parametrize("scopes_supported", [["mcp:read", "mcp:write"], None])
def test_step_up_beyond_the_first_registration_at_a_server_that_pins_scopes(scopes_supported):
    with Protected(PinningAuthServer(scopes_supported=scopes_supported), tool_scopes={"write": "mcp:write"}) as running:
        with minimcp.connect(running.url, auth=oauth(), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
            assert client.call_tool("write").text == "wrote x"
        registrations = running.auth.calls("/register")
        authorizations = running.auth.calls("/authorize")
        assert running.auth.refused == [] and len(authorizations) == 2
        assert authorizations[1]["scope"].split() == ["mcp:read", "mcp:write"]
        if scopes_supported:  # registered once, for every scope the server lists
            [register] = registrations
            assert register["scope"].split() == ["mcp:read", "mcp:write"]
            assert authorizations[0]["client_id"] == authorizations[1]["client_id"]
        else:  # the first registration could not know of mcp:write: a second one, before the step-up
            assert [r["scope"] for r in registrations] == ["mcp:read", "mcp:read mcp:write"]
            assert authorizations[0]["client_id"] != authorizations[1]["client_id"]


def older_registration(running: Protected, store: MemoryTokenStore, pinned: str) -> None:
    """A registration as minimcp kept it before it recorded the registered scope, pinned to ``pinned``."""
    running.auth.add_client("older-client", None, [DEFAULT_REDIRECT])
    running.auth.pinned["older-client"] = pinned
    store.save(("client", running.auth.url), {"client_id": "older-client", "client_secret": None, "method": "none",
                                              "redirect_uris": [DEFAULT_REDIRECT]})


def test_an_older_registration_refused_a_step_up_is_replaced_and_the_login_retried_once():
    with Protected(PinningAuthServer(), tool_scopes={"write": "mcp:write"}) as running:
        store = MemoryTokenStore()
        older_registration(running, store, "mcp:read")
        with minimcp.connect(running.url, auth=oauth(store=store), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
            assert client.call_tool("write").text == "wrote x"
        [register] = running.auth.calls("/register")
        assert register["scope"].split() == ["mcp:read", "mcp:write"]
        [refused] = running.auth.refused
        assert refused["client_id"] == "older-client" and refused["scope"] == "mcp:read mcp:write"
        first, _, last = running.auth.calls("/authorize")
        assert first["client_id"] == "older-client" and last["client_id"] not in ("older-client", None)
        assert store.load(("client", running.auth.url))["client_id"] == last["client_id"]


def test_a_scope_the_server_refuses_to_everyone_is_retried_once_then_raised():
    with Protected(PinningAuthServer(forbidden=("mcp:write",)), tool_scopes={"write": "mcp:write"}) as running:
        store = MemoryTokenStore()
        older_registration(running, store, "mcp:read")
        with minimcp.connect(running.url, auth=oauth(store=store), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
            with pytest.raises(AuthError, match="refused: invalid_scope") as refused:
                client.call_tool("write")
            assert refused.value.error == "invalid_scope"
            assert client.call_tool("read").text == "read x"  # the session, and the token it has, live on
        assert len(running.auth.calls("/register")) == 1 and len(running.auth.refused) == 2


def test_a_registration_asks_for_every_scope_the_server_lists_and_a_token_only_for_the_challenge_s():
    with Protected(AuthServer(scopes_supported=["mcp:write", "mcp:read", "offline_access"])) as running:
        with minimcp.connect(running.url, auth=oauth(), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
        [register] = running.auth.calls("/register")
        assert register["scope"].split() == ["mcp:read", "offline_access", "mcp:write"]
        [authorize] = running.auth.calls("/authorize")
        assert authorize["scope"].split() == ["mcp:read", "offline_access"]  # the token asks for no more


# -- 5. a 401 with two challenges, for a DPoP request -----------------------------------------------

class DPoPAuthServer(AuthServer):
    """The fixture's authorization server, issuing DPoP-bound tokens to a token request with a proof."""

    def metadata(self) -> dict:
        return dict(super().metadata(), dpop_signing_alg_values_supported=["ES256"])

    def __call__(self, environ: dict, start_response: Callable) -> List[bytes]:
        if environ.get("PATH_INFO") != "/token" or not environ.get("HTTP_DPOP"):
            return super().__call__(environ, start_response)
        answered: Dict[str, Any] = {}
        body = json.loads(b"".join(super().__call__(environ, lambda status, headers: answered.update(status=status))))
        if "access_token" in body:
            body["token_type"] = "DPoP"
        data = json.dumps(body).encode()
        start_response(answered["status"], [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]


class NonceResource:
    """A protected MCP server that takes a DPoP-bound token only with a proof carrying its nonce
    (RFC 9449 §9), and words its 401s as minimcp's own server does: the Bearer challenge first,
    with resource_metadata and scope; the error on the DPoP challenge, the scheme the request used."""

    NONCE = "server-nonce-1"

    def __init__(self, auth: AuthServer) -> None:
        self.auth = auth
        self.app = make_server().wsgi_app()
        self.http = BackgroundServer(self)
        self.url = self.http.url + "/mcp"
        self.nonce_refusals = 0

    def __call__(self, environ: dict, start_response: Callable) -> List[bytes]:
        metadata_url = self.http.url + "/.well-known/oauth-protected-resource/mcp"
        if environ["PATH_INFO"].startswith("/.well-known/oauth-protected-resource"):
            body = json.dumps({"resource": self.url, "authorization_servers": [self.auth.url],
                               "scopes_supported": ["mcp:read"], "dpop_bound_access_tokens_required": True}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        bearer = f'Bearer resource_metadata="{metadata_url}", scope="mcp:read"'
        given = environ.get("HTTP_AUTHORIZATION", "")
        if given.startswith("DPoP ") and self.auth.check(given[5:]):
            payload = environ.get("HTTP_DPOP", "..").split(".")[1]
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            if claims.get("nonce") == self.NONCE:
                return self.app(environ, start_response)
            self.nonce_refusals += 1
            challenge = bearer + ', DPoP error="use_dpop_nonce", error_description="send the nonce", algs="ES256"'
        else:
            challenge = bearer + ', DPoP algs="ES256"'
        start_response("401 Unauthorized", [("WWW-Authenticate", challenge), ("DPoP-Nonce", self.NONCE),
                                            ("Content-Length", "0")])
        return [b""]


def test_a_use_dpop_nonce_on_the_second_of_two_challenges_is_answered_with_the_nonce():
    auth = DPoPAuthServer()
    resource = NonceResource(auth)
    with auth, resource.http:
        try:
            with minimcp.connect(resource.url, auth=oauth(dpop=True), timeout=30) as client:
                assert client.call_tool("read").text == "read x"
        finally:
            resource.app.close()
    assert resource.nonce_refusals == 1  # once, then the proofs carried the nonce
    assert len(auth.calls("/token")) == 1  # and no new login for a refusal that asked only for a nonce


def test_the_challenge_that_answers_the_request_is_the_one_with_the_error():
    from minimcp.client.auth.authorizer import _main_challenge

    both = 'Bearer resource_metadata="https://mcp.example/rm", scope="a", DPoP error="use_dpop_nonce", algs="ES256"'
    chosen = _main_challenge(both, "DPoP token")
    assert chosen.scheme == "dpop" and chosen.params == {"error": "use_dpop_nonce", "algs": "ES256",
                                                         "resource_metadata": "https://mcp.example/rm", "scope": "a"}
    step_up = 'Bearer resource_metadata="https://mcp.example/rm", scope="a", DPoP error="insufficient_scope", algs="X"'
    assert _main_challenge(step_up, "DPoP token").params["error"] == "insufficient_scope"
    plain = 'Bearer realm="r", DPoP algs="ES256"'
    assert _main_challenge(plain, "DPoP token").scheme == "dpop"   # no error anywhere: the scheme used
    assert _main_challenge(plain, "Bearer token").scheme == "bearer"
    assert _main_challenge(plain, None).scheme == "bearer"          # nothing sent yet: the first
    assert _main_challenge('Basic realm="r", DPoP error="invalid_token"', None).scheme == "dpop"
    assert _main_challenge("", None) == ("bearer", {})
