"""The ``minimcp`` commands: connect, make one call, print what came back, and say why it failed.

Each ``cmd_*`` takes a ready :class:`~minimcp.Client` and the parsed command
line and returns the exit status; :func:`run` connects and picks one, and
:func:`explain` turns a failure into an exit status and one line for stderr.
The printing itself is :mod:`minimcp.cli.output`.
"""

import argparse
import base64
import binascii
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from ..client.client import Client
from ..client.connect import connect
from ..errors import (
    CapabilityError,
    ConfigError,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RPCError,
    ServerNotFound,
    Timeout,
)
from ..logs import choose_trace_words
from ..protocol.apps import MIME_TYPE as APPS_MIME_TYPE
from .command_line import EXIT_ERROR, EXIT_OK, EXIT_SERVER, EXIT_USAGE, UsageError, convert_arguments
from .output import (
    ProgressBar,
    ServerLogs,
    _describe_contents,
    _described,
    _dump,
    _emit,
    _indent,
    format_block,
    format_result,
    format_tool,
    show_logs,
)

# -- the commands -------------------------------------------------------------------------------


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
    """``minimcp read``: a resource's text (an MCP App's view is HTML: text, even sent as a
    blob); other binary entries summarised. ``-o FILE`` saves the first entry in FILE instead."""
    result = client.read_resource(args.name)
    if args.output is not None:
        _save(result.contents, args.name, args.output)
    if args.json:
        _dump(result.raw)
        return EXIT_OK
    if args.output is not None:
        return EXIT_OK
    for entry in result.contents:
        if len(result.contents) > 1:
            _emit(f"--- {_describe_contents(entry)}")
        text = entry.get("text")
        if text is None and entry.get("mimeType") == APPS_MIME_TYPE:
            text = _utf8(_blob(entry, args.name), args.name)
        _emit(text if text is not None else f"[binary: {_describe_contents(entry)}]")
    return EXIT_OK


def _save(contents: List[Dict[str, Any]], uri: str, path: str) -> None:
    """Write the first entry of a resource to ``path`` (its text as UTF-8, or its decoded blob), and
    say so on stderr. The file is replaced only once the whole answer is in: a failed read leaves it."""
    if not contents:
        raise MCPError(f"the server sent no contents for {uri}: nothing saved in {path}")
    entry = contents[0]
    text = entry.get("text")
    data = text.encode("utf-8") if text is not None else _blob(entry, uri)
    try:
        with open(path, "wb") as file:
            file.write(data)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    mime = f"{entry['mimeType']}, " if entry.get("mimeType") else ""
    others = len(contents) - 1
    left = f"; {others} more {'entry' if others == 1 else 'entries'} not saved (shown without -o)" if others else ""
    print(f"saved {entry.get('uri', uri)} ({mime}{len(data)} byte{'' if len(data) == 1 else 's'}) to {path}{left}",
          file=sys.stderr)


def _blob(entry: Dict[str, Any], uri: str) -> bytes:
    """An entry's ``blob``, decoded from base64."""
    blob = entry.get("blob")
    if blob is None:
        raise ProtocolError(f"the server's entry for {entry.get('uri', uri)} has neither text nor blob")
    try:
        return base64.b64decode(blob, validate=True)
    except binascii.Error as exc:
        raise ProtocolError(f"the server's entry for {entry.get('uri', uri)}: the blob is not base64 ({exc})") from None


def _utf8(data: bytes, uri: str) -> str:
    """A view's HTML, sent as a blob, as text (apps.mdx "UI Resource Format": an HTML document)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"the server's view {uri} is a blob that is not UTF-8 ({exc})") from None


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
    show_logs(args.trace, args.quiet)  # the client's warnings (stray stdout, fallbacks) reach the person
    if args.command in ("login", "logout"):
        from .login import cmd_login, cmd_logout

        return (cmd_login if args.command == "login" else cmd_logout)(args)
    # The server's log messages: on stderr at --log-level and above (the client asks the server
    # for that level), or dropped with --quiet (the client then asks for info, as it does for any
    # on_log: the cost is one command's worth of messages).
    options: Dict[str, Any] = ({"on_stderr": _silent, "on_log": _silent} if args.quiet else
                               {"on_log": ServerLogs(sys.stderr), "log_level": args.log_level})
    if args.headers:  # only when given: a stdio-only connect() need not know the keyword
        options["headers"] = args.headers
    if isinstance(args.target, str) and not any(name.lower() == "authorization" for name in args.headers):
        from ..client.auth import OAuth

        options["auth"] = OAuth(interactive=False)  # a stored login, refreshed as needed; never a browser
    try:
        # apps=True: the command shows what a host that renders MCP Apps sees, the tools only a
        # view calls included (a server hides those from a client that renders no view)
        client = connect(args.target, config=args.config, timeout=args.timeout, protocol=args.protocol,
                         trace=_traced(args), apps=True, **options)
    except ConnectionClosed as exc:  # the server died during the handshake
        raise _named_by_script(exc, args.target) from None
    except ValueError as exc:  # a target minimcp cannot connect to, or a config file it cannot use
        raise UsageError(str(exc)) from None
    except ServerNotFound as exc:  # no server by that name in the host config
        if isinstance(args.target, str) and os.path.isfile(args.target):
            raise UsageError(f"{args.target!r} is a file, not a server name; to start it, put its command "
                             f"after --: 'minimcp {args.command} -- python {args.target}'") from None
        raise ServerNotFound(_not_a_server(exc, args)) from None
    try:
        with client:
            return COMMANDS[args.command](client, args)
    except ConnectionClosed as exc:
        raise _named_by_script(exc, args.target) from None


def _traced(args: argparse.Namespace) -> Optional[bool]:
    """``--trace`` (``--pretty``: indented) turns the trace on; without either, ``MINIMCP_TRACE`` decides."""
    if args.pretty:
        choose_trace_words("pretty")
    return True if args.trace or args.pretty else None


_TAKES_WORDS = ("call", "read", "prompt")  # the commands with a TOOL, URI or NAME after the target


def _not_a_server(exc: ServerNotFound, args: argparse.Namespace) -> str:
    """Say a name is in no config file the CLI's way: the likelier slip (a forgotten ``--``)
    first, then the files tried one per line, and ``--config FILE`` (not the library's ``config=``)."""
    head, _, listing = str(exc).partition("; looked in:\n")
    tried = [line.strip() for line in listing.splitlines() if line.startswith("  ")]
    # What was typed, the "server name" included: it was likelier the tool's name or URI.
    typed = [args.target] + ([args.name] if args.name else []) + [f"{k}={v}" for k, v in args.pairs]
    words = "".join(f"{word} " for word in typed) if args.command in _TAKES_WORDS else ""
    hint = f"to start a server, put its command after --: 'minimcp {args.command} {words}-- python server.py'"
    if args.command in ("login", "logout"):  # URL servers only: a started server needs no login
        hint = f"give the server's URL instead: 'minimcp {args.command} https://example.com/mcp'"
    if len(tried) == 1:  # --config FILE: one line says it all
        return f"{head} in {tried[0]}; {hint}"
    lines = [f"{head} in any host config file", f"  {hint}", f"  looked in {len(tried)} files:"]
    lines += [f"    {path}" for path in tried]
    lines.append("  --config FILE names another file")
    return "\n".join(lines)


#: Interpreters whose first non-option argument is the script that names a server best.
_INTERPRETER = re.compile(r"(python|pypy)[\d.]*w?|node|nodejs|deno|bun|ruby|perl|php|Rscript", re.IGNORECASE)


def _named_by_script(exc: ConnectionClosed, target: Any) -> ConnectionClosed:
    """Name a crashed ``python odd.py`` by its script: ``'odd.py' (python odd.py)``, not ``'python'``."""
    if not isinstance(target, list) or not target:
        return exc
    program = os.path.splitext(os.path.basename(target[0]))[0]
    at = next((i for i, word in enumerate(target[1:], 1) if not word.startswith("-")), None)
    said = f"the MCP server {target[0]!r} "
    text = str(exc)
    if at is None or not _INTERPRETER.fullmatch(program) or not text.startswith(said):
        return exc
    script = target[at]
    # The command up to its script only: the words after it may carry a token.
    command = " ".join(target[:at + 1]) + (" ..." if len(target) > at + 1 else "")
    text = f"the MCP server {os.path.basename(script)!r} ({command}) " + text[len(said):]
    return ConnectionClosed(text, exit_code=exc.exit_code, stderr_tail=exc.stderr_tail)


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
    if isinstance(exc, ServerNotFound) or (isinstance(exc, ConfigError) and "by hand:\n" in text):
        # The files tried one per line; the entry to add by hand as the file would hold it.
        return status, "\n".join(" ".join(line.split()) if i == 0 else line.rstrip()
                                 for i, line in enumerate(text.splitlines()))
    if isinstance(exc, RPCError):
        text = f"[{exc.code}] {exc.message}" + _data_if_new(exc.data, exc.message)
    elif isinstance(exc, ConnectionClosed):  # the server's stderr was shown already, unless --quiet
        text = text.partition("; its last stderr lines")[0]
        lines = [line for line in exc.stderr_tail.splitlines() if line.strip()]
        if quiet and lines:
            text += f" (its last stderr line: {lines[-1].strip()})"
    elif isinstance(exc, Timeout):
        text += " (--timeout SECONDS waits longer)"
    return status, prefix + " ".join(text.split())


def _data_if_new(data: Any, message: str) -> str:
    """`` (data: {...})`` as JSON, with only the entries that say more than the message: an entry
    whose every value is in the message already goes (``Resource not found: books://nope`` needs
    no ``"uri": "books://nope"``), and so does the whole of ``data`` when nothing is left."""
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if not _said_in(value, message)}
        if not data:
            return ""
    elif data is None or _said_in(data, message):
        return ""
    return f" (data: {json.dumps(data, ensure_ascii=False, default=str)})"


def _said_in(value: Any, message: str) -> bool:
    """Is every string in ``value`` in ``message`` (and is there one)? Numbers and booleans say more."""
    leaves = []
    pending = [value]
    while pending:  # (bounded: each value is taken once)
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        else:
            leaves.append(item)
    return bool(leaves) and all(isinstance(leaf, str) and leaf in message for leaf in leaves)
