"""Host config files, written: install a server into an MCP host's config file.

:mod:`~minimcp.client.config` reads these files (and says where each one is on
this OS); this module adds one entry to one of them, in the format its host
documents:

==================  =========================================================  ===================
host                file (first scope: the default)                            servers under
==================  =========================================================  ===================
``claude-desktop``  user: ``claude_desktop_config.json`` in Claude's folder    ``mcpServers``
``claude-code``     project: ``.mcp.json``; user: ``~/.claude.json``          ``mcpServers``
``cursor``          user: ``~/.cursor/mcp.json``; project: ``.cursor/mcp.json``  ``mcpServers``
``vscode``          project: ``.vscode/mcp.json``; user: VS Code's ``mcp.json``  ``servers``
``copilot``         user: ``~/.copilot/mcp-config.json`` (``$COPILOT_HOME``);    ``mcpServers``
                    project: ``.mcp.json`` (VS Code's portable format)
``windsurf``        user: ``~/.codeium/windsurf/mcp_config.json``              ``mcpServers``
``gemini``          project: ``.gemini/settings.json``; user: ``~/.gemini/...``  ``mcpServers``
``zed``             user: Zed's ``settings.json``; project: ``.zed/settings.json``  ``context_servers``
``codex``           user: ``~/.codex/config.toml`` (``$CODEX_HOME``);            ``[mcp_servers.NAME]``
                    project: ``.codex/config.toml``
==================  =========================================================  ===================

An install changes only the entry it adds (or, told to with ``force``,
replaces): every other key, server, table and comment of the file stays as it
was, in order. JSON and JSONC files are edited as text (the entry goes in
before the section's closing brace), TOML files with ``tomlkit`` (``pip install
'tomlkit>=0.11'``, the ``toml`` extra; imported only when a TOML file is
written). The old file is copied to ``FILE.bak`` first and the new one is
written atomically.

A remote (URL) entry may carry headers and a bearer token read from an
environment variable when the host connects, each host in its own way
(``${VAR}``, ``${env:VAR}``, Codex's ``bearer_token_env_var``); a host that
cannot do what is asked (Claude Desktop's file takes no remote server; Zed
expands no variable) is refused with what to do instead.
"""

import json
import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..client.config import _read_json, _same_server, _strip_jsonc, _tomlkit, config_files, load_config
from ..errors import ConfigError


class Host:
    """One host application: where its config files are, and how it writes an entry.

    Example::

        target = host("gemini")
        entry = make_entry(target, url="https://mcp.example.com/mcp", token_env="MCP_TOKEN")
        # {"httpUrl": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}}
        plan_install(target, "example", entry).write()
    """

    def __init__(self, name: str, title: str, section: str, scopes: Sequence[str], *,
                 stdio_type: Optional[str] = None, http_type: Optional[str] = None, url_key: str = "url",
                 variable: Optional[str] = None, headers_key: str = "headers", token_key: Optional[str] = None,
                 extra: Optional[Dict[str, Any]] = None, no_remote: Optional[str] = None) -> None:
        self.name: str = name
        self.title: str = title
        self.section: str = section            # the top-level key (TOML: table) holding the servers
        self.scopes: Tuple[str, ...] = tuple(scopes)  # the first is the default
        self.stdio_type: Optional[str] = stdio_type   # "type" of a stdio entry, when the host writes one
        self.http_type: Optional[str] = http_type     # "type" of a Streamable HTTP entry, likewise
        self.url_key: str = url_key            # url, serverUrl (Windsurf), httpUrl (Gemini CLI)
        self.variable: Optional[str] = variable  # how a header refers to an environment variable, or None
        self.headers_key: str = headers_key    # headers, http_headers (Codex)
        self.token_key: Optional[str] = token_key  # a field naming the bearer token's variable (Codex)
        self.extra: Dict[str, Any] = dict(extra or {})  # added to every entry
        self.no_remote: Optional[str] = no_remote  # why the file takes no URL server, when it does not

    @property
    def toml(self) -> bool:
        """True when the host's files are TOML (Codex)."""
        return self.section == "mcp_servers"

    def path(self, scope: Optional[str] = None) -> str:
        """The config file of ``scope`` (default: the host's first) on this machine, now.

        Raises:
            ConfigError: the host has no such scope.
        """
        scope = scope or self.scopes[0]
        if scope not in self.scopes:
            raise ConfigError(f"{self.title} has no {scope!r} config; use {' or '.join(self.scopes)}")
        return next(path for name, where, path in config_files() if name == self.name and where == scope)


_NO_DESKTOP_REMOTE = ("Claude Desktop's config file takes stdio servers only; add a remote server in its "
                      "settings (Connectors) instead")

HOSTS: Dict[str, Host] = {host.name: host for host in (
    Host("claude-desktop", "Claude Desktop", "mcpServers", ["user"], no_remote=_NO_DESKTOP_REMOTE),
    Host("claude-code", "Claude Code", "mcpServers", ["project", "user"], stdio_type="stdio", http_type="http",
         variable="${%s}"),
    Host("cursor", "Cursor", "mcpServers", ["user", "project"], variable="${env:%s}"),
    Host("vscode", "VS Code", "servers", ["project", "user"], stdio_type="stdio", http_type="http",
         variable="${env:%s}"),
    # The portable format of GitHub Copilot's CLI and VS Code: "tools" says which tools to enable.
    Host("copilot", "GitHub Copilot", "mcpServers", ["user", "project"], stdio_type="stdio", http_type="http",
         variable="${%s}", extra={"tools": ["*"]}),
    Host("windsurf", "Windsurf", "mcpServers", ["user"], url_key="serverUrl", variable="${env:%s}"),
    Host("gemini", "Gemini CLI", "mcpServers", ["project", "user"], url_key="httpUrl", variable="${%s}"),
    Host("zed", "Zed", "context_servers", ["user", "project"]),
    Host("codex", "Codex", "mcp_servers", ["user", "project"], headers_key="http_headers",
         token_key="bearer_token_env_var"),
)}


def host(name: str) -> Host:
    """The host called ``name`` (one of :data:`HOSTS`: ``claude-desktop``, ``claude-code``, ``codex`` ...).

    Raises:
        ConfigError: minimcp knows no host of that name.
    """
    if name not in HOSTS:
        raise ConfigError(f"unknown host {name!r}; minimcp installs into {', '.join(HOSTS)}")
    return HOSTS[name]


def make_entry(target: Host, command: Optional[Sequence[str]] = None, url: Optional[str] = None,
               env: Optional[Dict[str, str]] = None, headers: Optional[Dict[str, str]] = None,
               token_env: Optional[str] = None) -> Dict[str, Any]:
    """The entry for a stdio server (``command``: argv) or a remote one (``url``), in ``target``'s format.

    Args:
        target: the host.
        command, env: a server the host starts, and its environment variables.
        url, headers: a remote server, and the headers to send it (as written).
        token_env: the environment variable that holds a bearer token for the
            remote server, read by the host when it connects (the token itself
            is never written into the file).

    Raises:
        ConfigError: the host's file cannot hold what is asked for (a remote
            server in Claude Desktop's, a token from the environment in Zed's),
            or nothing was given.
    """
    if url is None:
        if not command:
            raise ConfigError("no server command given")
        entry: Dict[str, Any] = {"type": target.stdio_type} if target.stdio_type else {}
        entry.update({"command": command[0], "args": list(command[1:])})
        if env:
            entry["env"] = dict(env)
        entry.update(target.extra)
        return entry
    if target.no_remote:
        raise ConfigError(target.no_remote)
    entry = {"type": target.http_type} if target.http_type else {}
    entry[target.url_key] = url
    headers = dict(headers or {})
    if token_env:
        if any(name.lower() == "authorization" for name in headers):
            raise ConfigError("give the token one way: an Authorization header, or the variable that holds it")
        if target.token_key:
            entry[target.token_key] = token_env
        elif target.variable:
            headers["Authorization"] = "Bearer " + target.variable % token_env
        else:
            raise ConfigError(f"{target.title} reads no environment variable in its config file, so the token "
                              f"cannot come from ${token_env}: give the header itself (--header 'Authorization: "
                              f"Bearer TOKEN'), or none and sign in when {target.title} asks (OAuth)")
    if headers:
        entry[target.headers_key] = headers
    entry.update(target.extra)
    return entry


class Change:
    """An install worked out but not yet written: the file, its text before and after."""

    def __init__(self, path: str, before: Optional[str], after: str, replaced: bool) -> None:
        self.path: str = path
        self.before: Optional[str] = before
        self.after: str = after
        self.replaced: bool = replaced

    @property
    def unchanged(self) -> bool:
        """True when the file already says this (nothing to write)."""
        return self.before == self.after

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


# -- JSON and JSONC, edited as text -------------------------------------------------------------
#
# Zed's and VS Code's settings are JSONC, and people comment them: a file parsed and dumped again
# would lose every comment. So the file is read only to find where things are, and the new entry
# is spliced into the text; json.loads of the result is then checked to hold exactly the entry.

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r'[^\s,:\[\]{}/"]+')  # a number, true, false, null


class _Member:
    """One ``"key": value`` of a JSON object, by its offsets in the text."""

    def __init__(self, key: str, key_at: int, value_at: int, value_end: int) -> None:
        self.key, self.key_at, self.value_at, self.value_end = key, key_at, value_at, value_end


def _skip(text: str, at: int) -> int:
    """The offset of the next thing at or after ``at`` that is neither white space nor a comment."""
    while at < len(text):
        if text[at] in " \t\r\n\ufeff":
            at += 1
        elif text.startswith("//", at):
            newline = text.find("\n", at)
            at = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            at = len(text) if end < 0 else end + 2
        else:
            break
    return at


def _value_end(text: str, at: int) -> int:
    """The offset just after the JSON value that starts at ``at``."""
    if text[at] == "{":
        return _object(text, at)[0] + 1
    if text[at] == "[":
        at = _skip(text, at + 1)
        while text[at] != "]":
            at = _skip(text, _value_end(text, at))
            if text[at] == ",":
                at = _skip(text, at + 1)
        return at + 1
    found = (_STRING if text[at] == '"' else _SCALAR).match(text, at)
    if not found:
        raise ValueError(at)
    return found.end()


def _object(text: str, at: int) -> Tuple[int, List[_Member]]:
    """The offset of the closing brace of the object that opens at ``at``, and its members."""
    members = []
    at = _skip(text, at + 1)
    while text[at] != "}":
        key = _STRING.match(text, at)
        if not key:
            raise ValueError(at)
        colon = _skip(text, key.end())
        value_at = _skip(text, colon + 1)
        value_end = _value_end(text, value_at)
        members.append(_Member(json.loads(key.group()), at, value_at, value_end))
        at = _skip(text, value_end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return at, members


def _indent_of(text: str, at: int) -> str:
    """The white space that starts the line ``at`` is on."""
    start = text.rfind("\n", 0, at) + 1
    return re.match(r"[ \t]*", text[start:at]).group()  # type: ignore[union-attr]


def _render(value: Any, indent: str, unit: str) -> str:
    """``value`` as JSON indented by ``unit``, its lines after the first starting with ``indent``."""
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _unit(text: str, open_at: int, members: List[_Member]) -> str:
    """The indentation step of the object that opens at ``open_at`` (two spaces when it has none)."""
    if members and "\n" in text[open_at:members[0].key_at]:
        outer, inner = _indent_of(text, open_at), _indent_of(text, members[0].key_at)
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer):]
    return "  "


def _add_member(text: str, open_at: int, key: str, value: Any, unit: Optional[str] = None) -> str:
    """``text`` with ``"key": value`` added as the last member of the object that opens at ``open_at``."""
    close_at, members = _object(text, open_at)
    unit = unit or _unit(text, open_at, members)
    outer = _indent_of(text, open_at)
    if members and "\n" not in text[open_at:close_at]:  # {"a": 1} on one line: stay on one line
        last = members[-1].value_end
        member = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
        return text[:last] + ", " + member + text[last:]
    inner = _indent_of(text, members[0].key_at) if members else outer + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, inner, unit)}"
    line_start = text.rfind("\n", 0, close_at) + 1
    if members:
        last = members[-1].value_end
        trailing = text[_skip(text, last)] == ","  # a JSONC trailing comma: keep the file's style
        if text[line_start:close_at].strip():  # the brace shares its line: put it on a line of its own
            insert = f"\n{inner}{member}{',' if trailing else ''}\n{outer}"
            text = text[:close_at] + insert + text[close_at:]
        else:
            text = text[:line_start] + f"{inner}{member}{',' if trailing else ''}\n" + text[line_start:]
        return text if trailing else text[:last] + "," + text[last:]
    if not text[open_at + 1:close_at].strip():  # {} or {\n}: the member in place of the white space
        return text[:open_at + 1] + f"\n{inner}{member}\n{outer}" + text[close_at:]
    if not text[line_start:close_at].strip():  # only comments inside, the brace on a line of its own
        return text[:line_start] + f"{inner}{member}\n" + text[line_start:]
    return text[:close_at] + f"\n{inner}{member}\n{outer}" + text[close_at:]


def _edited_json(text: str, section: str, name: str, entry: Dict[str, Any]) -> str:
    """``text`` (a JSON or JSONC object) with ``entry`` as server ``name`` of ``section``, all else kept."""
    root_at = _skip(text, 0)
    if root_at == len(text):  # an empty file, or one of comments only: they stay, the object goes after them
        head = text if not text or text.endswith("\n") else text + "\n"
        return head + json.dumps({section: {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    _, members = _object(text, root_at)
    unit = _unit(text, root_at, members)
    holder = next((m for m in reversed(members) if m.key == section), None)  # the last one counts, as in json
    if holder is None:
        return _add_member(text, root_at, section, {name: entry}, unit)
    _, servers = _object(text, holder.value_at)
    old = next((m for m in reversed(servers) if m.key == name), None)
    if old is None:
        return _add_member(text, holder.value_at, name, entry, unit if not servers else None)
    rendered = _render(entry, _indent_of(text, old.key_at), _unit(text, holder.value_at, servers))
    return text[:old.value_at] + rendered + text[old.value_end:]


def _plan_json(target: Host, path: str, name: str, entry: Dict[str, Any]) -> Tuple[Optional[str], Any, str]:
    """The file's text (None: no file), the entry it has now under ``name`` (None: none), and its new text."""
    if not os.path.exists(path):
        return None, None, json.dumps({target.section: {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    with open(path, encoding="utf-8-sig") as f:
        before = f.read()
    data = _read_json(path)  # JSONC accepted; the error names the line
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    section = data.get(target.section, {})
    if not isinstance(section, dict):
        raise ConfigError(f'{path}: "{target.section}" should be an object of name: server entry')
    old = section.get(name)
    if old == entry:
        return before, old, before
    try:
        after = _edited_json(before, target.section, name, entry)
        written = json.loads(_strip_jsonc(after))[target.section][name]
    except (ValueError, IndexError, KeyError, TypeError):
        written = None
    if written != entry:  # the text was not what the reader made of it: touch nothing
        raise ConfigError(f"minimcp cannot edit {path} safely; add this entry under \"{target.section}\" by "
                          f"hand:\n{json.dumps({name: entry}, indent=2, ensure_ascii=False)}")
    return before, old, after


# -- TOML, with tomlkit --------------------------------------------------------------------------


def _plan_toml(target: Host, path: str, name: str, entry: Dict[str, Any]) -> Tuple[Optional[str], Any, str]:
    """As :func:`_plan_json`, for a TOML file (Codex's ``[mcp_servers.NAME]`` tables)."""
    tomlkit = _tomlkit(path, "writing")
    before = None
    if os.path.exists(path):
        with open(path, encoding="utf-8-sig") as f:
            before = f.read()
    try:
        document = tomlkit.parse(before or "")
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    servers = document.get(target.section)
    if servers is None:
        servers = document[target.section] = tomlkit.table(is_super_table=True)
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: {target.section} should be a table of name: server table")
    old = servers[name].unwrap() if name in servers else None
    if old == entry:
        return before, old, before or ""
    if isinstance(servers, tomlkit.items.InlineTable):  # mcp_servers = { ... } on one line: add to it
        table = tomlkit.inline_table()
        table.update(entry)
    else:  # [mcp_servers.NAME], its maps as inline tables: one table a server
        table = tomlkit.table()
        for key, value in entry.items():
            if isinstance(value, dict):
                inline = tomlkit.inline_table()
                inline.update(value)
                value = inline
            table.add(key, value)
        table.add(tomlkit.nl())
    servers[name] = table
    return before, old, tomlkit.dumps(document)


def plan_install(target: Host, name: str, entry: Dict[str, Any], scope: Optional[str] = None,
                 path: Optional[str] = None, force: bool = False) -> Change:
    """Work out the file ``target`` gets with server ``name`` added (nothing is written yet).

    Every other key, server, table and comment of the file is kept as it is.

    Raises:
        ConfigError: the file is not valid JSON (TOML) or not an object, it has a
            different server called ``name`` and ``force`` is false, or it is a
            TOML file and tomlkit is not installed (the message says what to pip
            install).
    """
    path = os.path.abspath(os.path.expanduser(path)) if path else target.path(scope)
    plan = _plan_toml if target.toml or path.endswith(".toml") else _plan_json
    before, old, after = plan(target, path, name, entry)
    if old is not None and old != entry and not force:
        raise ConfigError(f"{path} already has a server named {name!r} ({json.dumps(old)}); pass --force to "
                          f"replace it, or --name to install under another name")
    return Change(path, before, after, replaced=old is not None and old != entry)


def installed_servers() -> List[Tuple[str, str, str, Dict[str, Dict[str, Any]]]]:
    """Every host config file on this machine that exists: ``(host, scope, path, servers)``, in the
    order :func:`~minimcp.client.config.find_server` searches them, ``servers`` as
    :func:`~minimcp.client.config.load_config` reads them (variables unexpanded).

    A malformed entry is listed under its own name as ``{"error": message}``, next to the good
    ones of its file (``load_config(strict=False)``: one bad entry hides nothing else); a file
    that cannot be read at all is listed with ``{"error": message}`` as its only entry.
    """
    found = []
    seen = set()
    for host_name, scope, path in config_files():
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        try:
            servers = load_config(path, strict=False)
        except ConfigError as exc:
            servers = {"error": {"error": str(exc)}}
        found.append((host_name, scope, path, servers))
    return found


def shadowing(installed: List[Tuple[str, str, str, Dict[str, Dict[str, Any]]]]) -> Dict[Tuple[str, str], str]:
    """Of :func:`installed_servers`' list, the entries that connecting by name does not reach: ``(path,
    name)`` of each, mapped to the earlier file whose different entry of that name wins."""
    first: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    shadowed = {}
    for _, _, path, servers in installed:
        for name, entry in servers.items():
            if name not in first:
                first[name] = (path, entry)
            elif not _same_server(name, first[name], (path, entry)):
                shadowed[(path, name)] = first[name][0]
    return shadowed


__all__ = ["HOSTS", "Host", "Change", "host", "make_entry", "plan_install", "installed_servers", "shadowing"]
