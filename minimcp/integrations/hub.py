"""ToolHub: the tools of several MCP servers as one list, under names an LLM API accepts.

The hub connects to each server with :func:`minimcp.connect`, names every tool
``server__tool`` (only ``A-Z a-z 0-9 _ -``, at most 64 characters: what the
OpenAI and Anthropic APIs accept), routes a call by that name to the right
:class:`~minimcp.Client`, and closes them all.

It is a thin layer, and stays one: it does not talk to a model (that is
:mod:`minimcp.integrations.adapters`), call servers in parallel, or merge resources and
prompts (use ``hub.clients[name]`` for those).
"""

import hashlib
import os
import re
import string
from collections import Counter
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..client.client import Client
from ..client.config import PathLike, parse_entry
from ..client.connect import connect
from ..client.results import Tool, ToolResult
from ..engine.inflight import ProgressCallback
from ..errors import RPCError, ServerStartError
from ..protocol.jsonrpc import INVALID_PARAMS
from ..server.server import Server

#: The longest tool name the LLM APIs take (OpenAI and Anthropic: ``^[a-zA-Z0-9_-]{1,64}$``).
MAX_NAME = 64
SEPARATOR = "__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

Target = Union[Sequence[str], str, Dict[str, Any], Server, Client]


def qualified_names(pairs: Sequence[Tuple[str, str]]) -> List[str]:
    """Name each ``(server, tool)`` pair ``server__tool``, safe for LLM APIs and unique.

    Characters outside ``[A-Za-z0-9_-]`` become ``_`` and the name is cut to
    :data:`MAX_NAME`. Pairs whose names still collide all get a suffix from a
    hash of the pair: the result depends on the pairs only, not on their
    order, so a tool keeps its name when the servers are listed differently.

    Args:
        pairs: distinct ``(server name, tool name)`` pairs.

    Returns:
        The names, in the order of ``pairs``.
    """
    wanted = [_UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")[:MAX_NAME] for server, tool in pairs]
    counts = Counter(wanted)
    names = []
    for (server, tool), name in zip(pairs, wanted):
        if counts[name] > 1:
            digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
            name = f"{name[:MAX_NAME - len(digest) - 1]}_{digest}"
        names.append(name)
    return names


def _servers(servers: Union[Mapping[str, Target], Iterable[str]]) -> List[Tuple[str, Target]]:
    """The (name, target) pairs of the hub's ``servers`` argument; a bare name is its own target."""
    if isinstance(servers, str):
        raise TypeError("servers must be a list of names or a dict of name -> target, not a string")
    if isinstance(servers, Mapping):
        return [(str(name), target) for name, target in servers.items()]
    names = list(servers)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"servers named more than once: {', '.join(repeated)}")
    return [(name, name) for name in names]


def _open(name: str, target: Target, config: Optional[PathLike], options: Dict[str, Any]) -> Client:
    """Connect to one target (see :class:`ToolHub` for what a target may be)."""
    if isinstance(target, Client):
        return target
    if isinstance(target, Server):
        return connect("memory", server=target, **options)
    if isinstance(target, dict):
        entry = parse_entry(target, name)
        # As in connect(): what the caller passes wins over the entry.
        if "url" in entry:
            # A Codex-shaped entry's bearer_token_env_var / env_http_headers name environment
            # variables (their names were checked): those headers, and only those, are read from it.
            from_env = {key: string.Template(value).safe_substitute(os.environ)
                        for key, value in (entry.get("env_headers") or {}).items()}
            options = {**options, "headers": {**entry["headers"], **from_env, **(options.get("headers") or {})}}
            return connect(entry["url"], **options)
        options = {**options, "env": {**entry["env"], **(options.get("env") or {})},
                   "cwd": options.get("cwd") or entry["cwd"]}
        return connect(entry["command"], **options)
    if isinstance(target, str):
        return connect(target, config=config, **options)  # a name in a host config file
    return connect(list(target), **options)


class ToolHub:
    """The tools of several MCP servers, as one list a model can call.

    Example::

        with ToolHub({"weather": [sys.executable, "examples/weather_server.py"]}) as hub:
            print([tool.name for tool in hub.tools])    # ['weather__get_weather', ...]
            print(hub.call_tool("weather__get_weather", {"city": "Tokyo"}).text)

    Servers are connected one after the other, in the order given. A
    :class:`~minimcp.Client` handed in belongs to the hub from then on:
    :meth:`close` closes it with the rest.

    Args:
        servers: a list of server names from a host config file (see
            :mod:`minimcp.client.config`), or a dict of name -> target, where a target
            is a command list, a config entry (``{"command", "args", "env",
            "cwd"}`` or ``{"url", "headers"}``, taken as written: no ``${VAR}`` expansion), a
            :class:`~minimcp.Server` (connected in memory), a connected
            :class:`~minimcp.Client`, or a name in the config file.
        config: the host config file for servers given by name (default: the
            usual places, see :func:`minimcp.client.config.find_server`).
        connect_options: keyword arguments for every :func:`minimcp.connect`
            (``timeout=``, ``on_stderr=``, ``client_info=``, handlers ...).

    Raises:
        ServerStartError: a server could not be started or connected to
            (``.server`` names it); every client opened or handed in is closed.
    """

    def __init__(self, servers: Union[Mapping[str, Target], Iterable[str]], *,
                 config: Optional[PathLike] = None, **connect_options: Any) -> None:
        #: The connected clients, by server name, in the order given.
        self.clients: Dict[str, Client] = {}
        targets = _servers(servers)
        for name, target in targets:
            try:
                self.clients[name] = _open(name, target, config, connect_options)
            except BaseException as exc:
                self.close()
                for _, other in targets:  # clients handed in but not reached yet
                    if isinstance(other, Client):
                        other.close()
                if not isinstance(exc, Exception):  # Ctrl-C stays Ctrl-C
                    raise
                raise ServerStartError(name, exc) from exc

    def __repr__(self) -> str:
        return f"<ToolHub servers={list(self.clients)}>"

    def __enter__(self) -> "ToolHub":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _table(self) -> Dict[str, Tuple[str, Tool]]:
        """Qualified name -> (server, tool), from each client's cached tool list."""
        pairs: Dict[Tuple[str, str], Tool] = {}
        for server, client in self.clients.items():
            if "tools" not in client.server_capabilities:  # a server of resources or prompts only
                continue
            for tool in client.tools:
                pairs.setdefault((server, tool.name), tool)  # a tool listed twice counts once
        names = qualified_names(list(pairs))
        return {name: (server, tool) for name, ((server, _), tool) in zip(names, pairs.items())}

    @property
    def tools(self) -> List[Tool]:
        """Every server's tools, each renamed ``server__tool`` (see :func:`qualified_names`).

        Each client fetches its list once, and again after the server says
        it changed (``notifications/tools/list_changed``).
        """
        return [Tool({**tool.raw, "name": name}) for name, (_, tool) in self._table().items()]

    def list_tools(self, *, timeout: Optional[float] = None) -> List[Tool]:
        """Fetch every server's tools afresh and return them as :attr:`tools` does."""
        for client in self.clients.values():
            if "tools" in client.server_capabilities:
                client.list_tools(timeout=timeout)
        return self.tools

    def resolve(self, name: str) -> Tuple[str, str]:
        """Return ``(server name, tool name)`` for a qualified tool name.

        Raises:
            RPCError: ``-32602``, no tool has that name (what a server answers
                for an unknown tool, so a caller handles one error either way).
        """
        found = self._table().get(name)
        if found is None:
            raise RPCError(INVALID_PARAMS, f"unknown tool: {name!r}")
        return found[0], found[1].name

    def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None,
                  on_progress: Optional[ProgressCallback] = None,
                  max_timeout: Optional[float] = None) -> ToolResult:
        """Call a tool by its qualified name, on the server that has it.

        Args:
            name: the qualified name, ``server__tool``, as :attr:`tools` gives it.
            arguments, timeout, on_progress, max_timeout: as for :meth:`Client.call_tool`.

        Returns:
            The tool's result; a failing tool is a result with ``is_error`` set.

        Raises:
            RPCError: ``-32602`` for an unknown name, or what the server answered.
            Timeout, ConnectionClosed: as for :meth:`Client.call_tool`.
        """
        server, tool = self.resolve(name)
        try:
            result = self.clients[server].call_tool(tool, arguments, timeout=timeout, on_progress=on_progress,
                                                    max_timeout=max_timeout)
        except RPCError as exc:
            raise RPCError(exc.code, _as_called(exc.message, tool, name), exc.data) from None
        if not result.is_error:
            return result
        # The model called `name`: an error naming the server's own `tool` would send it looking
        # for a tool it does not have. Quoted names only (the way servers quote them).
        content = [{**block, "text": _as_called(block["text"], tool, name)} if block.get("type") == "text"
                   else block for block in result.content]
        return ToolResult({**result.raw, "content": content})

    def close(self) -> None:
        """Close every client (stopping the servers it started), last opened first. Idempotent."""
        errors = []
        for client in reversed(list(self.clients.values())):
            try:
                client.close()
            except Exception as exc:  # one failing close must not leave the others open
                errors.append(exc)
        if errors:
            raise errors[0]


def _as_called(text: str, tool: str, name: str) -> str:
    """``text`` with the quoted server-side ``tool`` name replaced by the qualified ``name``."""
    if tool == name:
        return text
    return text.replace(repr(tool), repr(name)).replace(f'"{tool}"', f'"{name}"')
