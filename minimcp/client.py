"""The client: connect to an MCP server and call it with plain blocking calls.

:func:`connect` picks a transport from the target (a command list means a
child process over stdio, ``"memory"`` an in-process server), then runs the
handshake; :class:`Client` turns MCP methods into Python calls. Every call
blocks the calling thread only, takes ``timeout=``, and is safe to make
from many threads at once on one client.
"""

import logging
import os
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from . import __version__
from .errors import ProtocolError
from .session import ProgressCallback, Session
from .types import LEGACY_VERSIONS, PROTOCOL_VERSION, Tool, ToolResult

log = logging.getLogger(__name__)

#: How many pages a list call follows before deciding the server loops.
MAX_PAGES = 10_000


class Client:
    """A connection to one MCP server.

    Example::

        with minimcp.connect(["python", "examples/weather_server.py"]) as client:
            print([tool.name for tool in client.list_tools()])
            result = client.call_tool("get_weather", {"city": "Kraków"})
            print(result.text)

    Usually made by :func:`connect`, which also runs :meth:`initialize`.

    Args:
        transport: the connection to the server.
        timeout: the default seconds each call waits for its answer.
        client_info: ``{"name": ..., "version": ...}`` sent in ``initialize``.
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``).
    """

    def __init__(self, transport: Any, *, timeout: float = 60.0, client_info: Optional[dict] = None,
                 trace: Optional[bool] = None) -> None:
        if trace is None:
            trace = os.environ.get("MINIMCP_TRACE", "") not in ("", "0", "false", "no")
        self.client_info = client_info or {"name": "minimcp", "version": __version__}
        self.session = Session(transport, owner=self, timeout=timeout, trace=trace, name="client")
        #: Set by initialize(): what the server said about itself.
        self.protocol_version: Optional[str] = None
        self.server_info: dict = {}
        self.server_capabilities: dict = {}
        self.instructions: Optional[str] = None

    def __repr__(self) -> str:
        name = self.server_info.get("name", "?")
        state = "closed" if self.session.closed else "open"
        return f"<Client server={name!r} version={self.protocol_version} {state}>"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def initialize(self, timeout: Optional[float] = None) -> dict:
        """Run the handshake (spec basic/lifecycle "Initialization") and return its result.

        Offers :data:`~minimcp.types.PROTOCOL_VERSION` and accepts any version
        in :data:`~minimcp.types.LEGACY_VERSIONS` that the server picks.

        Raises:
            ProtocolError: the server chose a version minimcp does not speak.
        """
        if self.session._reader is None:
            self.session.start()
        result = self.session.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": self.client_info,
        }, timeout=timeout)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise ProtocolError(f"the server chose protocol version {version!r}; minimcp speaks "
                                f"{', '.join(LEGACY_VERSIONS)}")
        self.protocol_version = version
        self.server_info = result.get("serverInfo") or {}
        self.server_capabilities = result.get("capabilities") or {}
        self.instructions = result.get("instructions")
        self.session.allow_batches = version == "2025-03-26"
        self.session.notify("notifications/initialized")
        return result

    # -- calls ------------------------------------------------------------------------

    def request(self, method: str, params: Optional[dict] = None, *, timeout: Optional[float] = None,
                on_progress: Optional[ProgressCallback] = None) -> Any:
        """Send any request and return its raw result: the escape hatch for methods
        this class has no call for yet.

        Raises:
            RPCError, Timeout, ConnectionClosed: see :meth:`Session.request`.
        """
        return self.session.request(method, params, timeout=timeout, on_progress=on_progress)

    def ping(self, timeout: Optional[float] = None) -> None:
        """Check that the server answers (spec basic/utilities/ping)."""
        self.session.request("ping", None, timeout=timeout)

    def iter_tools(self, timeout: Optional[float] = None) -> Iterator[Tool]:
        """Yield the server's tools, fetching pages as they are needed."""
        for raw in self._paginate("tools/list", "tools", timeout):
            yield Tool(raw)

    def list_tools(self, timeout: Optional[float] = None) -> List[Tool]:
        """Return all the server's tools, following ``nextCursor`` to the end."""
        return list(self.iter_tools(timeout))

    def call_tool(self, name: str, arguments: Optional[dict] = None, *, timeout: Optional[float] = None,
                  on_progress: Optional[ProgressCallback] = None,
                  max_timeout: Optional[float] = None) -> ToolResult:
        """Call a tool and return its result.

        A tool that fails returns a result with ``is_error`` set (the model
        should see it); only protocol failures raise.

        Args:
            name: the tool's name.
            arguments: its arguments, a JSON object.
            timeout: seconds to wait (default: the client's).
            on_progress: ``callback(progress, total, message)`` for progress reports.
            max_timeout: let progress reports extend ``timeout``, up to this many seconds.

        Raises:
            RPCError: the server refused the call (say, ``-32602`` for an unknown tool).
            Timeout: no answer in time; the call was cancelled at the server.
            ConnectionClosed: the server went away.
        """
        params: Dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        result = self.session.request("tools/call", params, timeout=timeout, on_progress=on_progress,
                                      max_timeout=max_timeout)
        return ToolResult(result)

    def _paginate(self, method: str, key: str, timeout: Optional[float]) -> Iterator[dict]:
        cursor = None
        seen = set()
        for _ in range(MAX_PAGES):
            result = self.session.request(method, {"cursor": cursor} if cursor is not None else None,
                                          timeout=timeout)
            yield from result.get(key) or []
            cursor = result.get("nextCursor")
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolError(f"the server's {method} cursors loop ({cursor!r} came twice)")
            seen.add(cursor)
        raise ProtocolError(f"{method} did not end after {MAX_PAGES} pages")

    # -- the end ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection: a child server is shut down, every thread joined. Idempotent."""
        self.session.close()


def connect(target: Union[Sequence[str], str], *, server: Any = None, env: Optional[Dict[str, str]] = None,
            cwd: Optional[str] = None, on_stderr: Optional[Callable[[str], None]] = None,
            timeout: float = 60.0, client_info: Optional[dict] = None,
            trace: Optional[bool] = None) -> Client:
    """Connect to an MCP server, run the handshake, and return the :class:`Client`.

    Example::

        with minimcp.connect(["python", "server.py"]) as client:      # stdio
            ...
        with minimcp.connect("memory", server=my_server) as client:   # in-process
            ...

    Args:
        target: a command (list of strings) to start as a stdio server, or
            ``"memory"`` with ``server=``.
        server: the :class:`~minimcp.Server` to connect to in memory.
        env: extra environment variables for a stdio server (merged over ours).
        cwd: a stdio server's working directory.
        on_stderr: ``callback(line)`` for a stdio server's stderr lines
            (default: write them to our ``sys.stderr``).
        timeout: the default seconds each call waits, the handshake included.
        client_info: ``{"name": ..., "version": ...}`` to introduce ourselves.
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``).

    Raises:
        FileNotFoundError: the server command does not exist.
        ConnectionClosed: the server exited before the handshake finished
            (the exception carries its exit code and last stderr lines).
        ValueError: the target is not something minimcp can connect to.
    """
    if isinstance(target, (list, tuple)):
        from .transports.stdio import SubprocessTransport

        transport: Any = SubprocessTransport(target, env=env, cwd=cwd, on_stderr=on_stderr)
    elif target == "memory":
        if server is None:
            raise ValueError('connect("memory") needs server=the Server to talk to')
        from .transports.memory import pair

        transport, server_end = pair()
        served = server.serve(server_end)
        transport.on_close = served.session.close
    elif isinstance(target, str) and target.split(":", 1)[0] in ("http", "https", "ws", "wss"):
        raise ValueError(f"cannot connect to {target!r}: HTTP and WebSocket transports are not in "
                         f"this version of minimcp yet; use a command list for stdio")
    else:
        raise ValueError(f"cannot connect to {target!r}: pass a command list such as "
                         f"['python', 'server.py'], or 'memory' with server=...")
    client = Client(transport, timeout=timeout, client_info=client_info, trace=trace)
    try:
        client.initialize()
    except BaseException:
        client.close()
        raise
    return client

