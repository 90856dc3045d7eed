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
was, in order, and so do its line endings (CRLF or LF) and byte order mark.
JSON and JSONC files are edited as text (the entry goes in before the section's
closing brace), TOML files with ``tomlkit`` (``pip install 'tomlkit>=0.11.6'``,
the ``toml`` extra; imported only when a TOML file is written). Either way the
new text is read back, by a parser of its own (``tomllib`` on Python 3.11+), and
must hold exactly the old document plus the entry: else nothing is written and
the error shows the entry to add by hand.

The old file is copied byte for byte to ``FILE.bak`` (``FILE.bak.1``, ``.2`` ...
when that exists: a backup is never overwritten), and the new one is written
atomically, through a symbolic link to the file it names, with the old file's
permissions (a ``0600`` file holding tokens stays ``0600``, and so do its backups).

A remote (URL) entry may carry headers and a bearer token read from an
environment variable when the host connects, each host in its own way
(``${VAR}``, ``${env:VAR}``, Codex's ``bearer_token_env_var``); a host that
cannot do what is asked (Claude Desktop's file takes no remote server; Zed
expands no variable) is refused with what to do instead.
"""

import json
import os
import re
import shutil
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..client.config import _loads_jsonc, _parse_toml, _read_json, _same_server, _tomlkit, config_files, load_config
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
        """Write the new file (atomically); return the backup's path, or None for a new file.

        A symbolic link is written through (the file it names changes; the link stays),
        the file keeps its permissions, and the old file is first copied, byte for byte
        and with its permissions, to ``FILE.bak``, or ``FILE.bak.1``, ``FILE.bak.2`` ...:
        a backup is never overwritten.

        Raises:
            OSError: the file or its folder cannot be written.
            ConfigError: ``FILE.bak`` to ``FILE.bak.999`` all exist.
        """
        path = os.path.realpath(self.path)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        backup = None
        mode = None
        if self.before is not None and os.path.exists(path):
            mode = os.stat(path).st_mode & 0o7777
            backup = _backup(path)
        temporary = f"{path}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        # The old file's mode is set once the text is in; a new file gets what the umask gives.
        fd = os.open(temporary, flags, 0o600 if mode is not None else 0o666)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(self.after)  # (its line endings and byte order mark are the old file's: _read_for_edit)
                f.flush()
                os.fsync(f.fileno())
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, path)  # a reader sees the old file or the new, never half of one
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        return backup


def _backup(path: str) -> str:
    """Copy ``path`` byte for byte to the first of ``PATH.bak``, ``PATH.bak.1`` ... that does not
    exist (created exclusively, so no backup is ever overwritten), with its permissions; return
    the backup's path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for number in range(1000):
        backup = path + ".bak" + (f".{number}" if number else "")
        try:
            fd = os.open(backup, flags, 0o600)  # (readable by the owner only until its mode is the file's)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as out, open(path, "rb") as old:
            shutil.copyfileobj(old, out)
        shutil.copystat(path, backup)  # the old file's permissions and times
        return backup
    raise ConfigError(f"{path}.bak and {path}.bak.1 to .999 all exist: remove the backups you no longer need")


def _read_for_edit(path: str) -> Tuple[Optional[str], str, str, bool]:
    """A file to edit: its text exactly as it is (None: no file), the same with LF line endings and
    no byte order mark (what the editors work on), its line ending, and whether it has the mark."""
    if not os.path.exists(path):
        return None, "", "\n", False
    with open(path, encoding="utf-8", newline="") as f:  # (newline="": CRLF kept, to be written back)
        raw = f.read()
    bom = raw.startswith("\ufeff")
    text = raw[1:] if bom else raw
    newline = "\r\n" if "\r\n" in text else "\n"
    return raw, text.replace("\r\n", "\n"), newline, bom


def _as_written(text: str, newline: str, bom: bool) -> str:
    """``text`` (LF line endings) with the file's own line endings and byte order mark."""
    return ("\ufeff" if bom else "") + (text.replace("\n", newline) if newline != "\n" else text)


# -- JSON and JSONC, edited as text -------------------------------------------------------------
#
# Zed's and VS Code's settings are JSONC, and people comment them: a file parsed and dumped again
# would lose every comment. So the file is read only to find where things are, and the new entry
# is spliced into the text; json.loads of the result is then checked to be exactly the old
# document plus the entry.

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # (unrolled: a run of plain characters at a time)
_SCALAR = re.compile(r'[^\s,:\[\]{}/"]+')  # a number, true, false, null
# White space and comments, all at once (a multi-megabyte ~/.claude.json is mostly white space)
_GAP = re.compile(r"(?:[ \t\r\n\ufeff]+|//[^\n]*\n?|/\*.*?(?:\*/|\Z))*", re.S)


class _Member:
    """One ``"key": value`` of a JSON object, by its offsets in the text."""

    def __init__(self, key: str, key_at: int, value_at: int, value_end: int) -> None:
        self.key, self.key_at, self.value_at, self.value_end = key, key_at, value_at, value_end


def _skip(text: str, at: int) -> int:
    """The offset of the next thing at or after ``at`` that is neither white space nor a comment."""
    return _GAP.match(text, at).end()  # type: ignore[union-attr]  # (it matches the empty string too)


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


def _may_replace(path: str, name: str, old: Any, entry: Dict[str, Any], force: bool) -> None:
    """Refuse to replace a different server of the same name, unless told to."""
    if old is not None and old != entry and not force:
        raise ConfigError(f"{path} already has a server named {name!r} ({json.dumps(old)}); pass --force to "
                          f"replace it, or --name to install under another name")


def _by_hand(path: str, section: str, name: str, entry: Dict[str, Any], toml: bool = False) -> ConfigError:
    """The error for a file minimcp could not edit so that it reads back as it should: the entry to add."""
    if toml:
        shown = "\n".join([f"[{section}.{_toml_key(name)}]"] +
                          [f"{_toml_key(key)} = {_toml_value(value)}" for key, value in entry.items()])
        where = ""
    else:
        shown = json.dumps({name: entry}, indent=2, ensure_ascii=False)
        where = f' under "{section}"'
    return ConfigError(f"minimcp cannot edit {path} safely; add this entry{where} by hand:\n{shown}")


def _toml_key(key: str) -> str:
    """A TOML key: bare when it can be (letters, digits, _ and -), else a basic string."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    """A string, a list of strings or a table of strings as TOML (a JSON string is a TOML basic string)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def _plan_json(target: Host, path: str, name: str, entry: Dict[str, Any],
               force: bool) -> Tuple[Optional[str], Any, str]:
    """The file's text (None: no file), the entry it has now under ``name`` (None: none), and its new text."""
    raw, before, newline, bom = _read_for_edit(path)
    if raw is None:
        return None, None, json.dumps({target.section: {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    data = _read_json(path)  # JSONC accepted; the error names the line
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    section = data.get(target.section, {})
    if not isinstance(section, dict):
        raise ConfigError(f'{path}: "{target.section}" should be an object of name: server entry')
    old = section.get(name)
    if old == entry:
        return raw, old, raw
    _may_replace(path, name, old, entry, force)
    expected = dict(data, **{target.section: dict(section, **{name: entry})})
    try:
        after = _as_written(_edited_json(before, target.section, name, entry), newline, bom)
        written = _loads_jsonc(after[1:] if bom else after)
    except (ValueError, IndexError, KeyError, TypeError):
        written = None
    if written != expected:  # the text was not what the reader made of it: touch nothing
        raise _by_hand(path, target.section, name, entry)
    return raw, old, after


# -- TOML, with tomlkit --------------------------------------------------------------------------
#
# tomlkit keeps comments and layout, but where it puts a new table is its own idea: after root
# keys written as dotted keys (mcp_servers.a.command = "x"), its [mcp_servers.NEW] went in
# before the root keys that followed, which then belonged to the new table (and tomlkit before
# 0.11.6 could write text that is not TOML at all). So what it writes is read back by a parser
# of its own (tomllib, on 3.11+) and must be the old document plus the entry; if not, the table
# is appended at the very end of the file instead (valid TOML after any root key or table), read
# back again, and failing that the file is left alone.


def _toml_table(tomlkit: Any, entry: Dict[str, Any], trailing: Optional[Sequence[Any]] = None) -> Any:
    """``entry`` as a ``[mcp_servers.NAME]`` table, its maps as inline tables, ending with ``trailing``
    (the comments and blank lines that ended the table it replaces), by default a blank line."""
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            value = inline
        table.add(key, value)
    for item in [tomlkit.nl()] if trailing is None else trailing:
        table.add(item)
    if trailing and isinstance(trailing[-1], tomlkit.items.Comment):
        # tomlkit puts a blank line before the next header unless the table ends with white
        # space: an empty one keeps the comment on the line right above the header it is about.
        table.add(tomlkit.ws(""))
    return table


def _trailing(tomlkit: Any, table: Any) -> List[Any]:
    """The comments and blank lines at the end of a parsed table: in the file they come before
    the next table's header, usually about it (``# the docs server``), so they stay."""
    items: List[Any] = []
    for key, item in reversed(getattr(getattr(table, "value", None), "body", [])):
        if key is not None or not isinstance(item, (tomlkit.items.Whitespace, tomlkit.items.Comment)):
            break
        items.insert(0, item)
    return items


def _plan_toml(target: Host, path: str, name: str, entry: Dict[str, Any],
               force: bool) -> Tuple[Optional[str], Any, str]:
    """As :func:`_plan_json`, for a TOML file (Codex's ``[mcp_servers.NAME]`` tables)."""
    tomlkit = _tomlkit(path, "writing")
    raw, before, newline, bom = _read_for_edit(path)
    try:
        document = tomlkit.parse(before)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    servers = document.get(target.section)
    if servers is None:
        servers = document[target.section] = tomlkit.table(is_super_table=True)
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: {target.section} should be a table of name: server table")
    old = servers[name].unwrap() if name in servers else None
    if old == entry:
        return raw, old, raw or ""
    _may_replace(path, name, old, entry, force)
    # What a host reads: tomllib's reading of the file (where there is one), and the entry.
    expected = _parse_toml((raw or "")[1:] if bom else (raw or ""), path)
    expected.setdefault(target.section, {})[name] = entry
    if isinstance(servers, tomlkit.items.InlineTable):  # mcp_servers = { ... } on one line: add to it
        table = tomlkit.inline_table()
        table.update(entry)
        servers[name] = table
    else:  # [mcp_servers.NAME], its maps as inline tables: one table a server
        trailing = (_trailing(tomlkit, servers[name]) or None) if old is not None else None
        servers[name] = _toml_table(tomlkit, entry, trailing)
    candidates = [tomlkit.dumps(document)]
    if old is None and not isinstance(servers, tomlkit.items.InlineTable) and before.strip():
        alone = tomlkit.document()  # the table alone, to go at the end of the file
        holder = tomlkit.table(is_super_table=True)
        holder.add(name, _toml_table(tomlkit, entry, []))
        alone.add(target.section, holder)
        candidates.append(before + ("" if before.endswith("\n") else "\n") + "\n" + tomlkit.dumps(alone))
    for after in candidates:
        after = _as_written(after, newline, bom)
        try:
            if _parse_toml(after[1:] if bom else after, path) == expected:
                return raw, old, after
        except ConfigError:  # not TOML at all
            pass
    raise _by_hand(path, target.section, name, entry, toml=True)


def plan_install(target: Host, name: str, entry: Dict[str, Any], scope: Optional[str] = None,
                 path: Optional[str] = None, force: bool = False) -> Change:
    """Work out the file ``target`` gets with server ``name`` added (nothing is written yet).

    Every other key, server, table and comment of the file is kept as it is.

    Raises:
        ConfigError: the file is not valid JSON (TOML) or not an object, it has a
            different server called ``name`` and ``force`` is false, minimcp cannot
            edit it so that it reads back as the old document plus the entry (the
            message shows the entry to add by hand), or it is a TOML file and
            tomlkit is not installed (the message says what to pip install).
    """
    path = os.path.abspath(os.path.expanduser(path)) if path else target.path(scope)
    plan = _plan_toml if target.toml or path.endswith(".toml") else _plan_json
    before, old, after = plan(target, path, name, entry, force)
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
