"""Host config files: find an MCP server by name, the way Claude Desktop, Claude Code,
Cursor and VS Code do.

``minimcp.connect("github")`` ends up in :func:`find_server`, which looks the
name up in the hosts' config files, expands ``${VAR}`` references from the
environment, and returns an entry ``connect()`` can start. :func:`load_config`
reads one file, for people who want to list its servers.

This module reads JSON files and ``os.environ`` and nothing else: it starts no
process, writes no file, and cannot prompt (so a VS Code ``${input:...}`` is an
error here, not a question).

The formats (all JSON; comments and trailing commas are accepted, since VS Code
files are JSONC)::

    {"mcpServers": {name: {"command", "args", "env", "cwd"}}}      Claude Desktop, Cursor,
    {"mcpServers": {name: {"type", "url", "headers", "oauth"}}}    Claude Code .mcp.json
    {"servers": {name: {"type", "command", "args", "env", "envFile",
                        "url", "headers"}}, "inputs": [...]}        VS Code .vscode/mcp.json
    {"mcpServers": {...}, "projects": {path: {"mcpServers": {...}}}}  Claude Code ~/.claude.json

In ``~/.claude.json`` the servers of the project in the current directory win
over the top-level (user) ones, as Claude Code's "local" scope wins over "user".

Variables, in command, args, env, cwd, envFile, url and headers: ``${VAR}``,
``${VAR:-default}`` (Claude Code; a variable set to "" counts as set, as there),
``${env:VAR}`` (VS Code, Cursor), ``${workspaceFolder}`` and ``${userHome}``.
A variable that is not set and has no default is an error naming it (Claude
Code would pass the text on literally and warn).
"""

import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional, Union

from ..errors import ConfigError, ServerNotFound

PathLike = Union[str, "os.PathLike[str]"]

# Claude Code and VS Code both write "http" for Streamable HTTP; older files say
# "streamable-http" or "streamableHttp".
_REMOTE_TYPES = {"http": "http", "streamable-http": "http", "streamableHttp": "http", "sse": "sse"}
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A JSON string (kept), a comment or a trailing comma (blanked out, newlines kept,
# so json's error line numbers still point into the file as written).
_JSONC = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


# -- where the files are --------------------------------------------------------------------


def _claude_desktop_path() -> str:
    """Where Claude Desktop keeps ``claude_desktop_config.json`` on this OS."""
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif sys.platform == "win32":
        base = os.environ.get("APPDATA") or os.path.expanduser(os.path.join("~", "AppData", "Roaming"))
    else:  # Electron's appData on Linux: $XDG_CONFIG_HOME, else ~/.config
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "Claude", "claude_desktop_config.json")


def vscode_user_path() -> str:
    """Where VS Code keeps the user's ``mcp.json`` (its user profile folder) on this OS."""
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif sys.platform == "win32":
        base = os.environ.get("APPDATA") or os.path.expanduser(os.path.join("~", "AppData", "Roaming"))
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "Code", "User", "mcp.json")


def config_paths() -> List[str]:
    """Return the files :func:`find_server` searches when no ``config`` is given, in order.

    Project files in the current directory come first (``.mcp.json``,
    ``.vscode/mcp.json``, ``.cursor/mcp.json``), then the user's (Claude
    Desktop's, ``~/.cursor/mcp.json``, ``~/.claude.json``, VS Code's). The current
    directory and ``HOME`` are read at each call.
    """
    cwd = os.getcwd()
    return [os.path.join(cwd, ".mcp.json"), os.path.join(cwd, ".vscode", "mcp.json"),
            os.path.join(cwd, ".cursor", "mcp.json"), _claude_desktop_path(),
            os.path.expanduser(os.path.join("~", ".cursor", "mcp.json")),
            os.path.expanduser(os.path.join("~", ".claude.json")), vscode_user_path()]


# -- reading a file --------------------------------------------------------------------------


def _strip_jsonc(text: str) -> str:
    def blank(match: "re.Match[str]") -> str:
        found = match.group()
        return found if found.startswith('"') else re.sub(r"[^\n]", " ", found)

    return _JSONC.sub(blank, text)


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8-sig") as f:  # -sig: Windows editors write a BOM
            text = f.read()
    except FileNotFoundError:
        raise ConfigError(f"the config file {path} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        return json.loads(_strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}, line {exc.lineno} column {exc.colno}: not valid JSON "
                          f"({exc.msg})") from None


def _servers_section(data: Any, path: str) -> Dict[str, Any]:
    """Gather the raw server entries of one file, whichever host wrote it."""
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level")
    servers: Dict[str, Any] = {}
    for key in ("servers", "mcpServers"):  # VS Code; everyone else
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


def parse_entry(raw: Any, name: str = "", source: str = "") -> Dict[str, Any]:
    """Turn one host-format server entry into the entry :func:`find_server` returns.

    Variables are left as written; :func:`find_server` expands them.

    Args:
        raw: ``{"command", "args", "env", "cwd"}`` (``command`` a string or a
            list), or ``{"url", "headers", "type"}``.
        name, source: the server's name and file, for error messages.

    Returns:
        ``{"command": [argv...], "env": {...}, "cwd": str or None}`` (plus
        ``"envFile"`` when the entry has one) or ``{"url", "headers", "transport"}``.

    Raises:
        ConfigError: the entry has neither a command nor a url, or a field of the wrong type.
    """
    where = f"server {name!r}" + (f" in {source}" if source else "")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} should be an object, not {type(raw).__name__}")
    kind = raw.get("type")
    if kind not in (None, "stdio") and (not isinstance(kind, str) or kind not in _REMOTE_TYPES):
        raise ConfigError(f"{where}: type {kind!r} is not one minimcp knows "
                          f"({', '.join(_REMOTE_TYPES)} or stdio)")
    if kind in _REMOTE_TYPES or (kind is None and raw.get("url")):  # no type and a url: Cursor's way
        if not raw.get("url"):
            raise ConfigError(f'{where}: type {kind!r} needs a "url"')
        entry: Dict[str, Any] = {"url": str(raw["url"]), "headers": _strings(raw.get("headers") or {}, "headers", where),
                 "transport": _REMOTE_TYPES[kind or "http"]}
        oauth = _oauth_settings(raw, where)
        if oauth:
            entry["oauth"] = oauth
        return entry
    command, args = raw.get("command"), raw.get("args") or []
    if isinstance(command, str) and command:
        command = [command]
    if not (isinstance(command, list) and command) or not isinstance(args, list):
        raise ConfigError(f'{where} needs a "command" (and "args" as a list) or a "url"')
    entry = {"command": [str(part) for part in command + args],
             "env": _strings(raw.get("env") or {}, "env", where),
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
        path: the file, in any of the formats above.
        strict: raise for a malformed entry (the default); with False, a malformed
            entry is listed as ``{"error": message}`` under its name, so one bad
            entry does not hide the good ones of the same file.

    Returns:
        ``{name: entry}``, in the file's order, each entry as :func:`parse_entry`
        gives it: ``${VAR}`` references are left as written, so listing never
        fails for a variable that is not set.

    Raises:
        ConfigError: the file is missing, not JSON, not an object of servers, or
            (``strict``) has a malformed entry.
    """
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    raw = _servers_section(_read_json(path), path)
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
    """The folder a config file belongs to: the parent of .vscode/ or .cursor/, else its own."""
    folder = os.path.dirname(path)
    return os.path.dirname(folder) if os.path.basename(folder) in (".vscode", ".cursor") else folder


def _expander(where: str, workspace: str, missing: List[str]) -> Callable[[str], str]:
    """Return ``expand(text)``, which records unset variables in ``missing`` rather than failing."""
    def one(match: "re.Match[str]") -> str:
        body = match.group(1)
        if body.startswith("input:"):
            raise ConfigError(f"{where} uses ${{{body}}}: VS Code asks the user for inputs, which "
                              f"minimcp cannot do; use an environment variable (${{env:NAME}}) instead")
        if body == "workspaceFolder":
            return workspace
        if body == "userHome":
            return os.path.expanduser("~")
        if body.startswith("env:"):  # VS Code's and Cursor's spelling
            body = body[len("env:"):]
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
        return match.group()

    return lambda text: _VARIABLE.sub(one, text)


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


def _expand_entry(entry: Dict[str, Any], name: str, path: str) -> Dict[str, Any]:
    """Return a copy of ``entry`` (server ``name`` of the file ``path``) with its variables expanded.

    Raises:
        ConfigError: a variable is not set and has no default (every such
            variable is named), or the entry uses a VS Code ``${input:...}``.
    """
    where = f"server {name!r} in {path}"
    missing: List[str] = []
    env_file = None
    expand = _expander(where, _workspace(path), missing)
    if "url" in entry:
        expanded = {"url": expand(entry["url"]), "transport": entry["transport"],
                    "headers": {key: expand(value) for key, value in entry["headers"].items()}}
        if entry.get("oauth"):
            expanded["oauth"] = {key: expand(value) if isinstance(value, str) else value
                                 for key, value in entry["oauth"].items()}
    else:
        expanded = {"command": [expand(part) for part in entry["command"]],
                    "env": {key: expand(value) for key, value in entry["env"].items()},
                    "cwd": expand(entry["cwd"]) if entry.get("cwd") else None}
        env_file = expand(entry["envFile"]) if entry.get("envFile") else None
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise ConfigError(f"{where} needs the environment variable(s) {names}, which are not set "
                          f"(set them, or write a default: ${{NAME:-default}})")
    if env_file:
        # The env entry wins over the file, as in VS Code.
        env_path = os.path.join(_workspace(path), env_file)
        expanded["env"] = {**_read_env_file(env_path, where), **expanded["env"]}
    return expanded


# -- finding a server ------------------------------------------------------------------------


def find_server(name: str, config: Optional[PathLike] = None) -> Dict[str, Any]:
    """Return the config entry of server ``name``, its variables expanded.

    Example::

        entry = find_server("weather", config=".mcp.json")
        # {"command": ["python", "weather.py"], "env": {}, "cwd": None}

    Args:
        name: the server's name, as the config file spells it.
        config: the file to look in; by default the files of
            :func:`config_paths`, in order, the first one naming the server winning.

    Returns:
        ``{"command": [argv...], "env": {...}, "cwd": str or None}`` for a
        stdio server, ``{"url": str, "headers": {...}, "transport": "http" | "sse"}``
        for a remote one.

    Raises:
        ServerNotFound: no file names the server; the message lists every
            file tried and the servers each has.
        ConfigError: the given ``config`` file does not exist, a file read is
            not valid JSON (the message names file and line), the entry is
            malformed, or a variable of the entry cannot be expanded. Only the
            entry asked for is checked: a malformed neighbour in the same file
            (say, one with neither ``command`` nor ``url``) is no obstacle.
    """
    explicit = config is not None
    paths = [os.fspath(config)] if config is not None else config_paths()
    tried = []
    for path in paths:
        path = os.path.abspath(os.path.expanduser(path))
        if not explicit and not os.path.isfile(path):
            tried.append(f"{path} (no such file)")
            continue
        # The raw section, not load_config(): each entry is parsed when it is the one asked
        # for, so one bad entry of a file does not make its good neighbours unusable by name.
        servers = _servers_section(_read_json(path), path)
        if name in servers:
            return _expand_entry(parse_entry(servers[name], name, path), name, path)
        tried.append(f"{path} (servers: {', '.join(servers) or 'none'})")
    hint = "" if explicit else "\n(pass config= to name another file)"
    raise ServerNotFound(f"no MCP server named {name!r}; looked in:\n  " + "\n  ".join(tried) + hint)
