"""Content blocks: what a tool result carries, and how return values become one.

MCP content blocks are plain dicts on the wire (spec server/tools "Tool
Result"). Tool authors mostly return plain values and let
:func:`tool_result` build the blocks:

=====================  ====================================================
return value           tool result
=====================  ====================================================
``str``                one text block
``None``               no content (also for ``-> Optional[X]``)
``dict``, dataclass    ``structuredContent`` plus its JSON as a text block
list, number, bool     with an output schema: ``structuredContent`` as
                       ``{"result": value}`` plus JSON text; else JSON text
datetime, date, time,  their text (ISO 8601 for the first three; the
UUID, Decimal, Path    UUID; the exact digits; the path): as a ``str``
                       is, or ``{"result": text}`` with an output schema;
                       inside data too
``bytes`` inside data  base64 text (alone, see ``Image`` below)
``Image`` / ``Audio``  an image / audio block (``bytes`` of a known image
                       format become an image block)
a list of blocks       passed through (dicts with a ``type``, helpers, and
                       strings, which become text blocks)
=====================  ====================================================

One way to return a result, chosen for one reason: a tool's Python return
value should read like what the model will see.
"""

from __future__ import annotations

import errno
import json
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, List, Optional, Union

from ..protocol.jsonrpc import jsonable
from ..protocol.versions import knows, knows_all


def _b64(data: Union[bytes, bytearray]) -> bytes:
    import base64  # late: most servers never send binary content

    return base64.b64encode(data)


CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})

_EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp", ".svg": "image/svg+xml", ".wav": "audio/wav", ".mp3": "audio/mpeg",
               ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4"}


def sniff_mime_type(data: Union[bytes, bytearray]) -> Optional[str]:
    """Guess an image or audio MIME type from the first bytes, or return None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data[:3] == b"ID3" or data[:2] == b"\xff\xfb":
        return "audio/mpeg"
    if data[:4] == b"OggS":
        return "audio/ogg"
    if data[:4] == b"fLaC":
        return "audio/flac"
    return None


class _Binary:
    """Image or audio data from bytes or a file; ``to_block()`` gives the wire dict.

    ``data`` is the raw bytes, or the path of a file (a ``str`` or
    ``os.PathLike``) to read them from. A ``str`` is always a path, never
    base64: decode base64 first (``Image(base64.b64decode(text))``).
    ``mime_type`` defaults to a guess from the file's extension or the
    first bytes; pass it when neither tells.
    """

    block_type = ""

    def __init__(self, data: Union[bytes, str, os.PathLike[str]], mime_type: Optional[str] = None) -> None:
        if isinstance(data, (bytes, bytearray)):
            raw = bytes(data)
            guess = sniff_mime_type(raw)
        else:
            try:
                with open(data, "rb") as f:
                    raw = f.read()
            except (OSError, ValueError) as exc:  # ValueError: a NUL in the "path"
                if isinstance(exc, OSError) and exc.errno not in (errno.ENOENT, errno.ENAMETOOLONG):
                    raise  # a real file that cannot be read: its own error says why
                raise FileNotFoundError(
                    f"{type(self).__name__}({str(data)[:40]!r}): no such file. A str is the path of a "
                    f"file; for base64 text pass the bytes: {type(self).__name__}(base64.b64decode(text))"
                ) from exc
            guess = _EXTENSIONS.get(os.path.splitext(str(data))[1].lower()) or sniff_mime_type(raw)
        mime_type = mime_type or guess
        if not mime_type:
            raise ValueError(f"cannot tell the MIME type of this {self.block_type}; pass mime_type=")
        self.data: bytes = raw
        self.mime_type: str = mime_type

    def to_block(self) -> Dict[str, Any]:
        """Return the content block as it goes on the wire (base64 data)."""
        return {"type": self.block_type, "data": _b64(self.data).decode("ascii"),
                "mimeType": self.mime_type}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.data)} bytes, mime_type={self.mime_type!r})"


class Image(_Binary):
    """An image for a tool result: ``return Image("chart.png")`` (a path) or ``Image(png_bytes)``.

    Args:
        data: the raw bytes, or the path of a file to read them from (a
            ``str`` or ``os.PathLike``). A ``str`` is always a path, never
            base64: pass ``base64.b64decode(text)`` for base64 text.
        mime_type: ``"image/png"`` ...; by default guessed from the file's
            extension or the first bytes.

    Raises:
        FileNotFoundError: ``data`` is a string that names no file.
        ValueError: the MIME type cannot be guessed; pass ``mime_type``.
    """

    block_type = "image"


class Audio(_Binary):
    """Audio for a tool result: ``return Audio("clip.wav")`` (a path) or ``Audio(data, "audio/wav")``.

    ``data`` and ``mime_type`` are read as for :class:`Image`: a ``str`` is
    a file path, never base64.
    """

    block_type = "audio"


class ResourceLink:
    """A link to a resource the client may read later (``resource_link``, 2025-06-18+).

    ``return ResourceLink("file:///logs/today.txt", name="today.txt", mime_type="text/plain")``
    """

    def __init__(self, uri: str, name: str, *, title: Optional[str] = None, description: Optional[str] = None,
                 mime_type: Optional[str] = None, size: Optional[int] = None) -> None:
        self.uri: str = uri
        self.name: str = name
        self.title: Optional[str] = title
        self.description: Optional[str] = description
        self.mime_type: Optional[str] = mime_type
        self.size: Optional[int] = size

    def to_block(self) -> Dict[str, Any]:
        """Return the content block as it goes on the wire."""
        block: Dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description),
                           ("mimeType", self.mime_type), ("size", self.size)):
            if value is not None:
                block[key] = value
        return block

    def __repr__(self) -> str:
        return f"ResourceLink({self.uri!r}, name={self.name!r})"


class EmbeddedResource:
    """A resource's contents inside a result (``type: "resource"``): text or bytes.

    ``return EmbeddedResource("file:///notes.md", "# Notes", mime_type="text/markdown")``
    """

    def __init__(self, uri: str, data: Union[str, bytes], mime_type: Optional[str] = None) -> None:
        self.uri: str = uri
        self.data: Union[str, bytes] = data
        self.mime_type: Optional[str] = mime_type

    def to_block(self) -> Dict[str, Any]:
        """Return the content block as it goes on the wire (bytes as a base64 ``blob``)."""
        return {"type": "resource", "resource": resource_contents(self.uri, self.data, self.mime_type)}

    def __repr__(self) -> str:
        return f"EmbeddedResource({self.uri!r}, {type(self.data).__name__}, mime_type={self.mime_type!r})"


def resource_contents(uri: str, data: Any, mime_type: Optional[str] = None) -> Dict[str, Any]:
    """One entry of ``resources/read``'s ``contents``: ``str`` is text, ``bytes`` a base64 blob,
    anything else JSON text (``application/json``)."""
    if isinstance(data, (bytes, bytearray)):
        return {"uri": uri, "mimeType": mime_type or "application/octet-stream",
                "blob": _b64(data).decode("ascii")}
    if isinstance(data, str):
        return {"uri": uri, "mimeType": mime_type or "text/plain", "text": data}
    return {"uri": uri, "mimeType": mime_type or "application/json", "text": to_json_text(jsonable(data))}


class Message:
    """A prompt message: ``Message("Summarise this:")``, ``Message(Image("x.png"))``,
    ``Message("Sure.", role="assistant")``. Content is a string, a helper, or a block dict."""

    def __init__(self, content: Any, role: str = "user") -> None:
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', not {role!r}")
        self.content: Any = content  # a str, a content helper or a block dict
        self.role: str = role

    def to_dict(self) -> Dict[str, Any]:
        """Return the ``PromptMessage`` as it goes on the wire."""
        content = self.content
        if isinstance(content, str):
            content = {"type": "text", "text": content}
        elif _is_block(content):
            content = _block(content)
        else:
            raise TypeError(f"a prompt message holds a str or one content block, not {type(content).__name__}")
        return {"role": self.role, "content": content}

    def __repr__(self) -> str:
        return f"Message({self.content!r}, role={self.role!r})"


_HELPERS = (_Binary, ResourceLink, EmbeddedResource)


def _is_block(item: Any) -> bool:
    return isinstance(item, _HELPERS) or (type(item) is dict and item.get("type") in CONTENT_TYPES)


def _block(item: Any) -> Dict[str, Any]:
    return item.to_block() if isinstance(item, _HELPERS) else item


# -- what an older client is sent (the rules are protocol.versions.FEATURES) ----------------

#: What a tool result or its blocks may hold that an older protocol version lacks.
_RESULT_FEATURES = ("structured_content", "content.audio", "content.resource_link", "content._meta")


def result_for_version(result: Dict[str, Any], version: str) -> Dict[str, Any]:
    """A ``CallToolResult`` as ``version`` knows it: ``structuredContent`` left out before
    2025-06-18, each block through :func:`block_for_version`. Returned as is for a client
    that knows everything (the usual case)."""
    if knows_all(version, _RESULT_FEATURES):
        return result
    if not knows(version, "structured_content"):
        result = {k: v for k, v in result.items() if k != "structuredContent"}
    result["content"] = [block_for_version(block, version) for block in result["content"]]
    return result


def block_for_version(block: Dict[str, Any], version: str) -> Dict[str, Any]:
    """Rewrite a content block a client's protocol version does not know.

    ``audio`` and ``resource_link`` become text blocks that say what was
    there, so an older client still sees something meaningful instead of a
    block it must reject; ``_meta`` and ``annotations.lastModified`` are
    left out (``content.*`` in ``versions.FEATURES`` says since when).
    """
    kind = block.get("type")
    if kind == "audio" and not knows(version, "content.audio"):
        return {"type": "text", "text": f"[audio ({block.get('mimeType')}) left out: the client's protocol "
                                        f"version {version} has no audio content]"}
    if kind == "resource_link" and not knows(version, "content.resource_link"):
        return {"type": "text", "text": f"{block.get('name')}: {block.get('uri')}"}
    if not knows(version, "content._meta") and ("_meta" in block or "lastModified" in block.get("annotations", {})):
        block = {k: v for k, v in block.items() if k != "_meta"}
        if "annotations" in block:
            block["annotations"] = {k: v for k, v in block["annotations"].items() if k != "lastModified"}
    return block


def to_json_text(value: Any) -> str:
    """The JSON text copy of structured content (readable: one line, spaces after separators)."""
    return json.dumps(value, ensure_ascii=False)


def tool_result(value: Any, output_schema: Optional[Dict[str, Any]] = None, wrap: bool = False) -> Dict[str, Any]:
    """Turn a tool's return value into a ``CallToolResult`` dict (see the module table).

    Raises:
        TypeError: the value cannot be sent (say, bytes of an unknown format).
    """
    if value is None:  # "-> Optional[X]" with nothing to say; a "-> None" tool
        return {"content": [], "isError": False}
    if type(value) is list and value and (wrap or output_schema is None):
        blocks = _as_blocks(value)
        if blocks is not None:  # "-> list" of blocks, or no annotation
            return {"content": blocks, "isError": False}
    if output_schema is None:
        if type(value) is str:
            return {"content": [{"type": "text", "text": value}], "isError": False}
        if isinstance(value, _HELPERS):
            return {"content": [value.to_block()], "isError": False}
        if isinstance(value, (bytes, bytearray)):
            mime = sniff_mime_type(value)
            if mime is None:
                raise TypeError("the tool returned bytes of an unknown format; "
                                "return minimcp.Image(data, mime_type=...) or Audio(...)")
            return {"content": [{"type": mime.split("/")[0], "mimeType": mime,
                                 "data": _b64(value).decode("ascii")}], "isError": False}
        if type(value) is list and any(isinstance(item, _HELPERS) for item in value):
            raise TypeError("the tool returned a list mixing Image/Audio/... with values that are not "
                            "content: return strings, content helpers or block dicts in it")
    value = jsonable(value)
    if output_schema is None and type(value) is str:  # an Enum member's value, say
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if output_schema is not None or type(value) is dict:
        # spec 2025-06-18 server/tools: structured content, plus its JSON as
        # text for clients that predate structuredContent.
        structured = {"result": value} if wrap else value
        return {"content": [{"type": "text", "text": to_json_text(value)}],
                "structuredContent": structured, "isError": False}
    return {"content": [{"type": "text", "text": to_json_text(value)}], "isError": False}


def _as_blocks(items: List[Any]) -> Optional[List[Dict[str, Any]]]:
    """A list of content blocks, strings and helpers as content (strings become text blocks),
    when it holds at least one block; None for plain data (``["a", "b"]`` is a JSON list)."""
    if not any(_is_block(item) for item in items):
        return None
    if not all(type(item) is str or _is_block(item) for item in items):
        return None
    return [{"type": "text", "text": item} if type(item) is str else _block(item) for item in items]


def error_result(message: str) -> Dict[str, Any]:
    """A ``CallToolResult`` reporting a failure to the model (``isError: true``)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
