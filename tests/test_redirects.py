"""The HTTP client never follows a redirect from an MCP endpoint (on real sockets).

``requests`` follows a 3xx by default, and takes the request's custom headers
(``X-API-Key`` ...) along to wherever the ``Location`` points: a hostile or
compromised MCP server could send the client's next request, with its key, to
``http://169.254.169.254/`` or to a service on the client's own machine. An MCP
endpoint has no reason to redirect (spec basic/transports: one endpoint, which
the client POSTs to and GETs from), so minimcp follows none: a 3xx is an error
that says where it pointed, the same on both POST paths (``requests``, and the
direct ``http.client`` one in transports/http/direct.py, which never followed
them), for the GET stream, the DELETE at close, and the 2024-11-05 HTTP+SSE
transport.

Each test stands up the MCP server behind a wrapper that answers some requests
``307`` with a ``Location`` on a second server, the target, which records every
request that reaches it: the target must see none.
"""

from typing import Any, Callable, Dict, List

import pytest
import requests

import minimcp
from minimcp.errors import ConnectionClosed, MCPError
from minimcp.server.http.wsgiserver import BackgroundServer

KEY = "key-that-must-stay-home"


class Target:
    """Where the redirects point: records ``(method, path, X-API-Key)`` of every request it gets."""

    def __init__(self) -> None:
        self.seen: List[tuple] = []
        self.http = BackgroundServer(self)
        self.url = self.http.url + "/latest/meta-data/"

    def __call__(self, environ: Dict[str, Any], start_response: Callable) -> List[bytes]:
        self.seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"], environ.get("HTTP_X_API_KEY")))
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
        return [b"ok"]


class Redirecting:
    """An MCP server whose ``redirected(method, path)`` requests are answered 307 to the target."""

    def __init__(self, target: Target, redirected: Callable[[str, str], bool]) -> None:
        self.target, self.redirected = target, redirected
        self.app = _server().wsgi_app()
        self.http = BackgroundServer(self)
        self.url = self.http.url + "/mcp"

    def __call__(self, environ: Dict[str, Any], start_response: Callable) -> List[bytes]:
        if self.redirected(environ["REQUEST_METHOD"], environ["PATH_INFO"]):
            start_response("307 Temporary Redirect", [("Location", self.target.url), ("Content-Length", "0")])
            return [b""]
        return self.app(environ, start_response)


def _server() -> minimcp.Server:
    server = minimcp.Server("redirecting")

    @server.tool()
    def echo(text: str = "x") -> str:
        """Echo the text."""
        return text

    return server


def running(redirected: Callable[[str, str], bool]) -> Any:
    """Start a target and an MCP server redirecting to it; the pair, and a function that stops both."""
    target = Target()
    server = Redirecting(target, redirected)
    target.http.start()
    server.http.start()

    def stop() -> None:
        server.http.stop()
        server.app.close()
        target.http.stop()

    return target, server, stop


def assert_says_where(message: str, status: int, target: Target) -> None:
    assert f"HTTP {status}" in message and target.url in message, message
    assert "MCP endpoints must not redirect" in message, message


# the direct http.client POST (a plain-http server and no auth but headers), and requests' (an auth
# object that has no direct_headers(): HTTP Basic)
@pytest.mark.parametrize("path", ["direct", "requests"])
def test_a_redirected_post_is_an_error_saying_where_it_pointed_and_is_not_followed(path):
    target, server, stop = running(lambda method, path: method == "POST")
    auth = requests.auth.HTTPBasicAuth("user", "pw") if path == "requests" else None
    try:
        with pytest.raises(MCPError) as refused:
            minimcp.connect(server.url, headers={"X-API-Key": KEY}, auth=auth, timeout=5, protocol="2025-11-25")
    finally:
        stop()
    assert_says_where(str(refused.value), 307, target)
    assert target.seen == []  # the key did not go along: nothing reached the target at all


def test_the_get_stream_and_the_delete_at_close_do_not_follow_a_redirect():
    target, server, stop = running(lambda method, path: method in ("GET", "DELETE"))
    try:
        with minimcp.connect(server.url, headers={"X-API-Key": KEY}, timeout=5, protocol="2025-11-25") as client:
            # (connect() returns once the GET stream was answered: here with the 307)
            assert client.call_tool("echo", {"text": "still works"}).text == "still works"
        # close() sent the DELETE (answered 307 too) and returned
    finally:
        stop()
    assert target.seen == []


def test_the_http_sse_transport_does_not_follow_a_redirected_stream():
    target, server, stop = running(lambda method, path: method == "GET" and path == "/sse")
    try:
        with pytest.raises(ConnectionClosed) as refused:
            minimcp.connect(server.http.url + "/sse", headers={"X-API-Key": KEY}, timeout=5)
    finally:
        stop()
    assert_says_where(str(refused.value), 307, target)
    assert target.seen == []


def test_the_http_sse_transport_does_not_follow_a_redirected_post():
    target, server, stop = running(lambda method, path: method == "POST")
    try:
        with pytest.raises(MCPError) as refused:
            minimcp.connect(server.http.url + "/sse", headers={"X-API-Key": KEY}, timeout=5)
    finally:
        stop()
    assert_says_where(str(refused.value), 307, target)
    assert target.seen == []


def test_the_login_probe_does_not_follow_a_redirect():
    from minimcp.client.auth import MemoryTokenStore, OAuth

    target, server, stop = running(lambda method, path: method == "POST")
    try:
        with pytest.raises(ConnectionClosed) as refused:
            OAuth(store=MemoryTokenStore(), headless=True).login(server.url)  # (what `minimcp login URL` runs)
    finally:
        stop()
    assert_says_where(str(refused.value), 307, target)
    assert target.seen == []
