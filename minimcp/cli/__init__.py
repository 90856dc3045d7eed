"""The ``minimcp`` command: talk to an MCP server from a shell.

::

    minimcp tools -- python examples/weather_server.py
    minimcp call get_weather city=Paris -- python examples/weather_server.py
    minimcp call weather get_weather city=Paris --config .mcp.json
    minimcp read kb://index -- python examples/knowledge_base.py

The server is named in one of three ways, and the first ``--`` decides:

- ``-- COMMAND [ARG ...]``: everything after the first ``--`` is the command
  of a stdio server, and everything before it is ours (a ``--`` inside the
  server's own command is left alone), so no argument of ours can be
  swallowed by the server's command or the other way round;
- ``TARGET``: with no ``--``, the first word after the subcommand is a
  server name in a host config file (``--config FILE``) or a URL.

Tool arguments are ``key=value`` words: the value is JSON when it parses
(``days=3``, ``tags='["a"]'``), else text (``city=Paris``); when the tool's
``inputSchema`` says the property is a string, the text is kept as typed
(``zip=01234``). ``--args '{...}'`` gives the whole object.

Output is for people; ``--json`` prints the raw result as one JSON document
for scripts. Errors are one line on stderr with a non-zero exit status.
This module only parses the command line, calls :class:`minimcp.Client`
and formats what comes back: no protocol logic lives here.
"""

import argparse
import json
import os
import sys
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Tuple

from .. import __version__
from ..client.client import Client
from ..client.connect import connect
from ..client.config import ServerNotFound
from ..errors import CapabilityError, ConnectionClosed, MCPError, ProtocolError, RPCError, Timeout
from .output import (  # noqa: F401  (signature and friends: tests reach them as cli.*)
    ProgressBar, _describe_contents, _described, _dump, _emit, _indent, format_block, format_result, format_tool,
    render_progress, signature, type_name)

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
}

_EPILOG = """\
the server:
  -- SERVER_COMMAND ...  a stdio server to start; always last, after the first "--"
                         minimcp tools -- python examples/weather_server.py
                         minimcp call get_weather city=Paris -- python examples/weather_server.py
  NAME                   a server in a host config file (--config FILE), first after the command
                         minimcp call weather get_weather city=Paris
  URL                    an http(s):// server (Streamable HTTP; --header for its auth)

arguments:
  key=value is read as JSON when it parses (days=3, ok=true, tags='["a"]'), else as text
  (city=Paris); a string-typed argument of the tool stays text (zip=01234).
  --args '{...}' gives a tool's arguments as one JSON object. Prompt arguments are text.

exit status:
  0 ok; 1 the tool reported an error, or the server answered with an error; 2 bad command
  line; 3 the server could not be started, went away, broke the protocol or timed out;
  130 interrupted.
"""


class UsageError(Exception):
    """The command line cannot work; exits 2."""


# -- the command line ---------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _common_options() -> argparse.ArgumentParser:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--json", action="store_true", help="print the raw result as JSON on stdout, for scripts")
    options.add_argument("--config", metavar="FILE", help="the host config file to find a named server in")
    options.add_argument("-H", "--header", metavar="'NAME: VALUE'", action="append", default=[],
                         help="an HTTP header for a URL server, such as Authorization (repeatable)")
    options.add_argument("--timeout", metavar="SECONDS", type=_seconds, default=60.0,
                         help="seconds to wait for each answer, the handshake included (default: 60)")
    options.add_argument("--trace", action="store_true", help="show every protocol message on stderr")
    options.add_argument("-q", "--quiet", action="store_true", help="hide the server's stderr and log messages")
    return options


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


def _usage(name: str, words: Sequence[str], key_values: bool) -> str:
    tail = " ".join(list(words) + (["[key=value ...]"] if key_values else []))
    tail = (" " + tail) if tail else ""
    return (f"minimcp {name} [options]{tail} -- SERVER_COMMAND [ARG ...]\n"
            f"       minimcp {name} [options] TARGET{tail}")


def build_parser() -> Tuple[argparse.ArgumentParser, Dict[str, argparse.ArgumentParser]]:
    """Return the ``minimcp`` parser and its subcommand parsers by name."""
    listing = "\n".join(f"  {name:<10} {summary}" for name, (summary, _, _) in _COMMANDS.items())
    parser = _Parser(prog="minimcp", usage="minimcp COMMAND [options] [TARGET] [ARGS ...] "
                                           "[-- SERVER_COMMAND [ARG ...]]",
                     description="Talk to an MCP server: list and call its tools, read its resources, "
                                 f"render its prompts.\n\ncommands:\n{listing}\n\n"
                                 "'minimcp COMMAND --help' shows a command's options.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    parser.add_argument("--version", action="version", version=f"minimcp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS, required=True)
    common = _common_options()
    subparsers = {}
    for name, (summary, words, key_values) in _COMMANDS.items():
        sub = commands.add_parser(name, prog=f"minimcp {name}", help=summary, usage=_usage(name, words, key_values),
                                  description=summary[0].upper() + summary[1:] + ".", parents=[common],
                                  epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                                  allow_abbrev=False)
        sub.add_argument("words", nargs="*", help=argparse.SUPPRESS)
        if name == "call":
            sub.add_argument("--args", metavar="JSON", dest="args_json",
                             help="the tool's arguments as one JSON object ('-' reads it from stdin); "
                                  "key=value words are added to it")
        subparsers[name] = sub
    return parser, subparsers


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
    args.headers = _headers(args.header)
    args.arguments = _arguments_object(getattr(args, "args_json", None))


def _headers(lines: Sequence[str]) -> Dict[str, str]:
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


def convert_arguments(pairs: Sequence[Tuple[str, str]], schema: Optional[dict] = None) -> Dict[str, Any]:
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


# -- formatting ---------------------------------------------------------------------------------


def cmd_tools(client: Client, args: argparse.Namespace) -> int:
    """``minimcp tools``: every tool, with its arguments."""
    tools = client.list_tools() if "tools" in client.server_capabilities else []
    if args.json:
        _dump({"tools": [tool.raw for tool in tools]})
    else:
        _emit("\n\n".join(format_tool(tool) for tool in tools) if tools else "(no tools)")
    return EXIT_OK


def cmd_call(client: Client, args: argparse.Namespace) -> int:
    """``minimcp call``: call one tool; a tool error exits 1."""
    tools = {tool.name: tool for tool in client.list_tools()}
    tool = tools.get(args.name)
    arguments = dict(args.arguments)
    arguments.update(convert_arguments(args.pairs, tool.input_schema if tool else None))
    bar = ProgressBar(sys.stderr)
    try:
        result = client.call_tool(args.name, arguments, on_progress=bar.update if bar.enabled else None)
    except RPCError as exc:
        if tool is None:  # say what would have worked
            listed = f" (the server lists: {', '.join(tools) or 'no tools'})"
            raise RPCError(exc.code, exc.message + listed, exc.data) from None
        raise
    finally:
        bar.finish()
    if args.json:
        _dump(result.raw)
    elif result.is_error:
        print(f"minimcp: tool {args.name!r} failed: {result.text or '(no message)'}", file=sys.stderr)
    else:
        _emit(format_result(result.content, result.structured))
    return EXIT_ERROR if result.is_error else EXIT_OK


def cmd_resources(client: Client, args: argparse.Namespace) -> int:
    """``minimcp resources``: the resources, then the resource templates."""
    has = "resources" in client.server_capabilities
    resources = client.list_resources() if has else []
    templates = client.list_resource_templates() if has else []
    if args.json:
        _dump({"resources": [r.raw for r in resources], "resourceTemplates": [t.raw for t in templates]})
        return EXIT_OK
    for title, items in (("resources", resources), ("templates", templates)):
        _emit(f"{title}:" if items else f"(no {title})")
        for item in items:
            uri = getattr(item, "uri", None) or getattr(item, "uri_template", "")
            mime = f"  ({item.mime_type})" if item.mime_type else ""
            _emit(_described(f"  {uri}{mime}  {item.name}", item.description or item.title, ()))
    return EXIT_OK


def cmd_read(client: Client, args: argparse.Namespace) -> int:
    """``minimcp read``: a resource's text; binary entries summarised."""
    result = client.read_resource(args.name)
    if args.json:
        _dump(result.raw)
        return EXIT_OK
    for entry in result.contents:
        if len(result.contents) > 1:
            _emit(f"--- {_describe_contents(entry)}")
        _emit(entry["text"] if "text" in entry else f"[binary: {_describe_contents(entry)}]")
    return EXIT_OK


def cmd_prompts(client: Client, args: argparse.Namespace) -> int:
    """``minimcp prompts``: every prompt and its arguments."""
    prompts = client.list_prompts() if "prompts" in client.server_capabilities else []
    if args.json:
        _dump({"prompts": [prompt.raw for prompt in prompts]})
        return EXIT_OK
    blocks = []
    for prompt in prompts:
        names = [a.get("name", "?") + ("" if a.get("required") else "?") for a in prompt.arguments]
        described = [(a.get("name", "?"), a.get("description", "")) for a in prompt.arguments]
        blocks.append(_described(f"{prompt.name}({', '.join(names)})", prompt.description or prompt.title,
                                 described))
    _emit("\n\n".join(blocks) if blocks else "(no prompts)")
    return EXIT_OK


def cmd_prompt(client: Client, args: argparse.Namespace) -> int:
    """``minimcp prompt``: render a prompt's messages (arguments are text)."""
    result = client.get_prompt(args.name, dict(args.pairs))
    if args.json:
        _dump(result.raw)
        return EXIT_OK
    for message in result.messages:
        _emit(f"[{message.get('role', '?')}]")
        _emit(format_block(message.get("content") or {}))
    return EXIT_OK


def cmd_info(client: Client, args: argparse.Namespace) -> int:
    """``minimcp info``: what the server said about itself in the handshake."""
    info = {"serverInfo": client.server_info, "protocolVersion": client.protocol_version,
            "capabilities": client.server_capabilities, "instructions": client.instructions}
    if args.json:
        _dump(info)
        return EXIT_OK
    server = client.server_info
    title = f" ({server['title']})" if server.get("title") else ""
    capabilities = []
    for name, value in sorted(client.server_capabilities.items()):
        flags = [flag for flag, on in sorted((value or {}).items()) if on] if isinstance(value, dict) else []
        capabilities.append(name + (f" ({', '.join(flags)})" if flags else ""))
    _emit(f"server        {server.get('name', '?')} {server.get('version', '')}".rstrip() + title)
    _emit(f"protocol      {client.protocol_version}")
    _emit(f"capabilities  {', '.join(capabilities) or '(none)'}")
    if client.instructions:
        _emit("instructions  " + _indent(client.instructions.strip(), " " * 14).lstrip())
    return EXIT_OK


COMMANDS = {"tools": cmd_tools, "call": cmd_call, "resources": cmd_resources, "read": cmd_read,
            "prompts": cmd_prompts, "prompt": cmd_prompt, "info": cmd_info}


# -- running ------------------------------------------------------------------------------------


def _silent(*_: Any) -> None:
    """Swallow a server's stderr line or log message (``--quiet``)."""


def run(args: argparse.Namespace) -> int:
    """Connect to the server ``args`` names, run the command, and return the exit status."""
    options: Dict[str, Any] = {"on_stderr": _silent, "on_log": _silent} if args.quiet else {}
    if args.headers:  # only when given: a stdio-only connect() need not know the keyword
        options["headers"] = args.headers
    try:
        client = connect(args.target, config=args.config, timeout=args.timeout,
                         trace=True if args.trace else None, **options)
    except ValueError as exc:  # a target minimcp cannot connect to, or a config file it cannot use
        raise UsageError(str(exc)) from None
    except ServerNotFound:  # no server by that name in the host config
        if isinstance(args.target, str) and os.path.isfile(args.target):
            raise UsageError(f"{args.target!r} is a file, not a server name; to start it, put its command "
                             f"after --: 'minimcp {args.command} -- python {args.target}'") from None
        raise
    with client:
        return COMMANDS[args.command](client, args)


_FAILURES = (  # (exception class, exit status, message prefix); the first match wins
    (UsageError, EXIT_USAGE, ""),
    (Timeout, EXIT_SERVER, "timed out: "),
    (ConnectionClosed, EXIT_SERVER, ""),
    (RPCError, EXIT_ERROR, "the server answered with an error: "),
    (CapabilityError, EXIT_ERROR, ""),
    (ProtocolError, EXIT_SERVER, "protocol error: "),
    (ServerNotFound, EXIT_SERVER, ""),  # no server by that name in the host config
    (OSError, EXIT_SERVER, ""),  # the server command not found, or not executable
    (MCPError, EXIT_ERROR, ""),
)


def explain(exc: Exception, quiet: bool = False) -> Optional[Tuple[int, str]]:
    """Map a failure to an exit status and a one-line message; ``None`` for a bug of ours."""
    found = next(((status, prefix) for cls, status, prefix in _FAILURES if isinstance(exc, cls)), None)
    if found is None:
        return None
    status, prefix = found
    text = str(exc) or type(exc).__name__
    if isinstance(exc, ConnectionClosed):  # the server's stderr was shown already, unless --quiet
        text = text.partition("; its last stderr lines")[0]
        lines = [line for line in exc.stderr_tail.splitlines() if line.strip()]
        if quiet and lines:
            text += f" (its last stderr line: {lines[-1].strip()})"
    elif isinstance(exc, Timeout):
        text += " (--timeout SECONDS waits longer)"
    return status, prefix + " ".join(text.split())


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``minimcp`` command line and return its exit status.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).
    """
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        status = run(args)
        sys.stdout.flush()  # here, so a closed pipe is caught below
        return status
    except KeyboardInterrupt:
        print("minimcp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `minimcp tools ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:
        explained = explain(exc, args.quiet)
        if explained is None:  # a bug: one line, or the traceback with --trace
            if args.trace:
                raise
            explained = EXIT_ERROR, f"unexpected error: {type(exc).__name__}: {exc} (--trace shows where)"
        status, message = explained
        print(f"minimcp: {message}", file=sys.stderr)
        return status
