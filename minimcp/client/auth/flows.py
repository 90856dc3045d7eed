"""The ways to get a token, one class each. Pass one as ``minimcp.connect(url, auth=...)``.

- ``OAuth``: a person logs in (authorization code with PKCE, in a browser);
- ``ClientCredentials``: a service with its own credentials (a secret or a private key);
- ``JWTBearer``: a workload with a JWT from its platform (RFC 7523 grant, SEP-1933);
- ``EnterpriseAuth``: an enterprise IdP's ID token, exchanged for an ID-JAG then a token (SEP-990);
- ``BearerToken``: a token you already have (a plain string does the same).
"""

import webbrowser
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
import requests.auth  # (loaded by requests itself; named so that type checkers know it)

from ...errors import AuthError, ConnectionClosed
from ...logs import get_logger
from .authorizer import Authorizer, Grant
from .pkce import new_pkce
from .redirect import RedirectListener, read_redirect
from .registration import ClientSettings, identify
from .store import FileTokenStore, TokenStore
from .tokens import ClientAuth, Token, choose_method, request_token
from .urls import check_url

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
#: The redirect URI headless mode and ``browser=`` use unless told another.
DEFAULT_REDIRECT = "http://127.0.0.1:33418/callback"


class OAuth(Authorizer):
    """A person logs in with a browser: OAuth 2.1 authorization code with PKCE.

    Example::

        from minimcp.client.auth import OAuth

        with minimcp.connect("https://mcp.example.com/mcp", auth=OAuth()) as client:
            ...  # the first call opens the browser; later runs reuse the stored token

    Args:
        client_id, client_secret: a client registered with the authorization
            server beforehand (else minimcp uses ``client_metadata_url`` or registers itself).
        issuer: the authorization server ``client_id`` belongs to (default: any).
        client_metadata_url: an https URL serving this client's metadata
            document, used as its ``client_id`` where the server supports that.
        client_name: the name shown on the consent page when minimcp registers itself.
        scopes: the scopes to ask for (default: what the server's challenge or metadata names).
        store: where tokens are kept (default: :class:`~minimcp.client.auth.FileTokenStore`).
        headless: print the URL and read the redirected URL back (for a machine with no browser).
        browser: ``callable(authorization_url) -> redirected_url``: drives the login yourself.
        redirect_uri: the redirect URI for ``headless`` and ``browser`` (default a loopback one);
            https, or http on a loopback address, else ``AuthError``.
        timeout: seconds to wait for the person to log in.
        http_timeout: seconds each request to an authorization server may take.
        dpop: bind tokens with DPoP: ``True``, ``False``, or ``None`` (when the server asks).
        callback_port: the loopback port to receive the redirect on (a
            pre-registered client's ``http://localhost:PORT/callback``); default: any free port.
        interactive: ``False`` never starts a login: a stored token is used
            (and refreshed), and a server that needs a new login is an error
            saying to run ``minimcp login`` (what the ``minimcp`` commands do).
    """

    def __init__(self, *, client_id: Optional[str] = None, client_secret: Optional[str] = None,
                 issuer: Optional[str] = None, client_metadata_url: Optional[str] = None,
                 client_name: str = "minimcp", scopes: Optional[List[str]] = None,
                 store: Optional[TokenStore] = None, headless: bool = False,
                 browser: Optional[Callable[[str], str]] = None, redirect_uri: Optional[str] = None,
                 timeout: float = 300.0, http_timeout: float = 30.0, dpop: Optional[bool] = None,
                 callback_port: Optional[int] = None, interactive: bool = True) -> None:
        super().__init__(scopes=scopes, store=store if store is not None else FileTokenStore(), dpop=dpop,
                         http_timeout=http_timeout)
        if client_metadata_url is not None:  # it is this client's id: https (Client ID Metadata Documents)
            check_url(client_metadata_url, "the client_metadata_url")
        if redirect_uri is not None:  # "redirect URIs MUST be either localhost or use HTTPS" (Communication Security)
            check_url(redirect_uri, "the redirect_uri")
        self.settings: ClientSettings = ClientSettings(client_id, client_secret, issuer, client_metadata_url, client_name)
        self.headless: bool = headless
        self.browser = browser
        self.redirect_uri: Optional[str] = redirect_uri
        self.timeout: float = timeout
        self.callback_port = callback_port
        self.interactive: bool = interactive
        self._clients: Dict[str, ClientAuth] = {}

    def configure(self, settings: Optional[Dict[str, Any]]) -> "OAuth":
        """Fill what was not given from a host config entry's OAuth settings
        (``client_id``, ``client_secret``, ``scopes``, ``callback_port``: see :mod:`minimcp.client.config`)."""
        settings = settings or {}
        self.settings.client_id = self.settings.client_id or settings.get("client_id")
        self.settings.client_secret = self.settings.client_secret or settings.get("client_secret")
        self.scopes: Optional[List[str]] = self.scopes or settings.get("scopes") or None
        self.callback_port = self.callback_port or settings.get("callback_port")
        return self

    def client_for(self, metadata: Dict[str, Any]) -> Optional[ClientAuth]:
        """The identity used at ``metadata``'s issuer (for refreshes)."""
        client = self._clients.get(metadata["issuer"])
        if client is None:
            client = identify(self.http, metadata, self.settings, self.store, [], ["authorization_code"], None)
        return client

    def obtain(self, grant: Grant) -> Token:
        """Run the authorization code flow for ``grant``; the token.

        A stored registration whose scope was not recorded (earlier minimcp
        versions kept none) may be pinned to fewer scopes than a step-up needs
        (RFC 7591 §2 ``scope``): when the server refuses with ``invalid_scope``,
        the client registers again, with the scopes it now needs, and retries once.
        """
        metadata = grant.metadata
        methods = metadata.get("code_challenge_methods_supported")
        if not metadata.get("fallback_defaults") and (not isinstance(methods, list) or "S256" not in methods):
            raise AuthError(f"the authorization server {metadata['issuer']} does not list PKCE S256 in "
                            f"code_challenge_methods_supported; refusing to authorize without it (MCP requires PKCE)")
        scopes = grant.scopes
        offered = metadata.get("scopes_supported") or []
        if scopes and "offline_access" in offered and "offline_access" not in scopes:
            scopes = scopes + ["offline_access"]  # ask for a refresh token, where the server offers one (SEP-2207)
        if not self.interactive:
            raise AuthError(f"{grant.server_url} needs a login: run 'minimcp login {grant.server_url}' first "
                            f"(or, for a token of your own, --header 'Authorization: Bearer ...')")
        saved = self.store.load(("client", metadata["issuer"]))
        try:
            return self._authorization_code(grant, scopes, fresh=False)
        except AuthError as exc:
            client = self._clients.get(metadata["issuer"])
            if not (exc.error == "invalid_scope" and client is not None and metadata.get("registration_endpoint")
                    and self._unknown_registration(saved, client)):
                raise
            log.info("%s refused the scopes %s to the registration kept for it; registering again",
                     metadata["issuer"], scopes)
        return self._authorization_code(grant, scopes, fresh=True)

    def _unknown_registration(self, saved: Optional[Dict[str, Any]], client: ClientAuth) -> bool:
        """Was ``client`` a stored dynamic registration whose scope is not known (so it may be pinned to less)?"""
        return (saved is not None and saved.get("client_id") == client.client_id and "scope" not in saved
                and client.client_id not in (self.settings.client_id, self.settings.client_metadata_url))

    def _authorization_code(self, grant: Grant, scopes: Optional[List[str]], fresh: bool) -> Token:
        """One authorization code round trip (``fresh``: register anew, ignoring a stored registration)."""
        metadata = grant.metadata
        listener = None
        if self.browser is None and not self.headless:
            port = self.callback_port or _port(self.store.load(("client", metadata["issuer"])))
            listener = RedirectListener(port)
        try:
            redirect_uri = listener.redirect_uri if listener else (self.redirect_uri or DEFAULT_REDIRECT)
            if listener is not None and self.callback_port:  # as the client was registered (Claude Code's form)
                redirect_uri = f"http://localhost:{listener.port}/callback"
            grant_types = ["authorization_code", "refresh_token"]
            client = identify(self.http, metadata, self.settings, self.store, [redirect_uri], grant_types, scopes,
                              fresh=fresh)
            self._clients[metadata["issuer"]] = client
            if client.client_id == self.settings.client_id:  # so a later process can refresh with it
                self.store.save(("client", metadata["issuer"]), {"client_id": client.client_id, "method": client.method,
                                                                 "client_secret": client.client_secret,
                                                                 "redirect_uris": [redirect_uri]})
            pkce = new_pkce()
            query = {"response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri,
                     "code_challenge": pkce.challenge, "code_challenge_method": "S256", "state": pkce.state,
                     "resource": grant.resource}
            if scopes:
                query["scope"] = " ".join(scopes)
            if scopes and "offline_access" in scopes:
                # OpenID Connect Core §11: an OpenID provider ignores offline_access (no refresh token)
                # unless the request asks for consent; a plain OAuth server ignores the parameter
                query["prompt"] = "consent"
            endpoint = metadata.get("authorization_endpoint")
            if not isinstance(endpoint, str):
                raise AuthError(f"the authorization server {metadata['issuer']} has no authorization_endpoint "
                                f"in its metadata; it cannot log a person in")
            url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(query)
            if listener is not None:
                webbrowser.open(url)
                redirected = listener.wait(self.timeout)
            elif self.headless:
                redirected = read_redirect(url, self.timeout)
            else:
                redirected = self.browser(url)  # type: ignore[misc]
        finally:
            if listener is not None:
                listener.close()
        code = check_redirect(redirected, pkce.state, metadata)
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "code_verifier": pkce.verifier, "resource": grant.resource}
        return request_token(self.http, metadata, client, form, resource=grant.resource, dpop=self.dpop_key,
                             requested=scopes)

    def login(self, url: str) -> Token:
        """Log in to the MCP server at ``url`` now (``minimcp login``), and keep the token.

        Raises:
            AuthError: the login failed, or the server did not ask for authorization.
        """
        token = probe(self, url)
        if token is None:
            raise AuthError(f"{url} did not ask for authorization; there is nothing to log in to")
        return token

    def prepare(self, url: str, trace: Optional[bool] = None) -> None:
        """Called by ``connect()`` before the first MCP request: a person logs in now, if a login is due,
        so the minutes spent in the browser do not count against that request's timeout."""
        super().prepare(url, trace)
        if self.interactive and self.browser is None and self.token_for(url) is None:
            probe(self, url)


def check_redirect(redirected: str, state: str, metadata: Dict[str, Any]) -> str:
    """The ``code`` of an authorization response, once ``iss`` and ``state`` are checked (in that order).

    Raises:
        AuthError: another issuer answered (RFC 9207), the state is not ours, or the server refused.
    """
    query = urlsplit(redirected).query if "?" in redirected else redirected.lstrip("?")
    params = {name: values[0] for name, values in parse_qs(query, keep_blank_values=True).items()}
    issuer = metadata["issuer"]
    if "iss" in params:
        if params["iss"] != issuer:  # a plain string comparison, no normalization (RFC 9207 §2.4)
            raise AuthError(f"the authorization response comes from issuer {params['iss']!r}, not {issuer!r}; "
                            f"refusing it (a mix-up attack?)")
    elif metadata.get("authorization_response_iss_parameter_supported") is True:
        raise AuthError(f"the authorization response has no 'iss', though {issuer} promises one (RFC 9207); refusing it")
    if "error" in params:
        raise AuthError(f"the authorization server refused: {params['error']}"
                        f"{': ' + params['error_description'] if params.get('error_description') else ''}",
                        params["error"])
    if params.get("state") != state:
        raise AuthError("the authorization response's state does not match the request's; refusing it "
                        "(a forged or stale redirect?): start the login again")
    if not params.get("code"):
        raise AuthError("the authorization response has no 'code'; paste the whole redirected URL")
    return params["code"]


class ClientCredentials(Authorizer):
    """A service authenticates as itself: the client credentials grant (SEP-1046).

    Example::

        auth = ClientCredentials("my-service", client_secret=os.environ["SECRET"])
        auth = ClientCredentials("my-service", private_key=open("key.pem").read(), signing_algorithm="ES256")
    """

    def __init__(self, client_id: str, client_secret: Optional[str] = None, *, private_key: Any = None,
                 signing_algorithm: str = "RS256", scopes: Optional[List[str]] = None,
                 store: Optional[TokenStore] = None, dpop: Optional[bool] = None, http_timeout: float = 30.0) -> None:
        super().__init__(scopes=scopes, store=store, dpop=dpop, http_timeout=http_timeout)
        if client_secret is None and private_key is None:
            raise ValueError("ClientCredentials needs client_secret= or private_key=")
        self.client_id: str = client_id
        self.client_secret: Optional[str] = client_secret
        self.private_key = private_key
        self.signing_algorithm: str = signing_algorithm

    def client_for(self, metadata: Dict[str, Any]) -> Optional[ClientAuth]:
        """This service's identity, with the auth method the server lists."""
        return ClientAuth(self.client_id, self.client_secret,
                          choose_method(metadata, self.client_secret, self.private_key),
                          self.private_key, self.signing_algorithm)

    def obtain(self, grant: Grant) -> Token:
        """A token from the client credentials grant."""
        form = {"grant_type": "client_credentials", "resource": grant.resource}
        if grant.scopes:
            form["scope"] = " ".join(grant.scopes)
        return request_token(self.http, grant.metadata, self.client_for(grant.metadata), form,
                             resource=grant.resource, dpop=self.dpop_key, requested=grant.scopes)


class JWTBearer(Authorizer):
    """A workload presents a JWT its platform issued (RFC 7523 jwt-bearer grant; SEP-1933).

    ``assertion`` is the JWT, or a function returning a fresh one. A refusal
    (``invalid_grant``, ``invalid_scope`` ...) is raised as it is: no retry, no other grant.
    """

    def __init__(self, assertion: Union[str, Callable[[], str]], *, client_id: Optional[str] = None,
                 scopes: Optional[List[str]] = None, store: Optional[TokenStore] = None,
                 dpop: Optional[bool] = None, http_timeout: float = 30.0) -> None:
        super().__init__(scopes=scopes, store=store, dpop=dpop, http_timeout=http_timeout)
        self.assertion = assertion
        self.client_id: Optional[str] = client_id

    def obtain(self, grant: Grant) -> Token:
        """A token for the workload's JWT."""
        assertion = self.assertion() if callable(self.assertion) else self.assertion
        form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": grant.resource}
        if grant.scopes:
            form["scope"] = " ".join(grant.scopes)
        client = ClientAuth(self.client_id) if self.client_id else None
        return request_token(self.http, grant.metadata, client, form, resource=grant.resource, dpop=self.dpop_key,
                             what="the JWT-bearer token request", requested=grant.scopes)


class EnterpriseAuth(Authorizer):
    """Enterprise-managed authorization (SEP-990): the IdP's ID token becomes an MCP token.

    Step 1, at the IdP: token exchange (RFC 8693) of the ID token for an ID-JAG
    naming the MCP server's authorization server and resource. Step 2, at the
    authorization server: the ID-JAG as a jwt-bearer grant (RFC 7523).
    """

    def __init__(self, *, id_token: Union[str, Callable[[], str]], idp_token_endpoint: str, client_id: str,
                 client_secret: Optional[str] = None, idp_client_id: Optional[str] = None,
                 idp_client_secret: Optional[str] = None, scopes: Optional[List[str]] = None,
                 store: Optional[TokenStore] = None, http_timeout: float = 30.0) -> None:
        super().__init__(scopes=scopes, store=store, http_timeout=http_timeout)
        self.id_token = id_token
        # the ID token is posted there: https, as every OAuth URL (OAuth 2.1 §1.5)
        self.idp_token_endpoint: str = check_url(idp_token_endpoint, "the idp_token_endpoint")
        self.client_id: str = client_id
        self.client_secret: Optional[str] = client_secret
        self.idp_client_id: Optional[str] = idp_client_id
        self.idp_client_secret = idp_client_secret

    def obtain(self, grant: Grant) -> Token:
        """Exchange the ID token for an ID-JAG, then the ID-JAG for a token."""
        id_token = self.id_token() if callable(self.id_token) else self.id_token
        exchange = {"grant_type": TOKEN_EXCHANGE, "subject_token": id_token,
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "audience": grant.metadata["issuer"], "resource": grant.resource}
        if grant.scopes:
            exchange["scope"] = " ".join(grant.scopes)
        idp = {"token_endpoint": self.idp_token_endpoint, "issuer": ""}
        idp_client = None
        if self.idp_client_id:
            idp_client = ClientAuth(self.idp_client_id, self.idp_client_secret,
                                    "client_secret_basic" if self.idp_client_secret else "none")
        id_jag = request_token(self.http, idp, idp_client, exchange, resource=grant.resource,
                               what="the token exchange at the IdP")
        form = {"grant_type": JWT_BEARER, "assertion": id_jag.access_token}
        if grant.scopes:
            form["scope"] = " ".join(grant.scopes)
        client = ClientAuth(self.client_id, self.client_secret, choose_method(grant.metadata, self.client_secret))
        return request_token(self.http, grant.metadata, client, form, resource=grant.resource,
                             what="the ID-JAG token request", requested=grant.scopes)


class BearerToken(requests.auth.AuthBase):
    """A token you already have, sent as ``Authorization: Bearer`` (``auth="..."`` makes one)."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: "requests.PreparedRequest") -> "requests.PreparedRequest":
        """Add the header."""
        request.headers["Authorization"] = "Bearer " + self.token
        return request

    def direct_headers(self, url: str) -> Dict[str, str]:
        """The same header, for a POST that skips ``requests`` (transports/http/direct.py)."""
        return {"Authorization": "Bearer " + self.token}

    def __repr__(self) -> str:
        return "BearerToken([redacted])"


def probe(auth: Authorizer, url: str) -> Optional[Token]:
    """One request to ``url`` through ``auth`` (which answers a 401 with its flow); the token it then holds.

    ``None`` when the server let the request through without one.
    """
    with requests.Session() as http:
        http.trust_env = False
        try:
            response = http.post(url, json={"jsonrpc": "2.0", "id": "minimcp-login", "method": "ping"},
                                 headers={"Accept": "application/json, text/event-stream"}, auth=auth,
                                 timeout=auth.http.timeout, stream=True, allow_redirects=False)
        except requests.RequestException as exc:  # the same error the transport would give
            raise ConnectionClosed(f"cannot reach the MCP server at {url}: {exc}") from exc
        response.close()
        if 300 <= response.status_code < 400:  # not followed, as the transport follows none
            from ...transports.http.streamable import redirected

            raise ConnectionClosed(redirected(url, response))
    return auth.token_for(url)


def _port(saved: Optional[Dict[str, Any]]) -> int:
    """The loopback port a stored registration's redirect URI uses (reusing it keeps the registration valid)."""
    for uri in (saved or {}).get("redirect_uris", []):
        port: Optional[int] = urlsplit(uri).port
        if port:
            return port
    return 0
