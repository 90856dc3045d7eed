"""minimcp.server.schema and minimcp.server.content: from a Python function to a tool, and back.

Read top to bottom this file documents:

- the EXACT ``inputSchema`` each kind of parameter produces (type hints,
  defaults, docstrings, nested dataclasses / TypedDicts, ``ctx``, ``**kwargs``);
- the ``outputSchema`` each return annotation produces, and when results are
  wrapped as ``{"result": ...}``;
- the sentences ``validate()`` writes for bad arguments, and what ``bind()``
  converts (3.0 -> 3, strings -> Enum members, objects -> dataclasses);
- ``parse_docstring`` on Google and NumPy docstrings;
- the ``jsonschema`` fallback for keywords the small validator does not know;
- ``tool_result``: how a tool's return value becomes a ``CallToolResult``.

Schemas are JSON Schema 2020-12 (spec 2025-11-25 basic "JSON Schema usage").
"""

import base64
import dataclasses
import enum
import json
import struct
import sys
import zlib
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, TypedDict

import pytest

from minimcp.protocol import jsonrpc
from minimcp.server.content import Audio, Image, sniff_mime_type, tool_result
from minimcp.server.schema import (
    FunctionSchema,
    is_context,
    is_simple,
    jsonschema_validate,
    parse_docstring,
    type_hints,
    validate,
)

# -- types used by the tests ------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Size(enum.Enum):
    SMALL = 1
    LARGE = 2.5


class Mixed(enum.Enum):
    A = "a"
    ONE = 1


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0
    tags: list = dataclasses.field(default_factory=list)  # not required, no default in the schema
    hidden: int = dataclasses.field(default=3, init=False)  # not an __init__ argument: left out


@dataclasses.dataclass
class Pixel:
    at: Point
    color: Color = Color.RED


class Movie(TypedDict):
    title: str
    year: int


class Filter(TypedDict, total=False):
    genre: str


class Ctx:
    """Stands in for the server's RequestContext (passed as ``context_types``)."""


def pep604(make, id):
    """``make()`` builds an ``X | Y`` union: Python 3.10 and later only, skipped before."""
    if sys.version_info < (3, 10):
        return [pytest.param(None, None, id=id, marks=pytest.mark.skip("X | Y needs Python 3.10"))]
    hint, prop = make()
    return [pytest.param(hint, prop, id=id)]


def with_param(hint):
    """A one-parameter function ``tool(x: hint)``."""
    def tool(x):
        pass
    tool.__annotations__ = {"x": hint}
    return tool


def returning(hint):
    """A function annotated ``-> hint``."""
    def tool():
        pass
    tool.__annotations__ = {"return": hint}
    return tool


def input_schema(fn, **kwargs):
    return FunctionSchema(fn, **kwargs).input_schema


def one_param_schema(prop):
    """The whole input schema of ``tool(x)`` whose property is ``prop``."""
    return {"type": "object", "properties": {"x": prop}, "required": ["x"], "additionalProperties": False}


POINT_SCHEMA = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}, "tags": {"type": "array"}},
    "required": ["x"],
}
MOVIE_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
    "required": ["title", "year"],
}


# -- input schemas: one parameter per type hint --------------------------------------------


@pytest.mark.parametrize("hint, prop", [
    pytest.param(str, {"type": "string"}, id="str"),
    pytest.param(int, {"type": "integer"}, id="int"),
    pytest.param(float, {"type": "number"}, id="float"),
    pytest.param(bool, {"type": "boolean"}, id="bool"),
    pytest.param(list[str], {"type": "array", "items": {"type": "string"}}, id="list[str]"),
    pytest.param(List[int], {"type": "array", "items": {"type": "integer"}}, id="typing.List[int]"),
    pytest.param(list, {"type": "array"}, id="bare-list"),
    pytest.param(list[Optional[int]], {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
                 id="list[Optional[int]]"),
    pytest.param(dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, id="dict[str,int]"),
    pytest.param(Dict[str, list[str]],
                 {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                 id="typing.Dict[str,list[str]]"),
    pytest.param(dict[str, Any], {"type": "object"}, id="dict[str,Any]"),
    pytest.param(dict, {"type": "object"}, id="bare-dict"),
    pytest.param(Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}, id="Optional[int]"),
    *pep604(lambda: (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}), id="int|None"),
    *pep604(lambda: (str | int, {"anyOf": [{"type": "string"}, {"type": "integer"}]}), id="str|int"),
    pytest.param(Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}, id="Literal-str"),
    pytest.param(Literal[1, 2.5], {"type": "number", "enum": [1, 2.5]}, id="Literal-int-and-float"),
    pytest.param(Literal["a", 1], {"enum": ["a", 1]}, id="Literal-mixed"),
    pytest.param(Color, {"type": "string", "enum": ["red", "green"]}, id="Enum-str"),
    pytest.param(Size, {"type": "number", "enum": [1, 2.5]}, id="Enum-number"),
    pytest.param(Mixed, {"enum": ["a", 1]}, id="Enum-mixed"),
    pytest.param(Annotated[str, "The city name"], {"type": "string", "description": "The city name"},
                 id="Annotated-description"),
    pytest.param(Annotated[int, 42, "first string wins", "second"], {"type": "integer", "description": "first string wins"},
                 id="Annotated-other-metadata"),
    pytest.param(tuple[int, ...], {"type": "array", "items": {"type": "integer"}}, id="tuple[int,...]"),
    pytest.param(tuple[int, str],
                 {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
                 id="tuple[int,str]"),
    pytest.param(Tuple[int, str],
                 {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2},
                 id="typing.Tuple[int,str]"),
    pytest.param(tuple, {"type": "array"}, id="bare-tuple"),
    pytest.param(set[str], {"type": "array", "items": {"type": "string"}}, id="set[str]"),
    pytest.param(Any, {}, id="Any"),
    pytest.param(Point, POINT_SCHEMA, id="dataclass"),
    pytest.param(Movie, MOVIE_SCHEMA, id="TypedDict"),
    pytest.param(Filter, {"type": "object", "properties": {"genre": {"type": "string"}}}, id="TypedDict-total-False"),
    pytest.param(Pixel, {"type": "object",
                         "properties": {"at": POINT_SCHEMA,
                                        "color": {"type": "string", "enum": ["red", "green"], "default": "red"}},
                         "required": ["at"]}, id="nested-dataclass-enum-default"),
])
def test_input_schema_for_each_type_hint(hint, prop):
    assert input_schema(with_param(hint)) == one_param_schema(prop)


def test_classes_of_a_module_missing_from_sys_modules_have_schemas():
    # importlib's module_from_spec + exec_module, as a plugin loader does, leaves
    # sys.modules alone; Python 3.9's get_type_hints looked the module up there.
    code = ("import dataclasses, typing\n"
            "@dataclasses.dataclass\nclass Hit:\n    doc_id: str\n    score: int = 0\n"
            "class Movie(typing.TypedDict):\n    title: str\n")
    namespace = {"__name__": "not_in_sys_modules"}
    exec(code, namespace)
    hit, movie = namespace["Hit"], namespace["Movie"]
    assert input_schema(with_param(hit))["properties"]["x"] == {
        "type": "object", "properties": {"doc_id": {"type": "string"}, "score": {"type": "integer", "default": 0}},
        "required": ["doc_id"]}
    assert input_schema(with_param(movie))["properties"]["x"]["properties"] == {"title": {"type": "string"}}
    assert FunctionSchema(with_param(hit)).bind({"x": {"doc_id": "a"}}) == {"x": hit("a")}


def test_scalar_parameters_are_required_and_extra_arguments_refused():
    def tool(s: str, i: int, f: float, b: bool):
        pass
    assert input_schema(tool) == {
        "type": "object",
        "properties": {"s": {"type": "string"}, "i": {"type": "integer"},
                       "f": {"type": "number"}, "b": {"type": "boolean"}},
        "required": ["s", "i", "f", "b"],
        "additionalProperties": False,
    }


def test_unannotated_parameter_accepts_anything():
    def tool(a, b: Any):
        pass
    assert input_schema(tool) == {"type": "object", "properties": {"a": {}, "b": {}},
                                  "required": ["a", "b"], "additionalProperties": False}


def test_a_function_without_parameters():
    def tool():
        pass
    assert input_schema(tool) == {"type": "object", "properties": {}, "additionalProperties": False}


def test_defaults_make_parameters_optional_and_appear_in_the_schema():
    def tool(a: int, b: str = "x", c: Color = Color.GREEN, d: Optional[int] = None,
             e: list[int] = [1, 2], f: Any = object(), *, g: bool = True, h: float):
        pass
    assert input_schema(tool) == {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "string", "default": "x"},
            "c": {"type": "string", "enum": ["red", "green"], "default": "green"},  # an Enum default: its value
            "d": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "e": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
            "f": {},  # a default JSON cannot carry is left out, but still optional
            "g": {"type": "boolean", "default": True},
            "h": {"type": "number"},
        },
        "required": ["a", "h"],
        "additionalProperties": False,
    }


def test_a_none_default_keeps_the_hint_as_written_on_every_python():
    # Python 3.9 and 3.10's typing.get_type_hints would read ``x: int = None`` as
    # Optional[int]; the schema must not depend on the Python version.
    def tool(x: int = None, y: "List[str]" = None):
        pass
    # The same on every Python; the None default makes null a valid value (it is the default).
    assert input_schema(tool)["properties"] == {
        "x": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "y": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}], "default": None}}


def test_type_hints_as_written_for_prompts_and_resources_too():
    def read(doc_id: Annotated[int, "the id"] = None, ctx: Ctx = None) -> str:
        pass
    assert type_hints(read) == {"doc_id": Annotated[int, "the id"], "ctx": Ctx, "return": str}
    assert type_hints(read, include_extras=False) == {"doc_id": int, "ctx": Ctx, "return": str}
    assert is_context(Ctx, (Ctx,)) and is_context(Optional[Ctx], (Ctx,))
    assert not is_context(Optional[int], (Ctx,)) and not is_context(Ctx, ())


def test_a_non_finite_float_default_does_not_break_tools_list():
    def tool(x: float = float("inf"), y: float = float("nan")):
        pass
    jsonrpc.dumps(jsonrpc.Response(1, {"tools": [{"name": "t", "inputSchema": input_schema(tool)}]}))


def test_docstring_summary_and_google_args_become_descriptions():
    def tool(city: str, units: str = "c", days: int = 1):
        """Get the weather forecast.

        Uses the public API.

        Args:
            city: The city name,
                for example Kraków.
            units (str): "c" or "f".
            days: How many days.

        Returns:
            The forecast as text.
        """
    schema = FunctionSchema(tool)
    assert schema.description == "Get the weather forecast.\n\nUses the public API."
    assert schema.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name, for example Kraków."},
            "units": {"type": "string", "description": '"c" or "f".', "default": "c"},
            "days": {"type": "integer", "description": "How many days.", "default": 1},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_annotated_description_wins_over_the_docstring():
    def tool(a: Annotated[str, "from the annotation"]):
        """Summary.

        Args:
            a: from the docstring
        """
    assert input_schema(tool)["properties"]["a"] == {"type": "string", "description": "from the annotation"}


def test_numpy_parameters_without_types_become_descriptions():
    def tool(a: int, b: int):
        """Add two numbers.

        Parameters
        ----------
        a
            The first number,
            continued here.
        b
            The second number.
        """
    schema = FunctionSchema(tool)
    assert schema.description == "Add two numbers."
    assert schema.input_schema["properties"] == {
        "a": {"type": "integer", "description": "The first number, continued here."},
        "b": {"type": "integer", "description": "The second number."},
    }


def test_numpy_parameters_with_types_become_descriptions():
    def tool(a: int, b: int):
        """Add two numbers.

        Parameters
        ----------
        a : int
            The first number,
            continued here.
        b : int
            The second number.

        Returns
        -------
        int
            The sum.
        """
    assert input_schema(tool)["properties"] == {
        "a": {"type": "integer", "description": "The first number, continued here."},
        "b": {"type": "integer", "description": "The second number."},
    }


def _ctx_unannotated(ctx, x: int):
    pass


def _ctx_any(ctx: Any, x: int):
    pass


def _ctx_typed(context: Ctx, x: int):
    pass


def _ctx_is_data(ctx: int, x: int):
    pass


def _ctx_defaults_to_none(x: int, ctx: Ctx = None):  # Optional[Ctx] to get_type_hints on 3.9 and 3.10
    pass


def _ctx_optional(x: int, context: Optional[Ctx] = None):  # as a type checker likes it
    pass


@pytest.mark.parametrize("fn, context_param, properties", [
    pytest.param(_ctx_unannotated, "ctx", ["x"], id="ctx-unannotated"),
    pytest.param(_ctx_any, "ctx", ["x"], id="ctx-Any"),
    pytest.param(_ctx_typed, "context", ["x"], id="any-name-annotated-with-a-context-type"),
    pytest.param(_ctx_is_data, None, ["ctx", "x"], id="ctx-int-is-an-ordinary-argument"),
    pytest.param(_ctx_defaults_to_none, "ctx", ["x"], id="ctx-Ctx-defaults-to-None"),
    pytest.param(_ctx_optional, "context", ["x"], id="Optional-Ctx"),
])
def test_the_context_parameter_is_left_out_of_the_schema(fn, context_param, properties):
    schema = FunctionSchema(fn, context_types=(Ctx,))
    assert schema.context_param == context_param
    assert list(schema.input_schema["properties"]) == properties
    assert schema.input_schema["required"] == properties


def test_var_keyword_allows_additional_properties_and_var_positional_is_ignored():
    def tool(x: int, *args, **kwargs):
        pass
    assert input_schema(tool) == {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    assert FunctionSchema(tool).validate({"x": 1, "anything": [1]}) is None


def test_bound_methods_skip_self():
    class Tools:
        def add(self, a: int) -> int:
            return a

        @classmethod
        def make(cls, a: int):
            pass

    expected = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
                "additionalProperties": False}
    assert input_schema(Tools().add) == expected
    assert input_schema(Tools.make) == expected


@pytest.mark.parametrize("fn, message", [
    pytest.param(lambda a, /: None, "positional-only parameters cannot be tool arguments", id="positional-only"),
    pytest.param(with_param(object), "parameter 'x': no JSON Schema for type <class 'object'>", id="unsupported-hint"),
    pytest.param(len, "is not a function", id="builtin"),
])
def test_functions_that_cannot_be_tools_raise_type_error(fn, message):
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FunctionSchema(fn)


def test_an_unresolvable_hint_says_which_function_and_why():
    def tool(x: "NoSuchType"):  # noqa: F821
        pass
    with pytest.raises(TypeError, match="cannot resolve the type hints of .*tool: name 'NoSuchType' is not defined"):
        FunctionSchema(tool)


@pytest.mark.skipif(sys.version_info >= (3, 10), reason="X | Y evaluates from Python 3.10 on")
def test_a_string_x_or_y_hint_on_python_39_says_what_to_write_instead():
    def tool(x: "int | None" = None):
        pass
    with pytest.raises(TypeError, match=r"Python 3.9 has no X \| Y for types: write Optional\[X\] or Union\[X, Y\]"):
        FunctionSchema(tool)


# -- output schemas ------------------------------------------------------------------------


def no_annotation():
    pass


@pytest.mark.parametrize("fn, output_schema, wrap", [
    pytest.param(returning(str), None, False, id="str-plain-text"),
    pytest.param(no_annotation, None, False, id="no-annotation"),
    pytest.param(returning(None), None, False, id="None"),
    pytest.param(returning(Any), None, False, id="Any"),
    pytest.param(returning(bytes), None, False, id="bytes-content-helper"),
    pytest.param(returning(Image), None, False, id="Image-content-helper"),
    pytest.param(returning(dict), {"type": "object"}, False, id="dict"),
    pytest.param(returning(dict[str, int]), {"type": "object", "additionalProperties": {"type": "integer"}}, False,
                 id="dict[str,int]"),
    pytest.param(returning(Point), POINT_SCHEMA, False, id="dataclass-not-wrapped"),
    pytest.param(returning(Movie), MOVIE_SCHEMA, False, id="TypedDict-not-wrapped"),
    pytest.param(returning(list[int]),
                 {"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}},
                  "required": ["result"]}, True, id="list[int]-wrapped"),
    pytest.param(returning(int),
                 {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}, True,
                 id="int-wrapped"),
    pytest.param(returning(Annotated[int, "a count"]),
                 {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}, True,
                 id="Annotated-int-wrapped"),
    # Optional[X]: no outputSchema, which would oblige structuredContent that None cannot give
    pytest.param(returning(Optional[dict]), None, False, id="Optional[dict]-no-schema"),
    pytest.param(returning(Optional[List[int]]), None, False, id="Optional[list]-no-schema"),
    pytest.param(returning(Optional[str]), None, False, id="Optional[str]-as-str"),
])
def test_output_schema_and_wrapping_for_each_return_annotation(fn, output_schema, wrap):
    """spec 2025-06-18 server/tools: structuredContent is an object, so non-object results are wrapped."""
    schema = FunctionSchema(fn)
    assert schema.output_schema == output_schema
    assert schema.wrap_output is wrap


# -- validate() -----------------------------------------------------------------------------


def weather(city: str, days: int, color: Color, at: Point, hours: list[int] = [], limit: Optional[int] = None,
            pair: tuple[int, str] = (1, "a")):
    pass


WEATHER = FunctionSchema(weather)
OK = {"city": "Kraków", "days": 2, "color": "red", "at": {"x": 1}}


@pytest.mark.parametrize("arguments, message", [
    pytest.param({}, "missing required argument 'city'", id="missing"),
    pytest.param({"city": "a"}, "missing required argument 'days'", id="missing-second"),
    pytest.param(dict(OK, bogus=1),
                 "unknown argument 'bogus' (this tool takes: city, days, color, at, hours, limit, pair)", id="unknown"),
    pytest.param(dict(OK, city=5), "argument 'city': expected string, got integer 5", id="wrong-type"),
    pytest.param(dict(OK, days="2"), "argument 'days': expected integer, got string \"2\"", id="string-for-integer"),
    pytest.param(dict(OK, days=2.5), "argument 'days': expected integer, got number 2.5", id="fraction-for-integer"),
    pytest.param(dict(OK, days=True), "argument 'days': expected integer, got boolean true", id="bool-for-integer"),
    pytest.param(dict(OK, color="blue"), "argument 'color': string \"blue\" is not one of [\"red\", \"green\"]",
                 id="enum-mismatch"),
    pytest.param(dict(OK, at={"x": "1"}), "argument 'at.x': expected integer, got string \"1\"", id="nested-path"),
    pytest.param(dict(OK, at={}), "argument 'at': missing required property 'x'", id="nested-missing"),
    pytest.param(dict(OK, hours=[1, "2"]), "argument 'hours[1]': expected integer, got string \"2\"", id="array-item"),
    pytest.param(dict(OK, limit="x"), "argument 'limit': string \"x\" fits none of the allowed types", id="anyOf"),
    pytest.param(dict(OK, pair=[1]), "argument 'pair': wrong number of items (1)", id="tuple-length"),
    pytest.param(dict(OK, pair=[1, 2]), "argument 'pair[1]': expected string, got integer 2", id="tuple-item"),
    pytest.param(dict(OK, city="x" * 100),
                 None, id="long-string-ok"),
    pytest.param(dict(OK, city=["x" * 100]),
                 "argument 'city': expected string, got array [\"" + "x" * 55 + "...", id="long-value-shortened"),
])
def test_validate_explains_what_is_wrong(arguments, message):
    assert WEATHER.validate(arguments) == message


def test_validate_names_no_arguments_when_the_tool_takes_none():
    def ping():
        pass
    assert FunctionSchema(ping).validate({"a": 1}) == "unknown argument 'a' (this tool takes: no arguments)"


def test_validate_path_with_a_colon_in_a_key():
    def tool(d: dict[str, int]):
        pass
    assert FunctionSchema(tool).validate({"d": {"a:b": "x"}}) == \
        "argument 'd.a:b': expected integer, got string \"x\""


@pytest.mark.parametrize("value, schema, ok", [
    (3, {"type": "integer"}, True),
    (3.0, {"type": "integer"}, True),  # JSON Schema: a number with a zero fraction is an integer
    (3.5, {"type": "integer"}, False),
    (True, {"type": "integer"}, False),
    (True, {"type": "number"}, False),
    (1, {"type": "number"}, True),
    (None, {"type": "null"}, True),
    (1, {"enum": [1, 2]}, True),
    (1.0, {"enum": [1, 2]}, True),
    (True, {"enum": [1, 2]}, False),  # true is not 1 in JSON
    (1, {"type": "boolean", "enum": [True]}, False),
    ("a", {"type": ["string", "null"]}, True),
    ({"a": 1}, {"type": "object", "additionalProperties": False}, False),
    ([1, "a"], {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, True),
    (1, True, True),
    (1, False, False),
    (1, {}, True),
    ("tomorrow", {"type": "string", "format": "date-time"}, True),  # format is an annotation (2020-12 §7.2.1)
    ("***", {"type": "string", "contentEncoding": "base64"}, True),  # so is contentEncoding (§8.3)
])
def test_small_validator_agrees_with_jsonschema(value, schema, ok):
    """The small validator and jsonschema (2020-12) give the same verdict on generated keywords."""
    assert (validate(value, schema) is None) is ok
    assert (jsonschema_validate(value, schema) is None) is ok


# -- bind() ---------------------------------------------------------------------------------


def test_whole_floats_pass_as_integers_and_are_bound_to_int():
    def tool(n: int, m: Optional[int] = None, ns: list[int] = [], d: dict[str, int] = {},
             a: Annotated[int, "count"] = 0):
        pass
    schema = FunctionSchema(tool)
    arguments = {"n": 3.0, "m": 4.0, "ns": [1.0, 2], "d": {"k": 5.0}, "a": 6.0}
    assert schema.validate(arguments) is None
    bound = schema.bind(arguments)
    assert bound == {"n": 3, "m": 4, "ns": [1, 2], "d": {"k": 5}, "a": 6}
    assert [type(bound[k]) for k in ("n", "m", "a")] == [int, int, int]
    assert [type(v) for v in bound["ns"]] == [int, int]
    assert type(bound["d"]["k"]) is int
    assert schema.bind({"n": 1, "m": None}) == {"n": 1, "m": None}


def test_bind_converts_enums_and_dataclasses():
    def tool(color: Color, colors: list[Color], pixel: Pixel, size: Optional[Size] = None, note: str = ""):
        pass
    schema = FunctionSchema(tool)
    arguments = {"color": "green", "colors": ["red"], "pixel": {"at": {"x": 2.0, "tags": ["t"]}, "color": "green"},
                 "size": 2.5, "note": "n"}
    assert schema.validate(arguments) is None
    bound = schema.bind(arguments)
    assert bound == {"color": Color.GREEN, "colors": [Color.RED],
                     "pixel": Pixel(at=Point(x=2, tags=["t"]), color=Color.GREEN), "size": Size.LARGE, "note": "n"}
    assert type(bound["pixel"].at.x) is int
    assert arguments["color"] == "green"  # the caller's dict is not changed


def test_bind_leaves_plain_json_alone():
    def tool(a: str, b: list[str], c: dict):
        pass
    arguments = {"a": "x", "b": ["y"], "c": {"z": 1.0}}
    assert FunctionSchema(tool).bind(arguments) == {"a": "x", "b": ["y"], "c": {"z": 1.0}}


def test_bind_makes_tuples_and_sets():
    def tool(t: tuple[int, ...], s: set[str]):
        pass
    assert FunctionSchema(tool).bind({"t": [1.0, 2], "s": ["a", "a"]}) == {"t": (1, 2), "s": {"a"}}


def test_bind_converts_each_position_of_a_fixed_tuple():
    def tool(t: tuple[Color, int]):
        pass
    schema = FunctionSchema(tool)
    assert schema.validate({"t": ["red", 1.0]}) is None
    assert schema.bind({"t": ["red", 1.0]}) == {"t": (Color.RED, 1)}


def test_bind_converts_whole_floats_inside_a_typeddict():
    def tool(movie: Movie):
        pass
    bound = FunctionSchema(tool).bind({"movie": {"title": "t", "year": 2000.0}})
    assert type(bound["movie"]["year"]) is int


# -- parse_docstring ---------------------------------------------------------------------------


@pytest.mark.parametrize("doc, expected", [
    pytest.param(None, ("", {}), id="None"),
    pytest.param("", ("", {}), id="empty"),
    pytest.param("One line.", ("One line.", {}), id="one-line"),
    pytest.param("  Summary.\n\n  More text\n  here.\n  ", ("Summary.\n\nMore text\nhere.", {}), id="dedented"),
    pytest.param("""Summary.

        Args:
            x: first
            y:
                described on the next line
            *args: extra positionals
            **kwargs: extra keywords

        Raises:
            ValueError: not a parameter
        """,
                 ("Summary.", {"x": "first", "y": "described on the next line", "args": "extra positionals",
                               "kwargs": "extra keywords"}), id="google"),
    pytest.param("""Summary.

        Args:
            url: see http://x.y/z: the colon stays
            name (Optional[str]): a name.
        """,
                 ("Summary.", {"url": "see http://x.y/z: the colon stays", "name": "a name."}), id="google-types"),
    pytest.param("""Summary with a colon: inside.

        Example:
            Args: indented, so not a section
        Note:
            dropped
        """, ("Summary with a colon: inside.", {}), id="other-sections-dropped"),
    pytest.param("Args:\n    a: only args\n", ("", {"a": "only args"}), id="no-summary"),
    pytest.param("Summary.\n\nArgs :\n    a: spaced colon\nReturns\n    dropped\nArgs::\n    b: not an arg\n",
                 ("Summary.", {"a": "spaced colon"}), id="header-spellings"),
    pytest.param("\tTabbed.\n\n\tArgs:\n\t\tx: tab arg\n", ("Tabbed.", {"x": "tab arg"}), id="tabs"),
    pytest.param("""Summary.

        Parameters
        ----------
        a
            The first,
            continued.
        """, ("Summary.", {"a": "The first, continued."}), id="numpy-untyped"),
])
def test_parse_docstring(doc, expected):
    assert parse_docstring(doc) == expected


# -- the jsonschema fallback ----------------------------------------------------------------


@pytest.mark.parametrize("schema, simple", [
    ({"type": "integer"}, True),
    (WEATHER.input_schema, True),
    (True, True),
    ({"type": "integer", "minimum": 1}, False),
    ({"type": "object", "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}, False),
    ({"type": "string", "format": "date-time"}, True),  # format and contentEncoding: annotations only
    ({"type": "string", "contentEncoding": "base64"}, True),
    ({"type": "array", "items": {"type": "string", "maxLength": 3}}, False),
    ({"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/x"}]}, False),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema"}, False),
])
def test_is_simple_spots_keywords_the_small_validator_does_not_know(schema, simple):
    assert is_simple(schema) is simple


HAND_WRITTEN = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}, "n": {"type": "integer", "minimum": 1}},
    "required": ["name"],
}


@pytest.mark.parametrize("arguments, message", [
    ({"name": "abc", "n": 1}, None),
    ({"name": "ABC"}, "arguments.name: 'ABC' does not match '^[a-z]+$'"),
    ({"name": "abc", "n": 0}, "arguments.n: 0 is less than the minimum of 1"),
    ({}, "arguments: 'name' is a required property"),
])
def test_unknown_keywords_fall_back_to_jsonschema_with_readable_errors(arguments, message):
    assert jsonschema_validate(arguments, HAND_WRITTEN, "arguments") == message


# -- tool_result ----------------------------------------------------------------------------

PNG = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
       + struct.pack(">I", zlib.crc32(b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0))))
WAV = (b"RIFF" + struct.pack("<I", 36) + b"WAVE" + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 8000, 1, 8)
       + b"data" + struct.pack("<I", 0))


def b64(data):
    return base64.b64encode(data).decode("ascii")


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


@pytest.mark.parametrize("value, output_schema, wrap, expected", [
    pytest.param("Sunny in Kraków", None, False, text_result("Sunny in Kraków"), id="str"),
    pytest.param("", None, False, text_result(""), id="empty-str"),
    pytest.param(None, None, False, {"content": [], "isError": False}, id="None"),
    pytest.param({"temp": 22, "city": "Kraków"}, {"type": "object"}, False,
                 {"content": [{"type": "text", "text": '{"temp": 22, "city": "Kraków"}'}],
                  "structuredContent": {"temp": 22, "city": "Kraków"}, "isError": False}, id="dict"),
    pytest.param({"temp": 22}, None, False,
                 {"content": [{"type": "text", "text": '{"temp": 22}'}],
                  "structuredContent": {"temp": 22}, "isError": False}, id="dict-without-schema"),
    pytest.param(Point(1, 2), POINT_SCHEMA, False,
                 {"content": [{"type": "text", "text": '{"x": 1, "y": 2, "tags": [], "hidden": 3}'}],
                  "structuredContent": {"x": 1, "y": 2, "tags": [], "hidden": 3}, "isError": False}, id="dataclass"),
    pytest.param([1, 2], None, False, text_result("[1, 2]"), id="list-without-schema"),
    pytest.param([1, 2], {"type": "object"}, True,
                 {"content": [{"type": "text", "text": "[1, 2]"}], "structuredContent": {"result": [1, 2]},
                  "isError": False}, id="list-wrapped"),
    pytest.param(5, {"type": "object"}, True,
                 {"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}, "isError": False},
                 id="int-wrapped"),
    pytest.param(True, None, False, text_result("true"), id="bool"),
    pytest.param([], None, False, text_result("[]"), id="empty-list-is-data"),
    pytest.param(Color.RED, None, False, text_result("red"), id="enum"),
    pytest.param([{"type": "text", "text": "a"}, {"type": "image", "data": "eA==", "mimeType": "image/png"}],
                 None, False,
                 {"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "eA==", "mimeType": "image/png"}],
                  "isError": False}, id="content-blocks-pass-through"),
    pytest.param([{"type": "text", "text": "a"}, {"a": 1}], None, False,
                 text_result('[{"type": "text", "text": "a"}, {"a": 1}]'), id="not-all-blocks-is-data"),
    pytest.param(PNG, None, False,
                 {"content": [{"type": "image", "mimeType": "image/png", "data": b64(PNG)}], "isError": False},
                 id="png-bytes"),
    pytest.param(WAV, None, False,
                 {"content": [{"type": "audio", "mimeType": "audio/wav", "data": b64(WAV)}], "isError": False},
                 id="wav-bytes"),
    pytest.param(Image(PNG), None, False,
                 {"content": [{"type": "image", "data": b64(PNG), "mimeType": "image/png"}], "isError": False},
                 id="Image"),
    pytest.param(Audio(WAV), None, False,
                 {"content": [{"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}], "isError": False},
                 id="Audio"),
    pytest.param([Image(PNG), {"type": "text", "text": "a chart"}], None, False,
                 {"content": [{"type": "image", "data": b64(PNG), "mimeType": "image/png"},
                              {"type": "text", "text": "a chart"}], "isError": False}, id="helpers-in-a-list"),
])
def test_tool_result(value, output_schema, wrap, expected):
    """spec 2025-06-18 server/tools: structured results also go as JSON text (SHOULD)."""
    result = tool_result(value, output_schema, wrap)
    assert result == expected
    jsonrpc.dumps(jsonrpc.Response(1, result))  # and it can be sent


def test_structured_result_conforms_to_the_output_schema():
    """spec 2025-06-18 server/tools: with an outputSchema the server MUST return conforming structuredContent."""
    def tool() -> list[int]:
        pass
    schema = FunctionSchema(tool)
    result = tool_result([1, 2], schema.output_schema, schema.wrap_output)
    assert validate(result["structuredContent"], schema.output_schema) is None


@pytest.mark.parametrize("value, result", [
    ("a", {"content": [{"type": "text", "text": "a"}], "isError": False}),  # as -> str: plain text
    (None, {"content": [], "isError": False}),                               # None: no content
])
def test_optional_str_is_text_or_nothing(value, result):
    """docs/return-values.md: Optional[X] is X when there is a value, no content when it is None."""
    def tool() -> Optional[str]:
        pass
    schema = FunctionSchema(tool)
    assert tool_result(value, schema.output_schema, schema.wrap_output) == result


@pytest.mark.parametrize("value, output_schema, wrap, structured", [
    pytest.param(Pixel(Point(1)), {"type": "object"}, False,
                 {"at": {"x": 1, "y": 0, "tags": [], "hidden": 3}, "color": "red"}, id="enum-field"),
    pytest.param([Point(1)], {"type": "object"}, True,
                 {"result": [{"x": 1, "y": 0, "tags": [], "hidden": 3}]}, id="list-of-dataclasses"),
])
def test_nested_dataclasses_and_enums_become_json(value, output_schema, wrap, structured):
    assert tool_result(value, output_schema, wrap)["structuredContent"] == structured


def test_bytes_of_unknown_format_are_refused():
    with pytest.raises(TypeError, match="unknown format"):
        tool_result(b"hello, world")


@pytest.mark.parametrize("data, mime_type", [
    (PNG, "image/png"),
    (b"\xff\xd8\xff\xe0", "image/jpeg"),
    (b"GIF89a", "image/gif"),
    (b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
    (WAV, "audio/wav"),
    (b"ID3\x04", "audio/mpeg"),
    (b"OggS\0", "audio/ogg"),
    (b"fLaC\0", "audio/flac"),
    (b"hello", None),
])
def test_sniff_mime_type(data, mime_type):
    assert sniff_mime_type(data) == mime_type


def test_image_and_audio_helpers():
    assert Image(b"raw", mime_type="image/x-raw").to_block() == {"type": "image", "data": b64(b"raw"),
                                                                 "mimeType": "image/x-raw"}
    assert repr(Image(PNG)) == f"Image({len(PNG)} bytes, mime_type='image/png')"
    assert repr(Audio(WAV)) == f"Audio({len(WAV)} bytes, mime_type='audio/wav')"
    with pytest.raises(ValueError, match="cannot tell the MIME type of this image"):
        Image(b"hello")


def test_image_from_a_file_uses_its_extension(tmp_path):
    path = tmp_path / "chart.png"
    path.write_bytes(PNG)
    assert Image(path).to_block() == {"type": "image", "data": b64(PNG), "mimeType": "image/png"}
    assert json.loads(json.dumps(Image(str(path)).to_block()))["mimeType"] == "image/png"


def test_prompts_and_resources_read_hints_as_written_on_every_python():
    """On 3.9/3.10 get_type_hints turns ``x: T = None`` into Optional[T]: a prompt's
    ``context: Context = None`` became a prompt argument, a template's ``n: int = None`` a string."""
    import minimcp
    from minimcp import Context, Server

    server = Server("hints")

    @server.prompt()
    def ask(topic: str, context: Context = None) -> str:
        return f"Tell me about {topic}."

    @server.resource("items://{n}")
    def item(n: int = None) -> str:
        return repr(n)

    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        assert [a.get("name") for a in client.list_prompts()[0].raw["arguments"]] == ["topic"]
        assert client.read_resource("items://7").text == "7"  # converted to int, not the string '7'
