"""The HTTP calls of OAuth itself: metadata, registration, tokens.

They go through a ``requests.Session`` of their own (never the MCP
transport's, whose auth hook would call back into us), each with a timeout,
so an authorization server that never answers is an error after
``timeout`` seconds, not a hang. With ``MINIMCP_TRACE=1`` each call is
written to stderr with its secrets replaced by ``[redacted]``: the
``Authorization`` and ``DPoP`` headers, and every token, code, secret and
assertion in a body.
"""

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple
from urllib.parse import parse_qsl, urlencode

import requests

from ...errors import AuthError
from ...logs import get_logger

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


def tracing() -> bool:
    """True when ``MINIMCP_TRACE`` asks for the wire trace."""
    return os.environ.get("MINIMCP_TRACE", "") not in ("", "0", "false", "no")


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


class AuthHTTP:
    """The requests one OAuth client makes, with a timeout each and the redacted trace."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        #: Trace the calls to stderr: ``None`` follows ``MINIMCP_TRACE``; ``connect(trace=True)`` sets it.
        self.trace: Optional[bool] = None
        self.session: requests.Session = requests.Session()
        self.session.trust_env = False  # no netrc credentials sent to an authorization server

    def close(self) -> None:
        """Close the pooled connections."""
        self.session.close()

    def request(self, method: str, url: str, *, what: str, **options: Any) -> "requests.Response":
        """One HTTP call; ``what`` names it in errors ("the token request").

        Raises:
            AuthError: the server cannot be reached, or did not answer in ``timeout`` seconds.
        """
        options.setdefault("timeout", self.timeout)
        options.setdefault("allow_redirects", False)
        # OAuth calls are rare: no idle connection is kept open to the authorization server after one
        options["headers"] = {"Connection": "close", **(options.get("headers") or {})}
        try:
            response = self.session.request(method, url, **options)
        except requests.Timeout as exc:
            raise AuthError(f"{what} to {url} got no answer within {options['timeout']:g} s; "
                            f"is the authorization server up?") from exc
        except requests.ConnectionError as exc:
            raise AuthError(f"{what} to {url} failed: {exc}; is the authorization server up?") from exc
        except requests.RequestException as exc:
            raise AuthError(f"{what} to {url} failed: {exc}") from exc
        if self.trace if self.trace is not None else tracing():
            request = response.request
            sys.stderr.write(f"oauth → {method} {url} {redact_headers(request.headers)} {redact_body(request.body)}\n"
                             f"oauth ← {response.status_code} {redact_headers(response.headers)} "
                             f"{redact_body(response.content)}\n")
            sys.stderr.flush()
        return response

    def get_json(self, url: str, *, what: str, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Any]:
        """GET a JSON document: ``(status, parsed body or None)``; a body that is not JSON is ``None``."""
        response = self.request("GET", url, what=what, headers={"Accept": "application/json", **(headers or {})})
        with response:
            if response.status_code != 200:
                return response.status_code, None
            try:
                return 200, response.json()
            except ValueError:
                return 200, None
