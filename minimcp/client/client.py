"""The client: connect to an MCP server and call it with plain blocking calls.

:func:`connect` picks a transport from the target (a command list means a
child process over stdio, ``"memory"`` an in-process server), then runs the
handshake; :class:`Client` turns MCP methods into Python calls. Every call
blocks the calling thread only, takes ``timeout=``, and is safe to make
from many threads at once on one client.

What the server sends unasked — requests for sampling, elicitation and
roots, and notifications — goes to the handlers given to ``connect()``:
requests run on a worker thread, notification callbacks on the dispatcher thread,
in the order they came; never on the reader. The server's log messages go to the
``logging`` module unless ``on_log=`` takes them.

:meth:`Client.submit_tool_call` starts a call and returns a
:class:`concurrent.futures.Future` at once (``client/futures.py``, loaded on first use).
"""

import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..engine.inflight import ProgressCallback
from ..engine.middleware import Middleware
from ..engine.session import Handler, Session
from ..errors import CapabilityError, MCPError, ProtocolError
from ..logs import get_logger, tracing
from ..protocol.apps import EXTENSION as APPS_EXTENSION
from ..protocol.apps import extension_settings
from ..protocol.levels import LOG_LEVELS, PYTHON_LEVELS
from ..protocol.stateless import TASKS_EXTENSION
from ..protocol.versions import HANDSHAKE_VERSIONS, PROTOCOL_VERSION, SDK_VERSION, STATELESS_VERSION, knows
from . import answers, handshake, tasks, wire
from .answers import Roots
from .results import Completion, Prompt, PromptResult, Resource, ResourceResult, ResourceTemplate, Tool, ToolResult
from .stateless import Listener, StatelessSide

if TYPE_CHECKING:
    from concurrent.futures import Future
    from logging import Logger

    from .apps import AppView
    from .futures import Calls

log: "Logger" = get_logger(__name__)

#: How many pages a list call follows before deciding the server loops.
MAX_PAGES = 10_000
#: What the client can speak, for ``protocol=``.
PROTOCOLS = ("auto", STATELESS_VERSION) + HANDSHAKE_VERSIONS


def check_protocol(protocol: str) -> str:
    """Return ``protocol`` if it is one of :data:`PROTOCOLS`; raise ValueError if not."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    return protocol


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
        trace: print every message to stderr (also ``MINIMCP_TRACE=1``): each once, with
            its direction, peer and the time since the line above; ``MINIMCP_TRACE=pretty``
            indents, ``=both`` adds the other side, ``=full`` leaves nothing out.
        sampling_handler: ``handler(params) -> CreateMessageResult dict``,
            answering the server's ``sampling/createMessage``; declares ``sampling``.
        sampling_tools: the sampling handler can use tools (declares ``sampling.tools``).
        elicitation_handler: ``handler(params) -> ElicitResult dict`` for
            ``elicitation/create``; declares ``elicitation``. Schema defaults
            fill in fields an accepted form left out.
        elicitation_modes: what the elicitation handler can do: ``("form",)``
            (the default) and/or ``"url"`` (2025-11-25).
        roots: a list of paths, ``file://`` URIs or ``{"uri", "name"}`` dicts,
            or a callable returning one, answering ``roots/list``; declares ``roots``.
        on_log: ``callback(params)`` for ``notifications/message``. By default each
            message becomes a ``logging`` record of the logger
            ``minimcp.server_log.<server name>`` (see :meth:`server_logger_name`).
        log_level: the least severe log messages to ask the server for, at connect and
            whenever the client connects again: ``"debug"`` ... ``"emergency"``. By default
            ``"info"`` when ``on_log`` is given; else the level set on the
            ``minimcp.server_log`` logger (or the server's own below it), if one is set;
            else none is asked for, and the server sends what it sends unasked (under
            2026-07-28: nothing). Logging is deprecated from 2026-07-28 (SEP-2577).
        on_progress: ``callback(params)`` for every progress notification.
        on_tools_changed, on_resources_changed, on_prompts_changed: ``callback()``
            when the server says a list changed.
        on_resource_updated: ``callback(uri)`` for a subscribed resource that changed.
        on_notification: ``callback(method, params)`` for every notification.
        protocol: ``"auto"`` (the default) speaks 2026-07-28 to a server that
            does and falls back to the handshake; a version forces that one.
        middleware: functions that wrap every request the client sends or answers
            (see :meth:`add_middleware`).
        apps: declare the MCP Apps extension (``io.modelcontextprotocol/ui``): this client
            renders views (``text/html;profile=mcp-app``). A server may then show it the tools
            only a view calls, and say less in text; see :meth:`read_app`.

    The calls are the same in both eras: on a 2026-07-28 server
    ``set_logging_level`` sets the level each request asks for,
    ``subscribe_resource`` becomes a ``subscriptions/listen`` request, and
    the server's questions (sampling, elicitation, roots) come as
    ``input_required`` results that the client answers and retries by itself.

    Attributes:
        protocol_version: the version the server and client agreed on (None
            until :meth:`initialize`).
        server_info: what the server said about itself: ``{"name", "version"}``,
            and ``"title"`` from 2025-06-18.
        server_capabilities: the capabilities the server declared; a call whose
            capability is missing raises :class:`~minimcp.CapabilityError`.
        instructions: the server's instructions for the model, or None.
        era: ``"stateless"`` when the server speaks 2026-07-28, else ``"handshake"``.
        apps: whether the client declares the MCP Apps extension (see ``apps``).
        stateless: the 2026-07-28 side of this client
            (:class:`~minimcp.client.stateless.StatelessSide`): its cache,
            subscriptions and listen request.
        session: the :class:`~minimcp.engine.session.Session` carrying the messages.
    """

    def __init__(self, transport: Any, *, timeout: float = 60.0, client_info: Optional[Dict[str, Any]] = None,
                 trace: Optional[bool] = None, sampling_handler: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None,
                 sampling_tools: bool = False, elicitation_handler: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None,
                 elicitation_modes: Sequence[str] = ("form",), roots: Optional[Roots] = None,
                 on_log: Optional[Callable[[Dict[str, Any]], Any]] = None, on_progress: Optional[Callable[[Dict[str, Any]], Any]] = None,
                 on_tools_changed: Optional[Callable[[], Any]] = None,
                 on_resources_changed: Optional[Callable[[], Any]] = None,
                 on_prompts_changed: Optional[Callable[[], Any]] = None,
                 on_resource_updated: Optional[Callable[[str], Any]] = None,
                 on_notification: Optional[Callable[[str, Dict[str, Any]], Any]] = None, protocol: str = "auto",
                 middleware: Iterable[Middleware] = (), log_level: Optional[str] = None, apps: bool = False) -> None:
        self.protocol: str = check_protocol(protocol)
        #: Whether the client declares the MCP Apps extension (it renders views).
        self.apps: bool = apps
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r}; use one of {', '.join(LOG_LEVELS)}")
        #: The level of log messages asked for at connect (None: decided then, see ``log_level``).
        self.log_level: Optional[str] = log_level
        if trace is None:
            trace = tracing()
        self.client_info: Dict[str, Any] = client_info or {"name": "minimcp", "version": SDK_VERSION}
        self.sampling_handler = sampling_handler
        self.sampling_tools = sampling_tools
        self.elicitation_handler = elicitation_handler
        self.elicitation_modes: Tuple[str, ...] = tuple(elicitation_modes)
        self.roots: Optional[Roots] = roots
        # (kept once, so that "is it ours?" is an identity check)
        self._logs_to_logging: Callable[[Dict[str, Any]], None] = self._log_to_logging
        self.on_log: Callable[[Dict[str, Any]], Any] = on_log if on_log is not None else self._logs_to_logging
        self.on_progress = on_progress
        self.on_notification = on_notification
        self.on_tools_changed = on_tools_changed
        self.on_resources_changed = on_resources_changed
        self.on_prompts_changed = on_prompts_changed
        self.on_resource_updated = on_resource_updated
        answers: Dict[str, Handler] = {"sampling/createMessage": self._answer_sampling,
                                       "elicitation/create": self._answer_elicitation,
                                       "roots/list": self._answer_roots}
        notified: Dict[str, Callable[..., Any]] = {"*": self._notified}  # "*": (method, params) of each
        #: What every request passes through, the first outermost (see :meth:`add_middleware`).
        self.middleware: List[Middleware] = list(middleware)
        self.session: Session = Session(transport, answers, notified, owner=self, timeout=timeout,
                               trace=trace, name="client", middleware=self.middleware,
                               batches=lambda: knows(self.protocol_version or PROTOCOL_VERSION, "batches"))
        self.stateless: StatelessSide = StatelessSide(self.session, answers=answers, capabilities=self.capabilities,
                                       client_info=self.client_info, refresh_tools=self.list_tools)
        self.protocol_version: Optional[str] = None
        self.server_info: Dict[str, Any] = {}
        self.server_capabilities: Dict[str, Any] = {}
        self.instructions: Optional[str] = None
        self._tools: Optional[List[Tool]] = None
        # (the tool list they were read from, and each listed tool's execution.taskSupport)
        self._task_supports: Optional[Tuple[List[Tool], Dict[str, str]]] = None
        # Tasks being followed, by id, and the progress tokens of calls made as tasks: what
        # client/wire.py routes the server's status and progress notifications to.
        self._tasks_followed: Dict[str, tasks.TaskHandle] = {}
        self._task_progress: Dict[str, tasks.Watch] = {}
        self._calls: Optional[Calls] = None  # the submitted calls' threads (client/futures.py), made on first use
        self._said_logging_is_deprecated = False
        transport.on_session_expired = self.initialize  # HTTP: a 404 means "start a new session"

    def __repr__(self) -> str:
        name = self.server_info.get("name", "?")
        state = "closed" if self.session.closed else "open"
        return f"<Client server={name!r} version={self.protocol_version} {state}>"

    def add_middleware(self, middleware: Middleware) -> Middleware:
        """Wrap every request this client sends (and answers: the server's sampling, elicitation
        and roots requests) in ``middleware(request, call_next)``, whatever the transport; also a
        decorator. Added last, it runs innermost. ``request`` is an
        :class:`~minimcp.engine.middleware.OutgoingRequest` (``method``, ``params``, which it may
        change; ``outgoing`` is True) or the context of a request the client answers
        (``outgoing`` is False); ``call_next(request)`` returns the result or raises. See
        ``minimcp/engine/middleware.py``."""
        self.middleware.append(middleware)
        return middleware

    @property
    def era(self) -> str:
        """``"stateless"`` once the server and client agreed on 2026-07-28 (each request carries
        its version and capabilities), else ``"handshake"`` (``initialize`` first; the versions
        up to 2025-11-25)."""
        return "stateless" if self.stateless.active else "handshake"

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- the handshake ------------------------------------------------------------------------

    def capabilities(self) -> Dict[str, Any]:
        """The capabilities this client declares: one per handler it was given (read at each use: a
        handler may be set later; 2026-07-28 has no roots ``listChanged``)."""
        stateless = self.stateless.active
        caps: Dict[str, Any] = {}
        if self.sampling_handler is not None:
            caps["sampling"] = {"tools": {}} if self.sampling_tools else {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.roots is not None:
            caps["roots"] = {} if stateless else {"listChanged": True}
        if stateless:  # a server may answer tools/call with a task: client/tasks.py follows it
            caps["extensions"] = {TASKS_EXTENSION: {}}
        if self.apps:  # MCP Apps, in both eras (ext-apps apps.mdx "Client<>Server Capability Negotiation")
            caps["extensions"] = {**caps.get("extensions", {}), APPS_EXTENSION: extension_settings()}
        return caps

    def initialize(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Find out which era the server is in and introduce the client; return what the server said.

        With ``protocol="auto"`` (or ``"2026-07-28"``) this asks ``server/discover``
        first (spec 2026-07-28 "era detection"); a handshake-era server gets the
        handshake (spec basic/lifecycle "Initialization"), which offers
        :data:`~minimcp.protocol.versions.PROTOCOL_VERSION` and accepts any version
        in :data:`~minimcp.protocol.versions.HANDSHAKE_VERSIONS` that the server picks.

        ``timeout`` (default: the client's) bounds the whole of it: with
        ``protocol="auto"`` the probe may take half, so a server that ignores
        it still has the rest for ``initialize``.

        Raises:
            ProtocolError: the server chose a version minimcp does not speak, or
                does not speak the one ``protocol=`` asked for.
            Timeout: no answer within ``timeout``.
        """
        result = handshake.introduce(self, timeout)
        self._ask_for_logs()
        return result

    def _call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None,
              on_progress: Optional[ProgressCallback] = None, max_timeout: Optional[float] = None) -> Any:
        """Send a request (on a 2026-07-28 server: with ``_meta``, answering input-required rounds)."""
        if not self.stateless.active:  # (the attribute, not the property: this is every call's path)
            return self.session.request(method, params, timeout=timeout, on_progress=on_progress,
                                        max_timeout=max_timeout)
        return self.stateless.call(method, params, timeout=timeout, on_progress=on_progress,
                                   max_timeout=max_timeout)

    def _require(self, capability: str, sub: Optional[str] = None) -> None:
        """Refuse before sending when the server did not declare what a call needs."""
        declared = self.server_capabilities.get(capability)
        if declared is None or (sub is not None and not (declared or {}).get(sub)):
            name = f"{capability}.{sub}" if sub else capability
            raise CapabilityError(f"the server {self.server_info.get('name', '')!r} did not declare the "
                                  f"{name!r} capability")

    # -- calls ----------------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None,
                on_progress: Optional[ProgressCallback] = None) -> Any:
        """Send any request and return its raw result: the escape hatch for methods
        this class has no call for.

        Raises:
            RPCError, Timeout, ConnectionClosed: see :meth:`Session.request`.
        """
        return self._call(method, params, timeout=timeout, on_progress=on_progress)

    def ping(self, timeout: Optional[float] = None) -> None:
        """Check that the server answers (spec basic/utilities/ping; ``server/discover`` on 2026-07-28)."""
        if self.stateless.active:
            self.session.request("server/discover", {"_meta": self.stateless.meta()}, timeout=timeout)
        else:
            self.session.request("ping", None, timeout=timeout)

    def _paginate(self, method: str, key: str, timeout: Optional[float], cursor: Optional[str]) -> Iterator[Dict[str, Any]]:
        seen = set()
        for _ in range(MAX_PAGES):
            result = wire.result(method, self._call(method, {"cursor": cursor} if cursor is not None else None,
                                                    timeout=timeout))
            yield from wire.objects(result, key, f"the server's answer to {method}")
            cursor = wire.field(result, "nextCursor", str, f"the server's answer to {method}")
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolError(f"the server's {method} cursors loop ({cursor!r} came twice)")
            seen.add(cursor)
        raise ProtocolError(f"{method} did not end after {MAX_PAGES} pages")

    def iter_tools(self, *, cursor: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[Tool]:
        """Yield the server's tools, fetching pages as they are needed (from ``cursor``)."""
        self._require("tools")
        for raw in self._paginate("tools/list", "tools", timeout, cursor):
            yield Tool(raw)

    def list_tools(self, *, timeout: Optional[float] = None) -> List[Tool]:
        """Return all the server's tools, following ``nextCursor`` to the end.

        Over 2026-07-28 HTTP, a tool whose ``x-mcp-header`` annotations break
        the rules is left out (with a warning), as the spec requires.
        """
        tools = list(self.iter_tools(timeout=timeout))
        if self.stateless.active:
            tools = self.stateless.mirror_headers(tools)
        self._tools = tools
        return tools

    @property
    def tools(self) -> List[Tool]:
        """The server's tools, fetched once and again after ``notifications/tools/list_changed``."""
        tools = self._tools
        return tools if tools is not None else self.list_tools()

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None,
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

        A tool the server runs as a task works the same (``client/tasks.py``): one that
        requires a task (2025-11-25: ``execution.taskSupport`` ``"required"`` in
        ``tools/list``, fetched if need be) is called as one, and any task the server makes
        is followed to its end: polled at the server's pace, its questions answered by this
        client's handlers, its progress (and, when it sends none, each new status message)
        given to ``on_progress``, and cancelled (``tasks/cancel``) on timeout or Ctrl-C.

        Raises:
            RPCError: the server refused the call (say, ``-32602`` for an unknown tool), or
                its task failed with this error.
            Timeout: no answer in time; the call (or its task) was cancelled at the server.
            TaskCancelled: the task the server ran it as was cancelled.
            ConnectionClosed: the server went away.
        """
        if self.server_capabilities.get("tools") is None:  # (what _require checks, on every call's path)
            self._require("tools")
        params: Dict[str, Any] = {"name": name, "arguments": arguments if arguments is not None else {}}
        if on_progress is not None:
            on_progress = wire.checked_progress(on_progress)
        if not self.stateless.active and self.server_capabilities.get("tasks") is None:  # no tasks: one request
            return ToolResult(self.session.request("tools/call", params, timeout=timeout, on_progress=on_progress,
                                                   max_timeout=max_timeout))
        return tasks.call_tool(self, params, timeout, on_progress, max_timeout)

    def submit_tool_call(self, name: str, arguments: Optional[Dict[str, Any]] = None, *,
                         timeout: Optional[float] = None, on_progress: Optional[ProgressCallback] = None,
                         max_timeout: Optional[float] = None) -> "Future[ToolResult]":
        """Start a tool call and return its :class:`concurrent.futures.Future` at once.

        The thread-based twin of ``asyncio.gather``: submit many, then take them with
        ``concurrent.futures.as_completed()`` or ``wait()``. Named after
        ``Executor.submit()``, which also schedules work and returns its Future::

            from concurrent.futures import as_completed

            futures = {client.submit_tool_call("get_weather", {"city": c}): c for c in cities}
            for future in as_completed(futures, timeout=30):
                print(futures[future], future.result().text)

        The call is what :meth:`call_tool` makes, on one of the client's call threads (at
        most :data:`~minimcp.client.futures.CALL_THREADS` in flight; more wait their turn).
        ``future.result()`` returns the :class:`ToolResult` or raises what ``call_tool()``
        would: ``Timeout`` (after ``timeout`` seconds from sending; the server was told to
        cancel), ``RPCError``, ``ConnectionClosed`` (also for every call still pending when
        the client closes). ``future.cancel()`` works until the answer is in, and tells the
        server (``notifications/cancelled``); see :class:`~minimcp.client.futures.ToolCallFuture`.

        Args:
            name: the tool's name.
            arguments: its arguments, a JSON object.
            timeout: seconds to wait for the answer once the call is sent (default: the client's).
            on_progress: ``callback(progress, total, message)`` for progress reports.
            max_timeout: let progress reports extend ``timeout``, up to this many seconds.

        Returns:
            The call's Future (a :class:`~minimcp.client.futures.ToolCallFuture`).
        """
        from . import futures  # (concurrent.futures is loaded here: a client that never submits skips it)

        return futures.submit(self, name, arguments, timeout, on_progress, max_timeout)

    def start_task(self, name: str, arguments: Optional[Dict[str, Any]] = None, *,
                   timeout: Optional[float] = None) -> "tasks.TaskHandle":
        """Call a tool as a task; return the server's task at once, as a
        :class:`~minimcp.client.tasks.TaskHandle` (``wait()``, ``refresh()``, ``cancel()``).

        On a 2025-11-25 server the call asks for a task (``params.task``); on a 2026-07-28 one
        the server decides, and may answer at once: then the handle has ``task_id`` None and
        holds the result (``done``, ``result()``).

        Raises:
            CapabilityError: the server runs no tool as a task, or (2025-11-25) its
                ``tools/list`` does not let this one run as a task; nothing was sent.
            ProtocolError: the server answered with neither a task nor a tool result.
        """
        self._require("tools")
        return tasks.start_task(self, name, arguments, timeout)

    def task(self, task_id: str) -> "tasks.TaskHandle":
        """The handle of a task by its id: one started earlier, maybe by another connection."""
        return tasks.TaskHandle(self, task_id)

    def _task_support(self, name: Any, timeout: Optional[float]) -> str:
        """A tool's ``execution.taskSupport`` (``"forbidden"`` if unlisted), from the tool list
        (fetched if the client has none, or the server said it changed)."""
        tools = self._tools
        if tools is None:
            tools = self.list_tools(timeout=timeout)
        known = self._task_supports
        if known is None or known[0] is not tools:
            known = self._task_supports = (tools, {tool.name: tool.task_support for tool in tools})
        return known[1].get(name, "forbidden")

    def iter_resources(self, *, cursor: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[Resource]:
        """Yield the server's resources, page by page (from ``cursor``)."""
        self._require("resources")
        for raw in self._paginate("resources/list", "resources", timeout, cursor):
            yield Resource(raw)

    def list_resources(self, *, timeout: Optional[float] = None) -> List[Resource]:
        """Return all the server's resources, following ``nextCursor`` to the end."""
        return list(self.iter_resources(timeout=timeout))

    def iter_resource_templates(self, *, cursor: Optional[str] = None,
                                timeout: Optional[float] = None) -> Iterator[ResourceTemplate]:
        """Yield the server's resource templates, page by page (from ``cursor``)."""
        self._require("resources")
        for raw in self._paginate("resources/templates/list", "resourceTemplates", timeout, cursor):
            yield ResourceTemplate(raw)

    def list_resource_templates(self, *, timeout: Optional[float] = None) -> List[ResourceTemplate]:
        """Return all the server's resource templates."""
        return list(self.iter_resource_templates(timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Optional[float] = None) -> ResourceResult:
        """Read a resource (``.text`` for text, ``.blob`` for bytes, ``.contents`` for all).

        Raises:
            RPCError: the server has no such resource: ``-32002`` in the
                handshake versions (2024-11-05 to 2025-11-25), ``-32602``
                (invalid params) from 2026-07-28 on, which dropped -32002.
        """
        self._require("resources")
        return ResourceResult(self._call("resources/read", {"uri": uri}, timeout=timeout))

    def read_app(self, uri: str, *, timeout: Optional[float] = None) -> "AppView":
        """Read an MCP App's view (a ``ui://`` resource) and check it is one: its HTML, and how
        a host renders it (``csp``, ``permissions``, ``domain``, ``prefers_border``).

        Example::

            tool = next(tool for tool in client.list_tools() if tool.ui_resource_uri)
            view = client.read_app(tool.ui_resource_uri)
            print(view.html[:60], view.csp, view.prefers_border)

        See :func:`minimcp.client.apps.read_app`, which this calls.

        Raises:
            ProtocolError: the resource is not a view (not ``text/html;profile=mcp-app``).
            RPCError: the server has no such resource.
        """
        from .apps import read_app  # late: a client that reads no view never loads it

        return read_app(self, uri, timeout=timeout)

    def subscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """Ask to be told when ``uri`` changes (see ``on_resource_updated``)."""
        self._require("resources", "subscribe")
        if self.stateless.active:  # 2026-07-28: a listen request carries the subscriptions
            self.stateless.subscribed.add(uri)
            return self._relisten()
        self._call("resources/subscribe", {"uri": uri}, timeout=timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: Optional[float] = None) -> None:
        """Stop being told when ``uri`` changes."""
        self._require("resources", "subscribe")
        if self.stateless.active:
            self.stateless.subscribed.discard(uri)
            return self._relisten()
        self._call("resources/unsubscribe", {"uri": uri}, timeout=timeout)

    def iter_prompts(self, *, cursor: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[Prompt]:
        """Yield the server's prompts, page by page (from ``cursor``)."""
        self._require("prompts")
        for raw in self._paginate("prompts/list", "prompts", timeout, cursor):
            yield Prompt(raw)

    def list_prompts(self, *, timeout: Optional[float] = None) -> List[Prompt]:
        """Return all the server's prompts."""
        return list(self.iter_prompts(timeout=timeout))

    def get_prompt(self, name: str, arguments: Optional[Dict[str, str]] = None, *,
                   timeout: Optional[float] = None) -> PromptResult:
        """Render a prompt with its arguments (strings).

        Raises:
            RPCError: ``-32602`` for an unknown prompt or a missing argument.
        """
        self._require("prompts")
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {k: v if isinstance(v, str) else str(v) for k, v in arguments.items()}
        return PromptResult(self._call("prompts/get", params, timeout=timeout))

    def complete(self, ref: Dict[str, Any], argument: str, value: str, *, context: Optional[Dict[str, str]] = None,
                 timeout: Optional[float] = None) -> Completion:
        """Ask for completions of an argument.

        Example::

            client.complete({"type": "ref/prompt", "name": "forecast"}, "city", "Kr").values

        Args:
            ref: ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``.
            argument: the argument (or template variable) being typed.
            value: what has been typed so far.
            context: arguments already chosen (2025-06-18+).
        """
        if self.protocol_version is None or knows(self.protocol_version, "completions"):  # a flag since 2025-03-26
            self._require("completions")
        params: Dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return Completion(self._call("completion/complete", params, timeout=timeout))

    def set_logging_level(self, level: str, *, timeout: Optional[float] = None) -> None:
        """Ask the server for log messages at ``level`` and above (see ``on_log``); kept as
        :attr:`log_level`, so asked for again when the client connects again.

        On a 2026-07-28 server this warns once (a ``DeprecationWarning``): logging is
        deprecated there (SEP-2577), though it still works, the level riding on each request.
        """
        self._require("logging")
        if self.stateless.active and not self._said_logging_is_deprecated:
            self._said_logging_is_deprecated = True
            import warnings

            warnings.warn("logging is deprecated from MCP 2026-07-28 (SEP-2577), which this server speaks: "
                          "set_logging_level() still works (each request carries the level), but plan for "
                          "the server's stderr or OpenTelemetry instead", DeprecationWarning, stacklevel=2)
        self._set_log_level(level, timeout)
        self.log_level = level

    def _set_log_level(self, level: str, timeout: Optional[float]) -> None:
        if self.stateless.active:  # 2026-07-28: each request asks for its own level
            if level not in LOG_LEVELS:
                raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
            self.stateless.log_level = level
            return
        self._call("logging/setLevel", {"level": level}, timeout=timeout)

    def set_roots(self, roots: Optional[Roots]) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``)."""
        self.roots = roots
        if not self.stateless.active:  # 2026-07-28 asks for roots afresh each time: nothing to tell
            self.session.notify("notifications/roots/list_changed")

    # -- what the server sends ------------------------------------------------------------------

    # The server's requests (read at each call: a handler may be replaced, roots by set_roots).
    def _answer_sampling(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        return answers.sample(self.sampling_handler, params)

    def _answer_elicitation(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        return answers.elicit(self.elicitation_handler, self.elicitation_modes, params)

    def _answer_roots(self, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
        return answers.list_roots(self.roots)

    def _notified(self, method: str, params: Dict[str, Any]) -> None:
        """Route one notification from the server (on the dispatcher thread, in order)."""
        wire.route(self, method, params)

    # -- the server's log messages ----------------------------------------------------------

    def server_logger_name(self) -> str:
        """The ``logging`` logger the server's log messages go to when no ``on_log`` takes
        them: ``minimcp.server_log.<server name>`` (the name as ``serverInfo`` says it,
        letters, digits, ``-`` and ``_`` kept, at most 64 characters)."""
        name = str(self.server_info.get("name") or "server")
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name[:64])
        return f"minimcp.server_log.{safe}"

    def _log_to_logging(self, params: Dict[str, Any]) -> None:
        """The default ``on_log``: one ``logging`` record per log message, at the matching
        level, in the server's logger; the server's own logger name (``logger``) leads the text."""
        data = params.get("data")
        if not isinstance(data, str):
            import json

            data = json.dumps(data, ensure_ascii=False)
        part = params.get("logger")
        get_logger(self.server_logger_name()).log(PYTHON_LEVELS[params["level"]], "%s",
                                                  f"{part}: {data}" if part else data)

    def _ask_for_logs(self) -> None:
        """Ask the server for the log messages someone will see (see ``log_level``): after each
        handshake, since a new session (an HTTP one restarted) starts with none."""
        if self.server_capabilities.get("logging") is None:
            return
        level = self.log_level
        if level is None:
            level = "info" if self.on_log is not self._logs_to_logging else self._level_shown()
        if level is None:  # nobody would see them: ask for none (2026-07-28 HTTP answers in
            return         # one JSON body then, and a handshake needs no logging/setLevel)
        try:
            self._set_log_level(level, None)
        except MCPError as exc:  # the logs are a nicety: the connection stands without them
            log.warning("the server %r refused log level %r: %s", self.server_info.get("name", ""), level, exc)

    def _level_shown(self) -> Optional[str]:
        """The MCP level for a level set on the server's logger or on ``minimcp.server_log``
        (the nearest one set); None when neither has one.

        Only an explicit level counts, not a handler on the root logger: nearly every program
        has one (``logging.basicConfig()``, pytest), and asking every server for its warnings
        would cost each 2026-07-28 HTTP call its one-body answer, for a deprecated feature.
        """
        logging = sys.modules.get("logging")  # never imported: nothing was configured
        if logging is None:
            return None
        logger = logging.getLogger(self.server_logger_name())
        while logger is not None and logger.name.startswith("minimcp.server_log"):
            if logger.level != logging.NOTSET:  # (above CRITICAL: nothing shows, nothing asked for)
                return next((level for level in LOG_LEVELS if PYTHON_LEVELS[level] >= logger.level), None)
            logger = logger.parent
        return None

    # -- 2026-07-28 subscriptions ----------------------------------------------------------

    def listen(self, *, tools: bool = False, prompts: bool = False, resources: bool = False,
               resource_uris: Sequence[str] = ()) -> Listener:
        """Open a ``subscriptions/listen`` request (2026-07-28): the notifications it asks
        for reach this client's ``on_*`` callbacks until ``listener.close()``."""
        return self.stateless.listen(tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris)

    def _relisten(self) -> None:
        """(Re)open the one listen request that feeds the client's callbacks and subscriptions."""
        self.stateless.relisten(tools=self.on_tools_changed is not None, prompts=self.on_prompts_changed is not None,
                                resources=self.on_resources_changed is not None)

    # -- the end ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection: a child server is shut down, every thread joined, every
        submitted call still pending failed with ConnectionClosed. Idempotent."""
        try:
            self.stateless.close()
        finally:
            try:
                self.session.close()
            finally:
                calls = self._calls
                if calls is not None:
                    calls.close()
