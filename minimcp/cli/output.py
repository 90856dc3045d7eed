"""What the ``minimcp`` command prints: tools, results, contents, and a progress bar.

The command line is parsed and the commands run elsewhere in :mod:`minimcp.cli`;
everything here turns MCP data into text for a person at a terminal.
"""

import json
import threading
from typing import Any, Dict, Optional, Sequence, TextIO, Tuple

from ..client.results import Tool


def show_logs(trace: bool = False, quiet: bool = False) -> None:
    """Send minimcp's log records to stderr, one line each: warnings (a server's stray stdout,
    a transport fallback that failed) by default, everything with ``--trace``, errors only with
    ``--quiet``. A library adds no handler of its own; the command is the program, so it does."""
    import logging
    import sys

    class Stderr(logging.Handler):  # whatever sys.stderr is when a record comes
        def emit(self, record: logging.LogRecord) -> None:
            sys.stderr.write(self.format(record) + "\n")

    package = logging.getLogger("minimcp")
    for old in [h for h in package.handlers if type(h).__name__ == "Stderr"]:  # main() run again
        package.removeHandler(old)
    handler = Stderr()
    handler.setFormatter(logging.Formatter("minimcp: %(levelname)s: %(message)s" if not trace
                                           else "minimcp: %(levelname)s %(name)s: %(message)s"))
    level = logging.DEBUG if trace else logging.ERROR if quiet else logging.WARNING
    handler.setLevel(level)
    package.addHandler(handler)
    package.setLevel(min(level, package.getEffectiveLevel()))


#: C0 and C1 control characters (and DEL) but tab, each mapped to how Python writes it (``\\x1b``).
_SHOWN = {code: repr(chr(code))[1:-1] for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code != 0x09}


class ServerLogs:
    """Print the server's log messages (``notifications/message``) on a stream, one line each:
    ``server warning: text`` (``server warning [db]: text`` with the server's logger name).

    The ``on_log`` of the ``minimcp`` command; it runs on the client's dispatcher thread. On a
    terminal a line first clears the one under the cursor (a progress bar redraws itself).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._clear = "\r\x1b[K" if stream.isatty() else ""

    def __call__(self, params: Dict[str, Any]) -> None:
        """Print one log message."""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger = params.get("logger")
        where = f" [{logger}]" if logger else ""
        line = f"server {params.get('level')}{where}: {text}"
        # The server's words, shown as text: a control character (an escape sequence could move
        # the cursor, retitle the window or hide what follows) is printed as its escape.
        self.stream.write(f"{self._clear}{line.translate(_SHOWN)}\n")
        self.stream.flush()


def _emit(text: str = "") -> None:
    print(text)


def _dump(value: Any) -> None:
    _emit(json.dumps(value, indent=2, ensure_ascii=False))


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def type_name(prop: Any) -> str:
    """Say a JSON Schema's type in a few characters: ``string``, ``integer[]``, ``"c" | "f"``."""
    if not isinstance(prop, dict) or not prop:
        return "any"
    if "enum" in prop:
        return " | ".join(json.dumps(value, ensure_ascii=False) for value in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"], ensure_ascii=False)
    kinds = prop.get("type")
    if kinds == "array" and isinstance(prop.get("items"), dict) and prop["items"]:
        return type_name(prop["items"]) + "[]"
    if kinds:
        return kinds if isinstance(kinds, str) else " | ".join(kinds)
    branches = prop.get("anyOf") or prop.get("oneOf")
    if branches:
        return " | ".join(type_name(branch) for branch in branches)
    if "$ref" in prop:
        return str(prop["$ref"]).rsplit("/", 1)[-1]
    return "any"


def signature(tool: Tool) -> str:
    """Render a tool's arguments: ``get_weather(city: string, units: "c" | "f" = "c")``."""
    properties = tool.input_schema.get("properties") or {}
    required = set(tool.input_schema.get("required") or ())
    parts = []
    for name, prop in properties.items():
        mark = "" if name in required or (isinstance(prop, dict) and "default" in prop) else "?"
        part = f"{name}{mark}: {type_name(prop)}"
        if isinstance(prop, dict) and "default" in prop:
            part += " = " + json.dumps(prop["default"], ensure_ascii=False)
        parts.append(part)
    return f"{tool.name}({', '.join(parts)})"


def _described(head: str, description: Optional[str], arguments: Sequence[Tuple[str, str]]) -> str:
    """A heading, its description indented below it, then one line per described argument."""
    lines = [head]
    if description:
        lines.append(_indent(description.strip()))
    width = max((len(name) for name, text in arguments if text), default=0)
    lines += [f"      {name.ljust(width)}  {text}" for name, text in arguments if text]
    return "\n".join(lines)


def format_tool(tool: Tool) -> str:
    """Describe one tool for a person: signature, hints, description, argument descriptions.

    A tool with an MCP App view says so, and who may call it when that is not both the model
    and the view: ``increment(by: integer = 1)  [view ui://counter/view.html, app only]``.
    """
    hints = [label for key, label in (("readOnlyHint", "read-only"), ("destructiveHint", "destructive"))
             if tool.annotations.get(key) is True]
    if tool.ui_resource_uri is not None:
        hints.append(f"view {tool.ui_resource_uri}")
    if tool.visibility == ("app",):  # the host keeps it from its model: only the view calls it
        hints.append("app only")
    elif tool.visibility == ("model",) and tool.ui_resource_uri is not None:  # the view may not call it
        hints.append("model only")
    head = signature(tool) + (f"  [{', '.join(hints)}]" if hints else "")
    properties = tool.input_schema.get("properties") or {}
    arguments = [(name, prop.get("description", "")) for name, prop in properties.items() if isinstance(prop, dict)]
    return _described(head, tool.description or tool.title, arguments)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def _decoded_size(data: str) -> int:
    return len(data.rstrip("=")) * 3 // 4  # the length of the bytes a base64 string holds


def format_block(block: Dict[str, Any]) -> str:
    """Show one content block: text as it is, anything else as a one-line summary."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType', '?')}, {_size(_decoded_size(block.get('data', '')))}]"
    if kind == "resource_link":
        mime = f", {block['mimeType']}" if block.get("mimeType") else ""
        return f"[resource link: {block.get('uri', '?')}{mime}]"
    if kind == "resource":
        return "[resource: " + _describe_contents(block.get("resource") or {}) + "]"
    return f"[{kind} content]"


def _describe_contents(entry: Dict[str, Any]) -> str:
    """``uri (mime, size)`` for one resource entry."""
    if "text" in entry:
        size = f"{len(entry['text'])} characters"
    else:
        size = _size(_decoded_size(entry.get("blob", "")))
    mime = f"{entry['mimeType']}, " if entry.get("mimeType") else ""
    return f"{entry.get('uri', '?')} ({mime}{size})"


_NOT_JSON = object()  # what _as_json returns for text that is not JSON; equals no JSON value


def _as_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def format_result(content: Sequence[Dict[str, Any]], structured: Any) -> str:
    """Show a tool result: its blocks, and structured content pretty-printed.

    A text block that only repeats the structured content as JSON (as the spec
    asks servers to send for older clients) is shown pretty-printed, not twice.
    minimcp sends a non-object return value as ``{"result": value}``, so a block
    equal to that ``value`` counts as a repeat too.
    """
    single = isinstance(structured, dict) and len(structured) == 1
    repeats = [structured] + ([structured.get("result", _NOT_JSON)] if single else [])
    parts, shown = [], structured is None
    for block in content:
        value = _as_json(block.get("text", "")) if block.get("type") == "text" and not shown else _NOT_JSON
        if value is not _NOT_JSON and value in repeats:
            parts.append(json.dumps(value, indent=2, ensure_ascii=False))
            shown = True
        else:
            parts.append(format_block(block))
    if not shown:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False))
    return "\n".join(parts)


# -- progress -----------------------------------------------------------------------------------


def render_progress(progress: Any, total: Any, message: Optional[str], width: int = 80) -> str:
    """One line of progress: ``[#####---------------] 1/4 step 1``, at most ``width - 1`` wide."""
    def number(value: Any) -> str:
        return str(int(value)) if isinstance(value, (int, float)) and float(value).is_integer() else f"{value:g}"

    if isinstance(progress, (int, float)) and isinstance(total, (int, float)) and total > 0:
        filled = round(20 * min(max(progress / total, 0.0), 1.0))
        line = f"[{'#' * filled}{'-' * (20 - filled)}] {number(progress)}/{number(total)}"
    else:
        line = number(progress) if isinstance(progress, (int, float)) else "..."
    if message:
        line += " " + " ".join(str(message).split())
    return line[:max(width - 1, 1)]


class ProgressBar:
    """Draw progress reports as one line on a terminal; silent when the stream is not one.

    Example::

        bar = ProgressBar(sys.stderr)
        client.call_tool("reindex", on_progress=bar.update if bar.enabled else None)
        bar.finish()

    ``update`` runs on the client's dispatcher thread; a report arriving after
    ``finish`` (they race the result) is dropped. The lock guards the line on screen.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.enabled: bool = stream.isatty()
        self._lock = threading.Lock()
        self._drawn = self._done = False

    def update(self, progress: Any, total: Any = None, message: Optional[str] = None) -> None:
        """Redraw the line for one progress report."""
        import shutil

        line = render_progress(progress, total, message, shutil.get_terminal_size().columns)
        with self._lock:
            if self.enabled and not self._done:
                self.stream.write("\r" + line + "\x1b[K")
                self.stream.flush()
                self._drawn = True

    def finish(self) -> None:
        """Erase the line and ignore any later report."""
        with self._lock:
            self._done = True
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()


# -- the commands -------------------------------------------------------------------------------
