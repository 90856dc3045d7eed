"""The HTTP calls of OAuth itself: metadata, registration, tokens.

They go through a ``requests.Session`` of their own (never the MCP
transport's, whose auth hook would call back into us), each with a timeout,
so an authorization server that never answers is an error after
``timeout`` seconds, not a hang. With ``MINIMCP_TRACE=1`` each call and its
answer are lines of the wire trace (``oauth → POST URL``, ``oauth ← 200 OK``),
their secrets replaced by ``[redacted]``: the ``Authorization`` and ``DPoP``
headers, and every token, code, secret and assertion in a body.

A request to a URL that a remote server named (``named_by=``) is also judged by
the address its connection reached, before a byte is sent (``urls.check_peer``):
the session's connections are urllib3 ones whose ``_new_conn()`` checks
``getpeername()``, so a host name that resolves (or rebinds) to this machine or
a private address is refused as the same address written in the URL would be.
"""

import json
import socket
import threading
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple
from urllib.parse import parse_qsl, urlencode

import requests
import requests.adapters  # (loaded by requests itself; named so that type checkers know it)
import urllib3.connection
import urllib3.connectionpool

from ...errors import AuthError
from ...logs import get_logger, tracing
from .urls import check_peer, peer_rule

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

#: Header names whose values never reach a log or the trace.
SECRET_HEADERS = {"authorization", "dpop", "cookie", "set-cookie"}
#: Form and JSON fields whose values never reach a log or the trace.
SECRET_FIELDS = {"access_token", "refresh_token", "id_token", "client_secret", "code", "code_verifier",
                 "assertion", "client_assertion", "subject_token", "actor_token", "registration_access_token"}


def redacted(value: Any) -> str:
    """How a secret shows in a ``repr``: ``[redacted]`` when it is set, ``None`` when it is not.

    Tokens, client secrets, private keys, verifiers and assertions are
    credentials (OAuth 2.1 §7.1; MCP "Token Theft": store them securely): a
    repr ends up in logs, tracebacks and notebook output, so it says only
    whether one is there.
    """
    return "None" if value is None else "[redacted]"


def redact_headers(headers: Any) -> Dict[str, str]:
    """A copy of ``headers`` with the secret ones replaced by ``[redacted]``."""
    return {name: "[redacted]" if name.lower() in SECRET_HEADERS else value for name, value in dict(headers).items()}


def redact_body(body: Any) -> str:
    """A request or response body as text, with token, code and secret values replaced."""
    if body is None:
        return ""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, dict):
        return urlencode({k: "[redacted]" if k in SECRET_FIELDS else v for k, v in body.items()})
    try:
        data = json.loads(body)
    except ValueError:
        pairs = parse_qsl(body, keep_blank_values=True)
        if not pairs:
            return str(body[:500])
        return urlencode([(k, "[redacted]" if k in SECRET_FIELDS else v) for k, v in pairs])
    if isinstance(data, dict):
        data = {k: "[redacted]" if k in SECRET_FIELDS else v for k, v in data.items()}
    return json.dumps(data)[:2000]


#: The ``urls.peer_rule()`` of the request this thread is sending (``None``: no check): a
#: connection is made on the thread whose request needs it (requests and urllib3 are synchronous).
_sending = threading.local()


def _checked(sock: socket.socket) -> socket.socket:
    """``sock``, just connected, once its peer passes the rule of the request being sent; closed otherwise."""
    rule = getattr(_sending, "rule", None)
    if rule is not None:
        try:
            check_peer(str(sock.getpeername()[0]), rule)
        except BaseException:
            sock.close()
            raise
    return sock


class _CheckedHTTPConnection(urllib3.connection.HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return _checked(super()._new_conn())


class _CheckedHTTPSConnection(urllib3.connection.HTTPSConnection):
    def _new_conn(self) -> socket.socket:  # (before the TLS handshake: the ClientHello is a byte sent too)
        return _checked(super()._new_conn())


class _CheckedHTTPPool(urllib3.connectionpool.HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(urllib3.connectionpool.HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class _PeerCheckingAdapter(requests.adapters.HTTPAdapter):
    """A ``requests`` transport adapter whose connections check the address they reached
    against the rule of the request on their thread (module docstring)."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        """urllib3's pool manager, making connections that check their peer."""
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}


class AuthHTTP:
    """The requests one OAuth client makes, with a timeout each and the redacted trace."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        #: Trace the calls to stderr: ``None`` follows ``MINIMCP_TRACE``; ``connect(trace=True)`` sets it.
        self.trace: Optional[bool] = None
        self.session: requests.Session = requests.Session()
        self.session.trust_env = False  # no netrc credentials sent to an authorization server
        adapter = _PeerCheckingAdapter()
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def close(self) -> None:
        """Close the pooled connections."""
        self.session.close()

    def request(self, method: str, url: str, *, what: str, named_by: Optional[str] = None,
                **options: Any) -> "requests.Response":
        """One HTTP call; ``what`` names it in errors ("the token request").

        ``named_by``: the URL of the server whose challenge or metadata named ``url``
        (``None``: the user gave it); as for ``urls.check_url()``, which ``url`` has
        passed. The address connected to is then checked too (module docstring).

        Raises:
            AuthError: the server cannot be reached, or did not answer in ``timeout`` seconds;
                or ``url``'s host name resolved to an address a remote server may not name.
        """
        options.setdefault("timeout", self.timeout)
        options.setdefault("allow_redirects", False)
        # OAuth calls are rare: no idle connection is kept open to the authorization server after one
        # (so each request connects anew, and its connection is checked for its own rule)
        options["headers"] = {"Connection": "close", **(options.get("headers") or {})}
        _sending.rule = peer_rule(url, what, named_by)
        try:
            response = self.session.request(method, url, **options)
        except requests.Timeout as exc:
            raise AuthError(f"{what} to {url} got no answer within {options['timeout']:g} s; "
                            f"is the authorization server up?") from exc
        except requests.ConnectionError as exc:
            raise AuthError(f"{what} to {url} failed: {exc}; is the authorization server up?") from exc
        except requests.RequestException as exc:
            raise AuthError(f"{what} to {url} failed: {exc}") from exc
        finally:
            _sending.rule = None
        if self.trace if self.trace is not None else tracing():
            request = response.request
            from ...wiretrace import trace_http  # late: only a traced process loads the renderer

            trace_http("oauth", "→", f"{method} {url}", redact_headers(request.headers), redact_body(request.body))
            trace_http("oauth", "←", f"{response.status_code} {response.reason or ''}".rstrip(),
                       redact_headers(response.headers), redact_body(response.content))
        return response

    def get_json(self, url: str, *, what: str, headers: Optional[Dict[str, str]] = None,
                 named_by: Optional[str] = None) -> Tuple[int, Any]:
        """GET a JSON document: ``(status, parsed body or None)``; a body that is not JSON is ``None``.
        ``named_by``: as for :meth:`request`."""
        response = self.request("GET", url, what=what, headers={"Accept": "application/json", **(headers or {})},
                                named_by=named_by)
        with response:
            if response.status_code != 200:
                return response.status_code, None
            try:
                return 200, response.json()
            except ValueError:
                return 200, None
