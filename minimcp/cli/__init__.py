"""The ``minimcp`` command: talk to an MCP server from a shell.

::

    minimcp tools -- python examples/weather_server.py
    minimcp call get_weather city=Paris -- python examples/weather_server.py
    minimcp call weather get_weather city=Paris --config examples/.mcp.json
    minimcp read kb://index -- python examples/knowledge_base.py
    minimcp install claude-desktop examples/weather_server.py --name weather
    minimcp servers
    minimcp run examples/weather_server.py --transport http

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
This package only parses the command line, calls :class:`minimcp.Client`
and formats what comes back: no protocol logic lives here.

The pieces: :mod:`~minimcp.cli.command_line` parses the command line,
:mod:`~minimcp.cli.commands` connects and runs one command,
:mod:`~minimcp.cli.output` formats what comes back; :func:`main`, here, is
the ``minimcp`` console script (pyproject.toml's ``[project.scripts]``) and ``python -m minimcp``.
"""

import argparse
import os
import sys
from typing import Callable, Optional, Sequence, Tuple

from ..protocol.versions import SDK_VERSION as __version__
from .command_line import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SERVER,
    EXIT_USAGE,
    LOCAL_COMMANDS,
    UsageError,
    build_parser,
    convert_arguments,
    parse_args,
    parse_value,
    split_pairs,
    wants_string,
)
from .commands import COMMANDS, explain, run
from .output import ProgressBar, format_result, render_progress, signature

#: ``main`` and the submodules' names callers reach through the package (the tests, as ``cli.*``).
__all__ = ["main", "run", "explain", "COMMANDS", "parse_args", "build_parser", "split_pairs", "parse_value",
           "wants_string", "convert_arguments", "UsageError", "ProgressBar", "format_result", "render_progress",
           "signature", "__version__", "EXIT_OK", "EXIT_ERROR", "EXIT_USAGE", "EXIT_SERVER", "EXIT_INTERRUPTED"]


#: ``minimcp/cli/ship.py``'s commands, named here so that no other command loads that module
#: (``minimcp run``, which hosts start servers with, stays quick to start).
_SHIP_COMMANDS = ("bundle", "registry")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``minimcp`` command line and return its exit status.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    # The commands that connect to no server, each module's (parse, run); late: the others never need them.
    local: Optional[Tuple[Callable[[Sequence[str]], argparse.Namespace], Callable[[argparse.Namespace], int]]] = None
    if argv and argv[0] == "proxy":  # other servers served as one (minimcp/cli/proxy.py)
        from . import proxy
        local = proxy.parse, proxy.run
    elif argv and argv[0] in LOCAL_COMMANDS:  # install, servers, run
        from . import install
        local = install.parse, install.run
    elif argv and argv[0] in _SHIP_COMMANDS:  # bundle, registry: a server packaged for others
        from . import ship
        local = ship.parse, ship.run
    args = local[0](argv) if local else parse_args(argv)
    try:
        status = local[1](args) if local else run(args)
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
