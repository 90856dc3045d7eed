"""From a Python function to a tool's JSON Schemas, and arguments back to Python.

:class:`FunctionSchema` reads a function once, at registration:

- ``input_schema``: one property per parameter, from its type hint
  (``str int float bool``, ``list[...]``, ``dict[str, ...]``, ``Optional``,
  ``Literal``, ``Enum``, ``Annotated[T, "description"]``, dataclasses,
  TypedDicts, and the types JSON carries as strings: ``datetime``, ``date``,
  ``time``, ``UUID``, ``Decimal``, ``Path``, ``bytes``), its default, and its
  ``Args:`` line in the docstring;
- ``output_schema``: from the return annotation, when the result is data;
- ``description``: the docstring's text before its first section
  (:mod:`minimcp.server.docstrings`);

and then, per call, checks the arguments (:mod:`minimcp.server.validation`)
and converts them to what the hints ask for (``bind``: 3.0 -> 3, strings ->
Enum members, objects -> dataclasses, ISO 8601 text -> datetimes, base64 ->
bytes); a string that does not read as its type is refused, named.

Schemas are JSON Schema 2020-12, the default dialect of MCP (spec
2025-11-25 basic "JSON Schema usage"). The same function gives the same
schema on every Python from 3.9 (see :func:`type_hints`).

It reads ``__code__`` / ``__defaults__`` / type hints directly rather than
``inspect.signature``, which is slower to import and call.
"""

from __future__ import annotations

import enum
import sys
import types

from .docstrings import _lazy_re, parse_docstring  # noqa: F401 (_lazy_re: re-exported for resources.py)
from .validation import describe, fast_types, is_simple, jsonschema_validate, validate

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:
    import typing
    from typing import Any, Callable, Dict, List, Optional, Tuple


class _LazyTyping:
    """``typing``, imported at its first use. A function whose hints are all builtin scalars
    (``str``, ``int``, ``float``, ``bool``) gets its schemas without it, so a stdio server
    starts without importing it (a large share of its start-up: benchmarks/instructions.py counts it)."""

    def __getattr__(self, name: str) -> Any:
        import typing as module

        global typing, _UNION_TYPES
        typing = module
        _UNION_TYPES = (module.Union, types.UnionType) if hasattr(types, "UnionType") else (module.Union,)
        return getattr(module, name)


if not TYPE_CHECKING:  # (a type checker reads the real module's signatures)
    typing = _LazyTyping()  # the module itself from its first use (it replaces this stand-in)
_UNION_TYPES: Tuple[Any, ...] = ()  # (typing.Union, types.UnionType): set with typing, read after a get_origin()
_NoneType = type(None)
_SIMPLE_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", _NoneType: "null"}
_CO_VARKEYWORDS = 0x08


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "__dataclass_fields__")


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


_PLAIN_HINTS = {"str": str, "int": int, "float": float, "bool": bool, "None": _NoneType}


def _plain_hints(fn: Callable[..., Any]) -> Optional[Dict[str, Any]]:
    """``fn``'s hints, if each one is ``str``, ``int``, ``float``, ``bool`` or ``None`` (written
    as the class or, under ``from __future__ import annotations``, its name); else None."""
    annotations = getattr(fn, "__annotations__", None)
    if type(annotations) is not dict or hasattr(fn, "__wrapped__"):
        return None
    hints: Dict[str, Any] = {}
    for name, hint in annotations.items():
        if type(hint) is str:
            if hint in getattr(fn, "__globals__", {}):  # (a module's own "str": let typing resolve it)
                return None
            hint = _PLAIN_HINTS.get(hint)
        elif hint is None:
            hint = _NoneType
        if type(hint) is not type or hint not in _SIMPLE_TYPES:  # (a class first: Annotated[...] may not hash)
            return None
        hints[name] = hint
    return hints


def type_hints(fn: Callable[..., Any], include_extras: bool = True) -> Dict[str, Any]:
    """A function's type hints as written: string annotations resolved, ``Annotated``
    kept (unless ``include_extras`` is false), for prompts and resources too.

    Python 3.9 and 3.10's ``typing.get_type_hints`` turns ``x: int = None`` into
    ``Optional[int]`` (3.11 dropped that, as PEP 484 now asks); reading the annotations
    from a stand-in that has no defaults gives the same hints, so the same
    schemas, on every version.
    """
    plain = _plain_hints(fn)
    if plain is not None:  # the common case, read without importing typing (a cold-start cost)
        return plain
    if sys.version_info >= (3, 11):
        return typing.get_type_hints(fn, include_extras=include_extras)
    home = fn
    while hasattr(home, "__wrapped__"):  # functools.wraps: names resolve where the function was written
        home = home.__wrapped__
    written = types.SimpleNamespace(__annotations__=getattr(fn, "__annotations__", None) or {})
    return typing.get_type_hints(written, globalns=getattr(home, "__globals__", {}), include_extras=include_extras)


def field_hints(cls: type) -> Dict[str, Any]:
    """A dataclass's or TypedDict's field hints (``Annotated`` kept).

    Python 3.9 finds a class's module through ``sys.modules`` and fails with a
    KeyError when it is not there (a module run by ``importlib`` or ``exec``
    without registering it); 3.10 then resolves with empty globals, as here.
    """
    globalns: Optional[Dict[str, Any]] = None if sys.version_info >= (3, 10) or cls.__module__ in sys.modules else {}
    return typing.get_type_hints(cls, globalns=globalns, include_extras=True)


def is_context(hint: Any, context_types: Tuple[type, ...]) -> bool:
    """True when ``hint`` names a request context: ``Context``, or ``Optional[Context]``
    (``ctx: Optional[Context] = None`` is how a type checker likes it written)."""
    if type(hint) is not type and typing.get_origin(hint) in _UNION_TYPES:  # (a class is no union)
        options = [arg for arg in typing.get_args(hint) if arg is not _NoneType]
        hint = options[0] if len(options) == 1 else None
    return isinstance(hint, type) and bool(context_types) and issubclass(hint, context_types)


def _json_type(values: List[Any]) -> Optional[str]:
    """The JSON type all of ``values`` share, if any (for enum schemas)."""
    kinds = {_SIMPLE_TYPES.get(type(v)) for v in values}
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"integer", "number"}:
        return "number"
    return None


def type_schema(tp: Any) -> Dict[str, Any]:
    """Return the JSON Schema for a Python type hint.

    Raises:
        TypeError: the hint has no JSON Schema (say, a socket).
    """
    if tp in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[tp]}
    if tp is typing.Any:
        return {}
    if tp is None:
        return {"type": "null"}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        schema = dict(type_schema(args[0]))
        description = next((m for m in args[1:] if isinstance(m, str)), None)
        if description:
            schema["description"] = description
        return schema
    if origin in _UNION_TYPES:
        return {"anyOf": [type_schema(arg) for arg in args]}
    if origin is typing.Literal:
        values = list(args)
        kind = _json_type(values)
        return {"type": kind, "enum": values} if kind else {"enum": values}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = [member.value for member in tp]
        kind = _json_type(values)
        return {"type": kind, "enum": values} if kind else {"enum": values}
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset) or (
            origin is not None and origin.__name__ == "Sequence"):
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        elif origin is tuple and args:
            return {"type": "array", "prefixItems": [type_schema(a) for a in args],
                    "minItems": len(args), "maxItems": len(args)}
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if tp is dict or origin is dict or (origin is not None and origin.__name__ == "Mapping"):
        if args and args[1] is not typing.Any:
            return {"type": "object", "additionalProperties": type_schema(args[1])}
        return {"type": "object"}
    as_text = text_form(tp)
    if as_text is not None:
        return as_text[0]
    if _is_dataclass(tp):
        return _object_schema(tp, _dataclass_fields(tp))
    if _is_typeddict(tp):
        hints = field_hints(tp)
        required = tp.__required_keys__
        return _object_schema(tp, [(name, hint, name in required, None) for name, hint in hints.items()])
    raise TypeError(f"no JSON Schema for type {tp!r}; use str, int, float, bool, list, dict, Literal, Enum, "
                    f"datetime, date, time, UUID, Decimal, Path, bytes, a dataclass or a TypedDict")


# -- the types JSON carries as text ---------------------------------------------------------
#
# Each has the JSON Schema the official SDK (pydantic) gives it, so a model reads the same
# tools from both: "format" names the form (JSON Schema 2020-12 validation §7.3: date-time,
# date and time are RFC 3339's, uuid RFC 4122's; "path" is pydantic's own), and a Decimal is
# a number or a string of its digits (an anyOf, as pydantic's: a string keeps every digit, a
# number may not). bytes alone differ: pydantic declares UTF-8 text ("format":
# "binary"), which most bytes are not; here they are base64, as MCP sends every binary
# value, declared with 2020-12's own keyword (validation §8.3: contentEncoding). What a tool
# returns of these types goes out as jsonrpc.json_form() writes it, which reads back here.


# RFC 3339 §5.6's shapes (with ISO 8601's space for T, and a naive form, which minimcp reads
# too): checked before fromisoformat(), which takes many more on 3.11 and later (20240501,
# 2024-W18-3, a bare hour) than before, so that every Python takes the same texts.
_DATE_TIME_TEXT = _lazy_re(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
                           r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?")
_DATE_TEXT = _lazy_re(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME_TEXT = _lazy_re(r"[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?")


def _fromisoformat(cls: Any) -> Callable[[str], Any]:
    """``cls.fromisoformat``, taking all that RFC 3339 §5.6 allows and nothing else, the same on
    every Python: a lower-case ``t`` and ``z``, and on 3.9 and 3.10 a ``Z`` offset and a fraction
    of a second of any length (their fromisoformat() takes neither; 3.11 does)."""
    import datetime  # (loaded: cls is one of its classes)

    shape = (_DATE_TIME_TEXT if issubclass(cls, datetime.datetime) else
             _DATE_TEXT if issubclass(cls, datetime.date) else _TIME_TEXT)

    def parse(text: str) -> Any:
        if not shape.fullmatch(text):  # (a TypeError for a value that is no string)
            raise ValueError(text)
        text = text.upper()  # (ISO 8601's only letters are T, Z and W)
        if sys.version_info < (3, 11):
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            point = text.find(".")
            if point != -1:  # .5 or .1234567: fromisoformat() before 3.11 takes 3 or 6 digits only
                end = point + 1
                while end < len(text) and text[end].isdigit():
                    end += 1
                text = text[:point + 1] + text[point + 1:end].ljust(6, "0")[:6] + text[end:]
        return cls.fromisoformat(text)
    return parse


def _from_base64(text: str) -> bytes:
    import base64  # (late: only a bytes argument needs it)

    # RFC 4648 §4, or its URL-safe alphabet (§5), whose users often leave the padding out (§3.2:
    # "unless the specification referring to this document explicitly states otherwise"; JWTs
    # do, RFC 7515 §2): put back. validate=True: other characters are refused.
    text = text.replace("-", "+").replace("_", "/")
    if not text.endswith("="):
        text += "=" * (-len(text) % 4)
    return base64.b64decode(text, validate=True)


#: The largest exponent a Decimal argument may have, either way: Python's own limit on the digits
#: of an int read from text (sys.int_info.default_max_str_digits, 4300, CVE-2020-10735), for the
#: same reason: Decimal("1e1000000") is 10 bytes, and int() of it a minute of CPU.
_DECIMAL_EXPONENT_LIMIT = 4300


def _decimal(cls: Any) -> Callable[[Any], Any]:
    """A JSON number or a decimal string into ``cls``; a float through its shortest text
    (0.1 is Decimal("0.1"), not the binary fraction nearest to it)."""
    def parse(value: Any) -> Any:
        number = cls(repr(value) if type(value) is float else value)
        if not number.is_finite():  # "NaN", "Infinity": no JSON number is either (RFC 8259 §6)
            raise ValueError(value)
        if abs(number.adjusted()) > _DECIMAL_EXPONENT_LIMIT:  # "1e1000000": see the limit
            raise ValueError(value)
        return number
    return parse


#: (module, class, the JSON Schema, what to make of it, what an error says is expected).
#: A class is looked up in ``sys.modules``: a hint can only name it once its module is
#: loaded, so a server that uses none of them imports none of them.
#: (datetime comes before date: a datetime is a date.)
_TEXT_FORMS: Tuple[Tuple[str, str, Dict[str, Any], Callable[[Any], Callable[[Any], Any]], str], ...] = (
    ("datetime", "datetime", {"type": "string", "format": "date-time"}, _fromisoformat,
     'a date-time (ISO 8601, like "2024-05-01T09:30:00+02:00" or "2024-05-01T07:30:00Z")'),
    ("datetime", "date", {"type": "string", "format": "date"}, _fromisoformat,
     'a date (ISO 8601, like "2024-05-01")'),
    ("datetime", "time", {"type": "string", "format": "time"}, _fromisoformat,
     'a time (ISO 8601, like "09:30:00")'),
    ("uuid", "UUID", {"type": "string", "format": "uuid"}, lambda cls: cls,
     'a UUID (like "123e4567-e89b-12d3-a456-426614174000")'),
    ("decimal", "Decimal", {"anyOf": [{"type": "number"}, {"type": "string"}]}, _decimal,
     'a decimal number (a JSON number, or a string like "-12.50")'),
    ("pathlib", "PurePath", {"type": "string", "format": "path"}, lambda cls: cls, "a path"),
    ("builtins", "bytes", {"type": "string", "contentEncoding": "base64"}, lambda cls: _from_base64,
     'base64 text (RFC 4648, like "aGVsbG8=")'),
)


def text_form(tp: Any) -> Optional[Tuple[Dict[str, Any], Callable[[Any], Any], str]]:
    """For a type JSON carries as text (``datetime``, ``date``, ``time``, ``UUID``,
    ``Decimal``, a ``pathlib`` path, ``bytes``, or a subclass): its JSON Schema (a fresh
    copy: callers add to it), the function that makes one from its JSON form (raising
    ``ValueError``, ``TypeError`` or ``ArithmeticError`` for a value that is none), and
    what an error says is expected. None for any other type."""
    if not isinstance(tp, type) or tp in _SIMPLE_TYPES or issubclass(tp, enum.Enum):
        return None
    for module, name, schema, maker, expected in _TEXT_FORMS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and issubclass(tp, cls):
            return _copy(schema), maker(tp), expected
    return None


def _copy(schema: Any) -> Any:
    if type(schema) is dict:
        return {key: _copy(value) for key, value in schema.items()}
    if type(schema) is list:
        return [_copy(value) for value in schema]
    return schema


_MISSING = object()


def _dataclass_fields(cls: type) -> List[Tuple[str, Any, bool, Any]]:
    """(name, hint, required, default) for each field ``__init__`` takes."""
    import dataclasses  # already loaded: the caller made a dataclass

    hints = field_hints(cls)
    fields: List[Tuple[str, Any, bool, Any]] = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        default = _MISSING if field.default is dataclasses.MISSING else field.default
        fields.append((field.name, hints.get(field.name, typing.Any), required, default))
    return fields


def _object_schema(cls: type, fields: List[Tuple[str, Any, bool, Any]]) -> Dict[str, Any]:
    properties: Dict[str, Any] = {}
    required: List[str] = []
    for name, hint, is_required, default in fields:
        prop = type_schema(hint)
        if default is not None and default is not _MISSING and _is_json_value(default):
            prop = dict(prop, default=_plain(default))
        properties[name] = prop
        if is_required:
            required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if type(value) is tuple:
        return [_plain(v) for v in value]
    return value


def _is_json_value(value: Any) -> bool:
    value = _plain(value)
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))  # NaN and infinities are not JSON
    if value is None or type(value) in (str, int, bool):
        return True
    if type(value) in (list, tuple):
        return all(_is_json_value(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _is_json_value(v) for k, v in value.items())
    return False


# -- binding arguments --------------------------------------------------------------


class ArgumentError(ValueError):
    """An argument that does not read as its parameter's type: a ``datetime`` argument that
    is no ISO 8601 text, say. Its message names the argument (``argument 'when'``, or a place
    inside it: ``'stops[2].at'``), the form expected and the value given; a tool answers it
    as bad arguments (:meth:`FunctionSchema.bind`)."""


class _Unfit(ValueError):
    """What a converter raises for a value that does not read as its type; ``place`` is
    where below the argument, filled in on the way up through lists, tuples and objects."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(expected)
        self.expected = expected
        self.value = value
        self.place = ""


def _at(place: Any, convert: Callable[[Any], Any], value: Any) -> Any:
    """``convert(value)``, an unfit value's place prefixed with ``place`` (an index or a key)."""
    try:
        return convert(value)
    except _Unfit as exc:
        exc.place = (f"[{place}]" if type(place) is int else f".{place}") + exc.place
        raise


def _reading(make: Callable[[Any], Any], expected: str) -> Callable[[Any], Any]:
    """A converter that makes a text form's type, or says what was expected."""
    def convert(value: Any) -> Any:
        try:
            return make(value)
        except (ValueError, TypeError, ArithmeticError):  # (decimal.InvalidOperation is an ArithmeticError)
            raise _Unfit(expected, value) from None
    return convert


def _converter(tp: Any) -> Optional[Callable[[Any], Any]]:
    """A function turning JSON into the Python type ``tp`` asks for, or None if JSON already is.

    It raises :class:`_Unfit` for a value the validator let through that still does not read
    as its type (a string that is no date, say)."""
    if tp is int:
        return _int_from_float
    if tp is str or tp is float or tp is bool:  # (JSON already is: no typing needed)
        return None
    as_text = text_form(tp)
    if as_text is not None:
        return _reading(as_text[1], as_text[2])
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _converter(args[0])
    if origin is typing.Literal and all(type(a) is int for a in args):
        return _int_from_float
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if _is_dataclass(tp) or _is_typeddict(tp):
        hints = field_hints(tp)
        pairs = [(name, _converter(hint)) for name, hint in hints.items()]
        fields = [(name, convert) for name, convert in pairs if convert is not None]
        make = tp if _is_dataclass(tp) else dict
        return lambda v: make(**{**v, **{n: _at(n, c, v[n]) for n, c in fields if n in v}})
    if origin in _UNION_TYPES:
        options = [(a, _converter(a)) for a in args if a is not _NoneType]
        if len(options) == 1 and options[0][1] is not None:
            only = options[0][1]
            return lambda v: None if v is None else only(v)
        if all(convert is None or convert is _int_from_float for _, convert in options):
            return None  # (JSON already is what each option asks, but for a whole float: kept as sent)
        return _first_fit([(type_schema(a), convert) for a, convert in options])
    if origin is tuple and args and args[-1] is not Ellipsis:  # tuple[A, B]: one converter per place
        places = [_converter(a) for a in args]
        return lambda v: tuple(_at(i, c, x) if c else x for i, (c, x) in enumerate(zip(places, v)))
    if origin in (list, set, frozenset, tuple) and args:
        inner = _converter(args[0])
        make = origin
        if inner is None:
            return None if origin is list else make
        return lambda v: make(_at(i, inner, x) for i, x in enumerate(v))
    if origin in (set, frozenset, tuple) or tp in (set, frozenset, tuple):
        made: Callable[[Any], Any] = origin or tp
        return made
    if origin is dict and len(args) == 2:
        # A JSON key is text: a key of a type read from text (Dict[date, int]) is read as one too.
        of_key = _converter(args[0]) if text_form(args[0]) is not None else None
        of_value = _converter(args[1])
        if of_key is None:
            return (lambda v: {k: _at(k, of_value, x) for k, x in v.items()}) if of_value else None
        return lambda v: {_at(k, of_key, k): _at(k, of_value, x) if of_value else x for k, x in v.items()}
    return None


def _int_from_float(value: Any) -> Any:
    """An integer argument sent as a whole float (3.0: JSON has one kind of number) as an int."""
    return int(value) if type(value) is float else value


def _first_fit(options: List[Tuple[Dict[str, Any], Optional[Callable[[Any], Any]]]]) -> Callable[[Any], Any]:
    """The converter of a union (``Union[datetime, date]``): each option in the order written, the
    first whose JSON schema the value fits and that reads it (an option JSON already is takes
    the value as it is); a value none reads is unfit, for what each option expected."""
    def convert(value: Any) -> Any:
        if value is None:
            return None
        unfit: List[_Unfit] = []
        for schema, make in options:
            if validate(value, schema) is not None:
                continue
            if make is None:
                return value
            try:
                return make(value)
            except _Unfit as exc:
                unfit.append(exc)
            except (ValueError, TypeError):  # an Enum or a dataclass that does not take it
                continue
        if len(unfit) == 1:
            raise unfit[0]
        raise _Unfit(" or ".join(dict.fromkeys(exc.expected for exc in unfit)) or "a value of one of its types", value)
    return convert


class FunctionSchema:
    """Everything a tool needs from its function: schemas, docs, and argument binding.

    Example::

        def add(a: int, b: int = 1) -> int:
            '''Add two numbers.'''
        fs = FunctionSchema(add)
        fs.input_schema   # {'type': 'object', 'properties': {...}, 'required': ['a'], ...}
        fs.bind({"a": 2}) # {'a': 2}

    Args:
        fn: a function or bound method.
        context_types: parameter annotations that mark the request context
            (that parameter is left out of the schema and filled in by the server).
    """

    def __init__(self, fn: Callable[..., Any], context_types: Tuple[type, ...] = ()) -> None:
        func = getattr(fn, "__func__", fn)  # a bound method: skip self below
        code = getattr(func, "__code__", None)
        if code is None:
            raise TypeError(f"{fn!r} is not a function; register a def or a method")
        if code.co_posonlyargcount:
            raise TypeError(f"{func.__qualname__}: positional-only parameters cannot be tool arguments")
        try:
            hints = type_hints(func)
        except Exception as exc:
            advice = ""
            if sys.version_info < (3, 10) and "unsupported operand type(s) for |" in str(exc):
                advice = " (Python 3.9 has no X | Y for types: write Optional[X] or Union[X, Y])"
            raise TypeError(f"cannot resolve the type hints of {func.__qualname__}: {exc}{advice}") from exc
        names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        if func is not fn:
            names = names[1:]
        defaults = dict(zip(code.co_varnames[:code.co_argcount][::-1], (func.__defaults__ or ())[::-1]))
        defaults.update(func.__kwdefaults__ or {})
        description, param_docs = parse_docstring(func.__doc__)
        self.description: str = description
        self.context_param: Optional[str] = None
        self._converters: List[Tuple[str, Callable[[Any], Any]]] = []
        properties: Dict[str, Any] = {}
        required: List[str] = []
        for name in names:
            hint = hints[name] if name in hints else typing.Any
            if is_context(hint, context_types) or (name == "ctx" and hint is typing.Any):
                self.context_param = name
                continue
            try:
                prop = type_schema(hint)
            except TypeError as exc:
                raise TypeError(f"{func.__qualname__}, parameter {name!r}: {exc}") from None
            if name in param_docs and "description" not in prop:
                prop["description"] = param_docs[name]
            convert = _converter(hint)
            if name in defaults:
                if defaults[name] is None and not _accepts_null(prop):
                    # `tags: list[str] = None`: the default is null, so null is a valid value too
                    prop = _or_null(prop)
                    if convert is not None:
                        convert = _none_or(convert)
                if _is_json_value(defaults[name]):
                    prop["default"] = _plain(defaults[name])
            else:
                required.append(name)
            properties[name] = prop
            if convert is not None:
                self._converters.append((name, convert))
        schema: Dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if not code.co_flags & _CO_VARKEYWORDS:
            schema["additionalProperties"] = False
        self.input_schema: Dict[str, Any] = schema
        self.output_schema: Optional[Dict[str, Any]]  # (declared: a tuple assignment cannot annotate)
        self.wrap_output: bool
        self.output_schema, self.wrap_output = _output_schema(hints["return"] if "return" in hints else None)
        self._simple = is_simple(schema)
        self.converts: bool = bool(self._converters)  #: True when bind() changes some argument
        self._required = tuple(required)
        self._fast = fast_types(properties) if not code.co_flags & _CO_VARKEYWORDS else None

    def validate(self, arguments: Dict[str, Any]) -> Optional[str]:
        """Return a sentence saying what is wrong with ``arguments``, or ``None``."""
        fast = self._fast
        if fast is not None:  # the common case, checked in a few dict lookups (a per-call cost)
            for name in self._required:
                if name not in arguments:
                    break
            else:
                for name, value in arguments.items():
                    types = fast.get(name)
                    if types is None or type(value) not in types:
                        break
                else:
                    return None
            # something is off: the full validator finds it and says what
        if self._simple:
            problem = validate(arguments, self.input_schema, "arguments")
        else:
            problem = jsonschema_validate(arguments, self.input_schema, "arguments")
        if problem and problem.startswith("arguments."):
            # "arguments.city: expected ..." reads better as "argument 'city': expected ..."
            head, _, rest = problem[len("arguments."):].partition(": ")
            problem = f"argument {head!r}: {rest}"
        elif problem and problem.startswith("arguments: unexpected property"):
            problem = (problem.replace("arguments: unexpected property", "unknown argument")
                       + f" (this tool takes: {', '.join(self.input_schema['properties']) or 'no arguments'})")
        elif problem and problem.startswith("arguments: missing required property"):
            problem = problem.replace("arguments: missing required property", "missing required argument")
        return problem

    def bind(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        """Turn validated JSON arguments into keyword arguments for the function.

        Raises:
            ArgumentError: an argument does not read as its type (``datetime``, ``date``,
                ``time``, ``UUID``, ``Decimal`` and ``bytes`` are read from text here, after
                :meth:`validate`, which checks JSON types only); the message says which
                argument and what form was expected.
        """
        if not self._converters:
            return arguments
        kwargs = dict(arguments)
        for name, convert in self._converters:
            if name in kwargs:
                try:
                    kwargs[name] = convert(kwargs[name])
                except _Unfit as exc:
                    raise ArgumentError(f"argument {name + exc.place!r}: expected {exc.expected}, "
                                        f"got {describe(exc.value)}") from None
        return kwargs


def _accepts_null(schema: Dict[str, Any]) -> bool:
    """Does this (derived) schema accept ``null`` already?"""
    kinds = schema.get("type")
    if not schema or kinds == "null" or (type(kinds) is list and "null" in kinds):
        return True
    return any(_accepts_null(branch) for branch in schema.get("anyOf", ()))


def _or_null(schema: Dict[str, Any]) -> Dict[str, Any]:
    """``schema`` or null: ``{"anyOf": [schema, {"type": "null"}]}``, its description kept on top."""
    inner = {k: v for k, v in schema.items() if k != "description"}
    nullable: Dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if "description" in schema:
        nullable["description"] = schema["description"]
    return nullable


def _none_or(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _output_schema(hint: Any) -> Tuple[Optional[Dict[str, Any]], bool]:
    """The outputSchema for a return annotation, and whether results get wrapped as ``{"result": ...}``.

    ``str`` (and no annotation) means plain text: no outputSchema, so the text
    is not sent twice; ``bytes`` alone are an image or audio block (content.py),
    not data. Objects (dict, dataclass, TypedDict) are the structured
    content itself; anything else (lists, numbers, datetimes) is wrapped, because
    ``structuredContent`` must be an object (spec 2025-06-18 server/tools).
    """
    if hint is str or hint is None or hint is _NoneType or hint is bytes:  # (no annotation: None)
        return None, False
    if type(hint) is not type:  # (a class is neither: no typing needed for it)
        if typing.get_origin(hint) is typing.Annotated:
            hint = typing.get_args(hint)[0]
        if typing.get_origin(hint) in _UNION_TYPES:  # Optional[X]: X's content; None is no content
            options = [arg for arg in typing.get_args(hint) if arg is not _NoneType]
            if len(options) == 1 and len(typing.get_args(hint)) == 2:
                # No outputSchema, though: a declared one obliges every result to carry
                # conforming structuredContent (spec 2025-06-18 server/tools), which None cannot.
                # A dict or dataclass value is still sent as structuredContent.
                return None, False
        if hint in (typing.Any, str, None, _NoneType):
            return None, False
    try:
        schema = _without_offset_formats(type_schema(hint))
    except TypeError:
        return None, False  # content helpers and other objects: no schema
    if schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}, True


def _without_offset_formats(schema: Any) -> Any:
    """An output schema without ``"format": "date-time"`` and ``"time"``, at any depth.

    RFC 3339 §5.6, which those formats name (JSON Schema 2020-12 validation §7.3.1), requires
    an offset, and a naive datetime or time has none: its ``isoformat()`` text, what the
    result carries, would break the tool's own schema in a client that checks formats (the
    TypeScript SDK checks structuredContent with ajv). Refusing naive values instead would
    fail every tool that returns ``datetime.now()``; so the result is declared a string, which
    both are. An input schema keeps the formats: they ask the model for the full form (and a
    naive one is read too).
    """
    if type(schema) is not dict:
        return schema
    kept: Dict[str, Any] = {}
    for key, value in schema.items():
        if key == "format" and value in ("date-time", "time"):
            continue
        if key == "properties" and type(value) is dict:
            value = {name: _without_offset_formats(item) for name, item in value.items()}
        elif key in ("items", "additionalProperties"):
            value = _without_offset_formats(value)
        elif key in ("prefixItems", "anyOf") and type(value) is list:
            value = [_without_offset_formats(item) for item in value]
        kept[key] = value
    return kept
