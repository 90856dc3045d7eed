"""A tiny OAuth 2.1 authorization server and a protected MCP server, both WSGI, for the auth tests.

``AuthServer`` issues tokens the way a real one does (metadata, dynamic
registration, authorization code with PKCE checked, refresh, client
credentials), and can be told to misbehave (malformed metadata, no
``access_token``, a wrong ``iss``). ``protect()`` puts a minimcp server behind
a resource-server check: protected resource metadata at the well-known URL,
401 with ``resource_metadata`` and ``scope``, 403 ``insufficient_scope`` for a
tool that needs more. The authorization endpoint approves at once (it is the
test that plays the browser), redirecting to the client's ``redirect_uri``.
"""

import base64
import hashlib
import io
import json
import secrets
import threading
import time
from typing import Any, Callable, Dict, List, Optional
from urllib.parse import parse_qs, urlencode

from minimcp.server.http.wsgiserver import BackgroundServer


def _reply(start_response: Callable, status: str, body: Any = b"", headers: Optional[list] = None) -> List[bytes]:
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
        headers = [("Content-Type", "application/json")] + (headers or [])
    start_response(status, (headers or []) + [("Content-Length", str(len(body)))])
    return [body]


def _form(environ: dict) -> Dict[str, str]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length).decode()
    if environ.get("CONTENT_TYPE", "").startswith("application/json"):
        return json.loads(raw or "{}")
    return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}


class AuthServer:
    """An authorization server on 127.0.0.1 (a context manager); ``url`` is its issuer."""

    def __init__(self, *, scopes_supported: Optional[List[str]] = None, token_lifetime: int = 3600,
                 refresh_tokens: bool = True, omit_access_token: bool = False, malformed_metadata: bool = False,
                 wrong_iss: bool = False, pkce: bool = True) -> None:
        self.scopes_supported = scopes_supported
        self.token_lifetime, self.refresh_tokens = token_lifetime, refresh_tokens
        self.omit_access_token, self.malformed_metadata, self.wrong_iss = omit_access_token, malformed_metadata, wrong_iss
        self.pkce = pkce
        self.clients: Dict[str, dict] = {}
        self.codes: Dict[str, dict] = {}
        self.tokens: Dict[str, dict] = {}      # access token -> {scopes, resource, expires}
        self.refresh: Dict[str, dict] = {}
        self.log: List[tuple] = []             # (endpoint, params) of every request
        self._lock = threading.Lock()
        self.running = BackgroundServer(self)
        self.url = self.running.url

    def __enter__(self) -> "AuthServer":
        self.running.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.running.stop()

    def calls(self, endpoint: str) -> List[dict]:
        """The parameters of every request to ``endpoint`` ("/authorize", "/token", "/register")."""
        return [params for name, params in self.log if name == endpoint]

    def revoke_access_tokens(self) -> None:
        """Forget every access token (refresh tokens stay valid): the next call gets a 401."""
        with self._lock:
            self.tokens.clear()

    def check(self, token: str) -> Optional[dict]:
        """What ``token`` grants, or ``None`` when it is unknown or expired."""
        with self._lock:
            grant = self.tokens.get(token)
        if grant is None or grant["expires"] < time.time():
            return None
        return grant

    def metadata(self) -> dict:
        """The RFC 8414 document."""
        document = {"issuer": self.url, "authorization_endpoint": self.url + "/authorize",
                    "token_endpoint": self.url + "/token", "registration_endpoint": self.url + "/register",
                    "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
                    "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                    "authorization_response_iss_parameter_supported": True}
        if self.scopes_supported is not None:
            document["scopes_supported"] = self.scopes_supported
        if not self.pkce:
            del document["code_challenge_methods_supported"]
        return document

    def __call__(self, environ: dict, start_response: Callable) -> List[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        if path == "/.well-known/oauth-authorization-server":
            if self.malformed_metadata:
                return _reply(start_response, "200 OK", {"issuer": self.url, "authorization_endpoint": 42})
            return _reply(start_response, "200 OK", self.metadata())
        if path == "/register" and method == "POST":
            return self._register(_form(environ), start_response)
        if path == "/authorize":
            return self._authorize({k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()},
                                   start_response)
        if path == "/introspect" and method == "POST":  # RFC 7662, for resource servers that ask
            grant = self.check(_form(environ).get("token", ""))
            if grant is None:
                return _reply(start_response, "200 OK", {"active": False})
            return _reply(start_response, "200 OK", {"active": True, "scope": " ".join(grant["scopes"]),
                                                     "aud": grant["resource"], "client_id": "any",
                                                     "exp": int(grant["expires"])})
        if path == "/token" and method == "POST":
            return self._token(_form(environ), environ.get("HTTP_AUTHORIZATION", ""), start_response)
        return _reply(start_response, "404 Not Found", {"error": "not_found"})

    def add_client(self, client_id: str, secret: Optional[str], redirect_uris: List[str]) -> None:
        """Register a client by hand (a pre-registered one)."""
        self.clients[client_id] = {"secret": secret, "redirect_uris": redirect_uris}

    def _register(self, body: dict, start_response: Callable) -> List[bytes]:
        self.log.append(("/register", body))
        client_id = "client-" + secrets.token_hex(4)
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        secret = None if method == "none" else secrets.token_urlsafe(16)
        self.add_client(client_id, secret, body.get("redirect_uris", []))
        answer = {"client_id": client_id, "redirect_uris": body.get("redirect_uris", []),
                  "token_endpoint_auth_method": method}
        if secret:
            answer["client_secret"] = secret
        return _reply(start_response, "201 Created", answer)

    def _authorize(self, query: dict, start_response: Callable) -> List[bytes]:
        self.log.append(("/authorize", query))
        client = self.clients.get(query.get("client_id", ""))
        if client is None or query.get("redirect_uri") not in client["redirect_uris"]:
            return _reply(start_response, "400 Bad Request", {"error": "invalid_request"})
        code = secrets.token_urlsafe(16)
        self.codes[code] = dict(query)
        params = {"code": code, "state": query.get("state", ""),
                  "iss": "https://evil.example" if self.wrong_iss else self.url}
        return _reply(start_response, "302 Found", b"", [("Location", query["redirect_uri"] + "?" + urlencode(params))])

    def _client_id(self, form: dict, authorization: str) -> Optional[str]:
        if authorization.startswith("Basic "):
            client_id, _, secret = base64.b64decode(authorization[6:]).decode().partition(":")
            client = self.clients.get(client_id)
            return client_id if client is not None and client["secret"] == secret else None
        client = self.clients.get(form.get("client_id", ""))
        return form["client_id"] if client is not None and client["secret"] is None else None

    def _token(self, form: dict, authorization: str, start_response: Callable) -> List[bytes]:
        self.log.append(("/token", dict(form)))
        client_id = self._client_id(form, authorization)
        if client_id is None:
            return _reply(start_response, "401 Unauthorized", {"error": "invalid_client"})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            request = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if request is None or request["code_challenge"] != challenge or request["redirect_uri"] != form.get(
                    "redirect_uri"):
                return _reply(start_response, "400 Bad Request", {"error": "invalid_grant"})
            scopes, resource = request.get("scope", "").split(), request.get("resource", "")
        elif grant == "refresh_token":
            previous = self.refresh.pop(form.get("refresh_token", ""), None)
            if previous is None:
                return _reply(start_response, "400 Bad Request", {"error": "invalid_grant"})
            scopes, resource = previous["scopes"], previous["resource"]
        elif grant == "client_credentials":
            scopes, resource = form.get("scope", "").split(), form.get("resource", "")
        else:
            return _reply(start_response, "400 Bad Request", {"error": "unsupported_grant_type"})
        token = "at-" + secrets.token_urlsafe(16)
        with self._lock:
            self.tokens[token] = {"scopes": scopes, "resource": resource,
                                  "expires": time.time() + self.token_lifetime}
        answer: Dict[str, Any] = {"token_type": "Bearer", "expires_in": self.token_lifetime, "scope": " ".join(scopes)}
        if not self.omit_access_token:
            answer["access_token"] = token
        if self.refresh_tokens and grant != "client_credentials":
            refresh = "rt-" + secrets.token_urlsafe(16)
            self.refresh[refresh] = {"scopes": scopes, "resource": resource}
            answer["refresh_token"] = refresh
        return _reply(start_response, "200 OK", answer)


def protect(app: Callable, auth: AuthServer, base: Callable[[], str], *, scope: str = "mcp:read",
            tool_scopes: Optional[Dict[str, str]] = None, metadata_auth_server: Optional[Callable[[], str]] = None
            ) -> Callable:
    """``app`` (an MCP WSGI app at /mcp and /sse) behind bearer tokens that ``auth`` issued for it.

    ``tool_scopes``: tool name -> the extra scope a ``tools/call`` of it needs (403 without it).
    """
    tool_scopes = tool_scopes or {}

    def protected(environ: dict, start_response: Callable) -> List[bytes]:
        path = environ.get("PATH_INFO", "")
        # one server at two URLs: /mcp (Streamable HTTP), and /sse with /messages/ (2024-11-05 HTTP+SSE)
        endpoint = "/sse" if path.startswith(("/sse", "/messages", "/.well-known/oauth-protected-resource/sse")) \
            else "/mcp"
        metadata_url = base() + "/.well-known/oauth-protected-resource" + endpoint
        if path.startswith("/.well-known/oauth-protected-resource"):
            issuer = metadata_auth_server() if metadata_auth_server else auth.url
            return _reply(start_response, "200 OK", {"resource": base() + endpoint, "authorization_servers": [issuer],
                                                     "scopes_supported": [scope]})
        given = environ.get("HTTP_AUTHORIZATION", "")
        grant = auth.check(given[7:]) if given.startswith("Bearer ") else None
        challenge = f'Bearer resource_metadata="{metadata_url}", scope="{scope}"'
        if grant is None or grant["resource"] != base() + endpoint:  # the audience check
            return _reply(start_response, "401 Unauthorized", {"error": "invalid_token"},
                          [("WWW-Authenticate", challenge + ', error="invalid_token"')])
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)
        try:
            message = json.loads(body) if body else {}
        except ValueError:
            message = {}
        needed = tool_scopes.get((message.get("params") or {}).get("name", "")) if isinstance(message, dict) \
            and message.get("method") == "tools/call" else None
        if needed and needed not in grant["scopes"]:
            return _reply(start_response, "403 Forbidden", {"error": "insufficient_scope"},
                          [("WWW-Authenticate", f'Bearer error="insufficient_scope", scope="{needed}", '
                                                f'resource_metadata="{metadata_url}"')])
        return app(environ, start_response)

    protected.close = getattr(app, "close", lambda: None)  # type: ignore[attr-defined]  (ends SSE streams at stop)
    return protected
