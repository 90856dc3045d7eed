"""The small result objects the client hands back.

Results keep the dict the server sent in ``.raw``, so nothing is lost:
unknown fields, ``_meta``, fields from a newer protocol version. Each checks
the fields it reads as it is made: one of the wrong type raises
:class:`~minimcp.ProtocolError` naming it.
"""

from typing import Any, Dict, List, Optional, Tuple, Union

from ..errors import ProtocolError
from ..protocol.apps import VISIBILITIES, tool_view
from .wire import field, obj, objects

#: A JSON value as the server sent it (what ``json.loads`` gives: objects are dicts, arrays lists).
JSONValue = Union[Dict[str, Any], List[Any], str, int, float, bool, None]

#: One content block, as the server sent it: a dict with a ``"type"``: ``"text"`` (``text``),
#: ``"image"`` / ``"audio"`` (base64 ``data``, ``mimeType``), ``"resource_link"`` (``uri``, ``name``),
#: ``"resource"`` (an embedded ``resource``: ``uri`` and ``text`` or ``blob``).
ContentBlock = Dict[str, Any]


class Tool:
    """One tool from ``tools/list``.

    Attributes:
        name, title, description: as the server sent them (``title`` and
            ``description`` may be ``None``).
        input_schema: the JSON Schema of the arguments.
        output_schema: the JSON Schema of ``structuredContent``, or ``None``.
        annotations: behaviour hints (``readOnlyHint`` ...), or ``{}``.
        task_support: ``execution.taskSupport`` (2025-11-25 tasks): ``"required"`` (the
            server runs it only as a task: :meth:`~minimcp.Client.call_tool` makes the task and
            follows it), ``"optional"``, or ``"forbidden"`` (also when the server says nothing).
        ui_resource_uri: the ``ui://`` URI of the tool's view (MCP Apps: ``_meta.ui.resourceUri``,
            else the deprecated ``_meta["ui/resourceUri"]``; read it with
            :meth:`~minimcp.Client.read_app`), or ``None`` for a tool without one.
        visibility: who may call the tool (MCP Apps ``_meta.ui.visibility``): ``("model", "app")``
            (also when the server says nothing), ``("model",)`` or ``("app",)``: only its view
            calls it, and a host keeps it from its model (:func:`minimcp.client.apps.for_model`).
            ``_meta.ui`` of the wrong shape counts as absent: the tool is an ordinary tool.
        raw: the whole dict from the wire.
    """

    __slots__ = ("name", "title", "description", "input_schema", "output_schema", "annotations", "task_support",
                 "ui_resource_uri", "visibility", "raw")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "a tool in tools/list"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.name: str = field(raw, "name", str, what, "")
        self.title: Optional[str] = field(raw, "title", str, what)
        self.description: Optional[str] = field(raw, "description", str, what)
        self.input_schema: Dict[str, Any] = field(raw, "inputSchema", dict, what) or {"type": "object"}
        self.output_schema: Optional[Dict[str, Any]] = field(raw, "outputSchema", dict, what)
        self.annotations: Dict[str, Any] = field(raw, "annotations", dict, what, {})
        execution = raw.get("execution")
        self.task_support: str = "forbidden" if execution is None else field(
            obj(execution, f"{what}: execution"), "taskSupport", str, f"{what}: execution", "forbidden")
        meta = raw.get("_meta")  # (most tools have none: nothing more to do for them)
        view: Tuple[Optional[str], Tuple[str, ...]] = (None, VISIBILITIES) if meta is None else tool_view(meta)
        self.ui_resource_uri: Optional[str] = view[0]
        self.visibility: Tuple[str, ...] = view[1]

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, description={self.description!r})"


class ToolResult:
    """The result of ``tools/call``.

    A tool that failed is data, not an exception: check ``is_error``.

    Attributes:
        content: the content blocks (:data:`ContentBlock` dicts: text, image, audio, resource ...).
        structured: ``structuredContent``, or ``None``: a JSON object (a dict) in the handshake
            versions; any JSON value from 2026-07-28 on (:data:`JSONValue`). Under a type
            checker, narrow it first: ``if isinstance(result.structured, dict): ...``.
        is_error: True when the tool reported a failure.
        raw: the whole result dict from the wire.
    """

    __slots__ = ("content", "structured", "is_error", "raw")

    def __init__(self, raw: Dict[str, Any]) -> None:
        # (each check's usual answer is seen here; the helpers run only for the rest, to say what is wrong)
        what = "the server's answer to tools/call"
        self.raw: Dict[str, Any] = raw if type(raw) is dict else obj(raw, what)
        content = raw.get("content")
        if type(content) is not list:
            content = objects(raw, "content", what)  # [] when absent, else what is wrong
        for block in content:
            if type(block) is not dict:
                objects(raw, "content", what)  # says which item is no object
            if block.get("type") == "text" and type(block.get("text")) is not str:
                field(block, "text", str, f"{what}: a text block")
        self.content: List[ContentBlock] = content
        self.structured: JSONValue = raw.get("structuredContent")
        is_error = raw.get("isError")
        self.is_error: bool = is_error if type(is_error) is bool else field(raw, "isError", bool, what, False)

    @property
    def text(self) -> str:
        """The text blocks of ``content``, joined by newlines."""
        return "\n".join([block.get("text", "") for block in self.content if block.get("type") == "text"])

    def __repr__(self) -> str:
        text = self.text
        if len(text) > 60:
            text = text[:57] + "..."
        return f"ToolResult(is_error={self.is_error}, text={text!r}, blocks={len(self.content)})"


class _Raw:
    """A result object that keeps the wire dict in ``raw`` and shows its fields in ``repr``."""

    __slots__ = ("raw",)
    raw: Dict[str, Any]
    _shown: Tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{type(self).__name__}({fields})"


class Resource(_Raw):
    """One resource from ``resources/list`` (``raw`` has every field)."""

    __slots__ = ("uri", "name", "title", "description", "mime_type", "size")
    _shown = ("uri", "name")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "a resource in resources/list"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.uri: str = field(raw, "uri", str, what, "")
        self.name: str = field(raw, "name", str, what, "")
        self.title: Optional[str] = field(raw, "title", str, what)
        self.description: Optional[str] = field(raw, "description", str, what)
        self.mime_type: Optional[str] = field(raw, "mimeType", str, what)
        self.size: Optional[int] = field(raw, "size", int, what)


class ResourceTemplate(_Raw):
    """One template from ``resources/templates/list`` (``raw`` has every field)."""

    __slots__ = ("uri_template", "name", "title", "description", "mime_type")
    _shown = ("uri_template", "name")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "a template in resources/templates/list"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.uri_template: str = field(raw, "uriTemplate", str, what, "")
        self.name: str = field(raw, "name", str, what, "")
        self.title: Optional[str] = field(raw, "title", str, what)
        self.description: Optional[str] = field(raw, "description", str, what)
        self.mime_type: Optional[str] = field(raw, "mimeType", str, what)


class ResourceResult(_Raw):
    """The result of ``resources/read``.

    Attributes:
        contents: the entries, each ``{"uri", "mimeType", "text" | "blob"}``.
        text: the text entries joined by newlines.
        blob: the first binary entry, decoded, or ``None``.
    """

    __slots__ = ("contents",)
    _shown = ("contents",)

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "the server's answer to resources/read"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.contents: List[Dict[str, Any]] = objects(raw, "contents", what)
        for entry in self.contents:
            field(entry, "text", str, f"{what}: an entry")
            field(entry, "blob", str, f"{what}: an entry")

    @property
    def text(self) -> str:
        """The text entries, joined by newlines."""
        return "\n".join(c["text"] for c in self.contents if isinstance(c.get("text"), str))

    @property
    def blob(self) -> Optional[bytes]:
        """The first binary entry, decoded from base64, or ``None``.

        Raises:
            ProtocolError: the server's ``blob`` is not base64.
        """
        import base64
        import binascii

        data = next((c["blob"] for c in self.contents if isinstance(c.get("blob"), str)), None)
        try:
            return None if data is None else base64.b64decode(data, validate=True)
        except binascii.Error as exc:
            raise ProtocolError(f"the server's answer to resources/read: a blob is not base64 ({exc})") from None


class Prompt(_Raw):
    """One prompt from ``prompts/list``; ``arguments`` is a list of ``{name, description, required}``."""

    __slots__ = ("name", "title", "description", "arguments")
    _shown = ("name", "description")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "a prompt in prompts/list"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.name: str = field(raw, "name", str, what, "")
        self.title: Optional[str] = field(raw, "title", str, what)
        self.description: Optional[str] = field(raw, "description", str, what)
        self.arguments: List[Dict[str, Any]] = objects(raw, "arguments", what)


class PromptResult(_Raw):
    """The result of ``prompts/get``: ``messages`` (``{role, content}`` dicts) and a ``description``."""

    __slots__ = ("description", "messages")
    _shown = ("description", "messages")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "the server's answer to prompts/get"
        self.raw: Dict[str, Any] = obj(raw, what)
        self.description: Optional[str] = field(raw, "description", str, what)
        self.messages: List[Dict[str, Any]] = objects(raw, "messages", what)


class Completion(_Raw):
    """The result of ``completion/complete``: ``values`` and, when the server says, ``total`` / ``has_more``."""

    __slots__ = ("values", "total", "has_more")
    _shown = ("values", "has_more")

    def __init__(self, raw: Dict[str, Any]) -> None:
        what = "the server's answer to completion/complete"
        self.raw: Dict[str, Any] = obj(raw, what)
        completion = field(raw, "completion", dict, what, {})
        self.values: List[str] = field(completion, "values", list, f"{what}: completion", [])
        if not all(isinstance(value, str) for value in self.values):
            raise ProtocolError(f"{what}: completion.values must be strings, not {self.values!r:.120}")
        self.total: Optional[int] = field(completion, "total", int, f"{what}: completion")
        self.has_more: bool = field(completion, "hasMore", bool, f"{what}: completion", False)
