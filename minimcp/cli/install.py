"""The ``minimcp`` commands that connect to nothing: ``install``, ``servers`` and ``run``.

::

    minimcp install claude-code examples/weather_server.py --name weather
    minimcp install cursor --env API_KEY=xyz -- npx -y some-mcp-server
    minimcp install codex https://mcp.example.com/mcp --name example --token-env EXAMPLE_TOKEN
    minimcp servers
    minimcp run examples/weather_server.py --transport http --port 8000

``install`` writes one entry into a host's config file (:mod:`minimcp.integrations.hosts`);
``servers`` lists what the hosts' config files on this machine define;
``run`` serves the :class:`~minimcp.Server` of a Python file without editing it
(the file's ``if __name__ == "__main__":`` block is not run).
"""

import argparse
import errno
import importlib.util
import os
import sys
from typing import Any, Dict, List, NoReturn, Sequence, Tuple

from ..integrations.hosts import HOSTS, host, installed_servers, make_entry, plan_install, shadowing
from .command_line import EXIT_OK, EXIT_USAGE, LOCAL_COMMANDS, UsageError, parse_headers
from .output import _dump, _emit, show_logs

SUMMARIES = LOCAL_COMMANDS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _scopes() -> str:
    """Each host's scopes, its default first: ``claude-code project (default), user; ...``."""
    return "; ".join(f"{name} " + ", ".join(scope + (" (default)" if i == 0 and len(h.scopes) > 1 else "")
                                            for i, scope in enumerate(h.scopes)) for name, h in HOSTS.items())


def _parser(name: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"minimcp {name}", description=SUMMARIES[name][0].upper() + SUMMARIES[name][1:] + ".",
                     allow_abbrev=False)
    if name == "install":
        hosts = [h.title for h in HOSTS.values()]
        parser.description = f"Add a server to the config file of {', '.join(hosts[:-1])} or {hosts[-1]}."
        parser.usage = "minimcp install HOST [options] (SERVER.py | URL | -- COMMAND [ARG ...])"
        parser.add_argument("host", metavar="HOST", choices=list(HOSTS), help=" | ".join(HOSTS))
        parser.add_argument("server", metavar="SERVER.py|URL", nargs="?",
                            help="a Python file with a Server (run with this Python), or an http(s) URL")
        parser.add_argument("--name", help="the server's name in the config (default: the file's name)")
        parser.add_argument("--scope", choices=["project", "user"],
                            help="project (the current directory) or user config; the hosts have: " + _scopes())
        parser.add_argument("--file", metavar="PATH", help="write this config file (in the host's format) "
                                                           "instead of the host's")
        parser.add_argument("--force", action="store_true", help="replace an entry of the same name")
        parser.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
        started = parser.add_argument_group("a server the host starts (SERVER.py, or a command after --)")
        started.add_argument("--env", metavar="KEY=VALUE", action="append", default=[],
                             help="an environment variable for the server (repeatable)")
        remote = parser.add_argument_group("a URL server")
        remote.add_argument("-H", "--header", metavar="'NAME: VALUE'", action="append", default=[],
                            help="a header the host sends, written into the file as given (repeatable)")
        remote.add_argument("--token-env", metavar="VAR",
                            help="send 'Authorization: Bearer' with the token in the environment variable VAR, "
                                 "read by the host when it connects (the token stays out of the file; Zed and "
                                 "Claude Desktop cannot)")
    elif name == "servers":
        parser.add_argument("--json", action="store_true", help="print them as JSON, for scripts")
    else:
        parser.add_argument("file", metavar="SERVER.py[:NAME]",
                            help="the file; :NAME picks its Server when it has several")
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                            help="stdio (the default): serve on stdin and stdout, as a host or "
                                 "'minimcp call -- ...' starts it; http: serve Streamable HTTP at "
                                 "http://HOST:PORT/mcp until Ctrl-C")
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="show only errors on stderr (and, with http, not where it serves)")
        http = parser.add_argument_group("with --transport http")
        http.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1)")
        http.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0 picks a free one)")
    # main()'s "unexpected error ... (--trace shows where)" names this flag for every command.
    parser.add_argument("--trace", action="store_true",
                        help="on an unexpected error, show the traceback" + (" (and the server's debug log)"
                                                                           if name == "run" else ""))
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``install`` / ``servers`` / ``run`` and their words (``argv[0]`` is the command)."""
    argv = list(argv)
    command: List[str] = []
    if argv[0] == "install" and "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    args = _parser(argv[0]).parse_args(argv[1:])
    args.command, args.server_command = argv[0], command
    if argv[0] != "run":  # main() reads args.quiet when a command fails
        args.quiet = False
    return args


def run(args: argparse.Namespace) -> int:
    """Run one of this module's commands; return the exit status."""
    return {"install": cmd_install, "servers": cmd_servers, "run": cmd_run}[args.command](args)


# -- install -------------------------------------------------------------------------------------


def _env(pairs: Sequence[str]) -> Dict[str, str]:
    env = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise UsageError(f"expected --env KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def cmd_install(args: argparse.Namespace) -> int:
    """``minimcp install``: add (or with --force replace) one server in a host's config file."""
    target = host(args.host)
    url = None
    if args.server_command:
        if args.server:
            raise UsageError(f"give a SERVER.py or a command after --, not both ({args.server!r})")
        command = list(args.server_command)
        default_name = os.path.splitext(os.path.basename(command[0]))[0]
    elif args.server and args.server.startswith(("http://", "https://")):
        command, url = [], args.server
        default_name = (args.server.split("//", 1)[1].split("/", 1)[0].split(":")[0]).replace(".", "-")
    elif args.server:
        path, attribute = split_spec(args.server)
        if not os.path.isfile(path):
            raise UsageError(f"no such file: {args.server!r} (a command goes after --: "
                             f"'minimcp install {args.host} -- {args.server} ...')")
        # This Python, so the host starts the server with minimcp installed; `minimcp run`,
        # so the file needs no __main__ block.
        spec = os.path.abspath(path) + (f":{attribute}" if attribute else "")
        command = [sys.executable, "-m", "minimcp", "run", spec]
        default_name = os.path.splitext(os.path.basename(path))[0]
    else:
        raise UsageError(f"no server given: 'minimcp install {args.host} server.py', a URL, "
                         f"or a command after --")
    if url is not None and args.env:
        raise UsageError("--env is for a server the host starts; a URL server has no environment here "
                         "(--header, or --token-env VAR for a token the host reads from its environment)")
    if url is None and (args.header or args.token_env):
        raise UsageError(f"{'--header' if args.header else '--token-env'} is for a URL server; a server the "
                         f"host starts gets its secrets with --env KEY=VALUE")
    entry = make_entry(target, command=command, url=url, env=_env(args.env), headers=parse_headers(args.header),
                       token_env=args.token_env)
    name = args.name or default_name
    change = plan_install(target, name, entry, scope=args.scope, path=args.file, force=args.force)
    where = f"{change.path} ({target.title}{', ' + args.scope if args.scope else ''})"
    if change.unchanged:
        _emit(f"{name!r} is already in {where}: nothing to do")
        return EXIT_OK
    if args.dry_run:
        _emit(change.diff().rstrip("\n"))
        _emit(f"(dry run: {where} not written)")
        return EXIT_OK
    backup = change.write()
    _emit(f"{'replaced' if change.replaced else 'added'} server {name!r} in {where}")
    if backup:
        _emit(f"the previous file is kept as {backup}")
    _emit(f"restart {target.title} (or reload its MCP servers) to use it")
    return EXIT_OK


# -- servers -------------------------------------------------------------------------------------


def cmd_servers(args: argparse.Namespace) -> int:
    """``minimcp servers``: every server in every host config file found, with its file, in the order
    connecting by name searches them; a name a file before defines differently is marked."""
    installed = installed_servers()
    shadowed = shadowing(installed)
    rows = []
    for host_name, scope, path, servers in installed:
        for name, entry in servers.items():
            row: Dict[str, Any] = {"name": name, "host": host_name, "scope": scope, "file": path}
            row.update(entry)
            if (path, name) in shadowed:
                row["shadowed_by"] = shadowed[(path, name)]
            rows.append(row)
    if args.json:
        _dump({"servers": rows})
        return EXIT_OK
    if not rows:
        _emit("(no host config files with servers here; 'minimcp install HOST server.py' adds one)")
    width = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        what = row.get("error") or row.get("url") or " ".join(row.get("command") or [])
        _emit(f"{row['name']:<{width}}  {what}")
        _emit(f"{'':<{width}}  from {row['file']} ({HOSTS[row['host']].title}, {row['scope']})")
        if "shadowed_by" in row:
            _emit(f"{'':<{width}}  (not the one its name reaches, which is {row['shadowed_by']}'s: name "
                  f"this file as the config to reach this one)")
    return EXIT_OK


# -- run -----------------------------------------------------------------------------------------


def split_spec(spec: str) -> Tuple[str, str]:
    """``"server.py:app"`` -> ``("server.py", "app")``; a path that exists is kept whole."""
    if os.path.isfile(spec) or ":" not in spec:
        return spec, ""
    path, _, attribute = spec.rpartition(":")
    return path, attribute


def load_server(spec: str) -> Any:
    """The :class:`~minimcp.Server` of ``FILE.py`` (the only one in it) or ``FILE.py:NAME``.

    The file is imported as a module (not as ``__main__``, so its ``if __name__ ==
    "__main__":`` block does not run), with its folder first on ``sys.path``.

    Raises:
        UsageError: no such file, no Server in it, or several and no NAME.
    """
    from ..server.server import Server

    path, attribute = split_spec(spec)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path!r}")
    path = os.path.abspath(path)
    sys.path.insert(0, os.path.dirname(path))
    module_name = os.path.splitext(os.path.basename(path))[0]
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)  # type: ignore[arg-type]
    sys.modules[module_name] = module  # dataclasses and pickling look their module up
    loader.loader.exec_module(module)  # type: ignore[union-attr]
    if attribute:
        found = getattr(module, attribute, None)
        if not isinstance(found, Server):
            raise UsageError(f"{path} has no Server named {attribute!r}")
        return found
    servers = {name: value for name, value in vars(module).items() if isinstance(value, Server)}
    if len(servers) == 1:
        return next(iter(servers.values()))
    if not servers:
        raise UsageError(f"{path} defines no minimcp Server at the top level")
    raise UsageError(f"{path} defines several Servers ({', '.join(servers)}); say which: "
                     f"'minimcp run {os.path.basename(path)}:{next(iter(servers))}'")


def cmd_run(args: argparse.Namespace) -> int:
    """``minimcp run``: import the file and serve its Server until stopped."""
    show_logs(trace=args.trace, quiet=args.quiet)  # the server's warnings and errors, on stderr (never stdout)
    if args.transport == "stdio":
        # stdout is the protocol's: whatever the module prints as it loads goes to stderr.
        real_stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            server = load_server(args.file)
        finally:
            sys.stdout = real_stdout
        server.run()
    else:
        serve_http(load_server(args.file), args)
    return EXIT_OK


def serve_http(server: Any, args: argparse.Namespace) -> None:
    """``server.run("http")`` on ``--host`` and ``--port``; a port in use is a usage error that
    names it and the way out (``minimcp run``, ``minimcp proxy``)."""
    try:
        server.run("http", host=args.host, port=args.port, quiet=args.quiet)
    except OSError as exc:
        # EADDRINUSE (Windows: WSAEADDRINUSE, 10048): name the port and the way out.
        if exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048:
            raise UsageError(f"port {args.port} is in use on {args.host}; choose another with --port, "
                             f"or --port 0 for any free one") from None
        raise
