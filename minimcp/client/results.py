"""The small result objects the client hands back.

Results keep the dict the server sent in ``.raw``, so nothing is lost:
unknown fields, ``_meta``, fields from a newer protocol version.
"""

from typing import Any, List, Optional


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


class _Raw:
    """A result object that keeps the wire dict in ``raw`` and shows its fields in ``repr``."""

    __slots__ = ("raw",)
    _shown: tuple = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{type(self).__name__}({fields})"


class Resource(_Raw):
    """One resource from ``resources/list`` (``raw`` has every field)."""

    __slots__ = ("uri", "name", "title", "description", "mime_type", "size")
    _shown = ("uri", "name")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.uri: str = raw.get("uri", "")
        self.name: str = raw.get("name", "")
        self.title: Optional[str] = raw.get("title")
        self.description: Optional[str] = raw.get("description")
        self.mime_type: Optional[str] = raw.get("mimeType")
        self.size: Optional[int] = raw.get("size")


class ResourceTemplate(_Raw):
    """One template from ``resources/templates/list`` (``raw`` has every field)."""

    __slots__ = ("uri_template", "name", "title", "description", "mime_type")
    _shown = ("uri_template", "name")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.uri_template: str = raw.get("uriTemplate", "")
        self.name: str = raw.get("name", "")
        self.title: Optional[str] = raw.get("title")
        self.description: Optional[str] = raw.get("description")
        self.mime_type: Optional[str] = raw.get("mimeType")


class ResourceResult(_Raw):
    """The result of ``resources/read``.

    Attributes:
        contents: the entries, each ``{"uri", "mimeType", "text" | "blob"}``.
        text: the text entries joined by newlines.
        blob: the first binary entry, decoded, or ``None``.
    """

    __slots__ = ("contents",)
    _shown = ("contents",)

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.contents: List[dict] = raw.get("contents") or []

    @property
    def text(self) -> str:
        """The text entries, joined by newlines."""
        return "\n".join(c["text"] for c in self.contents if "text" in c)

    @property
    def blob(self) -> Optional[bytes]:
        """The first binary entry, decoded from base64, or ``None``."""
        import base64

        return next((base64.b64decode(c["blob"]) for c in self.contents if "blob" in c), None)


class Prompt(_Raw):
    """One prompt from ``prompts/list``; ``arguments`` is a list of ``{name, description, required}``."""

    __slots__ = ("name", "title", "description", "arguments")
    _shown = ("name", "description")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.name: str = raw.get("name", "")
        self.title: Optional[str] = raw.get("title")
        self.description: Optional[str] = raw.get("description")
        self.arguments: List[dict] = raw.get("arguments") or []


class PromptResult(_Raw):
    """The result of ``prompts/get``: ``messages`` (``{role, content}`` dicts) and a ``description``."""

    __slots__ = ("description", "messages")
    _shown = ("description", "messages")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        self.description: Optional[str] = raw.get("description")
        self.messages: List[dict] = raw.get("messages") or []


class Completion(_Raw):
    """The result of ``completion/complete``: ``values`` and, when the server says, ``total`` / ``has_more``."""

    __slots__ = ("values", "total", "has_more")
    _shown = ("values", "has_more")

    def __init__(self, raw: dict) -> None:
        self.raw = raw
        completion = raw.get("completion") or {}
        self.values: List[str] = completion.get("values") or []
        self.total: Optional[int] = completion.get("total")
        self.has_more: bool = bool(completion.get("hasMore", False))
