"""minimcp.protocol.jsonrpc: the four message kinds, ``parse()``, ``dumps()`` and ``encode()``.

Read top to bottom this file documents the wire behaviour:

- every message kind survives ``dumps()`` -> ``parse()`` from text and from bytes;
- request ids are strings or integers, never null, never booleans or floats;
- bad input never raises: ``parse()`` returns ``Malformed`` with ``-32700``
  (not JSON) or ``-32600`` (JSON, but not a JSON-RPC message), keeping the
  request id when it could be read so the error reply can name it;
- a JSON array is a batch (a list); an empty one is itself invalid;
- ``dumps()`` writes one compact line, keeps non-ASCII as is, refuses NaN;
- ``encode()`` gives UTF-8 bytes and survives lone surrogates.

The spec quoted in docstrings is the base protocol's "JSON-RPC messages" and the transports page.
"""

import json

import pytest

from minimcp.protocol import jsonrpc
from minimcp.protocol.jsonrpc import ErrorResponse, Malformed, Notification, Request, Response, dumps, encode, parse


def wire(message):
    """What a message means on the wire: its class and its dict form."""
    return type(message), message.to_dict()


# -- round trips -------------------------------------------------------------------

MESSAGES = [
    pytest.param(Request(1, "tools/list"), id="request-int-id-no-params"),
    pytest.param(Request("abc-1", "tools/call", {"name": "add", "arguments": {"a": 1}}), id="request-str-id"),
    pytest.param(Request(0, "ping", {}), id="request-zero-id-empty-params"),
    pytest.param(Notification("notifications/initialized"), id="notification-no-params"),
    pytest.param(Notification("notifications/progress", {"progressToken": 7, "progress": 0.5}),
                 id="notification-params"),
    pytest.param(Response(1, {"tools": []}), id="response-object"),
    pytest.param(Response("x", None), id="response-null-result"),
    pytest.param(Response(2, {"text": "Kraków ☀"}), id="response-non-ascii"),
    pytest.param(ErrorResponse(3, -32601, "Method not found"), id="error"),
    pytest.param(ErrorResponse("r", -32602, "Invalid params", {"field": "name"}), id="error-with-data"),
    pytest.param(ErrorResponse(None, -32700, "Parse error"), id="error-null-id"),
]


@pytest.mark.parametrize("message", MESSAGES)
def test_dumps_then_parse_text_round_trips(message):
    text = dumps(message)
    assert isinstance(text, str)
    assert wire(parse(text)) == wire(message)


@pytest.mark.parametrize("message", MESSAGES)
def test_encode_then_parse_bytes_round_trips(message):
    data = encode(message)
    assert isinstance(data, bytes)
    assert wire(parse(data)) == wire(message)


@pytest.mark.parametrize("text, expected", [
    ('{"jsonrpc":"2.0","id":1,"method":"ping"}', Request(1, "ping")),
    ('{"jsonrpc":"2.0","id":"a","method":"m","params":{"k":[1,2]}}', Request("a", "m", {"k": [1, 2]})),
    ('{"jsonrpc":"2.0","id":1,"method":"m","params":null}', Request(1, "m")),
    ('{"jsonrpc":"2.0","method":"n"}', Notification("n")),
    ('{"jsonrpc":"2.0","method":"n","params":{"a":1}}', Notification("n", {"a": 1})),
    ('{"jsonrpc":"2.0","id":5,"result":{}}', Response(5, {})),
    ('{"jsonrpc":"2.0","id":5,"result":null}', Response(5, None)),
    ('{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":[1]}}',
     ErrorResponse(5, -32601, "nope", [1])),
    # Whitespace and key order do not matter.
    (' { "method" : "n" , "jsonrpc" : "2.0" } ', Notification("n")),
])
def test_parse_classifies_each_message_kind(text, expected):
    assert wire(parse(text)) == wire(expected)
    assert wire(parse(text.encode("utf-8"))) == wire(expected)


# -- ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("request_id", [0, 1, -5, 2 ** 70, "", "1", "abc", "żółw"])
def test_request_ids_may_be_any_string_or_integer(request_id):
    """spec 2025-11-25 basic/index: a request id MUST be a string or an integer."""
    message = parse(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "m"}))
    assert type(message) is Request
    assert message.id == request_id
    assert type(message.id) is type(request_id)  # "1" stays a string, 1 stays an int


@pytest.mark.parametrize("raw_id", ["null", "true", "false", "1.5", "1.0", "[1]", '{"a":1}'])
def test_request_ids_that_are_not_string_or_integer_are_rejected(raw_id):
    """spec 2025-11-25 basic/index: request ids MUST NOT be null (and are strings or integers).

    ``true`` is rejected although ``True == 1`` in Python; a float is rejected even
    when it is whole. The id cannot be echoed back, so the Malformed has no id.
    """
    message = parse('{"jsonrpc":"2.0","id":%s,"method":"m"}' % raw_id)
    assert type(message) is Malformed
    assert message.code == jsonrpc.INVALID_REQUEST == -32600
    assert message.id is None


def test_error_response_may_have_a_null_or_missing_id():
    """spec 2025-11-25 basic/index: an error reply may omit the id (JSON-RPC: null)
    when the request's id could not be read."""
    for text in ('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
                 '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'):
        message = parse(text)
        assert wire(message) == wire(ErrorResponse(None, -32700, "Parse error"))
    assert ErrorResponse(None, -32700, "Parse error").to_dict() == {
        "jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}


def test_error_response_with_a_boolean_id_is_rejected():
    message = parse('{"jsonrpc":"2.0","id":true,"error":{"code":-32600,"message":"m"}}')
    assert type(message) is Malformed
    assert (message.code, message.id) == (-32600, None)


# -- malformed input ------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    pytest.param("", id="empty"),
    pytest.param("   ", id="blank"),
    pytest.param("{", id="truncated"),
    pytest.param('{"jsonrpc":"2.0",}', id="trailing-comma"),
    pytest.param("{'jsonrpc': '2.0'}", id="single-quotes"),
    pytest.param('{"jsonrpc":"2.0","method":"m"} {}', id="two-values"),
    pytest.param(b"\xff\xfe\x00", id="not-utf8"),
    pytest.param(b'{"jsonrpc":"2.0","method":"\xff"}', id="invalid-utf8-in-string"),
    pytest.param("[" * 100_000, id="nested-too-deeply"),
])
def test_text_that_is_not_json_is_a_parse_error(data):
    """JSON-RPC 2.0 §5.1: invalid JSON is -32700 Parse error; parse() never raises."""
    message = parse(data)
    assert type(message) is Malformed
    assert message.code == jsonrpc.PARSE_ERROR == -32700
    assert message.id is None
    assert message.message.startswith("Parse error")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_not_json(literal):
    """RFC 8259 has no NaN/Infinity: such text is not JSON, so -32700."""
    message = parse('{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":%s}}' % literal)
    assert type(message) is Malformed
    assert message.code == -32700


@pytest.mark.parametrize("text", ["null", "1", "1.5", "true", '"a string"'])
def test_json_that_is_not_an_object_is_an_invalid_request(text):
    """JSON-RPC 2.0 §5.1: valid JSON that is not a Request object is -32600."""
    message = parse(text)
    assert type(message) is Malformed
    assert message.code == jsonrpc.INVALID_REQUEST == -32600
    assert message.id is None


@pytest.mark.parametrize("text, readable_id", [
    pytest.param('{"id":1,"method":"m"}', 1, id="missing-jsonrpc"),
    pytest.param('{"jsonrpc":"1.0","id":"a","method":"m"}', "a", id="jsonrpc-1.0"),
    pytest.param('{"jsonrpc":2.0,"id":1,"method":"m"}', 1, id="jsonrpc-a-number"),
    pytest.param('{"jsonrpc":"2.0","id":7,"method":5}', 7, id="method-not-a-string"),
    pytest.param('{"jsonrpc":"2.0","id":7,"method":null}', 7, id="method-null"),
    pytest.param('{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}', 1, id="params-an-array"),
    pytest.param('{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}', 1, id="params-a-string"),
    pytest.param('{"jsonrpc":"2.0","method":"m","params":[1]}', None, id="notification-params-an-array"),
    pytest.param('{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}', 1,
                 id="result-and-error"),
    pytest.param('{"jsonrpc":"2.0","result":1}', None, id="result-without-id"),
    pytest.param('{"jsonrpc":"2.0","id":"a","error":{"code":"1","message":"m"}}', "a",
                 id="error-code-a-string"),
    pytest.param('{"jsonrpc":"2.0","id":"a","error":{"code":1.0,"message":"m"}}', "a",
                 id="error-code-a-float"),
    pytest.param('{"jsonrpc":"2.0","id":"a","error":{"code":true,"message":"m"}}', "a",
                 id="error-code-a-boolean"),
    pytest.param('{"jsonrpc":"2.0","id":2,"error":"boom"}', 2, id="error-not-an-object"),
    pytest.param('{"jsonrpc":"2.0","id":3}', 3, id="id-only"),
    pytest.param('{"jsonrpc":"2.0"}', None, id="nothing"),
])
def test_wrong_shapes_are_invalid_requests_that_keep_a_readable_id(text, readable_id):
    """spec 2025-11-25 basic/index: jsonrpc is "2.0", error codes MUST be integers,
    a response has exactly one of result/error (spec 2024-11-05 basic/messages)."""
    message = parse(text)
    assert type(message) is Malformed
    assert message.code == -32600
    assert message.id == readable_id
    assert type(message.id) is type(readable_id)


def test_malformed_gives_the_error_reply_to_send():
    malformed = parse('{"jsonrpc":"2.0","id":"q1","method":"m","params":[1]}')
    reply = malformed.error_response()
    assert type(reply) is ErrorResponse
    assert reply.to_dict() == {"jsonrpc": "2.0", "id": "q1",
                               "error": {"code": -32600, "message": 'Invalid Request: "params" must be an object'}}


def test_lenient_error_objects_are_read_as_text():
    """A peer's error without a string message is still delivered (message made a string)."""
    assert wire(parse('{"jsonrpc":"2.0","id":1,"error":{"code":1}}')) == wire(ErrorResponse(1, 1, ""))
    assert wire(parse('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":5}}')) == wire(ErrorResponse(1, 1, "5"))


# -- batches ----------------------------------------------------------------------------


def test_a_json_array_is_a_batch_parsed_into_a_list():
    """spec 2025-03-26 basic/index: receivers MUST accept batches (arrays of messages)."""
    batch = parse('[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},'
                  '{"jsonrpc":"2.0","id":2,"result":{}}]')
    assert type(batch) is list
    assert [wire(m) for m in batch] == [wire(Request(1, "a")), wire(Notification("b")), wire(Response(2, {}))]


def test_an_empty_batch_is_one_invalid_request():
    """JSON-RPC 2.0 §6: an empty array is answered with a single -32600 error."""
    message = parse("[]")
    assert type(message) is Malformed
    assert (message.code, message.id) == (-32600, None)


def test_bad_batch_entries_become_malformed_in_place():
    batch = parse('[1, {"jsonrpc":"2.0","method":"ok"}, "x", {"jsonrpc":"1.0","id":9,"method":"m"}, []]')
    assert type(batch) is list
    assert [type(m) for m in batch] == [Malformed, Notification, Malformed, Malformed, Malformed]
    assert [m.code for m in batch if type(m) is Malformed] == [-32600] * 4
    assert batch[3].id == 9  # the readable id is kept inside a batch too


def test_dumps_of_a_list_is_a_json_array():
    text = dumps([Request(1, "a"), Notification("b")])
    assert text == '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]'
    assert [wire(m) for m in parse(text)] == [wire(Request(1, "a")), wire(Notification("b"))]


# -- dumps / encode -----------------------------------------------------------------------


@pytest.mark.parametrize("message, text", [
    (Request(1, "m", {"a": [1, 2], "b": {"c": None}}),
     '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2],"b":{"c":null}}}'),
    (Request("x", "m"), '{"jsonrpc":"2.0","id":"x","method":"m"}'),
    (Notification("n", {}), '{"jsonrpc":"2.0","method":"n","params":{}}'),
    (Response(1, [True, 1.5]), '{"jsonrpc":"2.0","id":1,"result":[true,1.5]}'),
    (ErrorResponse(1, -32603, "boom", {"k": 0}),
     '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom","data":{"k":0}}}'),
    (ErrorResponse(1, -32603, "boom"), '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}'),
    ({"jsonrpc": "2.0", "method": "raw"}, '{"jsonrpc":"2.0","method":"raw"}'),
])
def test_dumps_is_compact_with_jsonrpc_first(message, text):
    """Compact separators (no spaces); a ready-made dict is written as is."""
    assert dumps(message) == text


@pytest.mark.parametrize("tricky", ["a\nb", "a\rb", "a\r\nb", "line\u2028sep", "para\u2029sep", "nel\x85",
                                    "tab\t", "nul\x00", "\n" * 3])
def test_dumps_is_one_line_whatever_the_strings_hold(tricky):
    """spec 2025-11-25 basic/transports (stdio): messages are newline-delimited and
    MUST NOT contain embedded newlines. The stdio reader splits on b"\\n" only."""
    message = Notification("log", {"text": tricky})
    text = dumps(message)
    assert "\n" not in text and "\r" not in text
    data = encode(message)
    assert b"\n" not in data and b"\r" not in data
    assert len(data.split(b"\n")) == 1
    assert parse(data).params == {"text": tricky}


def test_non_ascii_is_kept_as_is():
    message = Response(1, {"city": "Kraków", "weather": "☀", "emoji": "🦀"})
    assert '"Kraków"' in dumps(message)
    assert '"🦀"' in dumps(message)
    assert "\\u" not in dumps(message)
    assert "Kraków".encode() in encode(message)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_dumps_refuses_values_json_cannot_carry(value):
    with pytest.raises(ValueError):
        dumps(Response(1, {"x": value}))
    with pytest.raises(ValueError):
        encode(Response(1, {"x": value}))


def test_dumps_refuses_objects_that_are_not_json():
    with pytest.raises(TypeError):
        dumps(Response(1, {"x": object()}))


def test_dumps_refuses_a_circular_or_too_deep_message_with_a_value_error():
    """The shared encoder keeps no cycle markers: a cycle (or nesting past the recursion limit)
    is the ValueError callers turn into -32603, not a RecursionError nobody catches."""
    circular = {}
    circular["self"] = circular
    deep = []
    for _ in range(200_000):  # (3.13's C encoder nests past 5,000)
        deep = [deep]
    for result in (circular, {"x": deep}):
        with pytest.raises(ValueError, match="circular"):
            dumps(Response(1, result))
    assert dumps(Response(1, {"ok": [1, {"a": None}]})) == '{"jsonrpc":"2.0","id":1,"result":{"ok":[1,{"a":null}]}}'


def test_encode_is_utf8_of_dumps_without_trailing_newline():
    message = Request(1, "m", {"city": "Kraków"})
    assert encode(message) == dumps(message).encode("utf-8")
    assert not encode(message).endswith(b"\n")


def test_encode_survives_a_lone_surrogate():
    """A lone surrogate (say from a "\\ud800" escape in input) cannot be UTF-8;
    encode() falls back to an ASCII-escaped form that is still valid JSON."""
    message = Notification("log", {"text": "a\ud800b", "city": "Kraków"})
    with pytest.raises(UnicodeEncodeError):
        "a\ud800b".encode("utf-8")  # the plain path would fail
    data = encode(message)
    assert data.isascii()
    assert b"\\ud800" in data
    assert json.loads(data) == message.to_dict()
    assert wire(parse(data)) == wire(message)


def test_a_surrogate_read_from_the_wire_can_be_sent_back():
    incoming = parse('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"t":"\\ud83d"}}')
    assert incoming.params == {"t": "\ud83d"}
    outgoing = encode(Response(incoming.id, incoming.params))
    assert parse(outgoing).result == {"t": "\ud83d"}


# -- error codes --------------------------------------------------------------------------


@pytest.mark.parametrize("name, code", [
    ("PARSE_ERROR", -32700),
    ("INVALID_REQUEST", -32600),
    ("METHOD_NOT_FOUND", -32601),
    ("INVALID_PARAMS", -32602),
    ("INTERNAL_ERROR", -32603),
    ("RESOURCE_NOT_FOUND", -32002),
    ("URL_ELICITATION_REQUIRED", -32042),
    ("HEADER_MISMATCH", -32020),
    ("MISSING_REQUIRED_CLIENT_CAPABILITY", -32021),
    ("UNSUPPORTED_PROTOCOL_VERSION", -32022),
])
def test_error_code_constants_match_the_spec(name, code):
    """spec basic/index "Error codes" (JSON-RPC 2.0 §5.1 for -327xx/-326xx;
    2025-11-25 for -32002/-32042; 2026-07-28 for -32020/-32021/-32022)."""
    assert getattr(jsonrpc, name) == code
    assert type(getattr(jsonrpc, name)) is int


# -- reprs --------------------------------------------------------------------------------


@pytest.mark.parametrize("message, text", [
    (Request(1, "tools/call", {"name": "x"}), "Request(id=1, method='tools/call', params={'name': 'x'})"),
    (Request("1", "ping"), "Request(id='1', method='ping', params=None)"),
    (Notification("notifications/initialized"), "Notification(method='notifications/initialized', params=None)"),
    (Response(3, {"ok": True}), "Response(id=3, result={'ok': True})"),
    (ErrorResponse(4, -32601, "Method not found"), "ErrorResponse(id=4, code=-32601, message='Method not found')"),
    (Malformed(-32700, "Parse error: x"), "Malformed(code=-32700, message='Parse error: x', id=None)"),
])
def test_reprs_show_the_fields_that_matter(message, text):
    assert repr(message) == text
