"""The command line of ``minimcp``: its parser, its help, and ``key=value`` tool arguments.

Only text in, values out: nothing here connects to a server. The words after
the first ``--`` are the server's command; :func:`parse_args` binds the rest to
a target, the command's own words and ``key=value`` pairs, which
:func:`convert_arguments` turns into a tool's arguments guided by its schema.
"""

import argparse
import json
import os
import sys
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Tuple

from ..protocol.levels import LOG_LEVELS
from ..protocol.versions import HANDSHAKE_VERSIONS, STATELESS_VERSION
from ..protocol.versions import SDK_VERSION as __version__

#: What ``--protocol`` takes (the ``protocol`` of :func:`minimcp.connect`).
PROTOCOLS = ("auto", STATELESS_VERSION) + tuple(reversed(HANDSHAKE_VERSIONS))

#: Exit statuses (documented in ``minimcp --help``).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_SERVER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_COMMANDS = {  # name: (help, words after the target, whether key=value words follow)
    "tools": ("list the tools and their arguments", (), False),
    "call": ("call a tool", ("TOOL",), True),
    "resources": ("list the resources and resource templates", (), False),
    "read": ("read a resource", ("URI",), False),
    "prompts": ("list the prompts", (), False),
    "prompt": ("render a prompt", ("NAME",), True),
    "info": ("show the server's name, version, protocol version, capabilities, instructions", (), False),
    "login": ("log in to an OAuth-protected URL server (a browser opens); the token is kept", (), False),
    "logout": ("forget the login kept for a URL server", (), False),
}

#: Commands that connect to no server (minimcp/cli/install.py parses and runs them): name: help.
LOCAL_COMMANDS = {
    "install": "add a server to a host's config file (Claude, Cursor, VS Code, Copilot, Windsurf, Gemini CLI, Zed, Codex)",
    "servers": "list the servers the host config files on this machine define",
    "run": "serve the Server of a Python file (stdio or HTTP) without editing it",
}

#: The other commands that connect to no server, each in a module of its own (``main()`` routes
#: them; listed here for ``minimcp --help``): name: help.
OTHER_COMMANDS = {
    "bundle": "pack a server file into an MCP Bundle (.mcpb) that a host installs in one step",
    "registry": "write the server.json that lists a server in the MCP Registry",
    "proxy": "serve other MCP servers as one (stdio or HTTP), or one server over another transport",
}

_EPILOG = """\
the server:
  -- SERVER_COMMAND ...  a stdio server to start; always last, after the first "--"
                         minimcp tools -- python examples/weather_server.py
                         minimcp call get_weather city=Paris -- python examples/weather_server.py
  NAME                   a server in a host config file (--config FILE), first after the command
                         minimcp call weather get_weather city=Paris
  URL                    an http(s):// server (Streamable HTTP); OAuth: 'minimcp login URL' once,
                         then every command reuses the token (or --header for a token of your own)

arguments:
  key=value is read as JSON when it parses (days=3, ok=true, tags='["a"]'), else as text
  (city=Paris); a string-typed argument of the tool stays text (zip=01234).
  --args '{...}' gives a tool's arguments as one JSON object. Prompt arguments are text.

the protocol:
  --trace shows each message on stderr (--pretty: indented; MINIMCP_TRACE=both adds the server's own);
  --protocol 2025-11-25 speaks the initialize handshake, --protocol 2026-07-28 none
  (default: server/discover first, else initialize)

exit status:
  0 ok; 1 the tool reported an error, or the server answered with an error; 2 bad command
  line; 3 the server could not be started, went away, broke the protocol or timed out;
  130 interrupted.
"""

#: What each command's own ``--help`` says after its options: how to name the server, this
#: command's examples, its arguments when it takes any, and its exit statuses.
_SERVER = """\
the server:
  -- SERVER_COMMAND ...  a stdio server to start; always last, after the first "--"
  NAME                   a server in a host config file (--config FILE), first after the command
  URL                    an http(s):// server; 'minimcp login URL' once if it asks for OAuth
"""
_URL_SERVER = """\
the server:
  URL                    an http(s):// server
  NAME                   a URL server in a host config file (--config FILE), with its OAuth settings
"""
_EXAMPLES = {
    "tools": ["minimcp tools -- python examples/weather_server.py",
              "minimcp tools weather --config examples/.mcp.json --json"],
    "call": ["minimcp call get_weather city=Paris -- python examples/weather_server.py",
             "minimcp call http://127.0.0.1:8000/mcp get_forecast city=Paris days=3"],
    "resources": ["minimcp resources -- python examples/knowledge_base.py"],
    "read": ["minimcp read kb://index -- python examples/knowledge_base.py",
             "minimcp read ui://counter/view.html -o view.html -- python examples/mcp_app.py --server"],
    "prompts": ["minimcp prompts -- python examples/weather_server.py"],
    "prompt": ["minimcp prompt forecast city=Paris -- python examples/weather_server.py"],
    "info": ["minimcp info -- python examples/weather_server.py",
             "minimcp info --protocol 2025-11-25 --trace -- python examples/weather_server.py"],
    "login": ["minimcp login https://example.com/mcp", "minimcp login notes --config .mcp.json --headless"],
    "logout": ["minimcp logout https://example.com/mcp"],
}
_ARGUMENTS = {
    "call": """\
arguments:
  key=value is read as JSON when it parses (days=3, ok=true, tags='["a"]'), else as text
  (city=Paris); a string-typed argument of the tool stays text (zip=01234).
  --args '{...}' gives the arguments as one JSON object; key=value words are added to it.
""",
    "prompt": """\
arguments:
  key=value gives one prompt argument; prompt arguments are text (n=3 is "3").
""",
}
_SERVER_EXITS = ["0 ok", "1 the server answered with an error", "2 bad command line",
                 "3 the server could not be started, went away, broke the protocol or timed out", "130 interrupted"]
_EXITS = {
    "call": ["0 ok", "1 the tool reported an error, or the server answered with an error"] + _SERVER_EXITS[2:],
    "login": ["0 ok", "1 the login failed (the message says why)", "2 bad command line", "130 interrupted"],
    "logout": ["0 forgotten, or no login was kept", "2 bad command line"],
}


def _command_epilog(name: str) -> str:
    """The end of ``minimcp NAME --help``: only what applies to that command."""
    sections = [_URL_SERVER if name in ("login", "logout") else _SERVER,
                "examples:\n" + "".join(f"  {line}\n" for line in _EXAMPLES[name])]
    if name in _ARGUMENTS:
        sections.append(_ARGUMENTS[name])
    sections.append("exit status:\n" + "".join(f"  {line}\n" for line in _EXITS.get(name, _SERVER_EXITS)))
    return "\n".join(sections)


class UsageError(Exception):
    """The command line cannot work; exits 2."""


# -- the command line ---------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _connecting_options() -> argparse.ArgumentParser:
    """The options of the commands that connect to a server and make a call."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--json", action="store_true", help="print the raw result as JSON on stdout, for scripts")
    options.add_argument("--config", metavar="FILE", help="the host config file to find a named server in")
    options.add_argument("-H", "--header", metavar="'NAME: VALUE'", action="append", default=[],
                         help="an HTTP header for a URL server, such as Authorization (repeatable)")
    options.add_argument("--timeout", metavar="SECONDS", type=seconds, default=60.0,
                         help="seconds to wait for each answer, the handshake included (default: 60)")
    options.add_argument("--protocol", metavar="VERSION", choices=PROTOCOLS, default="auto",
                         help=f"the protocol version to speak: {STATELESS_VERSION} (no handshake) or one with "
                              f"the initialize handshake ({', '.join(reversed(HANDSHAKE_VERSIONS))}); "
                              "default: auto, server/discover first, else initialize")
    _trace_options(options)
    options.add_argument("-q", "--quiet", action="store_true", help="hide the server's stderr and log messages")
    options.add_argument("--log-level", metavar="LEVEL", choices=LOG_LEVELS, default="info",
                         help="show the server's log messages at this level and above on stderr: "
                              f"{', '.join(LOG_LEVELS)} (default: info)")
    return options


def _trace_options(options: argparse.ArgumentParser,
                   what: str = "protocol message on stderr, once, as this client sends or receives it "
                               "(MINIMCP_TRACE=both adds the server's own trace)") -> None:
    options.add_argument("--trace", action="store_true", help=f"show every {what}")
    options.add_argument("--pretty", action="store_true", help="--trace, each message as indented JSON")


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def _usage(name: str, words: Sequence[str], key_values: bool) -> str:
    if name in ("login", "logout"):  # URL servers only
        return f"minimcp {name} [options] URL\n       minimcp {name} [options] NAME"
    tail = " ".join(list(words) + (["[key=value ...]"] if key_values else []))
    tail = (" " + tail) if tail else ""
    return (f"minimcp {name} [options]{tail} -- SERVER_COMMAND [ARG ...]\n"
            f"       minimcp {name} [options] TARGET{tail}")


def build_parser() -> Tuple[argparse.ArgumentParser, Dict[str, argparse.ArgumentParser]]:
    """Return the ``minimcp`` parser and its subcommand parsers by name."""
    listing = "\n".join(f"  {name:<10} {summary}" for name, (summary, _, _) in _COMMANDS.items())
    listing += "\n" + "\n".join(f"  {name:<10} {summary}" for name, summary in
                                {**LOCAL_COMMANDS, **OTHER_COMMANDS}.items())
    parser: argparse.ArgumentParser = _Parser(prog="minimcp", usage="minimcp COMMAND [options] [TARGET] [ARGS ...] "
                                           "[-- SERVER_COMMAND [ARG ...]]",
                     description="Talk to an MCP server: list and call its tools, read its resources, "
                                 f"render its prompts.\n\ncommands:\n{listing}\n\n"
                                 "'minimcp COMMAND --help' shows a command's options.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"minimcp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS, required=True)
    connecting = _connecting_options()
    subparsers: Dict[str, argparse.ArgumentParser] = {}
    for name, (summary, words, key_values) in _COMMANDS.items():
        sub = commands.add_parser(name, prog=f"minimcp {name}", help=summary, usage=_usage(name, words, key_values),
                                  description=summary[0].upper() + summary[1:] + ".",
                                  parents=[] if name in ("login", "logout") else [connecting],
                                  epilog=_command_epilog(name), formatter_class=argparse.RawDescriptionHelpFormatter,
                                  allow_abbrev=False)
        sub.add_argument("words", nargs="*", help=argparse.SUPPRESS)
        if name == "call":
            sub.add_argument("--args", metavar="JSON", dest="args_json",
                             help="the tool's arguments as one JSON object ('-' reads it from stdin); "
                                  "key=value words are added to it")
        if name == "read":
            sub.add_argument("-o", "--output", metavar="FILE",
                             help="save the contents in FILE (the first entry: its text as UTF-8, or its "
                                  "decoded blob), replacing it, instead of printing them")
        if name in ("login", "logout"):
            _login_options(sub, name)
        subparsers[name] = sub
    return parser, subparsers


def _login_options(sub: argparse.ArgumentParser, name: str) -> None:
    """``login`` and ``logout``: a URL server and its OAuth client; no call is made, nothing printed as JSON."""
    sub.add_argument("--config", metavar="FILE", help="the host config file to find a named server in")
    # What the commands that connect read of the options they have (run(), main()).
    sub.set_defaults(json=False, header=[], timeout=300.0, protocol="auto", trace=False, pretty=False, quiet=False,
                     log_level="info")
    if name == "logout":  # (it sends nothing: its --trace is main()'s, a traceback on an unexpected error)
        sub.add_argument("--trace", action="store_true", help="on an unexpected error, show the traceback")
        return
    sub.add_argument("--client-id", help="a client registered with the authorization server beforehand")
    sub.add_argument("--client-secret", help="its secret (for a confidential client)")
    sub.add_argument("--scope", action="append", default=[], help="a scope to ask for (repeatable)")
    sub.add_argument("--headless", action="store_true",
                     help="no browser here: print the URL, then paste the redirected URL back")
    sub.add_argument("--timeout", metavar="SECONDS", type=seconds, default=300.0,
                     help="seconds to wait for the login in the browser (default: 300)")
    _trace_options(sub, "request to the authorization server and its answer on stderr, secrets redacted")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse a command line; the words after the first ``--`` are the server's command.

    Raises:
        SystemExit: for ``--help``, ``--version`` and bad usage (status 2).
    """
    argv = list(argv)
    command: List[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    parser, subparsers = build_parser()
    if not argv or argv[0] not in subparsers:
        args = parser.parse_args(argv)  # prints help or version, or a one-line error
    else:  # intermixed: options may come between or after the words
        args = subparsers[argv[0]].parse_intermixed_args(argv[1:])
        args.command = argv[0]
    args.server_command = command
    try:
        _bind_words(args)
    except UsageError as exc:
        subparsers[args.command].error(str(exc))
    return args


def _bind_words(args: argparse.Namespace) -> None:
    """Split the positional words into target, the command's own words, and key=value pairs."""
    _, names, key_values = _COMMANDS[args.command]
    words = list(args.words)
    if args.server_command:
        args.target = args.server_command
    elif not words:
        raise UsageError(f"no server given: put its command after --, e.g. "
                         f"'minimcp {args.command} -- python server.py'")
    else:
        args.target = words.pop(0)
    if len(words) < len(names):
        raise UsageError(f"missing {' '.join(names[len(words):])}")
    args.name = words[0] if names else None
    rest = words[len(names):]
    if rest and not key_values:
        hint = " (the server's command goes after --)" if args.server_command else ""
        raise UsageError(f"unexpected argument {rest[0]!r}{hint}")
    args.pairs = split_pairs(rest)
    args.headers = parse_headers(args.header)
    args.arguments = _arguments_object(getattr(args, "args_json", None))
    _check_output(getattr(args, "output", None), args.name)


def _check_output(path: Optional[str], uri: Optional[str]) -> None:
    """Refuse a ``--output`` that cannot be written before the server is started for nothing."""
    if path is None:
        return
    if os.path.isdir(path):
        name = (uri or "").rstrip("/").rsplit("/", 1)[-1].split(":")[-1] or "contents"
        raise UsageError(f"--output {path!r} is a folder: give a file name (--output {os.path.join(path, name)})")
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        raise UsageError(f"--output {path!r}: there is no folder {folder!r}")


def parse_headers(lines: Sequence[str]) -> Dict[str, str]:
    """``--header 'Name: value'`` lines as a dict; a line without a colon is a usage error."""
    headers = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise UsageError(f"expected --header 'Name: value', got {line!r}")
        headers[name.strip()] = value.strip()
    return headers


# -- key=value arguments ------------------------------------------------------------------------


def split_pairs(words: Sequence[str]) -> List[Tuple[str, str]]:
    """Split ``key=value`` words into pairs, refusing malformed or repeated keys.

    Raises:
        UsageError: a word has no ``=`` or an empty key, or a key comes twice.
    """
    pairs, seen = [], set()
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key:
            raise UsageError(f"expected key=value, got {word!r}")
        if key in seen:
            raise UsageError(f"argument {key!r} given twice")
        seen.add(key)
        pairs.append((key, value))
    return pairs


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # json.loads would take NaN and Infinity


def parse_value(text: str) -> Any:
    """Read a command-line value: JSON when it parses (``3``, ``true``, ``[1]``), else the text itself."""
    try:
        return json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return text


def wants_string(prop: Any) -> bool:
    """Tell whether a property's JSON Schema accepts text only (so ``01234`` stays text)."""
    if not isinstance(prop, dict):
        return False
    kinds = prop.get("type")
    if kinds:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        return "string" in kinds and not set(kinds) & {"number", "integer", "boolean", "object", "array"}
    if prop.get("enum"):
        return all(isinstance(value, str) for value in prop["enum"])
    if "const" in prop:
        return isinstance(prop["const"], str)
    branches = [b for b in prop.get("anyOf") or prop.get("oneOf") or [] if b != {"type": "null"}]
    return bool(branches) and all(wants_string(branch) for branch in branches)


def convert_arguments(pairs: Sequence[Tuple[str, str]], schema: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Turn ``key=value`` pairs into a tool's arguments, guided by its ``inputSchema``."""
    properties = (schema or {}).get("properties") or {}
    return {key: raw if wants_string(properties.get(key)) else parse_value(raw) for key, raw in pairs}


def _arguments_object(text: Optional[str]) -> Dict[str, Any]:
    if text is None:
        return {}
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--args must be a JSON object, not {type(value).__name__}")
    return value
