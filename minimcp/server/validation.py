"""Checking arguments against a JSON Schema, with errors a person can read.

:func:`validate` is a small validator for the keywords
:mod:`minimcp.server.schema` generates (:func:`is_simple` says whether a schema
has only those). A hand-written schema with other keywords is checked by
:func:`jsonschema_validate`, which imports ``jsonschema`` only then: importing
it costs more than a whole stdio server's start (benchmarks/stdio.py times that start).

Both answer ``None`` when the value fits, else one sentence naming the place
and the problem: ``arguments.city: expected string, got integer 3``.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, List, Optional, Tuple

_KNOWN_KEYWORDS = {"type", "enum", "properties", "required", "additionalProperties", "items", "anyOf",
                   "description", "default", "title", "prefixItems", "minItems", "maxItems",
                   # annotations only (JSON Schema 2020-12 validation §7.2, §8.3): jsonschema ignores
                   # them too; schema.py's converters check the forms a function's types ask for
                   "format", "contentEncoding"}


def is_simple(schema: Any) -> bool:
    """True when :func:`validate` understands every keyword in ``schema``."""
    if type(schema) is not dict:
        return type(schema) is bool
    for key, value in schema.items():
        if key not in _KNOWN_KEYWORDS:
            return False
        if key == "properties" and not all(is_simple(s) for s in value.values()):
            return False
        if key in ("items", "additionalProperties") and not is_simple(value):
            return False
        if key in ("anyOf", "prefixItems") and not all(is_simple(s) for s in value):
            return False
    return True


def _type_ok(value: Any, kind: str) -> bool:
    t = type(value)
    if kind == "string":
        return t is str
    if kind == "integer":
        return t is int or (t is float and value.is_integer())
    if kind == "number":
        return t is int or t is float
    if kind == "boolean":
        return t is bool
    if kind == "object":
        return t is dict
    if kind == "array":
        return t is list
    if kind == "null":
        return value is None
    return True


_JSON_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", dict: "object",
               list: "array", type(None): "null"}


def describe(value: Any) -> str:
    """A JSON value for an error message: its JSON type and its text, cut at 60 characters
    (``string "tomorrow"``, ``integer 3``)."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_JSON_NAMES.get(type(value), type(value).__name__)} {text}"


def validate(value: Any, schema: Any, where: str = "value") -> Optional[str]:
    """Check ``value`` against a schema made of the keywords this module generates.

    Returns:
        ``None`` when it fits, else one sentence naming the place and the problem.
    """
    if schema is True or schema == {}:
        return None
    if schema is False:
        return f"{where} is not allowed"
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if type(kind) is list else (kind,)
        if not any(_type_ok(value, k) for k in kinds):
            return f"{where}: expected {' or '.join(kinds)}, got {describe(value)}"
    enum_values = schema.get("enum")
    if enum_values is not None and not any(value == v and type(value) is type(v) or
                                           (value == v and {type(value), type(v)} <= {int, float})
                                           for v in enum_values):
        return f"{where}: {describe(value)} is not one of {json.dumps(enum_values, ensure_ascii=False)}"
    any_of = schema.get("anyOf")
    if any_of is not None:
        problems = [validate(value, option, where) for option in any_of]
        if all(problems):
            return problems[0] if len(any_of) == 1 else f"{where}: {describe(value)} fits none of the allowed types"
    if type(value) is dict:
        return _validate_object(value, schema, where)
    if type(value) is list:
        return _validate_array(value, schema, where)
    return None


def _validate_object(value: Dict[str, Any], schema: Dict[str, Any], where: str) -> Optional[str]:
    properties = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            return f"{where}: missing required property {name!r}"
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name)
        if sub is None:
            if extra is False:
                return f"{where}: unexpected property {name!r}"
            sub = extra
        problem = validate(item, sub, f"{where}.{name}")
        if problem:
            return problem
    return None


def _validate_array(value: List[Any], schema: Dict[str, Any], where: str) -> Optional[str]:
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        return f"{where}: wrong number of items ({len(value)})"
    prefix = schema.get("prefixItems", ())
    items = schema.get("items", True)
    for i, item in enumerate(value):
        problem = validate(item, prefix[i] if i < len(prefix) else items, f"{where}[{i}]")
        if problem:
            return problem
    return None


_validators: Dict[int, Any] = {}


def jsonschema_validate(value: Any, schema: Dict[str, Any], where: str = "value") -> Optional[str]:
    """Validate with the ``jsonschema`` package (imported on first use), 2020-12 by default."""
    import jsonschema  # deliberately late: see the module docstring

    key = id(schema)
    validator = _validators.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = _validators[key] = cls(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    place = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where}{place}: {error.message}"


_FAST_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,)}
_IGNORED = {"type", "description", "default", "title"}


def fast_types(properties: Dict[str, Any]) -> Optional[Dict[str, Tuple[type, ...]]]:
    """name -> the Python types that certainly fit, when every property is a plain
    scalar; else None: arguments of those types need no validation beyond an isinstance()
    per argument (a whole float for an integer still passes: the slow path)."""
    fast: Dict[str, Tuple[type, ...]] = {}
    for name, prop in properties.items():
        if set(prop) - _IGNORED or prop.get("type") not in _FAST_TYPES:
            return None
        fast[name] = _FAST_TYPES[prop["type"]]
    return fast
