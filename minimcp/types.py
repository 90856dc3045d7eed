"""Protocol versions, and the small result objects the client hands back.

Results keep the dict the server sent in ``.raw``, so nothing is lost:
unknown fields, ``_meta``, fields from a newer protocol version.
"""

from typing import Any, List, Optional

#: The newest protocol version with the initialize handshake; what the client offers.
PROTOCOL_VERSION = "2025-11-25"

#: Every handshake version minimcp speaks, oldest first (spec versioning pages).
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Tool:
    """One tool from ``tools/list``.

    Attributes:
        name, title, description: as the server sent them (``title`` and
            ``description`` may be ``None``).
        input_schema: the JSON Schema of the arguments.
        output_schema: the JSON Schema of ``structuredContent``, or ``None``.
        annotations: behaviour hints (``readOnlyHint`` ...), or ``{}``.
        raw: the whole dict from the wire.
    """

    __slots__ = ("name", "title", "description", "input_schema", "output_schema", "annotations", "raw")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.name: str = raw.get("name", "")
        self.title: Optional[str] = raw.get("title")
        self.description: Optional[str] = raw.get("description")
        self.input_schema: dict = raw.get("inputSchema") or {"type": "object"}
        self.output_schema: Optional[dict] = raw.get("outputSchema")
        self.annotations: dict = raw.get("annotations") or {}

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, description={self.description!r})"


class ToolResult:
    """The result of ``tools/call``.

    A tool that failed is data, not an exception: check ``is_error``.

    Attributes:
        content: the content blocks (dicts: text, image, audio, resource ...).
        structured: ``structuredContent``, or ``None``.
        is_error: True when the tool reported a failure.
        raw: the whole result dict from the wire.
    """

    __slots__ = ("content", "structured", "is_error", "raw")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.content: List[dict] = raw.get("content") or []
        self.structured: Any = raw.get("structuredContent")
        self.is_error: bool = bool(raw.get("isError", False))

    @property
    def text(self) -> str:
        """The text blocks of ``content``, joined by newlines."""
        return "\n".join(block.get("text", "") for block in self.content if block.get("type") == "text")

    def __repr__(self) -> str:
        text = self.text
        if len(text) > 60:
            text = text[:57] + "..."
        return f"ToolResult(is_error={self.is_error}, text={text!r}, blocks={len(self.content)})"
