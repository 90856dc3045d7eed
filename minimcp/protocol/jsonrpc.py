"""JSON-RPC 2.0, sans-IO: the four message kinds, ``parse()`` and ``encode()``.

This module does no I/O and knows nothing of MCP methods. A transport hands
``parse()`` the bytes of one message (one stdio line, one HTTP body, one
WebSocket frame) and gets back a message object; ``encode()`` turns a message
object back into the bytes of one line (every transport sends what it makes,
so all deliver the same; ``dumps()`` gives the same as text). Objects ``json``
does not know (a ``datetime``, a ``UUID``, ``bytes`` ...) go out as
``json_form()`` writes them.

Bad input never raises: ``parse()`` returns a :class:`Malformed` that carries
the JSON-RPC error to send back (``-32700`` for text that is not JSON,
``-32600`` for JSON that is not a JSON-RPC message) and, when it could be
read, the offending request's id.

MCP is stricter than JSON-RPC in one place: request ids are strings or
integers, never ``null`` (spec basic/index "Requests"). ``True`` is rejected
too, because in JSON ``true`` is not ``1`` but in Python ``True == 1``.
"""

from __future__ import annotations

import json
import json.encoder
import sys

# Standard JSON-RPC error codes (JSON-RPC 2.0 §5.1), used by every MCP version.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

# MCP's own codes. -32002 and -32042 exist up to 2025-11-25; the -3202x
# codes belong to the stateless 2026-07-28 protocol (spec basic/index "Error codes").
#: The code a client gives a failed HTTP exchange that carried no JSON-RPC error of its own
#: (-32000 is the first of JSON-RPC's "server error" range; the official SDKs use it alike).
HTTP_ERROR = -32000
#: An HTTP session id the server does not know (404; used by the official SDKs alike).
SESSION_NOT_FOUND = -32001
RESOURCE_NOT_FOUND = -32002
#: minimcp's: the caller's token lacks a scope the tool, resource or prompt declares (the body of
#: the HTTP 403, and the whole answer on WebSocket, which has no status per call); no spec code exists.
INSUFFICIENT_SCOPE = -32003
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # (at run time: __getattr__ below)
    from typing import Any, Dict, List, Optional, Union

    RequestId = Union[int, str]


class Request:
    """A request: it has an ``id`` and expects exactly one response."""

    __slots__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.id: RequestId = id
        self.method: str = method
        self.params: Optional[Dict[str, Any]] = params

    def to_dict(self) -> Dict[str, Any]:
        """Return the wire form of this message."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            message["params"] = self.params
        return message

    def __repr__(self) -> str:
        return f"Request(id={self.id!r}, method={self.method!r}, params={self.params!r})"


class Notification:
    """A notification: no ``id``, and the receiver never answers it."""

    __slots__ = ("method", "params")

    def __init__(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.method: str = method
        self.params: Optional[Dict[str, Any]] = params

    def to_dict(self) -> Dict[str, Any]:
        """Return the wire form of this message."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            message["params"] = self.params
        return message

    def __repr__(self) -> str:
        return f"Notification(method={self.method!r}, params={self.params!r})"


class Response:
    """A successful answer to the request with the same ``id``."""

    __slots__ = ("id", "result")

    def __init__(self, id: RequestId, result: Any) -> None:
        self.id: RequestId = id
        self.result: Any = result  # any JSON value (a dict for every MCP method)

    def to_dict(self) -> Dict[str, Any]:
        """Return the wire form of this message."""
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}

    def __repr__(self) -> str:
        return f"Response(id={self.id!r}, result={self.result!r})"


class ErrorResponse:
    """A failed answer. ``id`` is ``None`` when the request's id could not be read."""

    __slots__ = ("id", "code", "message", "data")

    def __init__(self, id: Optional[RequestId], code: int, message: str, data: Any = None) -> None:
        self.id: Optional[RequestId] = id
        self.code: int = code
        self.message: str = message
        self.data: Any = data  # any JSON value

    def to_dict(self) -> Dict[str, Any]:
        """Return the wire form of this message."""
        error: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"jsonrpc": "2.0", "id": self.id, "error": error}

    def __repr__(self) -> str:
        return f"ErrorResponse(id={self.id!r}, code={self.code}, message={self.message!r})"


class Malformed:
    """Input that is not a valid JSON-RPC message, with the error to answer it with.

    ``id`` is the request id when one could be read (so the error reply can
    name it), else ``None``.
    """

    __slots__ = ("id", "code", "message")

    def __init__(self, code: int, message: str, id: Optional[RequestId] = None) -> None:
        self.code: int = code
        self.message: str = message
        self.id: Optional[RequestId] = id

    def error_response(self) -> ErrorResponse:
        """Return the error reply the receiver should send."""
        return ErrorResponse(self.id, self.code, self.message)

    def __repr__(self) -> str:
        return f"Malformed(code={self.code}, message={self.message!r}, id={self.id!r})"


if TYPE_CHECKING:
    Message = Union[Request, Notification, Response, ErrorResponse]
    Parsed = Union[Message, Malformed, List[Union[Message, Malformed]]]


def __getattr__(name: str) -> Any:
    """The type aliases ``RequestId``, ``Message`` and ``Parsed``, made when first asked for at run
    time: they need ``typing``, which a stdio server otherwise never imports (a large share of its
    start: benchmarks/instructions.py counts it)."""
    if name not in ("RequestId", "Message", "Parsed"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import List, Union

    message = Union[Request, Notification, Response, ErrorResponse]
    aliases = {"RequestId": Union[int, str], "Message": message,
               "Parsed": Union[message, Malformed, List[Union[message, Malformed]]]}
    globals().update(aliases)
    return aliases[name]


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


# json.loads accepts NaN and Infinity by default; JSON (RFC 8259) does not.
_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_loads = _decoder.decode
# (scan_once is made in JSONDecoder.__init__; the stubs lack it)
_scan = _decoder.scan_once  # type: ignore[attr-defined]


def parse(data: Union[bytes, str]) -> Parsed:
    """Parse one JSON-RPC message, or a batch (a JSON array) of them.

    Args:
        data: the UTF-8 bytes or text of exactly one JSON value.

    Returns:
        A :class:`Request`, :class:`Notification`, :class:`Response` or
        :class:`ErrorResponse`; a :class:`Malformed` for bad input; or, for a
        JSON array, a list of those. Whether a batch is *allowed* depends on
        the negotiated protocol version, which the caller knows and this
        module does not.
    """
    try:
        if not isinstance(data, str):
            data = data.decode("utf-8")  # MCP is UTF-8 (JSONDecoder.decode wants text)
        # A line that is one value then JSON whitespace is read by the scanner alone (it saves
        # decode()'s two Python frames and two regex matches a message); anything else goes
        # through decode() itself, for its errors.
        try:
            value, end = _scan(data, 0)
        except (StopIteration, ValueError):  # leading whitespace, or not JSON: decode() says what
            value = _loads(data)
        else:
            if end != len(data) and data[end:].strip(" \t\n\r"):  # (decode()'s whitespace, no more)
                value = _loads(data)  # trailing data: decode()'s "Extra data" error
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        return Malformed(PARSE_ERROR, f"Parse error: {exc}")
    except RecursionError:
        return Malformed(PARSE_ERROR, "Parse error: JSON nested too deeply")
    if type(value) is dict:
        return from_dict(value)
    if type(value) is list:
        if not value:
            return Malformed(INVALID_REQUEST, "Invalid Request: empty batch")
        return [from_dict(item) if type(item) is dict
                else Malformed(INVALID_REQUEST, "Invalid Request: a batch entry must be an object")
                for item in value]
    return Malformed(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")


def from_dict(obj: Dict[str, Any]) -> Union[Message, Malformed]:
    """Classify one decoded JSON object as a message, checking its shape."""
    raw_id = obj.get("id")
    msg_id = raw_id if type(raw_id) is int or isinstance(raw_id, str) else None  # (type(): a bool is no id)
    if obj.get("jsonrpc") != "2.0":
        return Malformed(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', msg_id)
    method = obj.get("method")
    if method is not None:
        if not isinstance(method, str):
            return Malformed(INVALID_REQUEST, 'Invalid Request: "method" must be a string', msg_id)
        params = obj.get("params")
        if params is not None and type(params) is not dict:
            # MCP params are always objects; JSON-RPC's positional arrays are not used.
            return Malformed(INVALID_REQUEST, 'Invalid Request: "params" must be an object', msg_id)
        if "id" not in obj:
            return Notification(method, params)
        if msg_id is None:
            return Malformed(INVALID_REQUEST,
                             'Invalid Request: "id" must be a string or an integer (not null)')
        return Request(msg_id, method, params)
    if "result" in obj:
        if "error" in obj or msg_id is None:
            return Malformed(INVALID_REQUEST, "Invalid Response: needs an id and exactly one of result/error", msg_id)
        return Response(msg_id, obj["result"])
    error = obj.get("error")
    if type(error) is dict:
        code = error.get("code")
        if type(code) is not int:
            return Malformed(INVALID_REQUEST, 'Invalid Response: "error.code" must be an integer', msg_id)
        if raw_id is not None and msg_id is None:
            return Malformed(INVALID_REQUEST, 'Invalid Response: bad "id"')
        return ErrorResponse(msg_id, code, str(error.get("message", "")), error.get("data"))
    return Malformed(INVALID_REQUEST, "Invalid Request: not a request, notification or response", msg_id)


#: (module, class) of the values sent as their ``str()``; looked up in ``sys.modules``, since a
#: value of a class can only exist once its module is loaded (so none is imported here).
_AS_STR = (("uuid", "UUID"), ("decimal", "Decimal"), ("pathlib", "PurePath"))


def json_form(value: Any) -> Any:
    """The JSON value of an object ``json`` cannot encode itself: the ``default=`` of
    :func:`encode`, and what a tool's structured result makes of the same objects.

    ``datetime``, ``date`` and ``time`` become ISO 8601 text (``isoformat()``: the JSON Schema
    formats ``date-time``, ``date`` and ``time``, RFC 3339 §5.6); ``UUID``, ``Decimal`` (its exact
    digits) and ``pathlib`` paths their ``str()``; ``bytes`` base64 text (RFC 4648 §4, as MCP
    sends every binary value); a dataclass instance an object of its fields; an ``Enum``
    member its value; a ``set`` a list. ``json`` calls it again for what it returns.

    Raises:
        TypeError: ``value`` has no JSON form (the message names its type and what has one).
        ValueError: a ``Decimal`` NaN or infinity (JSON numbers are finite, RFC 8259 §6).
    """
    if isinstance(value, (bytes, bytearray)):
        import base64  # (late: only binary values need it)

        return base64.b64encode(value).decode("ascii")
    datetime = sys.modules.get("datetime")
    if datetime is not None and isinstance(value, (datetime.date, datetime.time)):  # (a datetime is a date)
        return value.isoformat()
    for module, name in _AS_STR:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(value, cls):
            if module == "decimal" and not value.is_finite():
                raise ValueError(f"{value!r} has no JSON form: JSON numbers are finite")
            return str(value)
    kind = type(value)
    if hasattr(kind, "__dataclass_fields__"):  # (an instance: a dataclass itself is a type, of type type)
        return {name: getattr(value, name) for name in kind.__dataclass_fields__}
    if hasattr(kind, "__members__") and hasattr(value, "value"):  # an Enum member
        return value.value
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"Object of type {kind.__name__} is not JSON serializable: JSON carries str, int, float, "
                    f"bool, None, lists and dicts, and minimcp also sends dataclasses, Enums, sets, tuples, "
                    f"datetime, date, time, UUID, Decimal, paths and bytes; convert it to one of those")


def jsonable(value: Any) -> Any:
    """Turn a value into plain JSON values, at any depth: dataclasses into objects, Enum
    members into their values, tuples and sets into lists, and datetimes, UUIDs, Decimals,
    paths and bytes into the strings :func:`json_form` gives
    (the forms the JSON Schema of their type hint declares: :mod:`minimcp.server.schema`).
    A dict's keys become the text JSON gives them (``{uuid: 1}`` is keyed by the UUID's text,
    ``{1: "a"}`` by ``"1"``, as ``json`` writes it).

    Raises:
        TypeError: an object has no JSON form (a socket, say): it is never dropped unsaid.
        ValueError: a ``Decimal`` NaN or infinity.
    """
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if kind is dict or isinstance(value, dict):  # (TypedDict instances are dicts; so are OrderedDicts)
        return {k if type(k) is str else _key(k): jsonable(v) for k, v in value.items()}
    if kind in (list, tuple, set, frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, (list, tuple)):  # a NamedTuple, a list subclass: arrays, as json writes them
        return [jsonable(v) for v in value]
    if isinstance(value, (str, int, float)) and not hasattr(kind, "__members__"):  # a str subclass (no Enum)
        return value  # (json writes it as its base type)
    return jsonable(json_form(value))  # a dataclass, an Enum member, a datetime ...: their JSON form


def _key(key: Any) -> str:
    """A dict key that is not a ``str``, as the text JSON keys it by: an Enum member by its value's,
    a number, ``True`` or ``None`` as ``json`` writes them (``"1"``, ``"true"``, ``"null"``), a
    date, UUID, path ... by its JSON form.

    Raises:
        TypeError: the key has no JSON text (a tuple, say).
    """
    for _ in range(3):  # (an Enum member's value may be a date, whose form is text: bounded all the same)
        if isinstance(key, str) and not hasattr(type(key), "__members__"):
            return str.__str__(key)
        if key is None or key is True or key is False:
            return json.dumps(key)
        if isinstance(key, (int, float)) and not hasattr(type(key), "__members__"):
            return json.dumps(int(key) if isinstance(key, int) else float(key))
        if isinstance(key, (tuple, list, dict, set, frozenset)):
            break
        key = json_form(key)
    raise TypeError(f"a dict key of type {type(key).__name__} has no JSON text: JSON keys are strings; "
                    f"key the dict by str, int, float, bool, an Enum, a date, a UUID ...")


# One encoder, made once: compact separators (no spaces, and never a raw
# newline: spec basic/transports "messages MUST NOT contain embedded
# newlines"), non-ASCII kept as is, NaN/Infinity refused (they are not JSON).
# json_form() is called only for an object json cannot encode: no cost to any other message.
_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=json_form)
_encode_ascii = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
# The C encoder that _encoder.encode() makes for every message, made once (None without the
# accelerator; not in the stubs): two Python frames and an encoder object less a message (a
# per-call cost: benchmarks/instructions.py). It keeps no cycle markers, so it holds no state
# and threads share it; a cycle is then a RecursionError, which encode() turns into the
# ValueError the markers would give.
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_c_encode: Any = None if _c_make_encoder is None else _c_make_encoder(
    None, _encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, False)


def encode(message: Union[Message, List[Message], Dict[str, Any]]) -> bytes:
    """Serialise a message (or a batch, or an already-built dict) to one line of UTF-8 JSON, with
    no trailing newline.

    Objects ``json`` does not know go out in their JSON form (:func:`json_form`): a
    ``datetime`` argument as ISO 8601 text, ``bytes`` as base64; a dict keyed by them is keyed
    by that text (:func:`jsonable`).

    Raises:
        ValueError: the message holds a value JSON cannot carry (NaN, infinity), or is circular.
        TypeError: the message holds an object that has no JSON form.
    """
    if isinstance(message, list):
        obj: Any = [m.to_dict() for m in message]
    elif isinstance(message, dict):
        obj = message
    else:
        obj = message.to_dict()
    try:
        text = _encoder.encode(obj) if _c_encode is None else "".join(_c_encode(obj, 0))
    except RecursionError:  # (with no markers, a cycle nests until the interpreter's limit)
        raise ValueError("the message is circular, or nested deeper than the recursion limit") from None
    except TypeError as exc:  # json calls default= for values only: a dict keyed by dates, UUIDs, Enums ...
        if not str(exc).startswith("keys must be"):
            raise
        try:
            obj = jsonable(obj)  # (keyed by their JSON text, as a server's result is; a tuple key still fails)
        except RecursionError:
            raise ValueError("the message is circular, or nested deeper than the recursion limit") from None
        text = _encoder.encode(obj) if _c_encode is None else "".join(_c_encode(obj, 0))
    # U+2028/U+2029/U+0085 are line breaks to str.splitlines(); inside JSON
    # they can only be in strings, where the \u escape means the same.
    if "\u2028" in text or "\u2029" in text or "\x85" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a "\\ud800" escape in some input) cannot be
        # UTF-8; the ASCII form escapes it and is still valid JSON.
        return _encode_ascii(json.loads(text)).encode("ascii")


def dumps(message: Union[Message, List[Message], Dict[str, Any]]) -> str:
    """The text of :func:`encode`: one line of JSON (for a trace, a log, a check)."""
    return encode(message).decode("utf-8")
