"""Content blocks: what a tool result carries, and how return values become one.

MCP content blocks are plain dicts on the wire (spec server/tools "Tool
Result"). Tool authors mostly return plain values and let
:func:`tool_result` build the blocks:

=====================  ====================================================
return value           tool result
=====================  ====================================================
``str``                one text block
``None``               no content
``dict``, dataclass    ``structuredContent`` plus its JSON as a text block
list, number, bool     with an output schema: ``structuredContent`` as
                       ``{"result": value}`` plus JSON text; else JSON text
``Image`` / ``Audio``  an image / audio block (``bytes`` of a known image
                       format become an image block)
a list of blocks       passed through (dicts with a ``type``, or helpers)
=====================  ====================================================

One way to return a result, chosen for one reason: a tool's Python return
value should read like what the model will see.
"""

import base64
import json
import os
from typing import Any, Optional, Union

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})

_EXTENSIONS = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp", ".svg": "image/svg+xml", ".wav": "audio/wav", ".mp3": "audio/mpeg",
               ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4"}


def sniff_mime_type(data: bytes) -> Optional[str]:
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
    """Image or audio data from bytes or a file; ``to_block()`` gives the wire dict."""

    block_type = ""

    def __init__(self, data: Union[bytes, str, "os.PathLike[str]"], mime_type: Optional[str] = None) -> None:
        if isinstance(data, (bytes, bytearray)):
            raw = bytes(data)
            guess = sniff_mime_type(raw)
        else:
            with open(data, "rb") as f:
                raw = f.read()
            guess = _EXTENSIONS.get(os.path.splitext(str(data))[1].lower()) or sniff_mime_type(raw)
        mime_type = mime_type or guess
        if not mime_type:
            raise ValueError(f"cannot tell the MIME type of this {self.block_type}; pass mime_type=")
        self.data = raw
        self.mime_type = mime_type

    def to_block(self) -> dict:
        """Return the content block as it goes on the wire (base64 data)."""
        return {"type": self.block_type, "data": base64.b64encode(self.data).decode("ascii"),
                "mimeType": self.mime_type}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.data)} bytes, mime_type={self.mime_type!r})"


class Image(_Binary):
    """An image for a tool result: ``return Image("chart.png")`` or ``Image(png_bytes)``."""

    block_type = "image"


class Audio(_Binary):
    """Audio for a tool result: ``return Audio("clip.wav")`` or ``Audio(data, "audio/wav")``."""

    block_type = "audio"


def _is_block(item: Any) -> bool:
    return isinstance(item, _Binary) or (type(item) is dict and item.get("type") in CONTENT_TYPES)


def _block(item: Any) -> dict:
    return item.to_block() if isinstance(item, _Binary) else item


def to_json_text(value: Any) -> str:
    """The JSON text copy of structured content (readable: one line, spaces after separators)."""
    return json.dumps(value, ensure_ascii=False)


def tool_result(value: Any, output_schema: Optional[dict] = None, wrap: bool = False) -> dict:
    """Turn a tool's return value into a ``CallToolResult`` dict (see the module table).

    Raises:
        TypeError: the value cannot be sent (say, bytes of an unknown format).
    """
    if type(value) is str:
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    if isinstance(value, _Binary):
        return {"content": [value.to_block()], "isError": False}
    if isinstance(value, (bytes, bytearray)):
        mime = sniff_mime_type(value)
        if mime is None:
            raise TypeError("the tool returned bytes of an unknown format; "
                            "return minimcp.Image(data, mime_type=...) or Audio(...)")
        return {"content": [{"type": mime.split("/")[0], "mimeType": mime,
                             "data": base64.b64encode(value).decode("ascii")}], "isError": False}
    if type(value) is list and value and all(_is_block(item) for item in value):
        return {"content": [_block(item) for item in value], "isError": False}
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        import dataclasses  # loaded already: the tool made a dataclass

        value = dataclasses.asdict(value)
    if hasattr(value, "value") and hasattr(type(value), "__members__"):  # an Enum member
        value = value.value
    structured = {"result": value} if wrap else value
    if output_schema is not None or type(value) is dict:
        return {"content": [{"type": "text", "text": to_json_text(value)}],
                "structuredContent": structured, "isError": False}
    text = value if type(value) is str else to_json_text(value)
    return {"content": [{"type": "text", "text": text}], "isError": False}


def error_result(message: str) -> dict:
    """A ``CallToolResult`` reporting a failure to the model (``isError: true``)."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
