"""Host config files, written: install a server into Claude Desktop, Claude Code, Cursor or VS Code.

:mod:`~minimcp.client.config` reads these files; this module adds one entry to
one of them, the way each host documents it:

=================  =========  ===============================================  =============
host               scope      file                                             section
=================  =========  ===============================================  =============
``claude-desktop`` user       ``claude_desktop_config.json`` in Claude's        ``mcpServers``
                              folder (macOS ``~/Library/Application Support``,
                              Windows ``%APPDATA%``, Linux ``~/.config``)
``claude-code``    project    ``.mcp.json`` in the current directory            ``mcpServers``
                   user       ``~/.claude.json``                                ``mcpServers``
``cursor``         user       ``~/.cursor/mcp.json``                            ``mcpServers``
                   project    ``.cursor/mcp.json``                              ``mcpServers``
``vscode``         project    ``.vscode/mcp.json``                              ``servers``
                   user       ``mcp.json`` in VS Code's ``User`` folder         ``servers``
=================  =========  ===============================================  =============

The first scope of a host is its default. An install merges into what is
there (every other key and server is kept, in order), copies the old file to
``FILE.bak`` first, writes the new one atomically, and refuses to replace a
different entry of the same name unless told to (``force``). JSONC comments
in the old file are not kept in the new one (the backup has them).
"""

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..client.config import _claude_desktop_path, _read_json, vscode_user_path
from ..errors import ConfigError


class Host:
    """One host application: its name, where its config files are, and how it writes an entry."""

    def __init__(self, title: str, section: str, typed: bool, remote: bool, scopes: Dict[str, str]) -> None:
        self.title = title
        self.section = section  # the top-level key holding the servers
        self.typed = typed      # does its entry say "type": "stdio" / "http"?
        self.remote = remote    # does its file take {"url": ...} servers?
        self.scopes = scopes    # scope: path relative to "~" or "." (or a function's name below)

    def path(self, scope: Optional[str] = None) -> str:
        """The config file of ``scope`` (default: the host's first) on this machine, now."""
        scope = scope or next(iter(self.scopes))
        if scope not in self.scopes:
            raise ConfigError(f"{self.title} has no {scope!r} config; use {' or '.join(self.scopes)}")
        where = self.scopes[scope]
        if where == "claude-desktop":
            return _claude_desktop_path()
        if where == "vscode-user":
            return vscode_user_path()
        return os.path.abspath(os.path.expanduser(where))


HOSTS: Dict[str, Host] = {
    "claude-desktop": Host("Claude Desktop", "mcpServers", typed=False, remote=False,
                           scopes={"user": "claude-desktop"}),
    "claude-code": Host("Claude Code", "mcpServers", typed=True, remote=True,
                        scopes={"project": ".mcp.json", "user": "~/.claude.json"}),
    "cursor": Host("Cursor", "mcpServers", typed=False, remote=True,
                   scopes={"user": "~/.cursor/mcp.json", "project": os.path.join(".cursor", "mcp.json")}),
    "vscode": Host("VS Code", "servers", typed=True, remote=True,
                   scopes={"project": os.path.join(".vscode", "mcp.json"), "user": "vscode-user"}),
}


def host(name: str) -> Host:
    """The host called ``name`` (``claude-desktop``, ``claude-code``, ``cursor``, ``vscode``)."""
    if name not in HOSTS:
        raise ConfigError(f"unknown host {name!r}; minimcp installs into {', '.join(HOSTS)}")
    return HOSTS[name]


def make_entry(target: Host, command: Optional[Sequence[str]] = None, url: Optional[str] = None,
               env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """The entry for a stdio server (``command``: argv) or a remote one (``url``), in ``target``'s format."""
    if url is not None:
        if not target.remote:
            raise ConfigError(f"{target.title}'s config file takes stdio servers only; add a remote server "
                              f"in its settings (Connectors) instead")
        return {"type": "http", "url": url} if target.typed else {"url": url}
    if not command:
        raise ConfigError("no server command given")
    entry: Dict[str, Any] = {"type": "stdio"} if target.typed else {}
    entry.update({"command": command[0], "args": list(command[1:])})
    if env:
        entry["env"] = dict(env)
    return entry


class Change:
    """An install worked out but not yet written: the file, its text before and after."""

    def __init__(self, path: str, before: Optional[str], after: str, replaced: bool) -> None:
        self.path: str = path
        self.before: Optional[str] = before
        self.after = after
        self.replaced: bool = replaced

    @property
    def unchanged(self) -> bool:
        """True when the file already says this (nothing to write)."""
        return self.before is not None and _normal(self.before) == _normal(self.after)

    def diff(self) -> str:
        """The change as a unified diff (what ``--dry-run`` prints)."""
        import difflib  # late: only a dry run shows one

        before = (self.before or "").splitlines(keepends=True)
        label = self.path if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(before, self.after.splitlines(keepends=True), label, self.path))

    def write(self) -> Optional[str]:
        """Write the new file (atomically); return the backup's path, or None for a new file."""
        folder = os.path.dirname(self.path)
        os.makedirs(folder, exist_ok=True)
        backup = None
        if self.before is not None:
            backup = self.path + ".bak"
            with open(backup, "w", encoding="utf-8") as f:
                f.write(self.before)
        temporary = f"{self.path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(self.after)
        os.replace(temporary, self.path)  # a reader sees the old file or the new, never half of one
        return backup


def _normal(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


def plan_install(target: Host, name: str, entry: Dict[str, Any], scope: Optional[str] = None,
                 path: Optional[str] = None, force: bool = False) -> Change:
    """Work out the file ``target`` gets with server ``name`` added (nothing is written yet).

    Raises:
        ConfigError: the file is not valid JSON or not an object, or it has a
            different server called ``name`` and ``force`` is false.
    """
    path = os.path.abspath(os.path.expanduser(path)) if path else target.path(scope)
    before = None
    data: Dict[str, Any] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8-sig") as f:
            before = f.read()
        data = _read_json(path)  # JSONC accepted; the error names the line
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a JSON object at the top level")
    section = data.setdefault(target.section, {})
    if not isinstance(section, dict):
        raise ConfigError(f'{path}: "{target.section}" should be an object of name: server entry')
    old = section.get(name)
    if old is not None and old != entry and not force:
        raise ConfigError(f"{path} already has a server named {name!r} ({json.dumps(old)}); pass --force to "
                          f"replace it, or --name to install under another name")
    section[name] = entry
    after = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return Change(path, before, after, replaced=old is not None and old != entry)


def installed_servers() -> List[Tuple[str, str, str, Dict[str, Dict[str, Any]]]]:
    """Every host config file on this machine that exists: ``(host, scope, path, servers)``,
    ``servers`` as :func:`~minimcp.client.config.load_config` reads them (variables unexpanded).

    A malformed entry is listed under its own name as ``{"error": message}``, next to the good
    ones of its file (``load_config(strict=False)``: one bad entry hides nothing else); a file
    that cannot be read at all is listed with ``{"error": message}`` as its only entry.
    """
    from ..client.config import load_config

    found = []
    seen = set()
    for host_name, target in HOSTS.items():
        for scope in target.scopes:
            path = target.path(scope)
            if path in seen or not os.path.isfile(path):
                continue
            seen.add(path)
            try:
                servers = load_config(path, strict=False)
            except ConfigError as exc:
                servers = {"error": {"error": str(exc)}}
            found.append((host_name, scope, path, servers))
    return found


__all__ = ["HOSTS", "Host", "Change", "host", "make_entry", "plan_install", "installed_servers"]
