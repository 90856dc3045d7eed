"""``minimcp proxy``: serve other MCP servers as one, or carry one server to another transport.

::

    minimcp proxy --transport http --port 8000 -- npx -y @modelcontextprotocol/server-everything
    minimcp proxy --transport http --port 8000 --config .mcp.json
    minimcp proxy https://example.com/mcp

One server (``-- COMMAND``, a URL or a config name) is served under its own names: a
bridge from stdio to Streamable HTTP, or from HTTP to stdio for a host that only starts
stdio servers. ``--config FILE`` alone serves every server of that host config file, each
under its name (``name__tool``, resource URIs ``name+uri``). The work is
:class:`minimcp.integrations.proxy.ProxyServer`'s; this module only reads the command line.
"""

import argparse
import sys
from functools import partial
from types import SimpleNamespace
from typing import Any, List, NoReturn, Sequence, Tuple

from .command_line import EXIT_OK, EXIT_USAGE, UsageError, seconds
from .output import show_logs

SUMMARY = "serve other MCP servers as one (stdio or HTTP), or one server over another transport"

_EPILOG = """\
the servers:
  -- SERVER_COMMAND ...  a stdio server to start; always last, after the first "--"
  URL                    an http(s):// server
  NAME [NAME ...]        servers of a host config file (--config FILE), each under its name
  --config FILE alone    every server of that file, each under its name

examples:
  minimcp proxy --transport http --port 8000 -- npx -y @modelcontextprotocol/server-everything
  minimcp proxy --transport http --port 8000 --config .mcp.json
  minimcp proxy https://example.com/mcp          (a remote server, for a host that speaks stdio)

names:
  one server keeps its names; several are named NAME__tool and NAME__prompt, their
  resources NAME+uri (a server that is down fails its tools with a message naming it,
  and is tried again on the next call)

exit status:
  0 stopped (Ctrl-C, SIGTERM, or stdin closed); 2 bad command line; 130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``minimcp proxy``."""
    parser = _Parser(prog="minimcp proxy", description=SUMMARY[0].upper() + SUMMARY[1:] + ".",
                     usage="minimcp proxy [options] (-- SERVER_COMMAND [ARG ...] | URL | NAME ... | --config FILE)",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    parser.add_argument("targets", nargs="*", metavar="URL|NAME", help=argparse.SUPPRESS)
    parser.add_argument("--config", metavar="FILE", help="the host config file of the servers named, or (alone) "
                                                          "whose every server is served")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (the default): serve on stdin and stdout, as a host starts it; http: "
                             "serve Streamable HTTP at http://HOST:PORT/mcp until Ctrl-C")
    parser.add_argument("--name", default="minimcp-proxy", help="the proxy's serverInfo name")
    parser.add_argument("--start-timeout", metavar="SECONDS", type=seconds, default=10.0,
                        help="seconds each server has to start and answer (default: 10)")
    parser.add_argument("--timeout", metavar="SECONDS", type=seconds, default=60.0,
                        help="seconds a forwarded request waits for its answer; progress extends it (default: 60)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="show only errors on stderr (and, with http, not where it serves)")
    parser.add_argument("--trace", action="store_true",
                        help="on an unexpected error, show the traceback (and the proxy's debug log)")
    http = parser.add_argument_group("with --transport http")
    http.add_argument("--host", default="127.0.0.1", help="the address to bind (default 127.0.0.1)")
    http.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0 picks a free one)")
    http.add_argument("--allowed-host", dest="allowed_hosts", action="append", default=[], metavar="NAME",
                      help="a Host name clients reach the proxy by, besides localhost and --host (repeat it); "
                           "needed with --host 0.0.0.0, where every other Host is refused (421)")
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``proxy`` and its words (``argv[0]`` is ``"proxy"``); the words after the first
    ``--`` are a stdio server's command.

    Raises:
        SystemExit: for ``--help`` and bad usage (status 2).
    """
    argv = list(argv)
    command: List[str] = []
    separated = "--" in argv
    if separated:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    args = parser.parse_intermixed_args(argv[1:])  # (names before and after --config alike)
    args.command, args.server_command = "proxy", command
    if separated and not command:
        parser.error("nothing after --: put the server's command there")
    if command and args.targets:
        parser.error(f"give a command after -- or a URL/NAME, not both ({args.targets[0]!r})")
    if not (command or args.targets or args.config):
        parser.error("no server given: a command after --, a URL, a NAME, or --config FILE")
    return args


def mounts(args: argparse.Namespace) -> List[Tuple[str, Any]]:
    """The ``(prefix, target)`` pairs the command line names: one server unprefixed, or each of
    several under its config name.

    Raises:
        UsageError: a URL given with others, or ``--config FILE`` with no servers.
    """
    if args.server_command:
        return [("", list(args.server_command))]
    urls = [target for target in args.targets if target.split(":", 1)[0] in ("http", "https")]
    if urls and len(args.targets) > 1:
        raise UsageError("a URL is served alone; give several servers as names in a --config file")
    if len(args.targets) == 1:
        return [("", args.targets[0])]
    if args.targets:
        return [(name, name) for name in args.targets]
    from ..client.config import load_config

    names = list(load_config(args.config, strict=False))
    if not names:
        raise UsageError(f"{args.config} defines no servers")
    return [(name, name) for name in names]


def allowed_hosts(args: argparse.Namespace) -> List[str]:
    """The ``Host`` names the proxy answers over HTTP: localhost's, ``--host`` (unless it is an
    address of every interface), and each ``--allowed-host`` (DNS rebinding protection: spec
    basic/transports "Security Warning")."""
    from ..server.http.security import LOCAL_HOSTS

    hosts = list(LOCAL_HOSTS) + list(args.allowed_hosts)
    if args.host not in ("0.0.0.0", "::", ""):
        hosts.append(f"[{args.host}]" if ":" in args.host else args.host)
    elif not args.allowed_hosts and not args.quiet:
        print(f"minimcp proxy: on {args.host or 'every address'} only requests to localhost are answered; "
              f"name the others with --allowed-host NAME", file=sys.stderr)
    return hosts


def run(args: argparse.Namespace) -> int:
    """Connect the servers, say which answered (on stderr), and serve them until stopped."""
    show_logs(trace=args.trace, quiet=args.quiet)  # warnings and errors on stderr, never stdout
    from ..integrations.proxy import ProxyServer, describe

    proxy = ProxyServer(args.name, start_timeout=args.start_timeout, call_timeout=args.timeout, config=args.config)
    for prefix, target in mounts(args):
        try:
            proxy.mount(prefix, target)
        except ValueError as exc:  # two config names that make the same tool names (my.s, my_s)
            raise UsageError(f"cannot serve {prefix!r} beside the others: {exc} (rename it in {args.config})") from None
    for prefix, error in proxy.start().items():  # (one that failed was logged: a warning says why)
        if error is None and not args.quiet:  # (the operator's own output: the whole command, the URL)
            what = describe(proxy.mounts[prefix].target)
            print(f"minimcp proxy: serving {f'{prefix} ({what})' if prefix and what != prefix else prefix or what}",
                  file=sys.stderr)
    try:
        if args.transport == "stdio":
            proxy.run()
        else:
            from .install import serve_http

            serve_http(SimpleNamespace(run=partial(proxy.run, allowed_hosts=allowed_hosts(args))), args)
    finally:
        proxy.close()
    return EXIT_OK
