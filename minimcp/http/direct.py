"""The client's hot POST: straight to the urllib3 connection pool under a ``requests.Session``.

``requests`` prepares every request afresh (URL parsing, hooks, cookie and
proxy merging, auth), which was ~60% of the client's CPU per call on plain
``http://`` (benchmarks/instructions_client.py). When a POST needs none of it
(no TLS, proxy or cookie to send, and no auth but a held Bearer token), :class:`DirectPost` sends it on
the same pooled connection itself; ``requests`` keeps everything else. The
answer is a ``requests.Response``, so the transport reads it one way.
"""

from typing import Any, Dict, Optional
from urllib.parse import urlsplit

import requests
import requests.adapters  # (requests loads both itself: named so that type checkers know them)
import requests.structures
import urllib3


class DirectPost:
    """POSTs to ``url`` through ``adapter``'s pool, for the ``session`` that mounted it."""

    def __init__(self, session: requests.Session, adapter: requests.adapters.HTTPAdapter, url: str) -> None:
        self.session: requests.Session = session
        self.adapter: requests.adapters.HTTPAdapter = adapter
        self.url: str = url
        parts = urlsplit(url)
        # plain http only: requests keeps TLS, with its CA settings
        self.pool: Optional[urllib3.HTTPConnectionPool] = (
            adapter.poolmanager.connection_from_url(url) if parts.scheme == "http" else None)
        self.path: str = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def headers(self) -> Optional[Dict[str, str]]:
        """The headers a direct POST adds (``{}``, or an OAuth flow's token), or None when the
        POST needs ``requests`` (read per call: the session's auth, proxies and cookies may change).

        An auth object takes part when it has ``direct_headers(url)`` (``minimcp.auth``'s
        flows): a held, fresh Bearer token is then one header; the rest (no token yet,
        renewal, DPoP, a 401 or 403) goes through ``requests``, which calls the flow."""
        session = self.session
        if self.pool is None or session.proxies or session.cookies:
            return None
        if session.auth is None:
            return {}
        direct = getattr(session.auth, "direct_headers", None)
        return direct(self.url) if direct is not None else None

    def post(self, body: bytes, headers: Dict[str, str], timeout: float) -> requests.Response:
        """POST ``body`` with the session's headers and ``headers``; the response is left streaming.

        Raises:
            requests.ConnectionError: the server cannot be reached (as ``requests`` would raise).
        """
        assert self.pool is not None  # (only called when headers() said a direct POST may go)
        try:  # raw: Any, for requests' fields take it as HTTPAdapter.build_response does (their stubs differ)
            raw: Any = self.pool.urlopen("POST", self.path, body=body, headers=_merged(self.session.headers, headers),
                                         redirect=False, assert_same_host=False, preload_content=False,
                                         decode_content=False, retries=self.adapter.max_retries, timeout=timeout)
        except urllib3.exceptions.HTTPError as exc:
            raise requests.ConnectionError(exc) from exc
        if "Set-Cookie" in raw.headers:  # the server starts a cookie (a sticky load balancer): keep it
            request = requests.Request("POST", self.url, headers=headers).prepare()
            # types-requests leaves this function unannotated: the check is the stub's gap, not ours
            requests.cookies.extract_cookies_to_jar(self.session.cookies, request, raw)  # type: ignore[no-untyped-call]
        response = requests.Response()  # what requests would hand back
        response.status_code, response.reason, response.raw, response.url = raw.status, raw.reason, raw, self.url
        response.headers = raw.headers  # (urllib3's, case-insensitive already: no copy)
        response.encoding = requests.utils.get_encoding_from_headers(raw.headers)
        return response


def _merged(session_headers: Any, headers: Dict[str, str]) -> Any:
    """The session's headers with this request's over them, names compared without case
    (as requests merges them: one ``Authorization``, whoever spelled it ``authorization``)."""
    merged = requests.structures.CaseInsensitiveDict(session_headers)
    merged.update(headers)
    return merged
