"""The wire trace's renderer: what ``MINIMCP_TRACE`` prints, loaded by the first traced message.

Made for a person reading top to bottom: each message once, with its direction, its peer and
the time since the line above; what every request repeats (the 2026-07-28 ``_meta``) folded,
long values cut, and a note the first time either happens. :func:`trace` and :func:`trace_http`
write its lines; the callers import this module only when their trace is on, so a process that
traces nothing never loads it (start-up time is import time).
"""

from __future__ import annotations

from .logs import TRACE_WORDS, chosen_trace_words, trace_words, tracing

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple


def trace(session: Any, arrow: str, message: Any) -> None:
    """Write one message of the wire trace to stderr: ``→`` sent, ``←`` received.

    ``session`` is the :class:`~minimcp.engine.session.Session` that sent or received it (its
    name says whose side the line is, its transport who the peer is). One side only: a server
    in the same process as a traced client is left out, as the client shows every message
    already, unless ``MINIMCP_TRACE`` says ``both``. ``MINIMCP_TRACE=pretty`` indents each
    message; ``full`` shows every message whole (see :data:`~minimcp.logs.TRACE_WORDS`).
    """
    tracer().message(session, arrow, message)


def trace_http(who: str, arrow: str, head: str, headers: Dict[str, str], body: str) -> None:
    """Write one HTTP request (``→``) or response (``←``) of the trace: ``oauth → POST URL``.

    ``headers`` and ``body`` come redacted; the headers every request carries are left out.
    """
    tracer().http(who, arrow, head, headers, body)


_the_tracer: Optional[_Tracer] = None


def tracer() -> _Tracer:
    """This process's one tracer (made on the first traced message)."""
    global _the_tracer
    if _the_tracer is None:
        _the_tracer = _Tracer()
    return _the_tracer


#: A string longer than this is cut; a list longer than _MOST_ITEMS shows its first _KEPT_ITEMS.
_LONGEST_STRING, _MOST_ITEMS, _KEPT_ITEMS = 64, 5, 3
#: A compact line's message is made to fit in about this many characters (deeper objects summed up).
_LINE_BUDGET = 300
#: ``pretty``: an object or list nested in the message stays on one line if it fits in this many columns.
_PRETTY_WIDTH = 76
#: HTTP headers every request or response carries: left out of an HTTP line (unless ``full``).
_ORDINARY_HEADERS = {"user-agent", "accept-encoding", "accept", "connection", "content-length", "date",
                     "server", "keep-alive", "transfer-encoding", "content-type"}
#: Interpreters and runners whose script or package names a stdio server better than they do.
_RUNNERS = {"python", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl", "php",
            "npx", "uvx", "bunx", "pipx", "uv", "java"}
_SCRIPT_ENDINGS = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".jar")

#: What the trace says, once, the first time it folds, shortens or leaves out something.
_NOTES = {
    "fold": "…N as before: N _meta keys with the values they had in the last message this way; "
            "MINIMCP_TRACE=full shows them",
    "cut": "long values are shortened: a string to its start and (+N chars), a list to its first items and "
           "…N more items, an object to {…N keys}; MINIMCP_TRACE=full shows them whole",
    "left out": "the side of the server in this process is left out: the client's lines show every message; "
                "MINIMCP_TRACE=both shows it",
    "headers": "headers every HTTP request or response carries are left out; MINIMCP_TRACE=full shows them",
}
_ANSI = {"sent": "36", "received": "32", "method": "1", "error": "31", "dim": "2"}


class _Mark:
    """Text shown as it is, not as JSON (a message that is not JSON: its repr)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Folded:
    """A ``_meta`` object with the keys it shares with the last one this way left out."""

    __slots__ = ("shown", "folded")

    def __init__(self, shown: Dict[str, Any], folded: int) -> None:
        self.shown = shown
        self.folded = folded


class _Side:
    """What the trace remembers of one session: its peer, and the ``_meta`` last seen each way."""

    __slots__ = ("peer", "meta")

    def __init__(self, peer: str) -> None:
        self.peer: str = peer
        self.meta: Dict[str, Dict[str, Any]] = {"→": {}, "←": {}}


class _Render:
    """One message made text: compact or indented, painted or not.

    ``summed``: the paths (keys and indexes from the top) of the objects and lists shown as
    ``{…N keys}`` / ``[…N items]``; :func:`_fitted` picks them. ``sizes``, when given, gets the
    length of each object's and list's compact text by path (what :func:`_fitted` picks from).
    """

    def __init__(self, words: FrozenSet[str], paint: bool, summed: FrozenSet[Tuple[Any, ...]] = frozenset(),
                 sizes: Optional[Dict[Tuple[Any, ...], int]] = None) -> None:
        self.full = "full" in words
        self.pretty = "pretty" in words
        self.paint = paint
        self.summed = summed
        self.sizes = sizes
        self.notes: Set[str] = set()

    def colour(self, what: str, text: str) -> str:
        return _paint(what, text, self.paint)

    def mark(self, text: str, note: str) -> str:
        self.notes.add(note)
        return self.colour("dim", text)

    def value(self, value: Any, path: Tuple[Any, ...] = ()) -> str:
        kind = type(value)
        if kind is str:
            return self.string(value)
        if kind is dict or kind is _Folded or kind is list or kind is tuple:
            text = self.container(value, path)
            if self.sizes is not None:
                self.sizes[path] = len(text)
            return text
        if kind is _Mark:
            return _visible(value.text)
        import json

        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return _visible(repr(value))

    def string(self, text: str, quoted: bool = True) -> str:
        """A string as JSON (or as it is: ``quoted=False``), cut when long, never a control
        character that the terminal would act on."""
        import json

        more = len(text) - _LONGEST_STRING
        cut = more > 8 and not self.full  # (a few characters over are shown, not cut)
        if cut:
            text = text[:_LONGEST_STRING - 1] + "…"
        shown = _visible(json.dumps(text, ensure_ascii=False) if quoted else text)
        return shown + self.mark(f" (+{more + 1} chars)", "cut") if cut else shown

    def container(self, value: Any, path: Tuple[Any, ...]) -> str:
        folded = 0
        if type(value) is _Folded:
            value, folded = value.shown, value.folded
        if path in self.summed:
            count = len(value) + folded
            what = ("key" if type(value) is dict else "item") + ("" if count == 1 else "s")
            return self.mark(f"{{…{count} {what}}}" if type(value) is dict else f"[…{count} {what}]", "cut")
        if type(value) is not dict:
            return self.array(value, path)
        parts = []
        for key, item in value.items():
            text = self.value(item, path + (key,))
            if not path and key == "method":
                text = self.colour("method", text)
            elif not path and key == "error":
                text = self.colour("error", text)
            parts.append(self.string(str(key)) + (": " if self.pretty else ":") + text)
        if folded:
            parts.append(self.mark(f"…{folded} as before", "fold"))
        return self.join("{", parts, "}", len(path))

    def array(self, items: Any, path: Tuple[Any, ...]) -> str:
        shown = list(items)
        more = len(shown) - _KEPT_ITEMS if len(shown) > _MOST_ITEMS and not self.full else 0
        parts = [self.value(item, path + (at,)) for at, item in enumerate(shown[:len(shown) - more])]
        if more:
            parts.append(self.mark(f"…{more} more items", "cut"))
        return self.join("[", parts, "]", len(path))

    def join(self, opening: str, parts: List[str], closing: str, depth: int) -> str:
        if not parts:
            return opening + closing
        if not self.pretty:
            return opening + ",".join(parts) + closing
        line = opening + ", ".join(parts) + closing  # (a short one stays on one line, as a person writes it)
        if "\n" not in line and depth and 2 * depth + _width(line) <= _PRETTY_WIDTH:
            return line
        inner = "\n" + "  " * (depth + 1)
        return opening + inner + ("," + inner).join(parts) + "\n" + "  " * depth + closing


class _Tracer:
    """The trace of this process: one lock, one clock, the notes said, each session's side."""

    def __init__(self) -> None:
        import threading
        import weakref

        self.lock: threading.Lock = threading.Lock()
        self.last: Optional[float] = None  # when the line above was written (time.monotonic())
        self.said: Set[str] = set()  # the notes (and the header) written already
        self.sides: weakref.WeakKeyDictionary[Any, _Side] = weakref.WeakKeyDictionary()
        self.clients: bool = False  # a client in this process has traced a message

    def message(self, session: Any, arrow: str, message: Any) -> None:
        words = self.words()
        name = session if isinstance(session, str) else str(getattr(session, "name", "minimcp"))
        is_server = name.startswith("server")
        if name == "client":
            self.clients = True  # (a flag that only ever turns on: no lock needed)
        elif is_server and self.clients and "both" not in words and tracing():
            self.say_once("left out")  # (MINIMCP_TRACE is set: it turned the server's trace on too)
            return
        paint = _paints()
        # Under the lock: the folds are decided in the order the lines are written (a fold
        # says "as before" of the line above), and two threads' lines never mix. The lock is
        # the trace's own: no session waits on it but to trace.
        with self.lock:
            side = None if isinstance(session, str) else self.side(session, is_server)
            shown = _to_dict(message)
            if "full" not in words and side is not None:
                shown = self.fold(shown, side, arrow)
            text, notes = _fitted(shown, words, paint)
            who = f"{name} {arrow} {side.peer if side is not None else ''}".rstrip()
            self.write(who, "sent" if arrow == "→" else "received", text, notes, paint, "pretty" in words)

    def http(self, who: str, arrow: str, head: str, headers: Dict[str, str], body: str) -> None:
        words = self.words()
        paint = _paints()
        notes: Set[str] = set()
        if "full" not in words:
            kept = {name: value for name, value in headers.items() if name.lower() not in _ORDINARY_HEADERS}
            if len(kept) < len(headers):
                notes.add("headers")
            headers = kept
        parts = []
        if headers:
            text, more = _fitted(headers, words, paint, shown=1)
            parts.append(text)
            notes |= more
        if body:
            text, more = _body(body, words, paint)
            parts.append(text)
            notes |= more
        pretty = "pretty" in words
        with self.lock:
            self.write(f"{who} {arrow} {head}", "sent" if arrow == "→" else "received",
                       ("\n" if pretty else "  ").join(parts), notes, paint, pretty)

    def side(self, session: Any, is_server: bool) -> _Side:
        side = self.sides.get(session)
        if side is None:
            side = self.sides[session] = _Side(_peer(session, is_server))
        return side

    def fold(self, message: Any, side: _Side, arrow: str) -> Any:
        """``message`` with the ``_meta`` keys it shares with the last message this way folded
        (spec 2026-07-28 basic "Per-request metadata": every request carries the same ones)."""
        if type(message) is not dict:
            return message
        body_key = "params" if "method" in message else "result"
        body: Any = message.get(body_key)
        meta = body.get("_meta") if type(body) is dict else None
        if type(meta) is not dict or not meta:
            return message
        last = side.meta[arrow]
        shown = {key: value for key, value in meta.items() if key not in last or last[key] != value}
        last.update(meta)
        if len(shown) == len(meta):
            return message
        return dict(message, **{body_key: dict(body, _meta=_Folded(shown, len(meta) - len(shown)))})

    def write(self, who: str, direction: str, text: str, notes: Set[str], paint: bool, pretty: bool) -> None:
        """Write one line (the header first, the notes not said yet after it); the lock is held."""
        import sys
        import time

        stream = sys.stderr
        if stream is None:  # (pythonw)
            return
        now = time.monotonic()
        since = _since(0.0 if self.last is None else now - self.last)
        self.last = now
        lines = []
        if "header" not in self.said:
            self.said.add("header")
            lines.append(_dim("minimcp trace: → sent, ← received, +time since the line above", paint))
        head = f"{_dim(f'{since:>7}', paint)} {_paint(direction, who, paint)}"
        if pretty:
            lines.append(head)
            lines.extend("    " + line for line in text.splitlines())
        else:
            lines.append(f"{head}  {text}" if text else head)
        for note in sorted(notes - self.said):
            self.said.add(note)
            lines.append(_dim(f"        ({_NOTES[note]})", paint))
        # On a terminal, clear the line first: a progress bar may be drawn on it (the CLI's).
        stream.write(("\r\x1b[K" if _is_terminal(stream) else "") + "\n".join(lines) + "\n")
        stream.flush()

    def words(self) -> FrozenSet[str]:
        """MINIMCP_TRACE's words and the chosen ones; a word it does not know is said, once."""
        words = trace_words() | trace_words(chosen_trace_words())
        unknown = words - set(TRACE_WORDS) - {"1", "yes", "true", "on"}
        if unknown:
            self.say_once(f"MINIMCP_TRACE={','.join(sorted(unknown))}: not a word the trace knows; "
                          f"it knows {', '.join(TRACE_WORDS)} (as in MINIMCP_TRACE=both,pretty)")
        return words

    def say_once(self, note: str) -> None:
        """Write a note (a key of :data:`_NOTES`, or its text), unless it was written already."""
        import sys

        with self.lock:
            if note in self.said or sys.stderr is None:
                return
            self.said.add(note)
        sys.stderr.write(_dim(f"        ({_NOTES.get(note, note)})", _paints()) + "\n")
        sys.stderr.flush()


def _to_dict(message: Any) -> Any:
    """The message as the JSON it is on the wire (a batch as a list); its repr if it has none."""
    if isinstance(message, list):
        return [_to_dict(item) for item in message]
    to_dict = getattr(message, "to_dict", None)
    return to_dict() if to_dict is not None else message if isinstance(message, dict) else _Mark(repr(message))


def _fitted(value: Any, words: FrozenSet[str], paint: bool, shown: int = 2) -> Tuple[str, Set[str]]:
    """``value`` as text: indented (``pretty``), whole (``full``), or compact in about
    :data:`_LINE_BUDGET` characters: the deepest objects and lists are summed up first
    (``{…4 keys}``), the last first at each depth (the line reads whole from its start), until
    it fits. The first ``shown``
    levels are never summed up (a message's ``params`` or ``result``: what it is about)."""
    if "full" in words or "pretty" in words:
        render = _Render(words, paint)
        return render.value(value), render.notes
    sizes: Dict[Tuple[Any, ...], int] = {}
    render = _Render(words, paint, sizes=sizes)
    text = render.value(value)
    total = sizes.get((), len(text)) if not paint else len(_Render(words, False).value(value))
    if total <= _LINE_BUDGET:
        return text, render.notes
    if paint:  # (the sizes without the colours' escapes)
        sizes.clear()
        _Render(words, False, sizes=sizes).value(value)
    summed = set()
    order = {path: at for at, path in enumerate(sizes)}  # (where each ends in the text: the later, the greater)
    for path in sorted((p for p in sizes if len(p) >= shown), key=lambda p: (-len(p), -order[p])):
        if total <= _LINE_BUDGET:
            break
        if sizes[path] < 40 or any(path[:n] in summed for n in range(shown, len(path))):
            continue  # (too short to gain from; or inside one summed up already)
        saved = sizes[path] - 12  # (about what "{…4 keys}" takes)
        for n in range(len(path)):  # its own size, and each enclosing one's, are that much less
            if path[:n] in sizes:
                sizes[path[:n]] -= saved
        total -= saved
        summed.add(path)
    render = _Render(words, paint, frozenset(summed))
    return render.value(value), render.notes


def _body(body: str, words: FrozenSet[str], paint: bool) -> Tuple[str, Set[str]]:
    """An HTTP body as text: JSON as JSON, a form as its ``key=value`` pairs (decoded), else text."""
    import json

    if body.lstrip().startswith(("{", "[")):
        try:
            return _fitted(json.loads(body), words, paint, shown=1)
        except ValueError:
            pass
    render = _Render(words, paint)
    if "=" in body and " " not in body:
        from urllib.parse import parse_qsl

        pairs = parse_qsl(body, keep_blank_values=True)
        if pairs:
            return "&".join(f"{render.string(key, False)}={render.string(value, False)}"
                            for key, value in pairs), render.notes
    return render.string(body, False), render.notes


def _peer(session: Any, is_server: bool) -> str:
    """Who is at the other end of ``session``: a stdio server by its script, an HTTP one by its URL."""
    if is_server:
        return "client"
    transport = getattr(session, "transport", None)
    command = getattr(transport, "command", None)
    if isinstance(command, list) and command:
        return _program(command)
    url = getattr(transport, "url", None)
    if isinstance(url, str):
        return url
    info = getattr(getattr(session, "owner", None), "server_info", None)
    return str(info.get("name") or "server") if isinstance(info, dict) else "server"


def _program(command: List[str]) -> str:
    """``weather_server.py`` for ``python examples/weather_server.py``; ``mod`` for ``python -m mod``."""
    import os

    program = os.path.basename(command[0])
    words = command[1:]
    for at, word in enumerate(words):
        if word == "-m" and at + 1 < len(words):
            return words[at + 1]
        if word.endswith(_SCRIPT_ENDINGS):
            return os.path.basename(word)
    runner = program.rstrip("0123456789.").lower().replace(".exe", "")
    if runner in _RUNNERS:
        named = [word for word in words if not word.startswith("-")]
        if named:
            return named[0]
    return program


def _since(seconds: float) -> str:
    milliseconds = seconds * 1000
    if milliseconds < 10:
        return f"+{milliseconds:.1f}ms"
    if milliseconds < 1000:
        return f"+{milliseconds:.0f}ms"
    return f"+{seconds:.1f}s" if seconds < 100 else f"+{seconds:.0f}s"


def _paints() -> bool:
    """Colour the trace? Only on a terminal, and never with ``NO_COLOR`` set (no-color.org)."""
    import os
    import sys

    return _is_terminal(sys.stderr) and not os.environ.get("NO_COLOR")


def _is_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError):  # (a replaced or closed stderr)
        return False


def _width(text: str) -> int:
    """How many columns ``text`` takes: its length without the colours' escape sequences."""
    while "\x1b[" in text:
        start = text.index("\x1b[")
        text = text[:start] + text[text.index("m", start) + 1:]
    return len(text)


def _paint(direction: str, text: str, paint: bool) -> str:
    return f"\x1b[{_ANSI[direction]}m{text}\x1b[0m" if paint else text


def _dim(text: str, paint: bool) -> str:
    return _paint("dim", text, paint)


#: Characters a peer's string must not put on our terminal as they are (an escape sequence
#: could move the cursor or hide what follows; a bidi control reorder it): C1 controls, DEL,
#: line and paragraph separators, bidi overrides and isolates. JSON escapes C0 controls itself.
_UNSHOWN: Dict[int, str] = {}


def _visible(text: str) -> str:
    if not _UNSHOWN:  # (made on first use: a stdio server that never traces never makes it)
        _UNSHOWN.update((code, f"\\u{code:04x}") for code in (0x7F, *range(0x80, 0xA0), 0x2028, 0x2029,
                                                             *range(0x202A, 0x202F), *range(0x2066, 0x206A)))
    return text.translate(_UNSHOWN)
