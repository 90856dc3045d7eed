"""The OAuth client (minimcp.client.auth) against a real authorization server and protected server on 127.0.0.1.

The servers are tests/oauth_fixture.py: WSGI apps on minimcp's threaded
server, real sockets, real HTTP. The "browser" is the test itself: it
follows the authorization URL with requests, as a person's browser would.
"""

import os
import socket
import stat
import subprocess
import sys
import textwrap
import time

import pytest
import requests
from oauth_fixture import AuthServer, protect

import minimcp
from minimcp.client.auth import AuthError, ClientCredentials, FileTokenStore, MemoryTokenStore, OAuth
from minimcp.client.auth.discovery import parse_challenges
from minimcp.client.auth.redirect import RedirectListener
from minimcp.client.auth.store import default_folder
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import free_port, wait_until_listening

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


class Protected:
    """An authorization server and a protected MCP server, running."""

    def __init__(self, **options):
        self.auth = AuthServer(**{k: v for k, v in options.items() if k != "tool_scopes"})
        self.app = make_server().wsgi_app()
        self.http = BackgroundServer(protect(self.app, self.auth, lambda: self.http.url,
                                             tool_scopes=options.get("tool_scopes")))
        self.url = self.http.url + "/mcp"

    def __enter__(self):
        self.auth.__enter__()
        self.http.start()
        return self

    def __exit__(self, *exc):
        self.http.stop()
        self.app.close()
        self.auth.__exit__()


def follow(authorization_url: str) -> str:
    """A browser that logs in at once: the redirect's Location, not followed."""
    return requests.get(authorization_url, allow_redirects=False, timeout=10).headers["Location"]


def oauth(**options) -> OAuth:
    options.setdefault("store", MemoryTokenStore())
    options.setdefault("browser", follow)
    return OAuth(**options)


def tokens_in(store) -> list:
    return [value for key, value in store.items() if key[0] == "token"]


def test_the_authorization_code_flow_from_401_to_a_tool_call():
    with Protected() as running:
        auth = oauth()
        with minimcp.connect(running.url, auth=auth, timeout=30) as client:
            assert client.call_tool("read", {"text": "hi"}).text == "read hi"
        register, authorize = running.auth.calls("/register"), running.auth.calls("/authorize")
        assert len(register) == 1 and register[0]["application_type"] == "native"
        assert len(authorize) == 1 and authorize[0]["scope"] == "mcp:read"
        assert "prompt" not in authorize[0]  # no offline_access asked for: no consent forced
        assert authorize[0]["resource"] == running.url and authorize[0]["code_challenge_method"] == "S256"
        [token_request] = running.auth.calls("/token")
        assert token_request["resource"] == running.url and token_request["code_verifier"]
        [stored] = tokens_in(auth.store)
        assert running.auth.check(stored["access_token"]) is not None and stored["resource"] == running.url


def test_a_plain_string_is_a_bearer_token():
    with Protected() as running:
        running.auth.add_client("svc", "s3", [])
        issued = requests.post(running.auth.url + "/token", auth=("svc", "s3"), timeout=10,
                               data={"grant_type": "client_credentials", "resource": running.url}).json()
        with minimcp.connect(running.url, auth=issued["access_token"], timeout=30) as client:
            assert client.call_tool("read").text == "read x"
        assert len(running.auth.calls("/token")) == 1  # ours: the client asked for no token of its own


def test_client_credentials_for_a_service():
    with Protected() as running:
        running.auth.add_client("svc", "s3cret", [])
        with minimcp.connect(running.url, auth=ClientCredentials("svc", client_secret="s3cret"), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
        [request] = running.auth.calls("/token")
        assert request["grant_type"] == "client_credentials" and request["resource"] == running.url
        assert not running.auth.calls("/authorize")


def test_over_the_2024_11_05_http_sse_transport():
    with Protected() as running:
        with minimcp.connect(running.http.url + "/sse", auth=oauth(), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
        assert len(running.auth.calls("/authorize")) == 1


def test_step_up_on_403_insufficient_scope_asks_for_the_union():
    with Protected(tool_scopes={"write": "mcp:write"}) as running:
        with minimcp.connect(running.url, auth=oauth(), timeout=30) as client:
            assert client.call_tool("read").text == "read x"
            assert client.call_tool("write").text == "wrote x"
        first, second = running.auth.calls("/authorize")
        assert first["scope"] == "mcp:read" and second["scope"].split() == ["mcp:read", "mcp:write"]


def test_refresh_on_401_reuses_the_refresh_token_without_a_new_login():
    with Protected() as running:
        with minimcp.connect(running.url, auth=oauth(), timeout=30) as client:
            client.call_tool("read")
            running.auth.revoke_access_tokens()
            assert client.call_tool("read", {"text": "again"}).text == "read again"
        assert len(running.auth.calls("/authorize")) == 1
        assert [c["grant_type"] for c in running.auth.calls("/token")] == ["authorization_code", "refresh_token"]


def test_refresh_before_expiry():
    with Protected(token_lifetime=20) as running:  # inside the 30 s margin: every request refreshes first
        with minimcp.connect(running.url, auth=oauth(), timeout=30) as client:
            client.call_tool("read")
        grants = [c["grant_type"] for c in running.auth.calls("/token")]
        assert grants[0] == "authorization_code" and "refresh_token" in grants[1:]
        assert len(running.auth.calls("/authorize")) == 1


def test_a_stored_token_is_reused_by_the_next_connection(tmp_path):
    with Protected() as running:
        store = FileTokenStore(str(tmp_path / "tokens"))
        with minimcp.connect(running.url, auth=oauth(store=store), timeout=30) as client:
            client.call_tool("read")

        def no_browser(url):
            raise AssertionError("a second login was started")

        with minimcp.connect(running.url, auth=oauth(store=store, browser=no_browser), timeout=30) as client:
            assert client.call_tool("read").text == "read x"


def test_state_mismatch_is_refused_and_nothing_is_stored():
    with Protected() as running:
        auth = oauth(browser=lambda url: follow(url).replace("state=", "state=forged"))
        with pytest.raises(AuthError, match="state does not match"):
            minimcp.connect(running.url, auth=auth, timeout=30)
        assert not tokens_in(auth.store) and not running.auth.calls("/token")


def test_a_wrong_iss_in_the_redirect_is_refused():
    with Protected(wrong_iss=True) as running:
        with pytest.raises(AuthError, match="issuer 'https://evil.example'"):
            minimcp.connect(running.url, auth=oauth(), timeout=30)
        assert not running.auth.calls("/token")


def test_malformed_authorization_server_metadata_is_a_clear_error():
    with Protected(malformed_metadata=True) as running:
        with pytest.raises(AuthError, match="metadata .* is malformed"):
            minimcp.connect(running.url, auth=oauth(), timeout=30)
        assert not running.auth.calls("/authorize")


def test_a_token_response_without_access_token_is_a_clear_error_and_nothing_is_stored():
    with Protected(omit_access_token=True) as running:
        auth = oauth()
        with pytest.raises(AuthError, match="without an 'access_token'; nothing was stored"):
            minimcp.connect(running.url, auth=auth, timeout=30)
        assert not tokens_in(auth.store)


def test_an_authorization_server_that_never_answers_times_out():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # connections are accepted by the kernel, never answered
    issuer = f"http://127.0.0.1:{silent.getsockname()[1]}"
    auth_server = AuthServer()
    app = make_server().wsgi_app()
    http = BackgroundServer(protect(app, auth_server, lambda: http.url, metadata_auth_server=lambda: issuer))
    try:
        with http:
            started = time.monotonic()
            with pytest.raises(AuthError, match="got no answer within 0.5 s"):
                minimcp.connect(http.url + "/mcp", auth=oauth(http_timeout=0.5), timeout=30)
            assert time.monotonic() - started < 10
    finally:
        app.close()
        silent.close()


def test_the_redirect_listener_receives_the_code_and_times_out_clearly():
    with RedirectListener() as listener:
        assert listener.redirect_uri.startswith("http://127.0.0.1:")
        assert requests.get(listener.redirect_uri.replace("/callback", "/favicon.ico"), timeout=5).status_code == 404
        page = requests.get(listener.redirect_uri + "?code=abc&state=xyz", timeout=5)
        assert page.status_code == 200 and b"close this window" in page.content
        assert listener.wait(5).endswith("/callback?code=abc&state=xyz")
    with RedirectListener() as listener:
        with pytest.raises(AuthError, match="no authorization response reached .* within 0.2 s"):
            listener.wait(0.2)


def test_the_token_goes_only_to_the_origin_it_was_issued_for():
    seen = []

    def echo(environ, start_response):
        seen.append(environ.get("HTTP_AUTHORIZATION"))
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    with Protected() as running, BackgroundServer(echo) as other:
        auth = oauth()
        with minimcp.connect(running.url, auth=auth, timeout=30) as client:
            client.call_tool("read")
        with requests.Session() as http:
            http.auth = auth
            http.get(other.url + "/anything", timeout=5)
        assert seen == [None]


def test_the_trace_shows_the_oauth_requests_with_their_secrets_redacted(capfd, monkeypatch):
    monkeypatch.setenv("MINIMCP_TRACE", "1")
    with Protected() as running:
        auth = oauth()
        with minimcp.connect(running.url, auth=auth, timeout=30) as client:
            client.call_tool("read")
        [stored] = tokens_in(auth.store)
    err = capfd.readouterr().err
    assert "oauth → POST " + running.auth.url + "/token" in err and "[redacted]" in err
    assert stored["access_token"] not in err and stored["refresh_token"] not in err
    assert "code_verifier=%5Bredacted%5D" in err or "code_verifier=[redacted]" in err


def test_the_file_store_writes_mode_0600_in_the_user_config_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_folder() == str(tmp_path / "config" / "minimcp" / "oauth")
    store = FileTokenStore()
    store.save(("token", "https://as.example", "https://mcp.example/mcp"), {"access_token": "t"})
    [name] = os.listdir(store.folder)
    assert stat.S_IMODE(os.stat(os.path.join(store.folder, name)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.folder).st_mode) == 0o700
    assert store.load(("token", "https://as.example", "https://mcp.example/mcp")) == {"access_token": "t"}
    assert store.load(("token", "https://as.example", "https://other.example/mcp")) is None
    store.delete(("token", "https://as.example", "https://mcp.example/mcp"))
    assert list(store.items()) == []


def test_www_authenticate_challenges_are_parsed():
    [bearer, dpop] = parse_challenges('Bearer error="insufficient_scope", scope="a b", '
                                      'resource_metadata="https://x/.well-known/y", DPoP algs="ES256"')
    assert bearer.scheme == "bearer" and bearer.scopes == ["a", "b"]
    assert bearer.params["resource_metadata"] == "https://x/.well-known/y"
    assert dpop.scheme == "dpop" and dpop.params == {"algs": "ES256"}


HEADLESS = textwrap.dedent("""
    import sys
    import minimcp
    from minimcp.client.auth import OAuth

    with minimcp.connect(sys.argv[1], auth=OAuth(headless=True, timeout=20), timeout=60) as client:
        print(client.call_tool("read", {"text": "headless"}).text, flush=True)
""")


def test_headless_mode_prints_the_url_and_reads_the_redirect_back(tmp_path):
    with Protected() as running:
        env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONPATH=ROOT)
        child = subprocess.Popen([sys.executable, "-c", HEADLESS, running.url], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        try:
            url = None
            for _ in range(50):  # the prompt is a few lines long
                line = child.stderr.readline()
                if not line:
                    break
                if line.strip().startswith(running.auth.url + "/authorize?"):
                    url = line.strip()
                    break
            assert url, "no authorization URL printed"
            child.stdin.write(follow(url) + "\n")
            child.stdin.flush()
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == 0, err
        assert out.strip() == "read headless"
        files = os.listdir(tmp_path / "minimcp" / "oauth")
        assert any(f.startswith("token-") for f in files)
        assert all(stat.S_IMODE(os.stat(tmp_path / "minimcp" / "oauth" / f).st_mode) == 0o600 for f in files)


BROWSER = textwrap.dedent("""
    import sys
    import requests
    requests.get(sys.argv[1], timeout=10)  # follows the redirect to the loopback listener, as a browser would
""")


def test_the_default_flow_opens_the_browser_and_takes_the_code_on_a_loopback_listener(tmp_path):
    with Protected() as running:
        browser = tmp_path / "browser.py"
        browser.write_text(BROWSER)
        script = "import sys, minimcp\nfrom minimcp.client.auth import OAuth\n" \
                 "with minimcp.connect(sys.argv[1], auth=OAuth(timeout=20), timeout=60) as c:\n" \
                 "    print(c.call_tool('read').text)\n"
        env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONPATH=ROOT,
                   BROWSER=f"{sys.executable} {browser} %s")
        done = subprocess.run([sys.executable, "-c", script, running.url], capture_output=True, text=True,
                              env=env, timeout=90)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "read x"
        [authorize] = running.auth.calls("/authorize")
        assert authorize["redirect_uri"].startswith("http://127.0.0.1:")


# -- interop: the official Python SDK as the protected server -----------------------------------------

SDK_SERVER = os.path.join(ROOT, "tests", "interop", "sdk_protected_server.py")


def test_interop_the_official_python_sdk_protected_server(official_sdk):
    with AuthServer() as auth_server:
        port = free_port()
        child = subprocess.Popen([official_sdk, SDK_SERVER, str(port), auth_server.url], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        try:
            wait_until_listening(child, port)
            url = f"http://127.0.0.1:{port}/mcp"
            with minimcp.connect(url, auth=oauth(), timeout=30) as client:
                assert client.call_tool("echo", {"text": "hi"}).text == "sdk says hi"
            [authorize] = auth_server.calls("/authorize")
            assert authorize["resource"] == url and authorize["scope"] == "mcp:read"
        finally:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            child.stderr.close()


# -- host config entries and the command line -----------------------------------------------------------

def test_a_host_config_entry_brings_its_oauth_client_settings(tmp_path):
    from minimcp.client.auth.flows import DEFAULT_REDIRECT
    from minimcp.client.config import parse_entry

    claude = parse_entry({"type": "http", "url": "https://x/mcp", "oauth": {"clientId": "cc", "callbackPort": 8080,
                                                                           "scopes": "a b"}})
    cursor = parse_entry({"url": "https://x/mcp", "auth": {"CLIENT_ID": "cu", "CLIENT_SECRET": "s", "scopes": ["a"]}})
    assert claude["oauth"] == {"client_id": "cc", "callback_port": 8080, "scopes": ["a", "b"]}
    assert cursor["oauth"] == {"client_id": "cu", "client_secret": "s", "scopes": ["a"]}
    with Protected() as running:
        running.auth.add_client("configured", "its-secret", [DEFAULT_REDIRECT])
        config = tmp_path / "mcp.json"
        config.write_text('{"mcpServers": {"remote": {"url": "%s", "auth": {"CLIENT_ID": "configured", '
                          '"CLIENT_SECRET": "${env:TEST_OAUTH_SECRET}"}}}}' % running.url)
        os.environ["TEST_OAUTH_SECRET"] = "its-secret"
        try:
            with minimcp.connect("remote", config=str(config), auth=oauth(), timeout=30) as client:
                assert client.call_tool("read").text == "read x"
        finally:
            del os.environ["TEST_OAUTH_SECRET"]
        assert [c["client_id"] for c in running.auth.calls("/authorize")] == ["configured"]
        assert not running.auth.calls("/register")


def run_cli(env, *args, stdin=None):
    return subprocess.run([sys.executable, "-m", "minimcp", *args], capture_output=True, text=True, env=env,
                          input=stdin, timeout=90)


def test_minimcp_login_then_other_commands_reuse_the_token_then_logout(tmp_path):
    with Protected() as running:
        env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path), HOME=str(tmp_path), PYTHONPATH=ROOT)
        before = run_cli(env, "tools", running.url)
        assert before.returncode == 1 and f"run 'minimcp login {running.url}' first" in before.stderr
        child = subprocess.Popen([sys.executable, "-m", "minimcp", "login", running.url, "--headless"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                 text=True)
        try:
            url = next((line.strip() for line in iter(child.stderr.readline, "")
                        if line.strip().startswith(running.auth.url + "/authorize?")), None)
            assert url, "no authorization URL printed"
            out, err = child.communicate(follow(url) + "\n", timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == 0, err
        assert out.startswith(f"logged in to {running.url} (authorization server {running.auth.url}; scopes: mcp:read")
        [token] = [t for t in running.auth.tokens]
        assert token not in out + err
        tools = run_cli(env, "call", running.url, "read", "text=cli")
        assert tools.returncode == 0 and tools.stdout.strip() == "read cli", tools.stderr
        assert len(running.auth.calls("/authorize")) == 1
        logout = run_cli(env, "logout", running.url)
        assert logout.returncode == 0 and logout.stdout.strip() == f"logged out of {running.url}"
        assert not [f for f in os.listdir(tmp_path / "minimcp" / "oauth") if f.startswith("token-")]
        after = run_cli(env, "tools", running.url)
        assert after.returncode == 1 and "needs a login" in after.stderr


def test_an_authorization_server_without_pkce_s256_is_refused():
    with Protected(pkce=False) as running:
        with pytest.raises(AuthError, match="does not list PKCE S256"):
            minimcp.connect(running.url, auth=oauth(), timeout=30)
        assert not running.auth.calls("/authorize")


def test_without_pyjwt_signing_fails_with_an_error_naming_the_extra():
    script = textwrap.dedent("""
        import sys
        sys.modules["jwt"] = None  # as if PyJWT were not installed: importing it raises ImportError
        from minimcp.client.auth import AuthError
        from minimcp.client.auth.signing import DPoPKey
        try:
            DPoPKey()
        except AuthError as exc:
            print(exc)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert "pip install 'PyJWT[crypto]>=2.8'" in done.stdout, done.stderr


def test_connect_trace_true_traces_the_oauth_requests_too(capfd, monkeypatch):
    monkeypatch.delenv("MINIMCP_TRACE", raising=False)
    with Protected() as running:
        with minimcp.connect(running.url, auth=oauth(), timeout=30, trace=True) as client:
            client.call_tool("read")
    err = capfd.readouterr().err
    assert "oauth → GET " + running.http.url + "/.well-known/oauth-protected-resource/mcp" in err
    assert not any(token in err for token in running.auth.tokens)


def test_an_unreachable_server_is_still_connection_closed_with_oauth():
    port = free_port()  # nothing listens there now
    with pytest.raises(minimcp.ConnectionClosed, match="cannot reach the MCP server"):
        minimcp.connect(f"http://127.0.0.1:{port}/mcp", auth=OAuth(store=MemoryTokenStore()), timeout=5)
