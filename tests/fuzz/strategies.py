"""Hypothesis strategies for the wire: arbitrary JSON, and messages of every kind with random
values in every field. Shared by tests/test_wire_properties.py and tests/fuzz/fuzz_wire.py."""

from typing import Any, Dict, List

from hypothesis import strategies as st

from minimcp.protocol import jsonrpc
from minimcp.server.methods import METHODS

#: What a client answers or hears (spec client/*): a server may send these.
CLIENT_METHODS = ["sampling/createMessage", "elicitation/create", "roots/list", "ping"]
NOTIFICATIONS = ["notifications/initialized", "notifications/cancelled", "notifications/progress",
                 "notifications/message", "notifications/roots/list_changed",
                 "notifications/tools/list_changed", "notifications/resources/updated"]
#: method -> the params it knows, so random values land in the named fields too.
KNOWN_PARAMS: Dict[str, List[str]] = {
    "initialize": ["protocolVersion", "capabilities", "clientInfo"],
    "logging/setLevel": ["level"], "resources/subscribe": ["uri"], "resources/unsubscribe": ["uri"],
    "tools/call": ["name", "arguments"], "resources/read": ["uri"], "prompts/get": ["name", "arguments"],
    "completion/complete": ["ref", "argument", "context"], "tools/list": ["cursor"],
    "resources/list": ["cursor"], "prompts/list": ["cursor"], "resources/templates/list": ["cursor"],
    "subscriptions/listen": ["notifications"],
    "sampling/createMessage": ["messages", "maxTokens", "systemPrompt", "tools"],
    "elicitation/create": ["message", "requestedSchema", "mode", "url"],
    "notifications/cancelled": ["requestId", "reason"],
    "notifications/progress": ["progressToken", "progress", "total", "message"],
    "notifications/message": ["level", "data", "logger"], "notifications/resources/updated": ["uri"],
}
#: Tools of tests/servers/testing_server.py that are safe to call with any arguments
#: (crash, big, count and wait_for_cancel could kill, bloat or hold the server on purpose).
SAFE_TOOLS = ["echo", "add", "fail", "refuse", "noisy", "thread_count"]
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
ids = st.integers(min_value=-2**63, max_value=2**63) | st.text(max_size=8) | json_values


def _known_value(name: str) -> Any:
    # A value of the right kind half the time, so the message gets past the first checks.
    right = {"name": st.sampled_from(SAFE_TOOLS), "protocolVersion": st.sampled_from(VERSIONS),
             "arguments": st.fixed_dictionaries({}, optional={"text": json_values, "a": json_values,
                                                               "b": json_values, "message": json_values})}
    return right.get(name, json_values) | json_values


@st.composite
def params(draw: Any, method: str) -> Any:
    """Random ``params``: any JSON value, or an object with the method's known fields and ``_meta``."""
    if draw(st.integers(0, 4)) == 0:
        return draw(json_values)
    names = KNOWN_PARAMS.get(method, []) + ["_meta"]
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    value = {name: draw(_known_value(name)) for name in chosen}
    if "_meta" in value and draw(st.booleans()):
        value["_meta"] = draw(st.fixed_dictionaries({}, optional={
            "progressToken": ids, "io.modelcontextprotocol/protocolVersion": st.sampled_from(VERSIONS) | json_values,
            "io.modelcontextprotocol/clientCapabilities": json_values}))
    return value


def methods(side: str) -> Any:
    """A method the peer on ``side`` ("server" or "client") knows, a notification, or random text."""
    known = sorted(METHODS) if side == "server" else CLIENT_METHODS
    return st.sampled_from(known + NOTIFICATIONS) | st.text(max_size=12)


def _maybe(draw: Any, obj: dict, key: str, value: Any) -> None:
    # Each field is usually there and usually right, sometimes missing, sometimes anything.
    roll = draw(st.integers(0, 9))
    if roll == 0:
        return
    obj[key] = draw(json_values) if roll == 1 else value


@st.composite
def message(draw: Any, side: str = "server") -> dict:
    """One JSON object shaped like a request, notification, response or error, fields randomised."""
    kind = draw(st.sampled_from(["request", "notification", "response", "error"]))
    obj: dict = {}
    _maybe(draw, obj, "jsonrpc", "2.0")
    if kind in ("request", "notification"):
        method = draw(methods(side))
        _maybe(draw, obj, "method", method)
        if draw(st.booleans()):
            obj["params"] = draw(params(method))
        if kind == "request":
            _maybe(draw, obj, "id", draw(ids))
    else:
        _maybe(draw, obj, "id", draw(ids))
        if kind == "response":
            _maybe(draw, obj, "result", draw(json_values))
        else:
            error = draw(st.fixed_dictionaries({"code": st.integers(-2**40, 2**40) | json_values}, optional={
                                                             "message": st.text(max_size=12) | json_values,
                                                             "data": json_values}))
            _maybe(draw, obj, "error", error)
    return obj


def batches(side: str = "server") -> Any:
    """A JSON array of messages (and sometimes non-objects)."""
    return st.lists(message(side) | json_values, min_size=1, max_size=4)


def wire_values(side: str = "server") -> Any:
    """Anything one line of the wire may decode to: a message, a batch, or any JSON value."""
    return message(side) | batches(side) | json_values


#: Raw garbage for one line: bytes (invalid UTF-8 included) and text, with no newline in it.
raw_lines = (st.binary(max_size=64).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))
             | st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")
                                        .replace(b"\n", b" ").replace(b"\r", b" ")))


def expected_ids(line: bytes, batches_allowed: bool = True) -> List[Any]:
    """The ids the receiver must answer for this line: every request (or request-like Malformed)
    with a readable id, as the receiver itself reads it; none for a batch where batches are
    refused whole (one error, id null)."""
    parsed = jsonrpc.parse(line)
    if isinstance(parsed, list) and not batches_allowed:
        return []
    items = parsed if isinstance(parsed, list) else [parsed]
    found = []
    for item in items:
        if isinstance(item, jsonrpc.Request):
            found.append(item.id)
        elif isinstance(item, jsonrpc.Malformed) and item.id is not None:
            found.append(item.id)
    return found
