"""Host config files: find an MCP server by name, the way the MCP hosts do (Claude Desktop,
Claude Code, Cursor, VS Code, GitHub Copilot, Windsurf, Gemini CLI, Zed and Codex).

``minimcp.connect("github")`` ends up in :func:`find_server`, which looks the
name up in the hosts' config files, expands the environment variables the
host would expand, and returns an entry ``connect()`` can start.
:func:`load_config` reads one file, for people who want to list its servers.

This module reads files and ``os.environ`` and nothing else: it starts no
process, writes no file, and cannot prompt (so a VS Code ``${input:...}`` is an
error here, not a question). It logs one warning: a name that two files define
differently (the first file in :func:`config_paths` order wins).

The formats (JSON files may hold comments and trailing commas, as VS Code's,
Zed's and Gemini CLI's do)::

    {"mcpServers": {name: {"command", "args", "env", "cwd"}}}      Claude Desktop, Cursor, Windsurf
    {"mcpServers": {name: {"type", "url", "headers", "oauth"}}}    Claude Code .mcp.json, Cursor
    {"mcpServers": {name: {"type": "local" | "stdio" | "http", ..., "tools"}}}
                                                                    Copilot mcp-config.json
    {"mcpServers": {name: {"serverUrl", "headers"}}}               Windsurf mcp_config.json
    {"mcpServers": {name: {"httpUrl" | "url", "headers"}}}         Gemini CLI settings.json
    {"servers": {name: {"type", "command", "args", "env", "envFile",
                        "url", "headers"}}, "inputs": [...]}        VS Code .vscode/mcp.json
    {"mcpServers": {...}, "projects": {path: {"mcpServers": {...}}}}  Claude Code ~/.claude.json
    {"context_servers": {name: {"command", "args", "env"} | {"url", "headers"}}}
                                                                    Zed settings.json
    [mcp_servers.NAME] command, args, env, cwd | url, http_headers,
        env_http_headers, bearer_token_env_var                      Codex config.toml

A URL entry without a ``type`` is Streamable HTTP, except Gemini CLI's ``url``
(its ``httpUrl`` is Streamable HTTP, its ``url`` the 2024-11-05 HTTP+SSE
transport), which a ``settings.json`` in a ``.gemini`` folder is read as.

In ``~/.claude.json`` the servers of the project in the current directory win
over the top-level (user) ones, as Claude Code's "local" scope wins over "user".

Variables, in command, args, env, cwd, envFile, url and headers, are expanded as
the host of the file does (chosen by the file's name): ``${VAR}``,
``${VAR:-default}`` (Claude Code; a variable set to "" counts as set, as there),
``${env:VAR}`` (VS Code, Cursor), ``${workspaceFolder}`` and ``${userHome}`` in
``.mcp.json``, ``~/.claude.json``, VS Code's and Cursor's files (and any file of
another name); the same and ``$VAR`` in Gemini CLI's and Copilot's; only
``${env:VAR}`` in Windsurf's. Claude Desktop, Zed and Codex expand nothing in
their files, so neither does minimcp: a ``${VAR}`` there is sent as written, never
filled from the environment (a cloned project's ``.zed/settings.json`` or
``.codex/config.toml`` cannot have a secret of yours sent to the URL it names). Of
a Codex entry only the variables it names for that purpose are read
(``bearer_token_env_var``, ``env_http_headers``). A variable that is not set and
has no default is an error naming it (Claude Code would pass the text on literally
and warn).

Codex's ``config.toml`` is read with :mod:`tomllib` (Python 3.11 and later) or,
on Python 3.9 and 3.10, with ``tomlkit`` (``pip install 'tomlkit>=0.11.6'``, the ``toml`` extra).
"""

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from ..errors import ConfigError, ServerNotFound
from ..logs import get_logger

if TYPE_CHECKING:
    from logging import Logger

PathLike = Union[str, "os.PathLike[str]"]

log: "Logger" = get_logger(__name__)

# Claude Code and VS Code both write "http" for Streamable HTTP; older files say
# "streamable-http" or "streamableHttp".
_REMOTE_TYPES = {"http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
_STDIO_TYPES = (None, "stdio", "local")  # "local": Copilot's word for stdio
_URL_KEYS = ("url", "serverUrl", "httpUrl")  # everyone's; Windsurf's; Gemini CLI's Streamable HTTP
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_VARIABLE_OR_BARE = re.compile(r"\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")  # Gemini CLI, Copilot: $VAR too
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A JSON string (kept: written unrolled, a run of plain characters at a time, which is what
# makes a multi-megabyte ~/.claude.json quick) or a comment (blanked out, newlines kept, so
# json's error line numbers still point into the file as written) ...
_COMMENT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|//[^\n]*|/\*.*?\*/', re.S)
# ... then, comments gone, a trailing comma (blanked out too).
_TRAILING_COMMA = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|,(?=\s*[}\]])', re.S)
_TOML_EXTRA = "pip install 'tomlkit>=0.11.6' (minimcp's toml extra)"

#: Which variables each host expands in its file (``_dialect()`` names the file's host):
#: ``braced`` ``${VAR}`` and ``${VAR:-default}``; ``env`` ``${env:VAR}``; ``editor``
#: ``${workspaceFolder}``, ``${userHome}`` (and ``${input:...}``, refused); ``bare`` ``$VAR``;
#: ``file`` ``${file:PATH}`` (refused: minimcp reads no file for a value).
#: A form a host does not expand is left as written. Sources: Claude Code's docs ("Environment
#: variable expansion in .mcp.json": ${VAR}, ${VAR:-default}); VS Code's and Cursor's (${env:},
#: ${workspaceFolder}, ${userHome}); Gemini CLI's ($VAR, ${VAR}); Copilot CLI's ($VAR, ${VAR},
#: ${VAR:-default}, since 1.0.10); Windsurf's (${env:VAR}; its ${file:...} is refused); Claude
#: Desktop's, Zed's and Codex's docs name no expansion in their files.
_EXPANDS: Dict[str, Tuple[str, ...]] = {
    "": ("braced", "env", "editor"),  # .mcp.json, ~/.claude.json, VS Code, Cursor, a file of any other name
    "gemini": ("braced", "env", "editor", "bare"),
    "copilot": ("braced", "env", "editor", "bare"),
    "windsurf": ("env", "file"),
    "claude-desktop": (),
    "zed": (),
    "codex": (),  # (only the variables bearer_token_env_var and env_http_headers name)
}


class _NeedsExtra(ConfigError):
    """A file minimcp cannot read without an optional package that is not installed."""


# -- where the files are --------------------------------------------------------------------


def _application_support() -> str:
    """The folder Electron apps (Claude Desktop, VS Code) keep their settings in, on this OS."""
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support")
    if sys.platform == "win32":
        return os.environ.get("APPDATA") or os.path.expanduser(os.path.join("~", "AppData", "Roaming"))
    return os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")  # Electron's appData on Linux


def _claude_desktop_path() -> str:
    """Where Claude Desktop keeps ``claude_desktop_config.json`` on this OS."""
    return os.path.join(_application_support(), "Claude", "claude_desktop_config.json")


def vscode_user_path() -> str:
    """Where VS Code keeps the user's ``mcp.json`` (its user profile folder) on this OS."""
    return os.path.join(_application_support(), "Code", "User", "mcp.json")


def zed_user_path() -> str:
    """Where Zed keeps the user's ``settings.json``: ``%APPDATA%\\Zed`` on Windows,
    ``~/.config/zed`` on macOS, ``$XDG_CONFIG_HOME/zed`` (``~/.config/zed``) on Linux."""
    if sys.platform == "win32":
        base = os.environ.get("APPDATA") or os.path.expanduser(os.path.join("~", "AppData", "Roaming"))
        return os.path.join(base, "Zed", "settings.json")
    if sys.platform == "darwin":
        return os.path.expanduser(os.path.join("~", ".config", "zed", "settings.json"))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser(os.path.join("~", ".config"))
    return os.path.join(base, "zed", "settings.json")


def codex_user_path() -> str:
    """Where Codex keeps its ``config.toml``: ``$CODEX_HOME``, else ``~/.codex``."""
    return os.path.join(os.environ.get("CODEX_HOME") or os.path.expanduser(os.path.join("~", ".codex")),
                        "config.toml")


def copilot_user_path() -> str:
    """Where GitHub Copilot (its CLI, and VS Code's portable format) keeps the user's
    ``mcp-config.json``: ``$COPILOT_HOME``, else ``~/.copilot``."""
    return os.path.join(os.environ.get("COPILOT_HOME") or os.path.expanduser(os.path.join("~", ".copilot")),
                        "mcp-config.json")


def config_files() -> List[Tuple[str, str, str]]:
    """Return every host config file minimcp knows, as ``(host, scope, path)``, in search order.

    Project files in the current directory come first, then the user's. A file
    two hosts share (``.mcp.json``: Claude Code's project file, and the portable
    format GitHub Copilot and VS Code read) is listed once per host. The current
    directory and the variables that move a host's folder (``HOME``,
    ``XDG_CONFIG_HOME``, ``APPDATA``, ``CODEX_HOME``, ``COPILOT_HOME``) are read at
    each call.
    """
    cwd = os.getcwd()

    def home(*parts: str) -> str:
        return os.path.expanduser(os.path.join("~", *parts))

    return [
        ("claude-code", "project", os.path.join(cwd, ".mcp.json")),
        ("copilot", "project", os.path.join(cwd, ".mcp.json")),
        ("vscode", "project", os.path.join(cwd, ".vscode", "mcp.json")),
        ("cursor", "project", os.path.join(cwd, ".cursor", "mcp.json")),
        ("gemini", "project", os.path.join(cwd, ".gemini", "settings.json")),
        ("zed", "project", os.path.join(cwd, ".zed", "settings.json")),
        ("codex", "project", os.path.join(cwd, ".codex", "config.toml")),
        ("claude-desktop", "user", _claude_desktop_path()),
        ("cursor", "user", home(".cursor", "mcp.json")),
        ("claude-code", "user", home(".claude.json")),
        ("vscode", "user", vscode_user_path()),
        ("copilot", "user", copilot_user_path()),
        ("windsurf", "user", home(".codeium", "windsurf", "mcp_config.json")),
        ("gemini", "user", home(".gemini", "settings.json")),
        ("zed", "user", zed_user_path()),
        ("codex", "user", codex_user_path()),
    ]


def config_paths() -> List[str]:
    """Return the files :func:`find_server` searches when no ``config`` is given, in order.

    Project files in the current directory come first (``.mcp.json``,
    ``.vscode/mcp.json``, ``.cursor/mcp.json``, ``.gemini/settings.json``,
    ``.zed/settings.json``, ``.codex/config.toml``), then the user's (Claude
    Desktop's, ``~/.cursor/mcp.json``, ``~/.claude.json``, VS Code's, Copilot's
    ``mcp-config.json``, Windsurf's ``mcp_config.json``, ``~/.gemini/settings.json``,
    Zed's ``settings.json``, Codex's ``config.toml``): :func:`config_files`, each
    path once.
    """
    return list(dict.fromkeys(path for _, _, path in config_files()))


# -- reading a file --------------------------------------------------------------------------


def _strip_jsonc(text: str) -> str:
    """Blank out the comments and trailing commas of JSONC text, keeping every line where it is."""
    def blank(match: "re.Match[str]") -> str:
        found = match.group()
        return found if found.startswith('"') else re.sub(r"[^\n]", " ", found)

    return _TRAILING_COMMA.sub(blank, _COMMENT.sub(blank, text))


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as f:  # -sig: Windows editors write a BOM
            return f.read()
    except FileNotFoundError:
        raise ConfigError(f"the config file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None


def _loads_jsonc(text: str) -> Any:
    """``json.loads`` of JSONC text. Most files are plain JSON, which is read as it is: only a
    text json refuses is stripped of its comments and trailing commas (valid JSON has neither
    outside its strings, so either way it reads the same).

    Raises:
        json.JSONDecodeError: the text is not JSON, with or without them.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(_strip_jsonc(text))


def _read_json(path: str) -> Any:
    text = _read_text(path)
    try:
        return _loads_jsonc(text)
    except json.JSONDecodeError as exc:
        if not _strip_jsonc(text).strip():  # empty, or comments only
            return {}
        raise ConfigError(f"{path}, line {exc.lineno} column {exc.colno}: not valid JSON "
                          f"({exc.msg})") from None


def _tomlkit(path: str, doing: str) -> Any:
    """Import ``tomlkit`` (the ``toml`` extra), or say what to install to read or write ``path``."""
    try:
        import tomlkit
    except ImportError:
        raise _NeedsExtra(f"{doing} {path} (TOML) needs the tomlkit package: {_TOML_EXTRA}") from None
    return tomlkit


def _parse_toml(text: str, path: str) -> Dict[str, Any]:
    """Parse TOML text: the standard library's tomllib where there is one (3.11+), else tomlkit."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    tomlkit = _tomlkit(path, "reading")
    try:
        parsed: Dict[str, Any] = tomlkit.parse(text).unwrap()
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parsed


def _read_file(path: str) -> Any:
    """Read one config file: TOML (Codex) by its ``.toml`` name, anything else as JSONC."""
    if path.endswith(".toml"):
        return _parse_toml(_read_text(path), path)
    return _read_json(path)


def _dialect(path: str) -> str:
    """Whose rules a file follows where they differ (a key of ``_EXPANDS``), by its name:
    ``codex`` (``*.toml``), ``gemini`` (``settings.json`` in a ``.gemini`` folder), ``zed``
    (any other ``settings.json``), ``claude-desktop`` (``claude_desktop_config.json``),
    ``windsurf`` (``mcp_config.json``), ``copilot`` (``mcp-config.json``), or ``""``
    (everyone else's: ``.mcp.json``, ``mcp.json``, ``~/.claude.json``, any other name)."""
    name = os.path.basename(path)
    if name.endswith(".toml"):
        return "codex"
    if name == "settings.json":
        return "gemini" if os.path.basename(os.path.dirname(path)) == ".gemini" else "zed"
    return {"claude_desktop_config.json": "claude-desktop", "mcp_config.json": "windsurf",
            "mcp-config.json": "copilot"}.get(name, "")


def _servers_section(data: Any, path: str) -> Dict[str, Any]:
    """Gather the raw server entries of one file, whichever host wrote it."""
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    servers: Dict[str, Any] = {}
    # VS Code; everyone else; Zed; Codex.
    for key in ("servers", "mcpServers", "context_servers", "mcp_servers"):
        section = data.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            raise ConfigError(f'{path}: "{key}" should be an object of name: server entry')
        servers.update(section)
    projects = data.get("projects")  # ~/.claude.json: per-project ("local" scope) servers
    if isinstance(projects, dict):
        cwd = os.getcwd()
        project = projects.get(cwd) or projects.get(cwd.replace(os.sep, "/"))
        if isinstance(project, dict) and isinstance(project.get("mcpServers"), dict):
            servers.update(project["mcpServers"])
    return servers


def _strings(value: Any, what: str, where: str) -> Dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {what} should be an object of name: value")
    # VS Code lets null unset a variable; minimcp can only add, so null is left out.
    return {str(k): str(v) for k, v in value.items() if v is not None}


def _oauth_settings(raw: Dict[str, Any], where: str) -> Dict[str, Any]:
    """A remote entry's OAuth client settings, as the hosts write them, in minimcp's names.

    Claude Code: ``"oauth": {"clientId", "callbackPort", "scopes": "a b"}`` (its
    secret lives in the keychain: give it as ``clientSecret`` or in the OAuth object);
    Cursor: ``"auth": {"CLIENT_ID", "CLIENT_SECRET", "scopes": [...]}``. VS Code
    keeps its OAuth state out of the file.
    """
    settings: Dict[str, Any] = {}
    for field, names in (("oauth", ("clientId", "clientSecret", "callbackPort", "scopes")),
                         ("auth", ("CLIENT_ID", "CLIENT_SECRET", None, "scopes"))):
        block = raw.get(field)
        if block is None or (field == "auth" and not isinstance(block, dict)):
            continue
        if not isinstance(block, dict):
            raise ConfigError(f'{where}: "{field}" should be an object')
        client_id, secret, port, scopes = (block.get(name) if name else None for name in names)
        if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
            raise ConfigError(f'{where}: "{field}.callbackPort" should be a port number, not {port!r}')
        if isinstance(scopes, str):
            scopes = scopes.split()
        if scopes is not None and not (isinstance(scopes, list) and all(isinstance(x, str) for x in scopes)):
            raise ConfigError(f'{where}: "{field}.scopes" should be a string or a list of strings')
        for key, value in (("client_id", client_id), ("client_secret", secret), ("callback_port", port),
                           ("scopes", scopes)):
            if value is not None:
                settings[key] = value if key in ("callback_port", "scopes") else str(value)
    return settings


def _variable_name(name: Any, field: str, where: str) -> str:
    """``name``, checked to be an environment variable's name (what a Codex field names)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{where}: {field} should name an environment variable (letters, digits and _, "
                          f"not starting with a digit), not {name!r}")
    return name


def _remote_headers(raw: Dict[str, Any], where: str) -> Tuple[Dict[str, str], Dict[str, str]]:
    """A remote entry's headers, as written (``headers``, or Codex's ``http_headers``), and the
    ones Codex fills from the environment (``env_http_headers``, ``bearer_token_env_var``), kept
    apart as ``${VAR}`` templates: only those are ever expanded in a Codex entry (:func:`_expand_entry`)."""
    headers = _strings(raw.get("headers") or raw.get("http_headers") or {}, "headers", where)
    from_env = {}
    for header, variable in _strings(raw.get("env_http_headers") or {}, "env_http_headers", where).items():
        from_env[header] = "${" + _variable_name(variable, f'env_http_headers "{header}"', where) + "}"
    token = raw.get("bearer_token_env_var")
    if token:
        from_env["Authorization"] = "Bearer ${" + _variable_name(token, "bearer_token_env_var", where) + "}"
    return headers, from_env


def _command(raw: Dict[str, Any]) -> Tuple[Any, Any, Any]:
    """A stdio entry's command, args and env; Zed's older settings nest them in ``"command"``."""
    nested = raw.get("command")
    holder: Dict[str, Any] = nested if isinstance(nested, dict) else raw
    command = holder.get("path") if holder is nested else holder.get("command")
    return command, holder.get("args") or [], holder.get("env") or {}


def parse_entry(raw: Any, name: str = "", source: str = "") -> Dict[str, Any]:
    """Turn one host-format server entry into the entry :func:`find_server` returns.

    Variables are left as written; :func:`find_server` expands them.

    Args:
        raw: ``{"command", "args", "env", "cwd"}`` (``command`` a string or a
            list), or ``{"url", "headers", "type"}`` (``serverUrl`` or ``httpUrl``
            for the url; Codex's ``http_headers``, ``env_http_headers`` and
            ``bearer_token_env_var`` for the headers).
        name, source: the server's name and file, for error messages (and the
            file says whose rules apply: a Gemini CLI ``url`` is HTTP+SSE).

    Returns:
        ``{"command": [argv...], "env": {...}, "cwd": str or None}`` (plus
        ``"envFile"`` when the entry has one) or ``{"url", "headers", "transport"}``
        (plus, for a Codex entry that reads headers from the environment,
        ``"env_headers"``: ``{"X-Key": "${VAR}", "Authorization": "Bearer ${TOKEN}"}``,
        apart from its ``"headers"``, which are sent as written).

    Raises:
        ConfigError: the entry has neither a command nor a url, a field of the
            wrong type, or a Codex field that should name an environment variable
            names none.
    """
    where = f"server {name!r}" + (f" in {source}" if source else "")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} should be an object, not {type(raw).__name__}")
    kind = raw.get("type")
    if kind not in _STDIO_TYPES and (not isinstance(kind, str) or kind not in _REMOTE_TYPES):
        raise ConfigError(f"{where}: type {kind!r} is not one minimcp knows "
                          f"({', '.join(_REMOTE_TYPES)}, stdio or local)")
    url_key = next((key for key in ("httpUrl", "serverUrl", "url") if raw.get(key)), None)
    if kind in _REMOTE_TYPES or (kind is None and url_key):  # no type and a url: Cursor's way
        if not url_key:
            raise ConfigError(f'{where}: type {kind!r} needs a "url"')
        if kind:
            transport = _REMOTE_TYPES[kind]
        else:  # Gemini CLI: httpUrl is Streamable HTTP, url the HTTP+SSE transport
            transport = "sse" if url_key == "url" and _dialect(source) == "gemini" else "http"
        headers, from_env = _remote_headers(raw, where)
        entry: Dict[str, Any] = {"url": str(raw[url_key]), "headers": headers, "transport": transport}
        if from_env:
            entry["env_headers"] = from_env
        oauth = _oauth_settings(raw, where)
        if oauth:
            entry["oauth"] = oauth
        return entry
    command, args, env = _command(raw)
    if isinstance(command, str) and command:
        command = [command]
    if not (isinstance(command, list) and command) or not isinstance(args, list):
        extension = " (a Zed extension's server: minimcp cannot start it)" if "settings" in raw else ""
        raise ConfigError(f'{where} needs a "command" (and "args" as a list) or a "url"{extension}')
    entry = {"command": [str(part) for part in command + args], "env": _strings(env, "env", where),
             "cwd": str(raw["cwd"]) if raw.get("cwd") else None}
    if raw.get("envFile"):
        entry["envFile"] = str(raw["envFile"])
    return entry


def load_config(path: PathLike, *, strict: bool = True) -> Dict[str, Dict[str, Any]]:
    """Read one host config file and return its servers.

    Example::

        for name, entry in load_config("~/.cursor/mcp.json", strict=False).items():
            print(name, entry.get("error") or entry.get("command") or entry["url"])

    Args:
        path: the file, in any of the formats above (``.toml``: Codex's).
        strict: raise for a malformed entry (the default); with False, a malformed
            entry is listed as ``{"error": message}`` under its name, so one bad
            entry does not hide the good ones of the same file.

    Returns:
        ``{name: entry}``, in the file's order, each entry as :func:`parse_entry`
        gives it: ``${VAR}`` references are left as written, so listing never
        fails for a variable that is not set.

    Raises:
        ConfigError: the file is missing, not JSON (or TOML), not an object of
            servers, or (``strict``) has a malformed entry; or it is TOML, Python
            is older than 3.11 and tomlkit is not installed (the message says
            what to pip install).
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    raw = _servers_section(_read_file(path), path)
    servers: Dict[str, Dict[str, Any]] = {}
    for name, entry in raw.items():
        try:
            servers[name] = parse_entry(entry, name, path)
        except ConfigError as exc:
            if strict:
                raise
            servers[name] = {"error": str(exc)}
    return servers


# -- expanding variables -----------------------------------------------------------------


def _workspace(path: str) -> str:
    """The folder a config file belongs to: the parent of .vscode/, .cursor/ ..., else its own."""
    folder = os.path.dirname(path)
    hidden = (".vscode", ".cursor", ".gemini", ".zed", ".codex", ".github")
    return os.path.dirname(folder) if os.path.basename(folder) in hidden else folder


def _expander(where: str, workspace: str, missing: List[str], forms: Tuple[str, ...]) -> Callable[[str], str]:
    """Return ``expand(text)``, which expands the variable ``forms`` a host knows (see
    ``_EXPANDS``), leaves any other ``$`` text as written, and records unset variables in
    ``missing`` rather than failing."""
    def one(match: "re.Match[str]") -> str:
        body = match.group(1)
        if body is None:  # $VAR ("bare": the pattern finds it only where that form is known)
            body = match.group(2)
        elif body.startswith("input:") or body in ("workspaceFolder", "userHome"):
            if "editor" not in forms:
                return match.group()
            if body.startswith("input:"):
                raise ConfigError(f"{where} uses ${{{body}}}: VS Code asks the user for inputs, which minimcp "
                                  f"cannot do; use an environment variable (${{env:NAME}}) instead")
            return workspace if body == "workspaceFolder" else os.path.expanduser("~")
        elif body.startswith("env:"):  # VS Code's, Cursor's and Windsurf's spelling
            if "env" not in forms:
                return match.group()
            body = body[len("env:"):]
        elif body.startswith("file:") and "file" in forms:  # Windsurf's: a file's text
            raise ConfigError(f"{where} uses ${{{body}}}: Windsurf reads that file, which minimcp does not; "
                              f"use an environment variable (${{env:NAME}}) instead")
        elif "braced" not in forms:
            return match.group()
        name, has_default, default = body.partition(":-")
        if not _NAME.fullmatch(name):
            raise ConfigError(f"{where} uses ${{{body}}}, which minimcp cannot expand (it knows ${{VAR}}, "
                              f"${{VAR:-default}}, ${{env:VAR}}, ${{workspaceFolder}} and ${{userHome}})")
        value = os.environ.get(name)
        if value is not None:
            return value
        if has_default:
            return default
        missing.append(name)
        return f"${{{name}}}"  # one spelling, so entries that differ only in how they name it compare equal

    if not forms:
        return lambda text: text
    pattern = _VARIABLE_OR_BARE if "bare" in forms else _VARIABLE
    return lambda text: pattern.sub(one, text)


def _read_env_file(path: str, where: str) -> Dict[str, str]:
    """Read VS Code's ``envFile``: ``KEY=value`` lines, ``#`` comments, optional quotes."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read its envFile {path}: {exc.strerror}") from None
    env = {}
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):]
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def _expand_entry(entry: Dict[str, Any], name: str, path: str, strict: bool = True) -> Dict[str, Any]:
    """Return a copy of ``entry`` (server ``name`` of the file ``path``) with its variables
    expanded, as the host of ``path`` expands them (``_EXPANDS``).

    Claude Desktop, Zed and Codex expand nothing in their files: their entries are
    returned as written, but for a Codex entry's ``env_headers`` (the headers its
    ``bearer_token_env_var`` and ``env_http_headers`` name), which are read from the
    environment. With ``strict`` false, a variable that is not set is left as ``${NAME}``.

    Raises:
        ConfigError: a variable is not set and has no default (every such
            variable is named), or the entry uses a VS Code ``${input:...}``.
    """
    where = f"server {name!r} in {path}"
    missing: List[str] = []
    env_file = None
    dialect = _dialect(path)
    expand = _expander(where, _workspace(path), missing, _EXPANDS[dialect])
    if "url" in entry:
        from_env = _expander(where, "", missing, ("braced",))  # ${VAR} only: the names were checked
        headers = {key: expand(value) for key, value in entry["headers"].items()}
        headers.update((key, from_env(value)) for key, value in (entry.get("env_headers") or {}).items())
        expanded = {"url": expand(entry["url"]), "transport": entry["transport"], "headers": headers}
        if entry.get("oauth"):
            expanded["oauth"] = {key: expand(value) if isinstance(value, str) else value
                                 for key, value in entry["oauth"].items()}
    else:
        expanded = {"command": [expand(part) for part in entry["command"]],
                    "env": {key: expand(value) for key, value in entry["env"].items()},
                    "cwd": expand(entry["cwd"]) if entry.get("cwd") else None}
        env_file = expand(entry["envFile"]) if entry.get("envFile") else None
    if missing and strict:
        names = ", ".join(dict.fromkeys(missing))
        hint = "set them, or write a default: ${NAME:-default}" if "braced" in _EXPANDS[dialect] else "set them"
        raise ConfigError(f"{where} needs the environment variable(s) {names}, which are not set ({hint})")
    if env_file and not strict:
        expanded["envFile"] = os.path.join(_workspace(path), env_file)
    elif env_file:
        # The env entry wins over the file, as in VS Code.
        env_path = os.path.join(_workspace(path), env_file)
        expanded["env"] = {**_read_env_file(env_path, where), **expanded["env"]}
    return expanded


# -- finding a server ------------------------------------------------------------------------


def _same_server(name: str, first: Tuple[str, Dict[str, Any]], other: Tuple[str, Dict[str, Any]]) -> bool:
    """Whether two parsed entries of server ``name``, each with its file, start the same server:
    compared expanded (``${env:X}`` in one file and ``${X}`` in another are the same, set or not)."""
    try:
        return _expand_entry(first[1], name, first[0], False) == _expand_entry(other[1], name, other[0], False)
    except (ConfigError, KeyError):  # an ${input:...}, an unknown variable, or a malformed entry's {"error"}
        return first[1] == other[1]


def _parsed(servers: Dict[str, Any], name: str, path: str) -> Tuple[str, Dict[str, Any]]:
    """The entry ``name`` of a file's servers, parsed (a malformed one as ``{"error": ...}``), with its file."""
    try:
        return path, parse_entry(servers[name], name, path)
    except ConfigError as exc:
        return path, {"error": str(exc)}


def _warn_shadowed(name: str, used: str, others: List[str]) -> None:
    """Say that ``used`` won over other files that define ``name`` differently, and how to pick one."""
    other = others[0]
    log.warning("server %r is defined differently in %d host config files; using the one in %s (the first "
                "in the search order); also in: %s. To use another, name its file: --config %s (the minimcp "
                "command) or connect(%r, config=%r) (Python)", name, len(others) + 1, used, ", ".join(others),
                other, name, other)


def find_server(name: str, config: Optional[PathLike] = None) -> Dict[str, Any]:
    """Return the config entry of server ``name``, its variables expanded.

    Example::

        entry = find_server("weather", config=".mcp.json")
        # {"command": ["python", "weather.py"], "env": {}, "cwd": None}

    Args:
        name: the server's name, as the config file spells it.
        config: the file to look in; by default the files of
            :func:`config_paths`, in order, the first one naming the server
            winning. When a later file names it too, with a different entry, a
            warning (logger ``minimcp.client.config``) names both files and how
            to pick the other (``config=``).

    Returns:
        ``{"command": [argv...], "env": {...}, "cwd": str or None}`` for a
        stdio server, ``{"url": str, "headers": {...}, "transport": "http" | "sse"}``
        for a remote one.

    Raises:
        ServerNotFound: no file names the server; the message lists every
            file tried and the servers each has.
        ConfigError: the given ``config`` file does not exist, a file read is
            not valid JSON or TOML (the message names file and line), the entry
            is malformed, or a variable of the entry cannot be expanded. Only the
            entry asked for is checked: a malformed neighbour in the same file
            (say, one with neither ``command`` nor ``url``) is no obstacle. A
            Codex file that needs tomlkit to be read (Python 3.9 and 3.10) is an
            error when it is the ``config`` given, and is skipped (and named in
            a ServerNotFound) in the search.
    """
    explicit = config is not None
    paths = [os.fspath(config)] if config is not None else config_paths()
    tried = []
    found: Optional[Tuple[str, Dict[str, Any]]] = None  # the first file naming the server, and its entry
    shadowed: List[str] = []
    for path in paths:
        path = os.path.abspath(os.path.expanduser(path))
        if not explicit and not os.path.isfile(path):
            tried.append(f"{path} (no such file)")
            continue
        # The raw section, not load_config(): each entry is parsed when it is the one asked
        # for, so one bad entry of a file does not make its good neighbours unusable by name.
        try:
            servers = _servers_section(_read_file(path), path)
        except _NeedsExtra as exc:
            if explicit:
                raise
            tried.append(f"{path} (skipped: {exc})")
            continue
        except ConfigError:
            if found is None:
                raise
            continue  # the server is already found: a later broken file can only not shadow it
        if found is None and name in servers:
            found = (path, parse_entry(servers[name], name, path))
        elif found is not None and name in servers and not _same_server(name, found, _parsed(servers, name, path)):
            shadowed.append(path)
        elif found is None:
            tried.append(f"{path} (servers: {', '.join(servers) or 'none'})")
    if found is None:
        hint = "" if explicit else "\n(pass config= to name another file)"
        raise ServerNotFound(f"no MCP server named {name!r}; looked in:\n  " + "\n  ".join(tried) + hint)
    if shadowed:
        _warn_shadowed(name, found[0], shadowed)
    return _expand_entry(found[1], name, found[0])
