"""What the built-in server reads of a request: its head (RFC 9112 §3 and §5) and its body.

``http.server`` reads header fields with ``email.parser``, which builds a mail
message for them (a large part of the built-in server's time for a ``tools/call``:
benchmarks/instructions_http.py measures it). A WSGI app needs only the fields as
name/value pairs, so they are read here in a loop, within limits (a line of at most
64 KiB, at most 100 fields: past either, 431), and a field line that is not
``token ":" value`` is refused (400): a name that is not an RFC 9110 token (whitespace
before the colon included, §5.1 of RFC 9112), no colon, an obsolete folded line
(§5.2), a CR or NUL in the value (RFC 9110 §5.5).

Here too: the conversions between a field name and its WSGI environ key, cached
(:data:`ENVIRON_KEY` for this server's environ, :data:`HEADER_NAME` for
:class:`~minimcp.server.http.app.MCPApp`, under any WSGI server).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

#: The longest request line or header line read (``http.client``'s limit).
MAX_LINE = 65536
#: The most header fields read (one more is a 431).
MAX_FIELDS = 100
#: What a field name may be made of (RFC 9110 §5.6.2 ``token``).
TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class NameCache(dict[str, "Optional[str]"]):  # (quoted: typing is not imported at run time)
    """``cache[name]``: ``convert(name)``, kept for the next request that has the same name.

    A request's field names are nearly always the ones the request before it had,
    and one dict lookup costs less than the string methods that convert a name
    (WSGI's ``HTTP_ACCEPT`` for ``Accept`` and back), for every field of every request.
    Bounded, whatever names come: only names of up to ``longest`` characters are kept,
    and a full cache starts again empty (made-up names cannot pin memory, nor keep the
    names in use out for good).
    """

    def __init__(self, convert: Callable[[str], Optional[str]], limit: int = 256, longest: int = 64) -> None:
        super().__init__()
        self.convert = convert
        self.limit = limit
        self.longest = longest

    def __missing__(self, name: str) -> Optional[str]:
        converted = self.convert(name)
        if len(name) <= self.longest:
            if len(self) >= self.limit:
                self.clear()
            self[name] = converted
        return converted


#: A field name's WSGI environ key (PEP 3333, CGI's ``HTTP_`` names); None for a name with ``_``,
#: which the environ leaves out: ``Content_Length`` would pass for ``Content-Length`` (gunicorn and
#: nginx drop such names too).
ENVIRON_KEY = NameCache(lambda name: None if "_" in name else "HTTP_" + name.upper().replace("-", "_"))
#: An environ key's header name, in lower case (``HTTP_MCP_SESSION_ID``: ``mcp-session-id``); None for
#: a key that is not a header.
HEADER_NAME = NameCache(lambda key: key[5:].replace("_", "-").lower() if key.startswith("HTTP_") else None)


class HeadError(Exception):
    """A request head that cannot be served: the ``status`` and ``reason`` to answer it with."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(status, reason)
        self.status: int = status
        self.reason: str = reason


class Fields:
    """A request's header fields, in the order they came; names match case-insensitively (RFC 9110 §5.1).

    The part of ``email.message.Message`` the server uses: :meth:`get`, :meth:`get_all`,
    :meth:`items` and :meth:`raw_items`.
    """

    __slots__ = ("_items", "_first", "_repeats")

    def __init__(self, items: List[Tuple[str, str]]) -> None:
        self._items = items
        self._first: Dict[str, str] = {}  # lower-case name -> the first value: get() is one lookup
        for name, value in items:
            self._first.setdefault(name.lower(), value)
        self._repeats = len(self._first) != len(items)  # some name came twice (get_all must look at every field)

    def get(self, name: str, default: Any = None) -> Any:
        """The value of the first field named ``name``, or ``default``."""
        return self._first.get(name.lower(), default)

    def get_all(self, name: str) -> Optional[List[str]]:
        """The values of every field named ``name``, or None if there is none (as ``Message.get_all``)."""
        name = name.lower()
        if not self._repeats:  # (the usual case: the first value is the only one)
            return [self._first[name]] if name in self._first else None
        return [value for key, value in self._items if key.lower() == name] or None

    def items(self) -> List[Tuple[str, str]]:
        """Every field as ``(name, value)``, in order."""
        return list(self._items)

    raw_items = items

    def __repr__(self) -> str:
        return f"Fields({self._items!r})"


def read_request_line(line: str) -> Tuple[str, str, str, Tuple[int, int]]:
    """``(method, target, version, (major, minor))`` from ``method SP target SP HTTP/x.y`` (RFC 9112 §3).

    Raises:
        HeadError: 400 for anything else (HTTP/0.9's two words included); 505 for HTTP/2 and later.
    """
    words = line.split()
    if len(words) == 3 and words[2] == "HTTP/1.1" and not words[1].startswith("//"):
        return words[0], words[1], "HTTP/1.1", (1, 1)  # (nearly every request: no version to read)
    if len(words) != 3:
        raise HeadError(400, f"Bad request syntax ({line[:200]!r})")
    method, target, version = words
    numbers = version[5:].split(".") if version.startswith("HTTP/") else []
    # (isascii: "²".isdigit() is true, and int() refuses it)
    if len(numbers) != 2 or not all(n.isascii() and n.isdigit() and len(n) <= 10 for n in numbers):
        raise HeadError(400, f"Bad request version ({version[:200]!r})")
    number = int(numbers[0]), int(numbers[1])
    if number >= (2, 0):
        raise HeadError(505, f"Invalid HTTP version ({version[5:200]})")
    if target.startswith("//"):  # one slash, as http.server makes it (gh-87389)
        target = "/" + target.lstrip("/")
    return method, target, version, number


def read_fields(rfile: Any) -> Fields:
    """Read header lines up to the empty line that ends them.

    Raises:
        HeadError: 431 for a line or a count past the limits; 400 for a line that is not a field.
    """
    items: List[Tuple[str, str]] = []
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise HeadError(431, "Line too long")
        if line == b"\r\n" or line == b"\n" or not line:
            return Fields(items)
        if len(items) == MAX_FIELDS:
            raise HeadError(431, "Too many headers")
        text = line.decode("latin-1")  # (what http.client decodes header lines as)
        name, colon, value = text.partition(":")
        value = value.rstrip("\r\n").strip(" \t")
        # (a folded line starts with whitespace: not a token either; most names are letters,
        # digits and dashes, which two str methods check faster than the set)
        is_token = name.isascii() and name.replace("-", "").isalnum() or TOKEN.issuperset(name)
        if not colon or not name or not is_token or "\r" in value or "\x00" in value:
            raise HeadError(400, f"Bad header line ({text[:200].rstrip()!r})")
        items.append((name, value))


class Body:
    """``wsgi.input``: the request body, never read past its Content-Length."""

    def __init__(self, rfile: Any, length: int) -> None:
        self.rfile: Any = rfile
        #: The bytes of the body not read yet.
        self.remaining: int = length

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the body (all that is left when ``size`` is negative)."""
        if size < 0 or size > self.remaining:
            size = self.remaining
        data: bytes = self.rfile.read(size) if size else b""
        self.remaining -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        """One line of the body, of at most ``size`` bytes."""
        data: bytes = self.rfile.readline(min(size, self.remaining) if size >= 0 else self.remaining)
        self.remaining -= len(data)
        return data
