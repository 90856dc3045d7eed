"""End to end: the minimcp client logs in to a minimcp server through a real authorization server.

Nothing here is ours but the two ends: oidc-provider (npm, OpenID-certified; tests/oidc/README.md)
is the authorization server, a minimcp server protected by ``ProtectedResource`` with the JWT
verifier (and, again, with the introspection verifier) is the resource server, and
``minimcp.connect(url, auth=OAuth(...))`` is the client. The person at the browser is the test:
a ``webbrowser`` controller registered for the test (the standard library's own hook, what
``OAuth()`` opens the authorization URL with) follows the URL with ``requests``, signs in and
consents on the provider's own pages, and delivers the redirect to the client's 127.0.0.1
redirect listener, as a browser would; or the same person is ``OAuth(browser=...)``, handing
the redirected URL back. The provider's event log (provider.mjs) tells which metadata,
registrations, authorizations and grants it served.

The flow, step by step: 401 -> RFC 9728 metadata -> the provider's metadata -> dynamic client
registration -> authorization code with PKCE S256 and ``resource`` -> a tool call as ``alice``;
a stored token past its expiry -> a refresh_token grant, no browser; a tool needing a further
scope -> 403 -> a second authorization with the union of the scopes -> the call succeeds.
Then a service (client credentials, a client the provider knows), and bad input: a forged
``state`` on the redirect, a provider paused (it never answers) and then stopped mid-way.
Last, a provider that pins each client to its registered scope (oidc-provider's default): the
step-up still succeeds, on a registration made with ``scopes_supported`` or on a new one.
"""

import contextlib
import os
import signal
import time
import webbrowser
from typing import Callable, Dict, Iterator, List, Optional, Set
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from oidc.provider import RESOURCE_SERVER, SERVICE, OIDCProvider, running

import minimcp
from minimcp import Context, Server
from minimcp.client.auth import AuthError, ClientCredentials, MemoryTokenStore, OAuth
from minimcp.client.auth.flows import DEFAULT_REDIRECT
from minimcp.server.auth.protection import ProtectedResource
from minimcp.server.auth.verifiers import IntrospectionVerifier, JWTVerifier
from minimcp.server.http.wsgiserver import BackgroundServer

#: Seconds any one client call may take here: nothing in these tests may hang.
TIMEOUT = 20.0


def notes_server() -> Server:
    """``whoami`` needs ``notes:read`` (what the 401 asks for); ``write_note`` needs ``notes:write`` too."""
    server = Server("notes")

    @server.tool(scopes=["notes:read"])
    def whoami(ctx: Context) -> dict:
        """Who the token says is calling."""
        return {"subject": ctx.principal.subject, "client": ctx.principal.client_id,
                "scopes": sorted(ctx.principal.scopes)}

    @server.tool(scopes=["notes:write"])
    def write_note(ctx: Context, text: str) -> str:
        """Write a note (needs notes:write)."""
        return f"{ctx.principal.subject} wrote {text!r}"

    return server


class Served(str):
    """The MCP URL of a running protected server; ``requests`` lists the ``(method, path)`` it served."""

    requests: List[tuple]


@contextlib.contextmanager
def protected(provider: OIDCProvider, verifier: str, path: str = "/mcp") -> Iterator[Served]:
    """``notes_server()`` on a free 127.0.0.1 port, protected by the ``"jwt"`` or ``"introspection"``
    verifier, its authorization server ``provider``; the MCP URL."""
    slot = {}
    seen: List[tuple] = []

    def app(environ, start_response):
        seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"]))
        return slot["app"](environ, start_response)

    running = BackgroundServer(app)
    url = Served(running.url + path)
    url.requests = seen
    if verifier == "jwt":
        check = JWTVerifier(provider.issuer, url)
    else:
        check = IntrospectionVerifier(provider.endpoint("introspection"), *RESOURCE_SERVER, audience=url,
                                      issuer=provider.issuer, cache_seconds=0)
    auth = ProtectedResource(check, resource=url, authorization_servers=[provider.issuer],
                             scopes_supported=["notes:read", "notes:write"], required_scopes=["notes:read"])
    slot["app"] = notes_server().wsgi_app(path=path, auth=auth)
    try:
        with running:
            yield url
    finally:
        slot["app"].close()


class Person:
    """The user at the browser: signs in as ``login`` and consents on the provider's pages.

    ``open(url)`` is what ``webbrowser.open`` calls (see :func:`browser`); it delivers the
    redirect to the client's loopback listener with a GET, as a browser would. ``tamper``
    changes the redirect's query before it is delivered. ``authorizations`` are the
    queries of the authorization URLs opened.
    """

    def __init__(self, provider: OIDCProvider, login: str = "alice",
                 tamper: Optional[Callable[[Dict[str, str]], None]] = None) -> None:
        self.provider, self.login, self.tamper = provider, login, tamper
        self.authorizations: List[Dict[str, str]] = []
        self.delivered: List[int] = []

    def redirected(self, url: str) -> str:
        """Sign in and consent for the authorization ``url``; the URL the provider redirects to."""
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        self.authorizations.append(query)
        back = self.provider.play_browser(url, self.login, query["redirect_uri"])
        if self.tamper is not None:
            self.tamper(back)
        return query["redirect_uri"] + "?" + urlencode(back)

    def open(self, url: str, new: int = 0, autoraise: bool = True) -> bool:
        """``webbrowser``'s controller interface: log in, then deliver the redirect to the listener."""
        try:
            redirected = self.redirected(url)
        except requests.ConnectionError:  # the provider is down: the browser shows an error page
            self.delivered.append(None)
            return True
        self.delivered.append(requests.get(redirected, timeout=10).status_code)
        return True

    open_new = open_new_tab = open


@pytest.fixture
def browser() -> Iterator[Callable[[Person], None]]:
    """``browser(person)`` makes ``person`` the browser ``webbrowser.open`` drives, for this test."""
    name = "minimcp-e2e-person"

    def use(person: Person) -> None:
        webbrowser.register(name, None, person, preferred=True)

    yield use
    webbrowser._browsers.pop(name, None)  # the standard library keeps no public way to unregister
    while name in (webbrowser._tryorder or []):
        webbrowser._tryorder.remove(name)


def stored_tokens(store: MemoryTokenStore) -> List[dict]:
    return [value for key, value in store.items() if key[0] == "token"]


def expire_stored_token(store: MemoryTokenStore) -> None:
    """Move the stored token's expiry to the past: what a later run finds after its lifetime."""
    [(key, value)] = [(key, value) for key, value in store.items() if key[0] == "token"]
    store.save(key, dict(value, expires_at=time.time() - 1))


# -- the whole flow -----------------------------------------------------------------------------

@pytest.mark.parametrize("verifier, redirect", [("jwt", "listener"), ("introspection", "browser=")])
def test_login_call_refresh_and_step_up_against_oidc_provider(oidc_provider, browser, verifier, redirect):
    """The whole flow, with the JWT verifier and the redirect through the loopback listener, and with
    the introspection verifier and the redirect handed back by ``OAuth(browser=...)``."""
    path = "/mcp" if verifier == "jwt" else "/opaque/mcp"  # the provider issues opaque tokens for "opaque"
    with protected(oidc_provider, verifier, path) as url:
        alice = Person(oidc_provider)
        store = MemoryTokenStore()

        def oauth() -> OAuth:  # one per run of a script: only the store carries over
            if redirect == "listener":
                return OAuth(store=store, timeout=TIMEOUT, http_timeout=TIMEOUT)
            return OAuth(store=store, browser=alice.redirected, http_timeout=TIMEOUT)

        if redirect == "listener":
            browser(alice)
        before = len(oidc_provider.events())

        # 1. the first run: 401 -> RFC 9728 metadata -> the provider's metadata -> registration
        #    -> authorization code with PKCE S256 and resource -> the tool call
        with minimcp.connect(url, auth=oauth(), timeout=TIMEOUT) as client:
            who = client.call_tool("whoami").structured
        assert url.requests[:2] == [("POST", path), ("GET", "/.well-known/oauth-protected-resource" + path)]
        [first] = alice.authorizations
        [registered] = oidc_provider.wait_for_events(1, "registration_create.success", client_id=first["client_id"])
        if redirect == "listener":
            assert alice.delivered == [200]  # the client's loopback listener took the redirect
            assert first["redirect_uri"].startswith("http://127.0.0.1:") and first["redirect_uri"].endswith("/callback")
        assert first["code_challenge_method"] == "S256" and len(first["code_challenge"]) == 43
        assert first["resource"] == url and first["response_type"] == "code" and first["state"]
        assert set(first["scope"].split()) == {"notes:read", "offline_access"} and first["prompt"] == "consent"
        assert who["subject"] == "alice" and who["client"] == first["client_id"]
        assert "notes:read" in who["scopes"] and "notes:write" not in who["scopes"]
        [code] = oidc_provider.wait_for_events(1, "grant.success", client_id=first["client_id"],
                                               grant_type="authorization_code")
        assert code["resource"] == url
        # the client's first request to the provider: its RFC 8414 metadata (it serves that too)
        assert oidc_provider.events()[before] == dict(event="metadata", path="/.well-known/oauth-authorization-server",
                                                      status=200)
        [token] = stored_tokens(store)
        assert token["refresh_token"] and token["issuer"] == oidc_provider.issuer and token["resource"] == url

        # 2. a later run finds the token expired: it refreshes it (no browser) and calls
        expire_stored_token(store)
        with minimcp.connect(url, auth=oauth(), timeout=TIMEOUT) as client:
            assert client.call_tool("whoami").structured["subject"] == "alice"
            [refresh] = oidc_provider.wait_for_events(1, "grant.success", client_id=first["client_id"],
                                                      grant_type="refresh_token")
            assert refresh["resource"] == url
            assert len(alice.authorizations) == 1  # no second login for a refresh
            [refreshed] = stored_tokens(store)
            assert refreshed["access_token"] != token["access_token"] and refreshed["expires_at"] > time.time()

            # 3. a tool needing a further scope: 403 -> step-up with the union -> the call goes through
            assert client.call_tool("write_note", {"text": "hi"}).text == "alice wrote 'hi'"
            assert client.call_tool("whoami").structured["subject"] == "alice"  # the session lives on
        assert len(alice.authorizations) == 2
        second = alice.authorizations[1]
        assert second["client_id"] == first["client_id"]  # the registration is reused
        assert {"notes:read", "notes:write"} <= set(second["scope"].split())
        assert second["resource"] == url and second["state"] != first["state"]
        assert oidc_provider.wait_for_events(2, "grant.success", client_id=first["client_id"],
                                             grant_type="authorization_code")[1]["resource"] == url
        [wider] = stored_tokens(store)
        assert {"notes:read", "notes:write"} <= set(wider["scopes"])
        grants = [e["grant_type"] for e in oidc_provider.events("grant.success", client_id=first["client_id"])]
        assert grants == ["authorization_code", "refresh_token", "authorization_code"]
        assert [e["event"] for e in oidc_provider.events()[before:] if e["event"] == "registration_create.success"] \
            == ["registration_create.success"]  # registered once, in the first run


# -- a service: client credentials ----------------------------------------------------------------

def test_client_credentials_for_a_service_call_and_step_up(oidc_provider):
    with protected(oidc_provider, "jwt") as url:
        auth = ClientCredentials(*SERVICE, store=MemoryTokenStore(), http_timeout=TIMEOUT)
        with minimcp.connect(url, auth=auth, timeout=TIMEOUT) as client:
            who = client.call_tool("whoami").structured
            assert who == {"subject": "service", "client": "service", "scopes": ["notes:read"]}
            # a further scope: the 403 steps up with a second grant for the union, no person involved
            assert client.call_tool("write_note", {"text": "x"}).text == "service wrote 'x'"
        grants = oidc_provider.wait_for_events(2, "grant.success", client_id="service", resource=url)
        assert [(g["grant_type"], set(g["scope"].split())) for g in grants] == [
            ("client_credentials", {"notes:read"}), ("client_credentials", {"notes:read", "notes:write"})]


# -- bad input, end to end ------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["listener", "browser="])
def test_a_redirect_with_a_wrong_state_is_refused_and_nothing_is_stored(oidc_provider, browser, how):
    with protected(oidc_provider, "jwt") as url:
        forger = Person(oidc_provider, tamper=lambda query: query.update(state="forged-" + query["state"]))
        store = MemoryTokenStore()
        if how == "listener":
            browser(forger)
            auth = OAuth(store=store, timeout=TIMEOUT, http_timeout=TIMEOUT)
        else:
            auth = OAuth(store=store, browser=forger.redirected, http_timeout=TIMEOUT)
        with pytest.raises(AuthError, match="state does not match"):
            minimcp.connect(url, auth=auth, timeout=TIMEOUT)
        [asked] = forger.authorizations
        assert oidc_provider.wait_for_events(1, "authorization.success", client_id=asked["client_id"])
        assert not stored_tokens(store) and not [key for key, _ in store.items() if key[0] == "server"]
        # the code was never redeemed: the provider's token endpoint saw nothing from this client
        assert oidc_provider.events("grant.success", client_id=asked["client_id"]) == []
        assert oidc_provider.events("grant.error", client_id=asked["client_id"]) == []


@pytest.fixture
def own_provider() -> Iterator[OIDCProvider]:
    """An oidc-provider of this test's own, to pause and to stop."""
    yield from running()


def test_a_provider_paused_then_stopped_mid_way_gives_clear_errors_and_loses_nothing(own_provider, browser):
    provider = own_provider
    with protected(provider, "jwt") as url:
        alice = Person(provider)
        browser(alice)
        store = MemoryTokenStore()

        def later_run(http_timeout: float = TIMEOUT) -> "minimcp.Client":
            """A new run of the script: a new OAuth object, the same store."""
            return minimcp.connect(url, auth=OAuth(store=store, timeout=0.5, http_timeout=http_timeout),
                                   timeout=TIMEOUT)

        with minimcp.connect(url, auth=OAuth(store=store, timeout=0.5, http_timeout=TIMEOUT),
                             timeout=TIMEOUT) as client:
            assert client.call_tool("whoami").structured["subject"] == "alice"
            [kept] = stored_tokens(store)

            # paused: it accepts connections and never answers; a later run must refresh: it times out
            expire_stored_token(store)
            os.kill(provider.proc.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                with pytest.raises(AuthError, match="got no answer within 0.5 s; is the authorization server up"):
                    later_run(http_timeout=0.5)
                assert time.monotonic() - started < 10
            finally:
                os.kill(provider.proc.pid, signal.SIGCONT)
            [still] = stored_tokens(store)  # the refresh token survived the failed attempt
            assert still["refresh_token"] == kept["refresh_token"]
            with later_run() as again:  # ... and works once the provider is back
                assert again.call_tool("whoami").structured["subject"] == "alice"
            assert provider.wait_for_events(1, "grant.success", grant_type="refresh_token")
            [kept] = stored_tokens(store)  # the provider rotates a public client's refresh token

            # stopped: the step-up's login cannot happen; the call fails saying so, the session lives on
            provider.stop()
            started = time.monotonic()
            with pytest.raises(AuthError, match="no authorization response reached .* within 0.5 s"):
                client.call_tool("write_note", {"text": "x"})
            assert time.monotonic() - started < 10
            assert alice.delivered[-1] is None  # the browser could not reach the provider
            assert client.call_tool("whoami").structured["subject"] == "alice"
        expire_stored_token(store)
        with pytest.raises(AuthError, match=f"{provider.issuer}.* failed") as failed:
            later_run()
        assert "Connection refused" in str(failed.value) and str(failed.value).endswith("is the authorization server up?")
        [left] = stored_tokens(store)
        assert left["refresh_token"] == kept["refresh_token"]


# -- a provider that pins a registered client to its registered scope (oidc-provider's default) ---

def scopes_of(event: Dict[str, object], field: str) -> Set[str]:
    """The scopes an event's ``field`` lists (``registered_scope``, ``granted_scope``, ``scope``)."""
    return set(str(event.get(field) or "").split())


def test_step_up_against_a_provider_that_pins_registered_scopes(oidc_provider_pinning, browser):
    """Issue 29: oidc-provider refuses a scope outside a client's registration (RFC 7591 §2 ``scope``).
    A client that registered with only the first challenge's scope could not step up to notes:write;
    minimcp registers with the server's scopes_supported too, so the step-up works, on one registration,
    and each token request still asks only for what the challenge names (scope minimization)."""
    provider = oidc_provider_pinning
    assert provider.pin_scopes
    with protected(provider, "jwt") as url:
        alice = Person(provider)
        browser(alice)
        store = MemoryTokenStore()
        before = len(provider.events())  # the provider is the module's: earlier tests' events come first
        with minimcp.connect(url, auth=OAuth(store=store, timeout=TIMEOUT, http_timeout=TIMEOUT),
                             timeout=TIMEOUT) as client:
            who = client.call_tool("whoami").structured
            assert "notes:write" not in who["scopes"]
            # 403 insufficient_scope -> a second authorization for the union, accepted by the provider
            assert client.call_tool("write_note", {"text": "hi"}).text == "alice wrote 'hi'"
        first, second = alice.authorizations
        assert alice.delivered == [200, 200]
        assert second["client_id"] == first["client_id"]
        assert set(first["scope"].split()) == {"notes:read", "offline_access"}
        assert set(second["scope"].split()) == {"notes:read", "notes:write", "offline_access"}
        [registered] = provider.wait_for_events(1, "registration_create.success", client_id=first["client_id"])
        assert [e for e in provider.events()[before:] if e["event"] == "registration_create.success"] \
            == [registered]  # one registration, for both authorizations
        # registered for everything the provider lists, so the provider pins it to a scope set with notes:write
        assert set(provider.metadata["scopes_supported"]) <= scopes_of(registered, "registered_scope")
        # the access tokens' scopes at the resource (offline_access gave a refresh token, not a token scope)
        grants = provider.wait_for_events(2, "grant.success", client_id=first["client_id"])
        assert [(g["grant_type"], scopes_of(g, "granted_scope")) for g in grants] == [
            ("authorization_code", {"notes:read"}), ("authorization_code", {"notes:read", "notes:write"})]
        assert provider.events("authorization.error", client_id=first["client_id"]) == []
        [token] = stored_tokens(store)
        assert token["refresh_token"] and {"notes:read", "notes:write"} <= set(token["scopes"])


@pytest.mark.parametrize("recorded", [False, True], ids=["scope-unrecorded", "scope-recorded"])
def test_a_kept_registration_pinned_to_fewer_scopes_is_replaced_for_a_step_up(oidc_provider_pinning, recorded):
    """A registration kept from before (pinned by the provider to ``notes:read offline_access``):
    the first call reuses it; the step-up to notes:write registers again (RFC 7591 §2). When the
    store did not record the registration's scope (earlier minimcp versions kept none) the provider's
    ``invalid_scope`` is what tells the client; when it did, the client registers again before asking."""
    provider = oidc_provider_pinning
    with protected(provider, "jwt") as url:
        alice = Person(provider, login="bob")
        redirect_uri = DEFAULT_REDIRECT  # what OAuth(browser=...) registers by default
        old = provider.register(redirect_uri, scope="notes:read offline_access")
        assert scopes_of(old, "scope") == {"notes:read", "offline_access"}  # the provider pins it
        kept = {"client_id": old["client_id"], "client_secret": None, "method": "none", "redirect_uris": [redirect_uri]}
        if recorded:
            kept["scope"] = ["notes:read", "offline_access"]
        store = MemoryTokenStore()
        store.save(("client", provider.issuer), kept)
        auth = OAuth(store=store, browser=alice.redirected, http_timeout=TIMEOUT)
        with minimcp.connect(url, auth=auth, timeout=TIMEOUT) as client:
            assert client.call_tool("whoami").structured["client"] == old["client_id"]  # the kept one, reused
            assert client.call_tool("write_note", {"text": "hi"}).text == "bob wrote 'hi'"
            who = client.call_tool("whoami").structured
        new_id = who["client"]
        assert new_id != old["client_id"] and "notes:write" in who["scopes"]
        [registered] = provider.wait_for_events(1, "registration_create.success", client_id=new_id)
        assert {"notes:read", "notes:write"} <= scopes_of(registered, "registered_scope")
        asked = [(a["client_id"], set(a["scope"].split())) for a in alice.authorizations]
        refused = provider.events("authorization.error", client_id=old["client_id"])
        if recorded:  # the client knew the kept registration could not ask for notes:write
            assert asked == [(old["client_id"], {"notes:read", "offline_access"}),
                             (new_id, {"notes:read", "notes:write", "offline_access"})]
            assert refused == []
        else:  # the provider refused the kept registration; the client registered again and retried once
            assert asked == [(old["client_id"], {"notes:read", "offline_access"}),
                             (old["client_id"], {"notes:read", "notes:write", "offline_access"}),
                             (new_id, {"notes:read", "notes:write", "offline_access"})]
            assert [r["error"] for r in refused] == ["invalid_scope"]
        grants = provider.wait_for_events(1, "grant.success", client_id=new_id)
        assert [(g["grant_type"], scopes_of(g, "granted_scope")) for g in grants] == [
            ("authorization_code", {"notes:read", "notes:write"})]
        [token] = stored_tokens(store)
        assert {"notes:read", "notes:write"} <= set(token["scopes"])
        assert store.load(("client", provider.issuer))["client_id"] == new_id  # kept for the next run
