"""Run oidc-provider (a certified OpenID / OAuth 2.1 server we did not write) for a test module.

Any test can ask for it (the fixture is in tests/conftest.py)::

    def test_something(oidc_provider):
        token = oidc_provider.client_credentials("files:read", resource=url)

The fixture installs ``oidc-provider`` into ``~/.cache/minimcp-tests/oidc`` the first time
(``npm install``; the test is skipped, saying why, only when npm cannot install it), starts
``provider.mjs`` under the Node the conformance suite installed (else the ``node`` on PATH)
on a free 127.0.0.1 port, and kills it by PID when the module's tests are done.
"""

import json
import os
import re
import shutil
import subprocess
import threading
import time
from html.parser import HTMLParser
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

from conftest import npm_package

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "minimcp-tests", "oidc")
VERSION = os.environ.get("MINIMCP_OIDC_PROVIDER_VERSION", "9.13.3")
#: Where .ci/conformance/setup.sh puts Node 22: $CF_HOME/node-bin, CF_HOME defaulting as it does there.
CONFORMANCE_HOME = os.environ.get("CF_HOME") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "mcp-conformance")
CONFORMANCE_NODE = os.path.join(CONFORMANCE_HOME, "node-bin")
START_TIMEOUT = 30.0
#: The prefix of provider.mjs's event lines on stderr.
EVENT = "minimcp-event "

#: The pre-registered clients of provider.mjs (id, secret).
RESOURCE_SERVER = ("mcp-server", "mcp-server-secret")
SERVICE = ("service", "service-secret")
SHORT_LIVED = ("short-lived", "short-lived-secret")


def node_env() -> Dict[str, str]:
    """The environment with the conformance suite's Node 22 first on PATH, when it is there."""
    env = dict(os.environ)
    if os.path.isdir(CONFORMANCE_NODE):
        env["PATH"] = CONFORMANCE_NODE + os.pathsep + env.get("PATH", "")
    return env


def install() -> str:
    """The cache folder with oidc-provider installed in it (npm install, once); skips when it cannot."""
    npm_package(CACHE, "oidc-provider", VERSION, env=node_env())
    # ESM resolves imports from the script's folder: the script runs from the cache.
    shutil.copyfile(os.path.join(HERE, "provider.mjs"), os.path.join(CACHE, "provider.mjs"))
    return CACHE


class OIDCProvider:
    """A running oidc-provider: its issuer, its metadata, and a few ways to get tokens from it."""

    def __init__(self, port: int = 0, pin_scopes: bool = False) -> None:
        """Start provider.mjs on ``port`` (0: a free one). ``pin_scopes``: a registered client may ask
        only for the scopes it registered with (oidc-provider's default, RFC 7591 §2 ``scope``);
        without it the registered ``scope`` is dropped, so any client can step up."""
        folder = install()
        env = node_env()
        env["OIDC_PORT"] = str(port)
        env["MINIMCP_OIDC_PIN_SCOPES"] = "1" if pin_scopes else "0"
        self.proc = subprocess.Popen(["node", "provider.mjs"], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr: List[str] = []
        first = self._first_line()
        self.issuer: str = first["issuer"]
        self.port: int = first["port"]
        #: Whether registered clients are pinned to their registered scope (as provider.mjs reports it).
        self.pin_scopes: bool = bool(first.get("pin_scopes"))
        self._drain = threading.Thread(target=self._read_stderr, name="oidc-stderr", daemon=True)
        self._drain.start()
        self.metadata: Dict[str, Any] = requests.get(self.issuer + "/.well-known/openid-configuration",
                                                     timeout=10).json()

    def _first_line(self) -> Dict[str, Any]:
        """The JSON line the provider prints once it listens (bounded wait)."""
        found: Dict[str, Any] = {}
        reader = threading.Thread(target=lambda: found.update(line=self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT)
        line = found.get("line")
        if not line:
            self.stop()
            raise RuntimeError(f"oidc-provider did not start within {START_TIMEOUT:g}s: "
                               f"{self.proc.stderr.read()[-2000:] if self.proc.stderr else ''}")
        return json.loads(line)

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line)

    def stop(self) -> None:
        """Kill the provider (by its PID) and reap it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    # -- tokens -------------------------------------------------------------------------------

    def endpoint(self, name: str) -> str:
        """An endpoint from the metadata: ``token``, ``introspection``, ``registration``, ``authorization``."""
        return self.metadata[f"{name}_endpoint"]

    @property
    def jwks_uri(self) -> str:
        """Where the provider's signing keys are."""
        return self.metadata["jwks_uri"]

    def client_credentials(self, scope: str, resource: str, client: Tuple[str, str] = SERVICE) -> Dict[str, Any]:
        """The token response of a client credentials grant (RFC 8707 ``resource`` included)."""
        response = requests.post(self.endpoint("token"), auth=client, timeout=10,
                                 data={"grant_type": "client_credentials", "scope": scope, "resource": resource})
        assert response.status_code == 200, response.text
        return response.json()

    def register(self, redirect_uri: str, **metadata: Any) -> Dict[str, Any]:
        """Dynamic client registration (RFC 7591): a public native client by default."""
        body = {"redirect_uris": [redirect_uri], "application_type": "native", "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "client_name": "minimcp test"}
        body.update(metadata)
        response = requests.post(self.endpoint("registration"), json=body, timeout=10)
        assert response.status_code == 201, response.text
        return response.json()

    def play_browser(self, authorization_url: str, login: str, redirect_uri: str) -> Dict[str, str]:
        """Be the user's browser: open ``authorization_url``, sign in as ``login`` and consent on the
        provider's own pages, and return the query of the redirect to ``redirect_uri``
        (``code``, ``state``, ``iss``), without following it."""
        browser = requests.Session()
        url = authorization_url
        for _ in range(12):  # authorize -> login page -> consent page -> back to the client
            response = browser.get(url, allow_redirects=False, timeout=10)
            while response.is_redirect:
                url = urljoin(url, response.headers["Location"])
                if url.startswith(redirect_uri):
                    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
                response = browser.get(url, allow_redirects=False, timeout=10)
            assert response.status_code == 200, response.text[:500]
            form = _Form.parse(response.text)
            fields = dict(form.fields)
            if fields.get("prompt") == "login":
                fields.update(login=login, password="any password")
            response = browser.post(urljoin(url, form.action), data=fields, allow_redirects=False, timeout=10)
            assert response.is_redirect, response.text[:500]
            url = urljoin(url, response.headers["Location"])
            if url.startswith(redirect_uri):
                return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        raise AssertionError("the provider never redirected back to the client")

    def events(self, event: Optional[str] = None, **fields: Any) -> List[Dict[str, Any]]:
        """The provider's event log so far (metadata requests, registrations, authorizations, grants:
        see provider.mjs): those named ``event`` whose fields match ``fields`` (``grant_type="refresh_token"``)."""
        found = []
        for line in list(self.stderr):
            if line.startswith(EVENT):
                entry = json.loads(line[len(EVENT):])
                if (event is None or entry.get("event") == event) and all(entry.get(k) == v for k, v in fields.items()):
                    found.append(entry)
        return found

    def wait_for_events(self, count: int, event: str, deadline: float = 10.0, **fields: Any) -> List[Dict[str, Any]]:
        """At least ``count`` matching events (the log reaches us through a pipe, a moment after the
        provider answered): bounded polling; the events found, however many, once the deadline passes."""
        end = time.monotonic() + deadline
        while True:
            found = self.events(event, **fields)
            if len(found) >= count or time.monotonic() > end:
                return found
            time.sleep(0.02)

    def token(self, **data: Any) -> requests.Response:
        """POST to the token endpoint (for a public client: ``client_id`` in ``data``)."""
        return requests.post(self.endpoint("token"), data=data, timeout=10)


class _Form(HTMLParser):
    """The first form of a page: its action and its fields (inputs and buttons with a name)."""

    def __init__(self) -> None:
        super().__init__()
        self.action: Optional[str] = None
        self.fields: List[Tuple[str, str]] = []
        self._done = False

    @classmethod
    def parse(cls, html: str) -> "_Form":
        form = cls()
        form.feed(html)
        assert form.action is not None, f"no form on the page: {re.sub(r'<[^>]+>', ' ', html)[:300]}"
        return form

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        values = dict(attrs)
        if tag == "form" and self.action is None and not self._done:
            self.action = values.get("action") or ""
        elif tag in ("input", "button") and self.action is not None and not self._done and values.get("name"):
            self.fields.append((values["name"], values.get("value") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.action is not None:
            self._done = True


def running(pin_scopes: bool = False) -> Iterator[OIDCProvider]:
    """A running :class:`OIDCProvider` until the generator is closed (the ``oidc_provider`` fixture
    of tests/conftest.py is this, for one test module; ``oidc_provider_pinning`` is
    ``running(pin_scopes=True)``)."""
    provider = OIDCProvider(pin_scopes=pin_scopes)
    try:
        yield provider
    finally:
        provider.stop()
        provider._drain.join(5)


def wait_until_expired(expires_at: float, deadline: float = 10.0) -> None:
    """Let a token's lifetime pass (the provider's clock is this machine's): bounded."""
    end = time.time() + deadline
    while time.time() <= expires_at + 0.05 and time.time() < end:
        time.sleep(0.05)
