"""The commands that package a server for others: ``bundle`` and ``registry``.

::

    minimcp bundle examples/weather_server.py                    # weather.mcpb: one file a host installs
    minimcp bundle server.py --runtime python -o dist/app.mcpb   # its dependencies inside, for this platform
    minimcp registry server.py --name io.github.alice/weather    # server.json for the MCP Registry

``bundle`` writes an MCP Bundle (``.mcpb``, the format of github.com/anthropics/mcpb):
a zip with a ``manifest.json`` (manifest version 0.4), the server's own source
files and a small ``server/main.py`` that serves them with ``minimcp run``.
``registry`` writes the ``server.json`` the MCP Registry publishes (schema
2025-12-11) and prints the ``mcp-name:`` line PyPI's copy of the README must carry.

Both load the file's :class:`~minimcp.Server` as ``minimcp run`` does (its
``__main__`` block does not run), list its tools and prompts through an in-process
client, and read the environment variables its source uses from the source
itself (``os.environ[...]``, ``os.environ.get(...)``, ``os.getenv(...)``), so a
setting read only inside a function is found too. What the project near the file
says (``pyproject.toml``'s ``[project]``, or ``setup.cfg``'s ``[metadata]``)
names, versions and describes the result; without one, the Server does.

Nothing here touches the network or runs a package manager: a ``uv`` bundle
names its dependencies for the host to install, a ``python`` bundle copies the
ones installed here.
"""

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, NoReturn, Optional, Sequence, Set, Tuple

from .command_line import EXIT_OK, EXIT_USAGE, UsageError
from .output import _emit

if TYPE_CHECKING:
    import ast

#: The commands of this module and their one-line help.
SHIP_COMMANDS = {
    "bundle": "pack a server file into an MCP Bundle (.mcpb) that a host installs in one step",
    "registry": "write the server.json that lists a server in the MCP Registry",
}

#: The distribution that installs minimcp ("minimcp" on PyPI is an unrelated project).
DISTRIBUTION = "minimcp-sync"
#: The manifest version ``bundle`` writes (github.com/anthropics/mcpb MANIFEST.md): 0.4 adds ``uv``.
MANIFEST_VERSION = "0.4"
#: The server.json schema ``registry`` writes (github.com/modelcontextprotocol/registry).
SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

# Variables the system sets, not the person who installs the server: never asked for.
_SYSTEM_VARIABLES = frozenset({
    "PATH", "HOME", "USER", "USERNAME", "LOGNAME", "SHELL", "PWD", "TMPDIR", "TEMP", "TMP", "LANG",
    "LC_ALL", "TERM", "TZ", "APPDATA", "LOCALAPPDATA", "USERPROFILE", "PYTHONPATH", "VIRTUAL_ENV",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "MINIMCP_TRACE",
})
# A word of a variable's name that makes its value a secret (masked, kept in the host's keychain).
_SECRET_WORDS = frozenset({"KEY", "KEYS", "APIKEY", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD",
                           "PASSWORDS", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS"})
# Zip entries get this time and mode, so the same input makes the same bytes (zip's epoch is 1980).
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _parser(name: str) -> argparse.ArgumentParser:
    summary = SHIP_COMMANDS[name]
    parser = _Parser(prog=f"minimcp {name}", description=summary[0].upper() + summary[1:] + ".",
                     allow_abbrev=False)
    parser.add_argument("file", metavar="SERVER.py[:NAME]", help="the file; :NAME picks its Server when it has several")
    if name == "bundle":
        parser.add_argument("-o", "--output", metavar="FILE.mcpb",
                            help="where to write it (default: NAME.mcpb in the current folder)")
        parser.add_argument("--runtime", choices=["uv", "python"], default="uv",
                            help="uv (default): the host installs minimcp and the project's dependencies with "
                                 "uv, on any platform; python: the ones installed here go inside the bundle, "
                                 "which then runs on this platform and Python version only")
        parser.add_argument("--include", metavar="PATH", action="append", default=[],
                            help="also pack this file or folder from the server's folder (data files, modules "
                                 "imported only inside functions); repeatable")
        parser.add_argument("--author", metavar="NAME", help="the author the host shows (default: the project's)")
    else:
        parser.add_argument("--name", metavar="NAMESPACE/NAME",
                            help="the registry name, io.github.USER/NAME or com.example/NAME "
                                 "(default: from the project's repository URL)")
        parser.add_argument("--package", metavar="PYPI_NAME",
                            help="the PyPI package that serves it (default: the project's name)")
        parser.add_argument("--url", metavar="URL", action="append", default=[],
                            help="an https address where it is deployed (Streamable HTTP); repeatable")
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="where to write it (default: server.json in the project's folder)")
    parser.add_argument("--force", action="store_true", help="replace the output file if it exists")
    # main()'s "unexpected error ... (--trace shows where)" names this flag for every command.
    parser.add_argument("--trace", action="store_true",
                        help="on an unexpected error, or when the file fails to load, show the traceback")
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``bundle`` / ``registry`` and their words (``argv[0]`` is the command)."""
    args = _parser(argv[0]).parse_args(list(argv[1:]))
    args.command = argv[0]
    args.quiet = False  # main() reads args.quiet when a command fails
    return args


def run(args: argparse.Namespace) -> int:
    """Run ``bundle`` or ``registry``; return the exit status."""
    return cmd_bundle(args) if args.command == "bundle" else cmd_registry(args)


# -- the settings a server reads from its environment ----------------------------------------------


@dataclass
class _Setting:
    """One environment variable the server's source reads."""

    name: str
    where: str  # "weather.py:12", its first read
    required: bool = True  # only os.environ["NAME"] reads, no get() or `in` test anywhere
    default: Optional[str] = None  # the constant a get()/getenv() falls back to

    @property
    def secret(self) -> bool:
        return any(word in _SECRET_WORDS for word in re.split(r"[^A-Z0-9]+", self.name.upper()))

    @property
    def key(self) -> str:  # its user_config key: the manifest's examples use lower case
        return self.name.lower()

    def describe(self) -> str:
        kind = ", ".join(["secret"] * self.secret + ["required"] * self.required
                         + [f"default {self.default!r}"] * (self.default is not None))
        return f"{self.name} ({kind})" if kind else self.name


def _is_main_block(node: "ast.AST") -> bool:
    """``if __name__ == "__main__":``: ``minimcp run`` never runs it, so what it reads is not asked for."""
    import ast

    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _nodes(tree: "ast.AST") -> Iterator["ast.AST"]:
    import ast

    stack = [tree]
    while stack:
        node = stack.pop()
        if not _is_main_block(node):
            yield node
            stack.extend(ast.iter_child_nodes(node))


def _environment_reads(source: bytes, path: str) -> Iterator[Tuple[str, str, Optional[str], Tuple[int, int]]]:
    """``(name, how, default, (line, column))`` for each read of a constant-named variable in ``source``;
    ``how`` is ``"item"`` (``os.environ["X"]``), ``"get"`` or ``"in"``."""
    import ast

    tree = ast.parse(source, path)
    os_names: Set[str] = {"os"}
    environ_names: Set[str] = set()
    getenv_names: Set[str] = set()
    for node in ast.walk(tree):  # who is os, os.environ, os.getenv here (import os as o, from os import environ)
        if isinstance(node, ast.Import):
            os_names.update(alias.asname or alias.name for alias in node.names if alias.name == "os")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            environ_names.update(alias.asname or alias.name for alias in node.names if alias.name == "environ")
            getenv_names.update(alias.asname or alias.name for alias in node.names if alias.name == "getenv")

    def is_environ(node: ast.AST) -> bool:
        return ((isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)
                 and node.value.id in os_names) or (isinstance(node, ast.Name) and node.id in environ_names))

    def text(node: Optional[ast.AST]) -> Optional[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)) \
                and not isinstance(node.value, bool):
            return str(node.value)
        return None

    for node in _nodes(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value):
            name = text(node.slice)  # (3.9+: the index itself, no ast.Index)
            if name is not None:
                yield name, "item", None, (node.lineno, node.col_offset)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            getter = (isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault")
                      and is_environ(func.value))
            getenv = ((isinstance(func, ast.Attribute) and func.attr == "getenv" and isinstance(func.value, ast.Name)
                       and func.value.id in os_names) or (isinstance(func, ast.Name) and func.id in getenv_names))
            name = text(node.args[0])
            if (getter or getenv) and name is not None:
                fallback = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg in ("default", "value")), None)
                yield name, "get", text(fallback), (node.lineno, node.col_offset)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and is_environ(node.comparators[0]):
            name = text(node.left)
            if name is not None:
                yield name, "in", None, (node.lineno, node.col_offset)


def _settings(files: Sequence[Tuple[str, str]]) -> List[_Setting]:
    """The environment variables read in ``files`` (``(shown name, path)``), in the order first read."""
    found: Dict[str, _Setting] = {}
    for shown, path in files:
        with open(path, "rb") as f:  # bytes: the parser honours a coding declaration
            source = f.read()
        reads = sorted(_environment_reads(source, path), key=lambda read: read[3])  # (it imported: it parses)
        for name, how, default, (line, _) in reads:
            if name in _SYSTEM_VARIABLES or not name:
                continue
            setting = found.setdefault(name, _Setting(name, f"{shown}:{line}"))
            setting.required = setting.required and how == "item"
            setting.default = setting.default if setting.default is not None else default
    return list(found.values())


# -- the project around the file -----------------------------------------------------------------


@dataclass
class _Project:
    """What a pyproject.toml ``[project]`` or a setup.cfg ``[metadata]`` says about the server's project."""

    folder: str
    source: str  # the file it came from
    name: str
    version: Optional[str] = None
    version_from: str = ""
    description: Optional[str] = None
    authors: List[Dict[str, str]] = field(default_factory=list)
    urls: Dict[str, str] = field(default_factory=dict)
    dependencies: List[str] = field(default_factory=list)
    requires_python: Optional[str] = None
    scripts: Dict[str, str] = field(default_factory=dict)
    readme: Optional[str] = None
    license: Optional[str] = None
    keywords: List[str] = field(default_factory=list)


def _normalized(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _read_toml(path: str) -> Dict[str, Any]:
    import importlib

    try:
        toml = importlib.import_module("tomllib")  # 3.11+
    except ImportError:
        try:
            toml = importlib.import_module("tomli")
        except ImportError:
            raise UsageError(f"reading {path} needs Python 3.11 or newer, or the tomli package installed "
                             f"beside minimcp") from None
    with open(path, "rb") as f:
        try:
            data: Dict[str, Any] = toml.load(f)
        except ValueError as exc:  # tomllib.TOMLDecodeError is a ValueError
            raise UsageError(f"{path} is not valid TOML ({exc}): fix it, then run this again") from None
    return data


def _installed_version(name: str) -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _from_pyproject(folder: str, path: str) -> Optional[_Project]:
    table = _read_toml(path).get("project")
    if not isinstance(table, dict) or not isinstance(table.get("name"), str):
        return None
    project = _Project(folder, path, table["name"], description=table.get("description"),
                       requires_python=table.get("requires-python"))
    if isinstance(table.get("version"), str):
        project.version, project.version_from = table["version"], "pyproject.toml"
    elif "version" in table.get("dynamic", []):  # the installed copy knows it (pip install -e .)
        project.version = _installed_version(project.name)
        project.version_from = "the installed project"
    project.authors = [{k: v for k, v in a.items() if k in ("name", "email") and isinstance(v, str)}
                       for a in table.get("authors", []) if isinstance(a, dict)]
    project.urls = {k: v for k, v in table.get("urls", {}).items() if isinstance(v, str)}
    project.dependencies = [d for d in table.get("dependencies", []) if isinstance(d, str)]
    project.scripts = {k: v for k, v in table.get("scripts", {}).items() if isinstance(v, str)}
    readme = table.get("readme")
    readme = readme.get("file") if isinstance(readme, dict) else readme
    project.readme = os.path.join(folder, readme) if isinstance(readme, str) else None
    license_ = table.get("license")
    project.license = license_ if isinstance(license_, str) else None
    project.keywords = [k for k in table.get("keywords", []) if isinstance(k, str)]
    return project


def _from_setup_cfg(folder: str, path: str) -> Optional[_Project]:
    import configparser

    config = configparser.ConfigParser(interpolation=None)
    config.read(path, encoding="utf-8")
    if not config.has_option("metadata", "name"):
        return None  # a setup.cfg of tool settings only

    def get(section: str, option: str) -> Optional[str]:
        return config.get(section, option).strip() if config.has_option(section, option) else None

    def lines(section: str, option: str) -> List[str]:
        return [line.strip() for line in (get(section, option) or "").splitlines() if line.strip()]

    project = _Project(folder, path, get("metadata", "name") or "", description=get("metadata", "description"),
                       requires_python=get("options", "python_requires"), license=get("metadata", "license"))
    version = get("metadata", "version")
    if version and not version.startswith(("attr:", "file:")):
        project.version, project.version_from = version, "setup.cfg"
    else:
        project.version, project.version_from = _installed_version(project.name), "the installed project"
    author, email = get("metadata", "author"), get("metadata", "author_email")
    if author:
        project.authors = [dict({"name": author}, **({"email": email} if email else {}))]
    for line in lines("metadata", "project_urls"):
        key, _, url = line.partition("=")
        project.urls[key.strip()] = url.strip()
    if get("metadata", "url"):
        project.urls.setdefault("Homepage", get("metadata", "url") or "")
    project.dependencies = lines("options", "install_requires")
    for line in lines("options.entry_points", "console_scripts"):
        key, _, target = line.partition("=")
        project.scripts[key.strip()] = target.strip()
    project.keywords = [k.strip() for k in (get("metadata", "keywords") or "").split(",") if k.strip()]
    return project


def _find_project(start: str) -> Optional[_Project]:
    """The project whose folder holds ``start``: the first folder up with a pyproject.toml or setup.cfg
    that names one, not past a repository's root or the home folder. minimcp's own is nobody's project."""
    folder, home = os.path.abspath(start), os.path.expanduser("~")
    while True:
        for filename, read in (("pyproject.toml", _from_pyproject), ("setup.cfg", _from_setup_cfg)):
            path = os.path.join(folder, filename)
            if os.path.isfile(path):
                project = read(folder, path)
                if project is not None:
                    return None if _normalized(project.name) == DISTRIBUTION else project
        parent = os.path.dirname(folder)
        if parent == folder or folder == home or os.path.exists(os.path.join(folder, ".git")):
            return None
        folder = parent


def _git_origin(folder: str) -> Optional[str]:
    """The ``origin`` remote's URL from the repository holding ``folder``, if any."""
    while True:
        config = os.path.join(folder, ".git", "config")
        if os.path.isfile(config):
            with open(config, encoding="utf-8", errors="replace") as f:
                found = re.search(r'\[remote "origin"\][^\[]*?^\s*url\s*=\s*(\S+)', f.read(), re.M)
            return found.group(1) if found else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _github(url: str) -> Optional[Tuple[str, str]]:
    """``(owner, repository)`` of a GitHub URL (https, ssh or git@github.com:owner/repo.git)."""
    found = re.search(r"github\.com[:/]+([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/*$", url)
    return (found.group(1), found.group(2)) if found else None


# -- the server, loaded --------------------------------------------------------------------------


@dataclass
class _Loaded:
    """A server file loaded and listed: everything both commands write from."""

    path: str  # the file, absolute
    attribute: str  # NAME of SERVER.py:NAME, or ""
    place: str  # where the file goes in the bundle: server/FILE.py
    server: Any
    project: Optional[_Project]
    own: Dict[str, str]  # its own source files, imported as it loaded: place in server/ -> path
    tools: List[Dict[str, str]]
    prompts: List[Dict[str, Any]]
    prompts_unrendered: List[str]
    settings: List[_Setting]


def _load(spec: str, trace: bool, listing: bool = True) -> _Loaded:
    """Import the file's Server as ``minimcp run`` does, note the modules of the project it imported, and
    (with ``listing``) list its tools and prompts."""
    from .install import load_server, split_spec

    path, attribute = split_spec(spec)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path!r}")
    path = os.path.abspath(path)
    project = _find_project(os.path.dirname(path))
    before = set(sys.modules)
    try:
        server = load_server(spec)
    except UsageError:
        raise
    except Exception as exc:
        if trace:
            raise
        hint = ""
        if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
            hint = (f"; if {exc.args[0]} is an environment variable it reads as it loads, set it for this "
                    f"command: {exc.args[0]}=... minimcp ...")
        raise UsageError(f"{os.path.basename(path)} failed to load: {type(exc).__name__}: {exc}{hint} "
                         f"(--trace shows where)") from None
    root = project.folder if project else os.path.dirname(path)
    own = _own_modules(sorted(set(sys.modules) - before), root)
    place = "server/" + os.path.basename(path)  # (loaded as a top-level module named after the file)
    own = dict(sorted(dict(own, **{place: path}).items()))
    tools, prompts, unrendered = _listing(server) if listing else ([], [], [])
    scanned = [place] + [p for p, file in own.items() if p != place and file.endswith(".py")]  # the file first
    settings = _settings([(p[len("server/"):], own[p]) for p in scanned])
    return _Loaded(path, attribute, place, server, project, own, tools, prompts, unrendered, settings)


def _installed_here(path: str) -> bool:
    return bool(set(path.split(os.sep)) & {"site-packages", "dist-packages"})


def _own_modules(names: Sequence[str], root: str) -> Dict[str, str]:
    """``{"server/pkg/mod.py": path}``: each module in ``names`` whose file is under ``root`` and not an
    installed package (a venv inside the project included), placed by its import name, so the bundle's
    ``server/`` folder is the one sys.path entry they all import from."""
    own: Dict[str, str] = {}
    root = os.path.abspath(root) + os.sep
    for name in names:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if not file or name.split(".")[0] == "minimcp":
            continue
        file = os.path.abspath(file)
        if not file.startswith(root) or _installed_here(file):
            continue
        parts = name.split(".")
        folders = parts if hasattr(module, "__path__") else parts[:-1]  # a package: its __init__ file
        own["/".join(["server", *folders, os.path.basename(file)])] = file
    return dict(sorted(own.items()))


def _first_paragraph(text: Optional[str]) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def _listing(server: Any) -> Tuple[List[Dict[str, str]], List[Dict[str, Any]], List[str]]:
    """The server's tools and prompts as the manifest lists them, through an in-process client.

    A prompt's ``text`` is the prompt rendered with ``${arguments.NAME}`` for each argument, the
    manifest's template syntax; a prompt that does not render that way (it converts its arguments,
    or reads something) gets its description instead, and is named in the third list.
    """
    from ..client.connect import connect
    from ..errors import CapabilityError

    with connect("memory", server=server, timeout=30) as client:
        try:
            tools = [{"name": tool.name, **({"description": _first_paragraph(tool.description)}
                                             if tool.description else {})} for tool in client.list_tools()]
        except CapabilityError:  # no tools: the server does not declare them
            tools = []
        try:
            listed = client.list_prompts()
        except CapabilityError:
            listed = []
        prompts: List[Dict[str, Any]] = []
        unrendered: List[str] = []
        for prompt in listed:
            names = [str(argument.get("name")) for argument in prompt.arguments]
            required = [str(argument.get("name")) for argument in prompt.arguments if argument.get("required")]
            text = None
            # Every argument a placeholder; else the required ones only (an optional `days: int = 3`
            # cannot take "${arguments.days}", and its default then shows in the text).
            for templated in [names, required] if required != names else [names]:
                text = _rendered(client, prompt.name, templated)
                if text is not None:
                    break
            if text is None:
                unrendered.append(prompt.name)
                text = _first_paragraph(prompt.description) or prompt.name
            entry: Dict[str, Any] = {"name": prompt.name}
            if prompt.description:
                entry["description"] = _first_paragraph(prompt.description)
            if names:
                entry["arguments"] = names
            entry["text"] = text
            prompts.append(entry)
    return tools, prompts, unrendered


def _rendered(client: Any, name: str, arguments: Sequence[str]) -> Optional[str]:
    """The prompt's text with ``${arguments.NAME}`` for ``arguments``, or None if it does not render
    that way (it converts them, reads something with them, or returns no text)."""
    from ..errors import RPCError

    try:
        result = client.get_prompt(name, {argument: _template("arguments", argument) for argument in arguments})
    except RPCError:
        return None
    texts = [message["content"].get("text") for message in result.messages if isinstance(message.get("content"), dict)]
    text = "\n\n".join(t for t in texts if isinstance(t, str))
    return text if text and all(_template("arguments", argument) in text for argument in arguments) else None


def _template(scope: str, name: str) -> str:
    """``${scope.name}``: a value the host fills in (MANIFEST.md "Variable Substitution")."""
    return "${" + scope + "." + name + "}"


def _slug(name: str) -> str:
    """A machine name: lower case letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "server"


def _version(loaded: _Loaded) -> Tuple[str, str]:
    """The version to publish, and where it came from: the project's, else the Server's."""
    if loaded.project and loaded.project.version:
        return loaded.project.version, loaded.project.version_from
    return str(loaded.server.version), "the Server"


def _description(loaded: _Loaded) -> str:
    server = loaded.server
    text = _first_paragraph(loaded.project.description if loaded.project else None)
    return text or _first_paragraph(server.instructions) or f"The {server.title or server.name} MCP server"


def _refuse_to_overwrite(path: str, force: bool, data: bytes) -> bool:
    """Whether there is anything to write: an identical file is left as it is, another one needs --force."""
    if not os.path.exists(path):
        return True
    with open(path, "rb") as f:
        if f.read() == data:
            return False
    if not force:
        raise UsageError(f"{path} exists: --force replaces it, or -o FILE writes another file")
    return True


def _write(path: str, data: bytes) -> None:
    """Write the whole file or nothing (a temporary file beside it, then renamed over it)."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".minimcp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _size(count: int) -> str:
    return f"{count / 1024:.1f} KB" if count < 1024 * 1024 else f"{count / 1024 / 1024:.1f} MB"


# -- bundle --------------------------------------------------------------------------------------


def cmd_bundle(args: argparse.Namespace) -> int:
    """``minimcp bundle``: write an MCP Bundle of the file's server."""
    import json

    loaded = _load(args.file, args.trace)
    server, project = loaded.server, loaded.project
    name = _slug(project.name if project else server.name)
    output = args.output or f"{name}.mcpb"
    files: Dict[str, bytes] = {}
    for place, path in loaded.own.items():
        with open(path, "rb") as f:
            files[place] = f.read()
    files.update(_included(args.include, os.path.dirname(loaded.path)))
    launcher = next(p for p in ("server/main.py", "server/minimcp_main.py") if p not in files)
    compiled: List[str] = []
    dependencies: List[str] = []  # what the host installs (uv), or what was copied in (python)
    if args.runtime == "python":
        vendored, dependencies, compiled = _vendored(project.dependencies if project else [])
        files.update(vendored)
    else:
        dependencies = _uv_dependencies(project)
        files["pyproject.toml"] = _uv_project(loaded, name, dependencies).encode()
    spec = loaded.place[len("server/"):] + (f":{loaded.attribute}" if loaded.attribute else "")
    files[launcher] = _launcher(spec, loaded.settings, args.runtime == "python").encode()
    manifest = _manifest(loaded, name, launcher, args, compiled)
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    data = _zip(files)
    if not _refuse_to_overwrite(output, args.force, data):
        _emit(f"{output} is up to date")
        return EXIT_OK
    _write(output, data)
    guessed = not args.author and not (project and project.authors and project.authors[0].get("name"))
    _report_bundle(output, loaded, len(files), launcher, manifest, dependencies, compiled, len(data), guessed)
    return EXIT_OK


def _included(paths: Sequence[str], folder: str) -> Dict[str, bytes]:
    """``--include`` files and folders, placed under ``server/`` as they sit under the server's folder."""
    files: Dict[str, bytes] = {}
    base = os.path.abspath(folder) + os.sep
    for given in paths:
        path = os.path.abspath(given)
        if not path.startswith(base) or not os.path.exists(path):
            raise UsageError(f"--include {given}: give a file or folder inside the server's folder ({folder})")
        found = [path] if os.path.isfile(path) else sorted(
            os.path.join(dirpath, filename) for dirpath, dirnames, filenames in os.walk(path)
            for filename in filenames if "__pycache__" not in dirpath.split(os.sep) and not filename.endswith(".pyc"))
        for file in found:
            with open(file, "rb") as f:
                files["server/" + os.path.relpath(file, folder).replace(os.sep, "/")] = f.read()
    return files


def _launcher(spec: str, settings: Sequence[_Setting], vendored: bool) -> str:
    """``server/main.py``: the entry point the host runs; it serves the file with ``minimcp run``, so
    the server file needs no ``__main__`` block."""
    lines = ['"""Serve the bundled MCP server over stdio (written by `minimcp bundle`: the host runs this file)."""',
             "", "import os", "import sys", "", "HERE = os.path.dirname(os.path.abspath(__file__))"]
    if vendored:
        lines += ["# The dependencies packed beside it come first (not through PYTHONPATH, which the",
                  "# server's own child processes would inherit).",
                  'sys.path.insert(0, os.path.join(HERE, "lib"))']
    if settings:
        names = ", ".join(_quoted(s.name) for s in settings)
        lines += ["# A setting left empty in the host arrives as \"\", or as \"${user_config.KEY}\" from a host",
                  "# that keeps a placeholder it has no value for: unset it, so the server's own default applies.",
                  f"for name in ({names},):",
                  '    if os.environ.get(name, "") in ("", "${user_config.%s}" % name.lower()):',
                  "        os.environ.pop(name, None)"]
    lines += ["", "from minimcp.cli import main  # noqa: E402", "",
              f"sys.exit(main([\"run\", os.path.join(HERE, {_quoted(spec)})]))", ""]
    return "\n".join(lines)


def _uv_dependencies(project: Optional[_Project]) -> List[str]:
    """The project's dependencies, and minimcp: the project's requirement of it, else the version that
    listed the tools here, so the bundle runs what was checked."""
    from ..protocol.versions import SDK_VERSION

    dependencies = list(project.dependencies if project else [])
    if not any(_normalized(re.split(r"[\s\[<>=!~;(]", d, maxsplit=1)[0]) == DISTRIBUTION for d in dependencies):
        dependencies.insert(0, f"{DISTRIBUTION}=={SDK_VERSION}")
    return dependencies


def _uv_project(loaded: _Loaded, name: str, dependencies: Sequence[str]) -> str:
    """The bundle's pyproject.toml: what uv installs before the host starts the server."""
    project = loaded.project
    version, _ = _version(loaded)
    lines = ["# Written by `minimcp bundle`: the host installs these with uv, then runs server/main.py.",
             "[project]", f"name = {_quoted(name)}"]
    if re.fullmatch(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?", version):
        lines.append(f"version = {_quoted(version)}")
    lines.append(f"requires-python = {_quoted((project and project.requires_python) or '>=3.9')}")
    lines.append("dependencies = [" + "".join(f"\n    {_quoted(d)}," for d in dependencies) + "\n]")
    lines += ["", "[tool.uv]", "package = false  # the bundle is not a package to build: its files run as they are",
              ""]
    return "\n".join(lines)


def _quoted(text: str) -> str:
    """``text`` double-quoted: a JSON string is a TOML basic string and a Python literal too."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _vendored(requirements: Sequence[str]) -> Tuple[Dict[str, bytes], List[str], List[str]]:
    """``server/lib/...``: minimcp and every distribution it and ``requirements`` need, copied from this
    environment; those distributions (``NAME VERSION``); the ones with compiled files (they run on this
    platform and this Python only)."""
    from importlib import metadata

    import minimcp

    files: Dict[str, bytes] = {}
    package = os.path.dirname(os.path.abspath(minimcp.__file__))
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for filename in filenames:
            if filename.endswith(".py") or filename == "py.typed":
                file = os.path.join(dirpath, filename)
                with open(file, "rb") as f:
                    files["server/lib/minimcp/" + os.path.relpath(file, package).replace(os.sep, "/")] = f.read()
    try:
        wanted = list(metadata.distribution(DISTRIBUTION).requires or [])
    except metadata.PackageNotFoundError:
        raise UsageError(f"minimcp is not installed as the {DISTRIBUTION} distribution here, so its dependencies "
                         f"cannot be found: install it with pip, or bundle with --runtime uv") from None
    wanted += list(requirements)
    seen, copied_names, compiled = {DISTRIBUTION}, [f"{DISTRIBUTION} {minimcp.__version__}"], []
    while wanted:
        requirement = wanted.pop(0)
        name, _, marker = requirement.partition(";")
        name = re.split(r"[\s\[<>=!~(]", name.strip(), maxsplit=1)[0]
        if "extra" in marker or _normalized(name) in seen:
            continue  # an optional extra's, or done already
        seen.add(_normalized(name))
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if marker.strip():
                continue  # for another Python or platform than this one
            raise UsageError(f"{name} is needed but not installed here: install it, or bundle with --runtime uv "
                             f"(the host then installs it)") from None
        copied = _distribution_files(distribution)
        if not any(place.endswith((".py", ".so", ".pyd")) for place in copied):
            raise UsageError(f"{name} is installed in development mode (pip install -e), so its files are "
                             f"elsewhere: install it normally, or bundle with --runtime uv")
        if any(place.endswith((".so", ".pyd")) for place in copied):
            compiled.append(distribution.metadata["Name"])
        files.update(copied)
        copied_names.append(f"{distribution.metadata['Name']} {distribution.version}")
        wanted += list(distribution.requires or [])
    return files, copied_names, compiled


def _distribution_files(distribution: Any) -> Dict[str, bytes]:
    files: Dict[str, bytes] = {}
    for entry in distribution.files or []:
        parts = entry.parts
        if parts[0] == ".." or "__pycache__" in parts or entry.name.endswith((".pyc", ".pth")) \
                or entry.name == "RECORD":
            continue  # outside site-packages (scripts), caches, path hooks, the install record
        path = distribution.locate_file(entry)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files["server/lib/" + "/".join(parts)] = f.read()
    return files


def _manifest(loaded: _Loaded, name: str, launcher: str, args: argparse.Namespace,
              compiled: Sequence[str]) -> Dict[str, Any]:
    """manifest.json (manifest version 0.4; github.com/anthropics/mcpb MANIFEST.md)."""
    server, project = loaded.server, loaded.project
    version, _ = _version(loaded)
    manifest: Dict[str, Any] = {"manifest_version": MANIFEST_VERSION, "name": name,
                                "display_name": server.title or server.name, "version": version,
                                "description": _description(loaded)}
    if server.instructions and _first_paragraph(server.instructions) != manifest["description"]:
        manifest["long_description"] = server.instructions.strip()
    manifest["author"] = _author(args.author, project)
    env = {s.name: _template("user_config", s.key) for s in loaded.settings}
    if args.runtime == "uv":
        # The strict 0.4 schema requires mcp_config, for uv too; a host that runs uv bundles itself
        # (`uv run` in the bundle's folder) starts the same entry point.
        command = {"command": "uv", "args": ["run", "--directory", "${__dirname}", "${__dirname}/" + launcher]}
    else:
        command = {"command": "python", "args": ["${__dirname}/" + launcher]}
    manifest["server"] = {"type": args.runtime, "entry_point": launcher,
                          "mcp_config": dict(command, **({"env": env} if env else {}))}
    if loaded.tools:
        manifest["tools"] = loaded.tools
    if loaded.prompts:
        manifest["prompts"] = loaded.prompts
    if project and project.keywords:
        manifest["keywords"] = project.keywords
    if project and project.license:
        manifest["license"] = project.license
    runtimes = {"python": (project and project.requires_python) or ">=3.9"}
    compatibility: Dict[str, Any] = {}
    if compiled:  # compiled extension modules: this platform and this Python only
        major, minor = sys.version_info[:2]
        runtimes["python"] = f">={major}.{minor} <{major}.{minor + 1}"
        if sys.platform in ("darwin", "win32", "linux"):
            compatibility["platforms"] = [sys.platform]
    compatibility["runtimes"] = runtimes
    manifest["compatibility"] = compatibility
    if loaded.settings:
        manifest["user_config"] = {s.key: _user_config(s) for s in loaded.settings}
    return manifest


def _author(given: Optional[str], project: Optional[_Project]) -> Dict[str, str]:
    if given:
        return {"name": given}
    if project and project.authors and project.authors[0].get("name"):
        return dict(project.authors[0])
    import getpass

    try:
        return {"name": getpass.getuser()}
    except Exception:  # no login name (a container without a passwd entry)
        return {"name": "unknown"}


def _user_config(setting: _Setting) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"type": "string", "title": setting.name,
                             "description": f"The {setting.name} environment variable ({setting.where} reads it)",
                             "required": setting.required}
    if setting.secret:
        entry["sensitive"] = True
    if setting.default is not None:
        entry["default"] = setting.default
    return entry


def _zip(files: Dict[str, bytes]) -> bytes:
    """The zip of ``files``: entries sorted, one fixed time and mode, so equal input gives equal bytes."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for place in sorted(files):
            info = zipfile.ZipInfo(place, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so unpacking keeps the mode below
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            archive.writestr(info, files[place])
    return buffer.getvalue()


def _report_bundle(output: str, loaded: _Loaded, count: int, launcher: str, manifest: Dict[str, Any],
                   dependencies: Sequence[str], compiled: Sequence[str], size: int, guessed_author: bool) -> None:
    runtime = manifest["server"]["type"]
    _emit(f"wrote {output} ({_size(size)}, {count} files): {manifest['display_name']} {manifest['version']}, "
          f"server.type {runtime}")
    others = [place[len("server/"):] for place in loaded.own if place != loaded.place]
    _emit(f"  {launcher} serves {loaded.place} with minimcp run"
          + (f"; the project's modules it imports: {', '.join(others)}" if others else ""))
    if runtime == "uv":
        _emit(f"  pyproject.toml: the host installs {', '.join(dependencies)} with uv (on any platform)")
    else:
        _emit(f"  server/lib: {', '.join(sorted(dependencies, key=str.lower))}, copied from this Python")
        if compiled:
            _emit(f"  {', '.join(compiled)} {'is' if len(compiled) == 1 else 'are'} compiled: the bundle runs on "
                  f"{sys.platform} {_machine()} with Python {sys.version_info[0]}.{sys.version_info[1]} only "
                  f"(--runtime uv makes one for every platform)")
    _emit(f"  tools: {', '.join(t['name'] for t in loaded.tools) or '(none)'}")
    if loaded.prompts:
        _emit(f"  prompts: {', '.join(p['name'] for p in loaded.prompts)}")
    for name in loaded.prompts_unrendered:
        _emit(f"  prompt {name!r} does not render with placeholder arguments: the manifest carries its "
              f"description as its text")
    if loaded.settings:
        _emit("  settings the host asks for (user_config): " + ", ".join(s.describe() for s in loaded.settings))
    if guessed_author:
        _emit(f"  author: {manifest['author']['name']!r}, your login name (--author NAME sets another)")
    _emit(f"open {output} with Claude Desktop (or another MCPB host) to install it; "
          f"'npx @anthropic-ai/mcpb info {output}' checks it")


def _machine() -> str:
    import platform

    return platform.machine()


# -- registry ------------------------------------------------------------------------------------


def cmd_registry(args: argparse.Namespace) -> int:
    """``minimcp registry``: write the server.json that lists the file's server in the MCP Registry."""
    import json

    loaded = _load(args.file, args.trace, listing=False)  # server.json lists no tools
    server, project = loaded.server, loaded.project
    package = args.package or (project.name if project else None)
    for url in args.url:
        if not re.match(r"^https?://[^\s]+$", url):
            raise UsageError(f"--url {url}: give the full http(s) address clients connect to, such as "
                             f"https://mcp.example.com/mcp")
    if not package and not args.url:
        raise UsageError(f"{os.path.basename(loaded.path)} is in no Python project (no pyproject.toml or setup.cfg "
                         f"naming one in its folder or above), so there is no PyPI package to list: --package "
                         f"PYPI_NAME names the one it is published as, --url URL an address where it is deployed")
    name, named_from = _registry_name(args.name, loaded, package)
    version, version_from = _version(loaded)
    description = _description(loaded)
    shortened = len(description) > 100  # the schema's maxLength
    if shortened:
        description = description[:99].rstrip() + "…"
    entry: Dict[str, Any] = {"$schema": SERVER_SCHEMA, "name": name}
    if server.title:
        entry["title"] = server.title[:100]
    entry.update({"description": description, "version": version})
    repository = _repository(loaded)
    if repository:
        entry["repository"] = {"url": "https://github.com/{}/{}".format(*repository), "source": "github"}
    homepage = next((url for key, url in (project.urls.items() if project else [])
                     if key.lower() in ("homepage", "documentation") and url.startswith("https://")), None)
    if homepage:
        entry["websiteUrl"] = homepage
    if package:
        listed: Dict[str, Any] = {"registryType": "pypi", "identifier": package, "version": version,
                                  "runtimeHint": "uvx", "transport": {"type": "stdio"}}
        if loaded.settings:
            listed["environmentVariables"] = [_variable(s) for s in loaded.settings]
        entry["packages"] = [listed]
    if args.url:
        entry["remotes"] = [{"type": "streamable-http", "url": url} for url in args.url]
    output = args.output or os.path.join(project.folder if project else os.getcwd(), "server.json")
    data = (json.dumps(entry, indent=2, ensure_ascii=False) + "\n").encode()
    if _refuse_to_overwrite(output, args.force, data):
        _write(output, data)
        _emit(f"wrote {output}: {name} {version} (version from {version_from})")
    else:
        _emit(f"{output} is up to date: {name} {version}")
    _emit(f"  name {named_from}")
    if shortened:
        _emit("  the description is cut to the registry's 100 characters: a shorter one in pyproject.toml reads better")
    if package:
        _emit(f"  PyPI package {package} {version}, started over stdio as 'uvx {package}'")
        if project and _normalized(package) == _normalized(project.name) \
                and not any(_normalized(script) == _normalized(package) for script in project.scripts):
            _emit(f"  {project.source} has no console script named {package}, which 'uvx {package}' runs: add one "
                  f"that calls server.run(), such as [project.scripts] {package} = \"{_module_of(loaded)}:main\"")
    for url in args.url:
        _emit(f"  deployed at {url} (Streamable HTTP)")
    if loaded.settings:
        _emit("  environment: " + ", ".join(s.describe() for s in loaded.settings))
    if package:
        _readme_line(name, project)
    return EXIT_OK


def _module_of(loaded: _Loaded) -> str:
    """The file's import name once the project is installed (a ``src/`` layout's folder is not part of it)."""
    relative = os.path.relpath(loaded.path, loaded.project.folder) if loaded.project else os.path.basename(loaded.path)
    parts = os.path.splitext(relative)[0].split(os.sep)
    return ".".join(parts[1:] if parts[0] == "src" and len(parts) > 1 else parts)


def _repository(loaded: _Loaded) -> Optional[Tuple[str, str]]:
    """``(owner, repository)`` on GitHub, from the project's URLs, else the repository's origin remote."""
    project = loaded.project
    if project:
        order = ("repository", "source", "source code", "code", "github", "homepage")
        for _, url in sorted(project.urls.items(), key=lambda item: (
                order.index(item[0].lower()) if item[0].lower() in order else len(order))):
            found = _github(url)
            if found:
                return found
    origin = _git_origin(os.path.dirname(loaded.path))
    return _github(origin) if origin else None


def _registry_name(given: Optional[str], loaded: _Loaded, package: Optional[str]) -> Tuple[str, str]:
    """The reverse-DNS name, and a line saying where it came from and how to change it."""
    if given:
        if not re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", given) or len(given) > 200:
            raise UsageError(f"--name {given}: a registry name is NAMESPACE/NAME, such as io.github.USER/weather "
                             f"(a GitHub login) or com.example/weather (a domain you own); letters, digits, . - _")
        return given, "from --name"
    own = re.sub(r"[^a-zA-Z0-9._-]+", "-", package or loaded.server.name).strip("-") or "server"
    repository = _repository(loaded)
    if repository:
        name = f"io.github.{repository[0]}/{own}"
        return name, (f"{name} from the GitHub repository {repository[0]}/{repository[1]} (the registry checks "
                      f"you are {repository[0]} on GitHub); --name NAMESPACE/NAME changes it")
    project = loaded.project
    homepage = next((url for key, url in (project.urls.items() if project else []) if key.lower() == "homepage"),
                    None)
    found = re.match(r"https?://(?:www\.)?([^/:]+)", homepage or "")
    if found and "." in found.group(1):
        domain = found.group(1).lower()
        name = ".".join(reversed(domain.split("."))) + "/" + own
        return name, (f"{name} from the Homepage URL (the registry checks you own {domain}); "
                      f"--name NAMESPACE/NAME changes it")
    name = f"io.github.YOUR-GITHUB-USER/{own}"
    return name, (f"{name} is a placeholder: no GitHub repository or homepage in the project's metadata or in "
                  f".git/config says who you are; run again with --name io.github.<your GitHub login>/{own}")


def _variable(setting: _Setting) -> Dict[str, Any]:
    variable: Dict[str, Any] = {"name": setting.name,
                                "description": f"The {setting.name} setting ({setting.where} reads it)",
                                "isRequired": setting.required, "format": "string", "isSecret": setting.secret}
    if setting.default is not None:
        variable["default"] = setting.default
    return variable


def _readme_line(name: str, project: Optional[_Project]) -> None:
    """Print the ``mcp-name:`` line the registry looks for in the package's README on PyPI."""
    line = f"mcp-name: {name}"
    readme = project.readme if project else None
    if project and readme is None:
        readme = next((os.path.join(project.folder, f) for f in ("README.md", "README.rst", "README.txt", "README")
                       if os.path.isfile(os.path.join(project.folder, f))), None)
    if readme and os.path.isfile(readme):
        with open(readme, encoding="utf-8", errors="replace") as f:
            if line in f.read():
                _emit(f"{os.path.basename(readme)} has the line the registry checks on PyPI: {line}")
                return
    where = os.path.basename(readme) if readme else "the README that PyPI shows"
    _emit(f"add this line to {where} (the registry reads the package's description on PyPI to check the package "
          f"is yours; an HTML comment <!-- ... --> hides it):")
    _emit(line)
