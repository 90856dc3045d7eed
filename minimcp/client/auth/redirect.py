"""Getting the authorization response back from the browser.

The default: open the authorization URL with ``webbrowser`` and receive the
redirect on a listener at ``http://127.0.0.1:PORT/callback`` (a loopback
redirect, RFC 8252 §7.3: any free port), for at most ``timeout`` seconds.
Headless (no browser on this machine): print the URL, and read back the URL
the browser was redirected to (its page will not load: copy it from the
address bar).

Either way the result is the redirected URL; ``flows`` checks its ``state``
and ``iss`` and takes the ``code``.
"""

import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Callable, Optional
from urllib.parse import urlsplit

from ...engine.threads import join, start_thread
from ...errors import AuthError

#: What the browser shows once the redirect has arrived.
DONE_PAGE = (b"<!doctype html><meta charset=utf-8><title>minimcp</title>"
             b"<p>Authorization received. You can close this window.</p>")


class RedirectListener:
    """A one-shot HTTP server on 127.0.0.1 that waits for the authorization redirect.

    Example::

        with RedirectListener() as listener:
            open_browser(url_with(redirect_uri=listener.redirect_uri))
            redirected = listener.wait(timeout=300)
    """

    def __init__(self, port: int = 0, path: str = "/callback") -> None:
        self.path = path
        self.result: Optional[str] = None
        self._arrived = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802  (the http.server name)
                if urlsplit(self.path).path != listener.path:
                    self.send_error(404)  # a favicon, or a stray request: keep waiting
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(DONE_PAGE)))
                self.end_headers()
                self.wfile.write(DONE_PAGE)
                if listener.result is None:
                    listener.result = f"http://127.0.0.1:{listener.port}{self.path}"
                    listener._arrived.set()

            def log_message(self, format: str, *args: object) -> None:  # the query has the code: never log it
                pass

        try:
            self._server = HTTPServer(("127.0.0.1", port), Handler)
        except OSError:
            if port == 0:
                raise
            self._server = HTTPServer(("127.0.0.1", 0), Handler)  # the port we wanted is taken: any port will do
        self.port: int = self._server.server_address[1]
        self.redirect_uri: str = f"http://127.0.0.1:{self.port}{path}"
        self._thread = start_thread(lambda: self._server.serve_forever(poll_interval=0.2), "oauth-redirect")

    def wait(self, timeout: float) -> str:
        """The URL the browser was redirected to.

        Raises:
            AuthError: nothing arrived within ``timeout`` seconds.
        """
        if not self._arrived.wait(timeout):
            raise AuthError(f"no authorization response reached {self.redirect_uri} within {timeout:g} s; "
                            f"finish the login in the browser, or use OAuth(headless=True) on a machine "
                            f"without one")
        return self.result  # type: ignore[return-value]

    def close(self) -> None:
        """Stop listening and join the thread."""
        self._server.shutdown()
        self._server.server_close()
        join(self._thread, 5.0)

    def __enter__(self) -> "RedirectListener":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_redirect(url: str, timeout: float, prompt: Optional[Callable[[str], str]] = None) -> str:
    """Headless: show the authorization URL, and read the redirected URL back from stdin.

    Raises:
        AuthError: nothing was typed within ``timeout`` seconds, or stdin is closed.
    """
    sys.stderr.write(f"Open this URL in a browser and log in:\n\n    {url}\n\n"
                     f"Then paste the URL the browser was sent to (its page may not load) and press Enter:\n")
    sys.stderr.flush()
    if prompt is not None:
        return prompt(url)
    import select

    try:
        ready = select.select([sys.stdin], [], [], timeout)[0]
    except (OSError, ValueError, TypeError):  # Windows consoles, or a stdin without a file descriptor
        ready = [sys.stdin]
    if not ready:
        raise AuthError(f"no redirected URL was pasted within {timeout:g} s")
    line = sys.stdin.readline().strip()
    if not line:
        raise AuthError("stdin closed before the redirected URL was pasted")
    return line
