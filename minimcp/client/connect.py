"""``connect()``: from a target (a command, a URL, a config name, "memory") to a ready Client.

Like requests' adapters chosen by URL prefix: the target picks the transport
(stdio child process, Streamable HTTP falling back to HTTP+SSE, WebSocket,
in-memory), then the handshake (or the 2026-07-28 probe) runs.
"""

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Union, cast

from ..errors import ConnectionClosed, RPCError
from ..logs import get_logger
from .client import Client, check_protocol

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

_URL_SCHEMES = ("http", "https", "ws", "wss")


def connect(target: Union[Sequence[str], str], *, server: Any = None, config: Union[str, "os.PathLike[str]", None] = None,
            env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
            on_stderr: Optional[Callable[[str], None]] = None, headers: Optional[Dict[str, str]] = None,
            auth: Any = None, timeout: float = 60.0, client_info: Optional[Dict[str, Any]] = None,
            trace: Optional[bool] = None, protocol: str = "auto", max_message: Optional[int] = None,
            **handlers: Any) -> Client:
    """Connect to an MCP server, run the handshake, and return the :class:`Client`.

    Example::

        with minimcp.connect(["python", "server.py"]) as client:      # stdio
            ...
        with minimcp.connect("memory", server=my_server) as client:   # in-process
            ...
        with minimcp.connect("http://127.0.0.1:8000/mcp") as client:   # Streamable HTTP
            ...
        with minimcp.connect("filesystem", config=".mcp.json") as client:  # a host's mcpServers entry
            ...

    Args:
        target: a command (list of strings) to start as a stdio server;
            an ``http(s)://`` URL (Streamable HTTP, falling back to the
            2024-11-05 HTTP+SSE transport; a URL ending in ``/sse`` picks that
            directly); a ``ws(s)://`` URL (WebSocket, not in the MCP spec);
            ``"memory"`` with ``server=``; or the name of a server in a host
            config file (Claude Desktop, Claude Code, Cursor, VS Code).
        server: the :class:`~minimcp.Server` to connect to in memory.
        config: the host config file to find a named server in (default:
            the usual places; see :mod:`minimcp.client.config`).
        env: extra environment variables for a stdio server (merged over ours).
        cwd: a stdio server's working directory.
        on_stderr: ``callback(line)`` for a stdio server's stderr lines
            (default: write them to our ``sys.stderr``).
        headers: extra HTTP headers (say, ``Authorization``) for a URL target.
        auth: for a URL target: a :mod:`minimcp.client.auth` flow (``OAuth()``,
            ``ClientCredentials(...)`` ...), a bearer token (a string), or any
            ``requests`` auth object.
        timeout: the default seconds each call waits, the handshake included.
        client_info: ``{"name": ..., "version": ...}`` to introduce ourselves.
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``): each once, with
            its direction, peer and the time since the line above; ``MINIMCP_TRACE=pretty``
            indents, ``=both`` adds the other side, ``=full`` leaves nothing out.
        protocol: ``"auto"`` (the default) asks ``server/discover`` first and
            speaks 2026-07-28 to a server that does, else runs the handshake;
            ``"2026-07-28"`` or a handshake version (``"2025-06-18"`` ...)
            speaks only that one (see :data:`~minimcp.client.client.PROTOCOLS`).
        max_message: the largest message this client reads from a stdio or WebSocket server, in
            bytes; a longer answer fails its call, saying the limit. Default:
            ``MINIMCP_MAX_MESSAGE`` from the environment, else 64 MiB. It is this client's
            alone: a stdio server is started without it in its environment (the variable, set
            in ours, is inherited by the server with the rest, and sets its limit too, as it
            does every minimcp process's that inherits it). Over HTTP the client sets no limit
            of its own (the server's ``max_body`` bounds what is sent).
        handlers: the :class:`Client`'s other options: what answers the server
            (``sampling_handler``, ``elicitation_handler``, ``roots``, ``on_log`` ...),
            ``middleware``, ``apps=True`` (this client renders MCP Apps views) ...

    Raises:
        FileNotFoundError: the server command does not exist.
        ConnectionClosed: the server exited before the handshake finished
            (the exception carries its exit code and last stderr lines).
        ValueError: the target is not something minimcp can connect to,
            ``protocol`` is not a version minimcp speaks, or ``max_message`` (or
            ``MINIMCP_MAX_MESSAGE``) is not a positive number of bytes.
        ProtocolError: the server does not speak the ``protocol`` asked for.
    """
    handlers = dict(handlers, protocol=check_protocol(protocol))  # before a child process is started
    if max_message is not None:  # (checked here too: an HTTP target would not look at it)
        from ..transports.stdio import CLIENT_MAX_MESSAGE, message_limit

        max_message = message_limit(CLIENT_MAX_MESSAGE, max_message)
    if isinstance(auth, str):  # a bearer token
        from .auth import BearerToken

        auth = BearerToken(auth)
    if isinstance(target, str) and target != "memory" and target.split(":", 1)[0] not in _URL_SCHEMES:
        from .config import find_server  # a host config entry, by name

        entry = find_server(target, config)
        if "command" not in entry:
            url: str = entry["url"]
            target, headers = url, {**entry.get("headers", {}), **(headers or {})}
            auth = _entry_auth(entry, auth, headers)
            if entry.get("transport") == "sse" and not url.rstrip("/").endswith("/sse"):
                return _connect_url(url, "sse", headers, auth, timeout, client_info, trace, handlers, max_message)
        else:
            target = entry["command"]
            env = {**entry.get("env", {}), **(env or {})}
            cwd = cwd or entry.get("cwd")
    if isinstance(target, (list, tuple)):
        from ..transports.child import SubprocessTransport

        transport: Any = SubprocessTransport(target, env=env, cwd=cwd, on_stderr=on_stderr, max_message=max_message)
    elif target == "memory":
        if server is None:
            raise ValueError('connect("memory") needs server=the Server to talk to')
        from ..transports.memory import pair

        transport, server_end = pair()
        served = server.serve(server_end)
        transport.on_close = served.session.close
    else:
        return _connect_url(cast(str, target), None, headers, auth, timeout, client_info, trace, handlers,
                            max_message)
    return _start(Client(transport, timeout=timeout, client_info=client_info, trace=trace, **handlers))


def _entry_auth(entry: Dict[str, Any], auth: Any, headers: Dict[str, str]) -> Any:
    """A remote config entry gets OAuth as its host would give it (unless it sends its own Authorization)."""
    if auth is None and any(name.lower() == "authorization" for name in headers):
        return None
    from .auth import OAuth

    if auth is None:
        auth = OAuth()
    return auth.configure(entry.get("oauth")) if isinstance(auth, OAuth) else auth


def _start(client: Client) -> Client:
    """Run the handshake; on any failure close what was opened."""
    try:
        client.initialize()
    except BaseException:
        client.close()
        raise
    return client


def _connect_url(url: str, kind: Optional[str], headers: Optional[Dict[str, str]], auth: Any, timeout: float,
                 client_info: Optional[Dict[str, Any]], trace: Optional[bool], handlers: Dict[str, Any],
                 max_message: Optional[int] = None) -> Client:
    scheme = url.split(":", 1)[0]
    options: Dict[str, Any] = dict(timeout=timeout, client_info=client_info, trace=trace, **handlers)
    if scheme in ("http", "https") and hasattr(auth, "prepare"):  # a minimcp.client.auth flow: a person's login
        # comes before the handshake, whose timeout does not count the minutes spent in the browser
        auth.prepare(url, trace)
    if scheme in ("ws", "wss"):
        from ..transports.websocket import WebSocketTransport

        return _start(Client(WebSocketTransport(url, headers=headers, timeout=timeout, max_message=max_message),
                             **options))
    from ..transports.http.sse import SSETransport

    if kind == "sse" or url.rstrip("/").endswith("/sse"):
        return _start(Client(SSETransport(url, headers=headers, auth=auth, timeout=timeout), **options))
    from ..transports.http.streamable import StreamableHTTPTransport

    try:
        return _start(Client(StreamableHTTPTransport(url, headers=headers, auth=auth, timeout=timeout), **options))
    except RPCError as exc:
        # spec basic/transports "Backwards Compatibility": a POST of initialize
        # refused with 400/404/405 means an old HTTP+SSE server may be there.
        if not isinstance(exc.data, dict) or exc.data.get("httpStatus") not in (400, 404, 405):
            raise
        log.info("%s refused Streamable HTTP (%s); trying the 2024-11-05 HTTP+SSE transport", url, exc)
        refused = exc
    try:
        client = _start(Client(SSETransport(url, headers=headers, auth=auth, timeout=timeout), **options))
        log.warning("%s speaks only the deprecated 2024-11-05 HTTP+SSE transport (Streamable HTTP was refused: "
                    "%s); connected over it", url, refused.message)
        return client
    except ConnectionClosed as fallback:
        # Neither transport is there: what the URL answered is the news, not the fallback's
        # failure (a wrong path is the usual cause: say which URL and which status).
        log.info("the HTTP+SSE fallback failed too: %s", fallback)
        raise ConnectionClosed(f"{url} answered {refused.message}; check that this URL is the server's MCP "
                               f"endpoint (neither Streamable HTTP nor HTTP+SSE answered there)") from refused
