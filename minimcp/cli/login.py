"""``minimcp login`` and ``minimcp logout``: keep, or forget, an OAuth login for a URL server.

``login`` runs the authorization code flow now (a browser opens, or with
``--headless`` the URL is printed and the redirected URL read back) and
keeps the token in the user's token store; every other ``minimcp`` command
then sends it (refreshing it as needed) and never opens a browser itself.
The target is a URL, or the name of a remote server in a host config file
(whose OAuth client settings are used). The token itself is never printed.
"""

import argparse
import time
from typing import Any, Dict, Optional, Tuple

from ..client.auth import OAuth
from ..client.config import find_server
from ..errors import ServerNotFound
from .command_line import EXIT_OK, UsageError
from .commands import _not_a_server, _traced
from .output import _emit


def _server(args: argparse.Namespace) -> Tuple[str, Optional[Dict[str, Any]]]:
    """The URL to log in to, and the OAuth settings of its config entry (if it came from one)."""
    target = args.target
    if not isinstance(target, str):
        raise UsageError(f"'minimcp {args.command}' is for URL servers: a stdio server gets its credentials "
                         f"from its environment")
    if target.split(":", 1)[0] in ("http", "https"):
        return target, None
    try:
        entry = find_server(target, args.config)
    except ServerNotFound as exc:
        raise ServerNotFound(_not_a_server(exc, args)) from None
    if "url" not in entry:
        raise UsageError(f"{target!r} is a stdio server: it gets its credentials from its environment, not a login")
    return entry["url"], entry.get("oauth")


def cmd_login(args: argparse.Namespace) -> int:
    """``minimcp login URL``: log in now and keep the token."""
    url, settings = _server(args)
    auth = OAuth(client_id=args.client_id, client_secret=args.client_secret, scopes=args.scope or None,
                 headless=args.headless, timeout=args.timeout).configure(settings)
    auth.http.trace = _traced(args)
    try:
        token = auth.login(url)
    finally:
        auth.close()
    scopes = f"; scopes: {' '.join(token.scopes)}" if token.scopes else ""
    expiry = f"; expires in {max(0, int((token.expires_at - time.time()) / 60))} min" if token.expires_at else ""
    refresh = "; refreshable" if token.refresh_token else ""
    _emit(f"logged in to {url} (authorization server {token.issuer}{scopes}{expiry}{refresh})")
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    """``minimcp logout URL``: forget the token kept for the server."""
    url, _ = _server(args)
    auth = OAuth(interactive=False)
    _emit(f"logged out of {url}" if auth.forget(url) else f"no login was kept for {url}")
    return EXIT_OK
