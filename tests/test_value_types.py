"""The types JSON carries as text: ``datetime``, ``date``, ``time``, ``UUID``, ``Decimal``,
``Path`` and ``bytes``, as tool arguments and as results, between a real client and server;
and a ``ctx`` parameter written keyword-only.

What each type's JSON Schema is (the official SDK's, JSON Schema 2020-12 formats; bytes as
base64 with ``contentEncoding``), that the function gets the Python value, that a value that
does not read as its type is an ``isError`` result naming the argument and the form expected
(spec 2025-11-25 server/tools "Error Handling": input validation errors are tool execution
errors), that a result holding these types is sent as their text with the same schema, and
that a client sends them in the same text (``jsonrpc.encode``).
"""

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import pathlib
import re
import textwrap
import uuid
from typing import Dict, List, NamedTuple, Optional, Tuple, TypedDict, Union

import pytest

import minimcp
from minimcp import Context, Server
from minimcp.protocol import jsonrpc
from minimcp.server.content import jsonable
from minimcp.server.schema import ArgumentError, FunctionSchema

from conftest import PY

UTC = dt.timezone.utc
WHEN = dt.datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
ID = uuid.UUID("123e4567-e89b-12d3-a456-426614174000")


# -- the schema each type yields --------------------------------------------------------------


@pytest.mark.parametrize("hint, schema", [
    pytest.param(dt.datetime, {"type": "string", "format": "date-time"}, id="datetime"),
    pytest.param(dt.date, {"type": "string", "format": "date"}, id="date"),
    pytest.param(dt.time, {"type": "string", "format": "time"}, id="time"),
    pytest.param(uuid.UUID, {"type": "string", "format": "uuid"}, id="UUID"),
    pytest.param(decimal.Decimal, {"anyOf": [{"type": "number"}, {"type": "string"}]}, id="Decimal"),
    pytest.param(pathlib.Path, {"type": "string", "format": "path"}, id="Path"),
    pytest.param(pathlib.PurePosixPath, {"type": "string", "format": "path"}, id="PurePosixPath"),
    pytest.param(bytes, {"type": "string", "contentEncoding": "base64"}, id="bytes"),
    pytest.param(List[dt.datetime], {"type": "array", "items": {"type": "string", "format": "date-time"}},
                 id="list[datetime]"),
    pytest.param(Optional[uuid.UUID], {"anyOf": [{"type": "string", "format": "uuid"}, {"type": "null"}]},
                 id="Optional[UUID]"),
    pytest.param(Dict[str, decimal.Decimal],
                 {"type": "object", "additionalProperties": {"anyOf": [{"type": "number"}, {"type": "string"}]}},
                 id="dict[str, Decimal]"),
])
def test_each_type_has_the_schema_of_its_json_form(hint, schema):
    def tool(x):
        pass
    tool.__annotations__ = {"x": hint}
    assert FunctionSchema(tool).input_schema["properties"]["x"] == schema


def test_a_subclass_of_datetime_is_a_date_time_not_a_date():
    class Stamp(dt.datetime):
        pass

    def tool(at: Stamp, on: dt.date):
        pass
    properties = FunctionSchema(tool).input_schema["properties"]
    assert properties == {"at": {"type": "string", "format": "date-time"}, "on": {"type": "string", "format": "date"}}
    assert type(FunctionSchema(tool).bind({"at": "2024-05-01T09:30:00Z", "on": "2024-05-01"})["at"]) is Stamp


def test_each_schema_is_a_fresh_copy():
    """A docstring line or a default is added to a property: it must not leak into the next tool's."""
    def first(x: decimal.Decimal):
        """Do it.

        Args:
            x: the price.
        """

    def second(x: decimal.Decimal):
        pass
    assert FunctionSchema(first).input_schema["properties"]["x"]["description"] == "the price."
    assert "description" not in FunctionSchema(second).input_schema["properties"]["x"]


# -- a real client and server --------------------------------------------------------------------


@dataclasses.dataclass
class Booking:
    id: uuid.UUID
    at: dt.datetime
    day: dt.date
    start: dt.time
    price: decimal.Decimal
    file: pathlib.Path
    blob: bytes


class Stop(TypedDict):
    at: dt.datetime
    place: str


@dataclasses.dataclass
class Trip:
    stops: List[Stop]


@dataclasses.dataclass
class Naive:
    at: dt.datetime
    start: dt.time
    day: dt.date


class Shade(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    ONE = 1


def make_server() -> Server:
    server = Server("value-types")

    @server.tool()
    def book(id: uuid.UUID, at: dt.datetime, day: dt.date, start: dt.time, price: decimal.Decimal,
             file: pathlib.Path, blob: bytes) -> Booking:
        """Echo a booking: the arguments as the function got them, sent back as a dataclass."""
        return Booking(id, at, day, start, price, file, blob)

    @server.tool()
    def types_of(at: dt.datetime, day: dt.date, start: dt.time, id: uuid.UUID, price: decimal.Decimal,
                 file: pathlib.Path, blob: bytes, later: Optional[List[dt.datetime]] = None) -> dict:
        """Say what the function got: each argument's type and repr."""
        got = dict(at=at, day=day, start=start, id=id, price=price, file=file, blob=blob, later=later)
        return {name: [type(value).__name__, repr(value)] for name, value in got.items()}

    @server.tool()
    def trip(trip: Trip) -> Trip:
        """Nested: a dataclass holding TypedDicts holding datetimes."""
        return trip

    @server.tool()
    def now() -> dt.datetime:
        return WHEN

    @server.tool()
    def new_id():
        return ID

    @server.tool()
    def mixed() -> dict:
        return {"when": WHEN, "ids": {ID}, "total": decimal.Decimal("10.10"), "raw": b"\x00\xff",
                "path": pathlib.PurePosixPath("/srv/a b.txt"), "day": WHEN.date(), "at": WHEN.time()}

    @server.tool()
    def unsendable() -> dict:
        return {"handle": object()}

    @server.tool()
    def not_a_number() -> dict:
        return {"total": decimal.Decimal("NaN")}

    @server.tool()
    def echo(value: str) -> str:
        return value

    @server.tool()
    def png() -> bytes:
        return b"\x89PNG\r\n\x1a\n" + b"\x00" * 16

    @server.tool()
    def keyed() -> dict:
        return {ID: 1, WHEN.date(): 2, Shade.RED: 3, 4: 4, True: 5}

    @server.tool()
    def per_day(counts: Dict[dt.date, int]) -> List[str]:
        """The type and count of each key the function got."""
        return [f"{type(day).__name__} {day.isoformat()}: {n}" for day, n in counts.items()]

    @server.tool()
    def naive() -> Naive:
        return Naive(dt.datetime(2024, 5, 1, 9, 30), dt.time(9, 30), dt.date(2024, 5, 1))

    return server


@pytest.fixture
def client():
    with minimcp.connect("memory", server=make_server(), protocol="2025-11-25") as connected:
        yield connected


@pytest.fixture
def tools(client):
    return {tool.name: tool for tool in client.list_tools()}


ARGUMENTS = {"id": ID, "at": WHEN, "day": WHEN.date(), "start": dt.time(9, 30), "price": decimal.Decimal("12.50"),
             "file": pathlib.PurePosixPath("/srv/data.csv"), "blob": b"\x00\xffhi"}
AS_JSON = {"id": "123e4567-e89b-12d3-a456-426614174000", "at": "2024-05-01T09:30:00+00:00", "day": "2024-05-01",
           "start": "09:30:00", "price": "12.50", "file": "/srv/data.csv", "blob": "AP9oaQ=="}


def test_the_client_sends_python_values_as_their_json_form(client):
    """``client.call_tool("t", {"when": datetime.now()})``: jsonrpc.encode() writes each value's text."""
    result = client.call_tool("book", ARGUMENTS)
    assert not result.is_error, result.text
    assert result.structured == AS_JSON


def test_the_function_gets_python_values(client):
    result = client.call_tool("types_of", dict(AS_JSON, later=["2024-05-01T07:30:00Z", "2024-05-01T09:30:00.5+02:00"]))
    assert not result.is_error, result.text
    got = result.structured
    assert got["at"] == ["datetime", repr(WHEN)]
    assert got["day"] == ["date", "datetime.date(2024, 5, 1)"]
    assert got["start"] == ["time", "datetime.time(9, 30)"]
    assert got["id"] == ["UUID", repr(ID)]
    assert got["price"] == ["Decimal", "Decimal('12.50')"]
    assert got["file"] == [type(pathlib.Path()).__name__, repr(pathlib.Path("/srv/data.csv"))]
    assert got["blob"] == ["bytes", repr(b"\x00\xffhi")]
    later = [dt.datetime(2024, 5, 1, 7, 30, tzinfo=UTC),
             dt.datetime(2024, 5, 1, 9, 30, 0, 500000, tzinfo=dt.timezone(dt.timedelta(hours=2)))]
    assert got["later"] == ["list", repr(later)]


@pytest.mark.parametrize("text, expected", [
    pytest.param("2024-05-01T09:30:00Z", WHEN, id="Z"),  # not read by fromisoformat() before 3.11
    pytest.param("2024-05-01t09:30:00z", WHEN, id="lower-case"),  # RFC 3339 §5.6 NOTE; 3.11 refuses it
    pytest.param("2024-05-01T09:30:00.1234567Z", WHEN.replace(microsecond=123456), id="long-fraction"),
    pytest.param("2024-05-01T09:30:00.5Z", WHEN.replace(microsecond=500000), id="short-fraction"),
    pytest.param("2024-05-01T11:30:00+02:00", WHEN, id="offset"),
    pytest.param("2024-05-01 09:30", dt.datetime(2024, 5, 1, 9, 30), id="naive-with-space"),
])
def test_every_rfc_3339_form_reads_on_every_python(text, expected):
    def tool(at: dt.datetime):
        pass
    assert FunctionSchema(tool).bind({"at": text}) == {"at": expected}


@pytest.mark.parametrize("price, expected", [
    (12, decimal.Decimal(12)), (0.1, decimal.Decimal("0.1")), ("-12.50", decimal.Decimal("-12.50")),
    ("1E+3", decimal.Decimal("1E+3")),
])
def test_a_decimal_is_a_number_or_its_digits(price, expected):
    def tool(price: decimal.Decimal):
        pass
    bound = FunctionSchema(tool).bind({"price": price})["price"]
    assert bound == expected and str(bound) == str(expected)


def test_bytes_read_base64_in_either_alphabet():
    def tool(blob: bytes):
        pass
    assert FunctionSchema(tool).bind({"blob": "+/8="})["blob"] == b"\xfb\xff"
    assert FunctionSchema(tool).bind({"blob": "-_8="})["blob"] == b"\xfb\xff"


@pytest.mark.parametrize("bad, message", [
    ({"at": "tomorrow"}, 'argument \'at\': expected a date-time (ISO 8601, like "2024-05-01T09:30:00+02:00" or '
                         '"2024-05-01T07:30:00Z"), got string "tomorrow"'),
    ({"day": "2024-13-01"}, 'argument \'day\': expected a date (ISO 8601, like "2024-05-01"), got string "2024-13-01"'),
    ({"start": "25:00"}, 'argument \'start\': expected a time (ISO 8601, like "09:30:00"), got string "25:00"'),
    ({"id": "nope"}, "argument 'id': expected a UUID (like \"123e4567-e89b-12d3-a456-426614174000\"), "
                     "got string \"nope\""),
    ({"price": "twelve"}, 'argument \'price\': expected a decimal number (a JSON number, or a string like '
                          '"-12.50"), got string "twelve"'),
    ({"price": "NaN"}, 'argument \'price\': expected a decimal number (a JSON number, or a string like '
                       '"-12.50"), got string "NaN"'),
    ({"price": True}, "argument 'price': boolean true fits none of the allowed types"),
    ({"blob": "no base64!"}, 'argument \'blob\': expected base64 text (RFC 4648, like "aGVsbG8="), '
                             'got string "no base64!"'),
    ({"later": ["2024-05-01T09:30:00Z", "soon"]}, "argument 'later[1]': expected a date-time"),
    ({"at": 1714555800}, "argument 'at': expected string, got integer 1714555800"),
])
def test_a_value_that_does_not_read_as_its_type_is_an_error_result_naming_it(client, bad, message):
    """spec 2025-11-25 server/tools "Error Handling": input validation errors are tool execution
    errors (isError), so the model can read which argument and what form, and try again."""
    result = client.call_tool("types_of", dict(AS_JSON, **bad))
    assert result.is_error
    assert result.text.startswith(f"Invalid arguments for tool 'types_of': {message}"), result.text


def test_a_place_inside_an_argument_is_named(client):
    stops = [{"at": "2024-05-01T09:30:00Z", "place": "A"}, {"at": "noon", "place": "B"}]
    result = client.call_tool("trip", {"trip": {"stops": stops}})
    assert result.is_error
    assert "argument 'trip.stops[1].at': expected a date-time" in result.text, result.text


def test_a_nested_result_is_sent_as_json_text_and_matches_its_schema(client, tools):
    stops = [{"at": "2024-05-01T09:30:00Z", "place": "A"}]
    result = client.call_tool("trip", {"trip": {"stops": stops}})
    assert not result.is_error, result.text
    assert result.structured == {"stops": [{"at": "2024-05-01T09:30:00+00:00", "place": "A"}]}
    assert tools["trip"].output_schema["properties"]["stops"]["items"]["properties"]["at"] == {"type": "string"}


def test_a_structured_result_declares_the_same_formats_but_those_that_need_an_offset(tools):
    """The outputSchema of a dataclass result holds each field's format, as the inputSchema does,
    but date-time and time: RFC 3339 requires an offset there, which a naive value has not."""
    output = tools["book"].output_schema["properties"]
    given = tools["book"].input_schema["properties"]
    assert output == dict(given, at={"type": "string"}, start={"type": "string"})
    assert (given["at"]["format"], given["start"]["format"]) == ("date-time", "time")
    assert output["blob"] == {"type": "string", "contentEncoding": "base64"}
    assert output["day"] == {"type": "string", "format": "date"} and output["id"]["format"] == "uuid"


def test_the_text_content_mirrors_the_structured_content(client):
    """spec 2025-06-18 server/tools: a tool returning structured content SHOULD also return it as text."""
    result = client.call_tool("mixed")
    assert not result.is_error, result.text
    expected = {"when": "2024-05-01T09:30:00+00:00", "ids": [str(ID)], "total": "10.10", "raw": "AP8=",
                "path": "/srv/a b.txt", "day": "2024-05-01", "at": "09:30:00"}
    assert result.structured == expected
    assert json.loads(result.text) == expected


def test_a_value_alone_is_wrapped_with_a_schema_or_sent_as_text_without_one(client, tools):
    assert tools["now"].output_schema == {"type": "object", "properties": {"result": {"type": "string"}},
                                          "required": ["result"]}
    result = client.call_tool("now")
    assert result.structured == {"result": "2024-05-01T09:30:00+00:00"}
    assert result.text == '"2024-05-01T09:30:00+00:00"'
    assert tools["new_id"].output_schema is None
    unannotated = client.call_tool("new_id")
    assert unannotated.text == str(ID) and unannotated.structured is None


def test_bytes_returned_alone_are_still_an_image(client, tools):
    assert tools["png"].output_schema is None
    assert client.call_tool("png").content[0]["type"] == "image"


def test_an_object_with_no_json_form_is_an_error_naming_its_type(client):
    """Nothing is lost silently: no repr(), no dropped field."""
    result = client.call_tool("unsendable")
    assert result.is_error
    assert "Object of type object is not JSON serializable" in result.text, result.text
    result = client.call_tool("not_a_number")
    assert result.is_error and "Decimal('NaN') has no JSON form" in result.text, result.text


def test_the_client_refuses_an_argument_with_no_json_form_and_stays_usable(client):
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable: .*datetime"):
        client.call_tool("echo", {"value": object()})
    assert client.call_tool("echo", {"value": "still here"}).text == "still here"


# -- the encoder --------------------------------------------------------------------------------


class Color:  # a plain class: no JSON form
    pass


def test_encode_writes_each_json_form():
    @dataclasses.dataclass
    class Point:
        x: int
        at: dt.date

    class Pair(NamedTuple):
        n: int
        on: dt.date

    params = {"when": WHEN, "id": ID, "price": decimal.Decimal("0.10"), "path": pathlib.PurePosixPath("/a"),
              "blob": b"\x00\xff", "array": bytearray(b"hi"), "point": Point(1, WHEN.date()), "tags": frozenset(["x"]),
              "pair": Pair(2, WHEN.date())}
    line = jsonrpc.encode(jsonrpc.Request(1, "tools/call", {"name": "t", "arguments": params}))
    assert json.loads(line)["params"]["arguments"] == {
        "when": "2024-05-01T09:30:00+00:00", "id": str(ID), "price": "0.10", "path": "/a", "blob": "AP8=",
        "array": "aGk=", "point": {"x": 1, "at": "2024-05-01"}, "tags": ["x"], "pair": [2, "2024-05-01"]}
    assert jsonable(params) == json.loads(line)["params"]["arguments"]  # the server's results: the same forms
    with pytest.raises(TypeError, match="Object of type Color is not JSON serializable"):
        jsonrpc.encode({"x": Color()})


def test_a_dict_keyed_by_dates_uuids_or_enums_goes_out_keyed_by_their_text(client):
    # json calls default= for values, never for keys: the encoder keys them as a server's result is.
    arguments = {"per_day": {WHEN.date(): 3, ID: [WHEN.date()], Shade.RED: 1, 4: True}}
    line = jsonrpc.encode(jsonrpc.Request(1, "tools/call", {"name": "t", "arguments": arguments}))
    assert json.loads(line)["params"]["arguments"] == {"per_day": {"2024-05-01": 3, str(ID): ["2024-05-01"],
                                                                   "red": 1, "4": True}}
    with pytest.raises(TypeError, match="a dict key of type tuple has no JSON text"):
        jsonrpc.encode({"x": {(1, 2): 3}})
    circular = {WHEN.date(): 1}
    circular["self"] = circular
    with pytest.raises(ValueError, match="circular"):
        jsonrpc.encode({"x": circular})
    result = client.call_tool("per_day", {"counts": {WHEN.date(): 3}})  # the server reads the date keys back
    assert not result.is_error, result.text
    assert result.structured == {"result": ["date 2024-05-01: 3"]}


def test_encode_is_unchanged_for_plain_json():
    message = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "é\u2028"}]}}
    assert jsonrpc.encode(message) == json.dumps(message, ensure_ascii=False, separators=(",", ":")) \
        .replace("\u2028", "\\u2028").encode()


# -- over a real pipe -------------------------------------------------------------------------


SERVER = textwrap.dedent('''
    import datetime, decimal, uuid
    from minimcp import Server

    server = Server("stdio-values")

    @server.tool()
    def shift(at: datetime.datetime, days: int, id: uuid.UUID, price: decimal.Decimal, blob: bytes) -> dict:
        return {"at": at + datetime.timedelta(days=days), "id": id, "price": price * 2, "blob": blob[::-1]}

    server.run()
''')


def test_over_stdio_the_same_values_go_both_ways(tmp_path):
    script = tmp_path / "values_server.py"
    script.write_text(SERVER, encoding="utf-8")
    with minimcp.connect([PY, str(script)]) as client:
        result = client.call_tool("shift", {"at": WHEN, "days": 2, "id": ID, "price": decimal.Decimal("1.25"),
                                            "blob": b"ab"})
        assert not result.is_error, result.text
        assert result.structured == {"at": "2024-05-03T09:30:00+00:00", "id": str(ID), "price": "2.50",
                                     "blob": base64.b64encode(b"ba").decode()}


# -- prompts and resource templates: strings by spec, read as the annotated type --------------


def test_prompt_and_template_arguments_read_as_their_annotated_type():
    server = Server("strings")

    @server.resource("events://{day}/{id}")
    def events(day: dt.date, id: uuid.UUID) -> str:
        return f"{day!r} {id!r}"

    @server.prompt()
    def plan(day: dt.date, budget: decimal.Decimal) -> str:
        return f"{day!r} {budget!r}"

    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        assert client.read_resource(f"events://2024-05-01/{ID}").text == f"datetime.date(2024, 5, 1) {ID!r}"
        with pytest.raises(minimcp.RPCError, match=r"day='soon' is not a date \(ISO 8601"):
            client.read_resource(f"events://soon/{ID}")
        text = client.get_prompt("plan", {"day": "2024-05-01", "budget": "9.90"}).messages[0]["content"]["text"]
        assert text == "datetime.date(2024, 5, 1) Decimal('9.90')"
        with pytest.raises(minimcp.RPCError, match="argument 'budget'='lots' is not a decimal number") as caught:
            client.get_prompt("plan", {"day": "2024-05-01", "budget": "lots"})
        assert caught.value.code == jsonrpc.INVALID_PARAMS


# -- ctx after defaulted parameters -------------------------------------------------------------


def test_a_keyword_only_ctx_follows_defaulted_parameters():
    """Python refuses a parameter without a default after one with a default, so ``ctx`` there is
    written keyword-only (``*, ctx: Context``) or ``= None``; each is the context, never an argument."""
    server = Server("ctx")

    @server.tool()
    def keyword_only(a: int, b: int = 1, *, ctx: Context) -> str:
        return f"{a} {b} {type(ctx).__name__} {ctx.request_id is not None}"

    @server.tool()
    def unannotated(a: int, b: int = 1, *, ctx) -> str:
        return f"{a} {b} {type(ctx).__name__}"

    @server.tool()
    def defaulted(a: int, b: int = 1, ctx: Optional[Context] = None) -> str:
        return f"{a} {b} {type(ctx).__name__}"

    @server.tool()
    def after_a_keyword(a: int, *, b: int = 2, ctx: Context, c: str = "c") -> str:
        return f"{a} {b} {c} {type(ctx).__name__}"

    @server.prompt()
    def ask(topic: str, style: str = "short", *, ctx: Context) -> str:
        return f"{topic} {style} {type(ctx).__name__}"

    @server.resource("items://{n}")
    def item(n: int, *, ctx: Context) -> str:
        return f"{n!r} {type(ctx).__name__}"

    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        for name in ("keyword_only", "unannotated", "defaulted"):
            assert tools[name].input_schema == {
                "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
                "required": ["a"], "additionalProperties": False}, name
        assert client.call_tool("keyword_only", {"a": 2}).text == "2 1 Context True"
        assert client.call_tool("unannotated", {"a": 2, "b": 3}).text == "2 3 Context"
        assert client.call_tool("defaulted", {"a": 2}).text == "2 1 Context"
        assert list(tools["after_a_keyword"].input_schema["properties"]) == ["a", "b", "c"]
        assert client.call_tool("after_a_keyword", {"a": 1, "c": "x"}).text == "1 2 x Context"
        refused = client.call_tool("keyword_only", {"a": 2, "ctx": "mine"})
        assert refused.is_error and "unknown argument 'ctx'" in refused.text
        assert client.get_prompt("ask", {"topic": "x"}).messages[0]["content"]["text"] == "x short Context"
        assert [a["name"] for a in client.list_prompts()[0].raw["arguments"]] == ["topic", "style"]
        assert client.read_resource("items://3").text == "3 Context"


def test_bind_raises_argument_error_with_the_place():
    def tool(pairs: Tuple[int, dt.date], by_name: Dict[str, uuid.UUID]):
        pass
    schema = FunctionSchema(tool)
    with pytest.raises(ArgumentError, match=r"argument 'pairs\[1\]': expected a date"):
        schema.bind({"pairs": [1, "x"], "by_name": {}})
    with pytest.raises(ArgumentError, match=r"argument 'by_name.bob': expected a UUID"):
        schema.bind({"pairs": [1, "2024-05-01"], "by_name": {"bob": "x"}})


def test_a_header_mirrors_the_text_the_body_carries_for_these_types():
    # spec 2026-07-28 Mcp-Param-* headers must equal the body value: the same JSON form.
    import datetime as dt

    from minimcp.protocol.headers import encode_header_value

    assert encode_header_value(dt.datetime(2024, 5, 1, 9, 30, tzinfo=dt.timezone.utc)) == "2024-05-01T09:30:00+00:00"
    assert encode_header_value(b"\x00\xff") == "AP8="


# -- what the review found (each fails on the code before its fix) ------------------------------------


@pytest.mark.parametrize("hint, texts", [
    pytest.param(dt.datetime, ["20240501T093000Z", "2024-05-01T09", "2024-05-01T09:30:00+0200", "2024-W18-3T09:30"],
                 id="datetime"),
    pytest.param(dt.date, ["20240501", "2024-W18-3", "2024-05-01T00:00:00"], id="date"),
    pytest.param(dt.time, ["0930", "T09:30:00", "09"], id="time"),
])
def test_texts_outside_rfc_3339_are_refused_on_every_python(hint, texts):
    """3.11's fromisoformat() takes ISO 8601's basic and week forms, and a bare hour; 3.9's does not:
    each Python refuses them alike, as text that is no RFC 3339 date-time, date or time."""
    def tool(x):
        pass
    tool.__annotations__ = {"x": hint}
    schema = FunctionSchema(tool)
    for text in texts:
        with pytest.raises(ArgumentError, match=f"argument 'x': expected a {hint.__name__.replace('datetime', 'date-time')}"):
            schema.bind({"x": text})


def test_a_union_of_types_read_from_text_reads_as_the_first_that_fits():
    def tool(when: Union[dt.datetime, dt.date], key: Union[uuid.UUID, int], either: Union[str, dt.date] = ""):
        pass
    schema = FunctionSchema(tool)
    assert schema.bind({"when": "2024-05-01", "key": str(ID)}) == {"when": WHEN.date(), "key": ID}
    assert schema.bind({"when": "2024-05-01T09:30:00Z", "key": 7, "either": "2024-05-01"}) == {
        "when": WHEN, "key": 7, "either": "2024-05-01"}  # (str first: the text, as written)
    with pytest.raises(ArgumentError, match=r"argument 'when': expected a date-time \(.*\) or a date \(.*\), got "
                                            r'string "soon"'):
        schema.bind({"when": "soon", "key": 1})


def test_dict_keys_of_a_type_read_from_text_are_read_and_a_result_keyed_by_them_is_sent(client):
    def tool(per_day: Dict[dt.date, int], by_id: Dict[uuid.UUID, List[dt.date]]):
        pass
    schema = FunctionSchema(tool)
    assert schema.bind({"per_day": {"2024-05-01": 3}, "by_id": {str(ID): ["2024-05-01"]}}) == {
        "per_day": {WHEN.date(): 3}, "by_id": {ID: [WHEN.date()]}}
    with pytest.raises(ArgumentError, match=r"argument 'per_day.may day': expected a date"):
        schema.bind({"per_day": {"may day": 3}, "by_id": {}})
    result = client.call_tool("keyed")
    assert not result.is_error, result.text
    assert result.structured == {str(ID): 1, "2024-05-01": 2, "red": 3, "4": 4, "true": 5}
    assert json.loads(result.text) == result.structured


def test_a_decimal_with_a_huge_exponent_is_refused_at_once(client):
    """Decimal("1e1000000") is 10 characters, and int() of it a minute of CPU (Python's own int
    parsing stops at 4300 digits for that reason): refused like any text that is no decimal."""
    def tool(price: decimal.Decimal):
        pass
    schema = FunctionSchema(tool)
    for text in ("1e1000000", "-1E+4301", "1e-4301", "0." + "0" * 5000 + "1"):
        with pytest.raises(ArgumentError, match="argument 'price': expected a decimal number"):
            schema.bind({"price": text})
    assert schema.bind({"price": "1e4300"}) == {"price": decimal.Decimal("1e4300")}
    result = client.call_tool("types_of", dict(AS_JSON, price="1e1000000"))
    assert result.is_error and "expected a decimal number" in result.text


def test_unpadded_base64_is_read():
    """RFC 4648 §3.2 lets a format leave the padding out, and the URL-safe alphabet's users mostly do."""
    def tool(blob: bytes):
        pass
    schema = FunctionSchema(tool)
    assert schema.bind({"blob": "aGVsbG8"})["blob"] == b"hello"
    assert schema.bind({"blob": "-_8"})["blob"] == b"\xfb\xff"
    with pytest.raises(ArgumentError, match="expected base64 text"):
        schema.bind({"blob": "aGVsb"})  # (no number of = makes 5 characters base64)


RFC_3339_WITH_OFFSET = {"date-time": r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)",
                        "time": r"\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)"}


def broken_formats(schema, value, where="result"):
    """Where ``value`` breaks a date-time or time format of ``schema`` (RFC 3339 §5.6, as a client that
    checks formats reads them: the TypeScript SDK validates structuredContent with ajv)."""
    if schema.get("format") in RFC_3339_WITH_OFFSET and not re.fullmatch(RFC_3339_WITH_OFFSET[schema["format"]], value):
        return [where]
    found = []
    for name, inner in (schema.get("properties") or {}).items():
        if name in value:
            found += broken_formats(inner, value[name], f"{where}.{name}")
    return found


def test_a_naive_datetime_result_does_not_break_its_own_output_schema(client, tools):
    """A naive datetime or time has no offset, which RFC 3339 requires: an output schema declares them
    strings, without the format (an input schema keeps it, asking the model for the full form)."""
    result = client.call_tool("naive")
    assert not result.is_error, result.text
    assert result.structured == {"at": "2024-05-01T09:30:00", "start": "09:30:00", "day": "2024-05-01"}
    assert broken_formats(tools["naive"].output_schema, result.structured) == []
    assert tools["naive"].output_schema["properties"]["day"] == {"type": "string", "format": "date"}
    assert tools["types_of"].input_schema["properties"]["at"] == {"type": "string", "format": "date-time"}


def test_an_enum_member_goes_in_a_header_as_the_body_carries_it():
    """spec 2026-07-28: an Mcp-Param-* header must equal the body's value. A (str, Enum) member's str()
    is "Shade.RED", and an IntEnum's on 3.9 and 3.10 "Level.ONE"; the body carries "red" and 1."""
    from minimcp.protocol.headers import encode_header_value

    for value in (Shade.RED, Level.ONE, 3.0, 1e16, True, 7, "plain", WHEN):
        assert encode_header_value(value) == str(json.loads(jsonrpc.encode({"v": value}))["v"]).replace(
            "True", "true"), value
    assert (encode_header_value(Shade.RED), encode_header_value(Level.ONE), encode_header_value(3.0)) == \
        ("red", "1", "3.0")


def test_a_client_sends_enum_arguments_marked_for_headers_and_the_server_takes_them():
    from minimcp.server.http.wsgiserver import BackgroundServer

    server = Server("headers")

    @server.tool(input_schema={"type": "object", "required": ["shade", "level"], "properties": {
        "shade": {"type": "string", "x-mcp-header": "Shade"}, "level": {"type": "integer", "x-mcp-header": "Level"}}})
    def paint(shade: str, level: int) -> str:
        return f"{shade} {level}"

    with BackgroundServer(server.wsgi_app()) as running, minimcp.connect(running.url + "/mcp") as client:
        assert client.protocol_version == "2026-07-28"
        result = client.call_tool("paint", {"shade": Shade.RED, "level": Level.ONE})
        assert (result.is_error, result.text) == (False, "red 1")
