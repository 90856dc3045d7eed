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


def make_server() -> minimcp.Server:
    server = minimcp.Server("protected")

    @server.tool()
    def read(text: str = "x") -> str:
        """Read something."""
        return "read " + text

    @server.tool()
    def write(text: str = "x") -> str:
        """Write something (needs mcp:write)."""
        return "wrote " + text

    return server


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
        ("https://as.example/token", remote), ("http://127.0.0.1:5/x", remote), ("http://127.1:5/x", remote),
        ("http://0x7f000001/x", remote), ("http://localhost:5/x", remote), ("http://[::1]:5/x", remote),
        ("http://[::ffff:127.0.0.1]:5/x", remote), ("HTTPS://AS.EXAMPLE/x", remote),
        ("https://10.0.0.1/x", loopback),     # a loopback server (tests, a local proxy) may name its network
        ("https://169.254.169.254/x", None),  # a URL the user gave: the https rule only
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
