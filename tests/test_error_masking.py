"""Error bodies do not leak what the server must not tell (issue 29, CWE-209).

An unexpected exception in a resource, prompt or completion function reaches the client as
``-32603 Internal error (ref …): see the server's log``, and the server's log has the traceback
under the same reference; what the author raises on purpose (``RPCError``, ``LookupError`` in a
resource, a ``CapabilityError`` of ``ctx``) keeps its text. A tool's exception text reaches the
model (spec server/tools "Error Handling": tool failures are results the model reads), unless
the server was made with ``mask_tool_errors=True``; a ``ToolError`` keeps its text either way.
"""

import json
import logging
import os
import re

import pytest
import requests

import minimcp
from minimcp import Context, RPCError, Server, ToolError
from minimcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND
from minimcp.server.http.wsgiserver import BackgroundServer

PROTOCOLS = ["2025-11-25", "2026-07-28"]
REF = re.compile(r"^Internal error \(ref ([0-9a-f]{8})\): see the server's log$")
TOOL_REF = re.compile(r"^Error in tool 'read_secret': internal error \(ref ([0-9a-f]{8})\); see the server's log$")


@pytest.fixture
def secret(tmp_path):
    """A path that does not exist (so ``open`` raises an OSError naming it), under a folder name
    that must never reach a client."""
    return os.path.join(str(tmp_path), "srv-private", "secret.txt")


def leaky_server(secret, **options):
    """A server whose resource, prompt, completer and tool each open ``secret`` (an OSError with
    the path), next to handlers that fail on purpose."""
    server = Server("leaky", **options)

    @server.resource("files://secret")
    def read_secret_resource() -> str:
        with open(secret) as f:
            return f.read()

    @server.resource("files://gone/{name}")
    def gone(name: str) -> str:
        raise KeyError(name)  # "no such resource", on purpose: -32002

    @server.resource("files://refused")
    def refused() -> str:
        raise RPCError(INVALID_PARAMS, "files://refused is not for you", {"why": "closed"})

    @server.prompt(complete={"topic": lambda value: open(secret).read().split()})
    def brief(topic: str) -> str:
        with open(secret) as f:
            return f.read() + topic

    @server.prompt()
    def picky(topic: str) -> str:
        raise RPCError(INVALID_PARAMS, f"no brief on {topic!r}")

    @server.tool()
    def read_secret() -> str:
        with open(secret) as f:
            return f.read()

    @server.tool()
    def refuse() -> str:
        raise ToolError("no secrets today")

    return server


def masked(caplog, error, secret):
    """Check a masked -32603: the path is not in it, a reference is, and the log has that
    reference with the traceback that names the path. Returns the reference."""
    assert error.code == INTERNAL_ERROR and error.data is None, error
    assert secret not in str(error) and "srv-private" not in str(error) and "Errno" not in str(error)
    found = REF.match(error.message)
    assert found, error.message
    ref = found.group(1)
    [record] = [r for r in caplog.records if ref in r.getMessage()]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert isinstance(record.exc_info[1], FileNotFoundError) and secret in str(record.exc_info[1])
    assert "Traceback" in caplog.text and secret in caplog.text
    return ref


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_resource_read_that_raises_oserror_answers_a_reference_not_the_path(protocol, secret, caplog):
    """resources/read of a function that raises OSError: -32603 with a ref, the traceback in the log;
    a LookupError is still "not found" (spec server/resources "Error Handling") and an RPCError as raised."""
    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=leaky_server(secret), protocol=protocol) as client:
        with pytest.raises(RPCError) as info:
            client.read_resource("files://secret")
        masked(caplog, info.value, secret)
        with pytest.raises(RPCError) as info:
            client.read_resource("files://gone/x")
        assert info.value.code == (RESOURCE_NOT_FOUND if protocol == "2025-11-25" else INVALID_PARAMS)
        assert "Resource not found: files://gone/x" in info.value.message
        with pytest.raises(RPCError) as info:
            client.read_resource("files://refused")
        assert (info.value.code, info.value.message, info.value.data) == (
            INVALID_PARAMS, "files://refused is not for you", {"why": "closed"})
        client.ping()  # the connection serves on


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_prompt_that_raises_oserror_answers_a_reference_not_the_path(protocol, secret, caplog):
    """prompts/get: the same -32603 with a ref; a deliberate RPCError keeps its message."""
    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=leaky_server(secret), protocol=protocol) as client:
        with pytest.raises(RPCError) as info:
            client.get_prompt("brief", {"topic": "x"})
        masked(caplog, info.value, secret)
        with pytest.raises(RPCError) as info:
            client.get_prompt("picky", {"topic": "x"})
        assert (info.value.code, info.value.message) == (INVALID_PARAMS, "no brief on 'x'")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_completer_that_raises_oserror_answers_a_reference_not_the_path(protocol, secret, caplog):
    """completion/complete (spec server/utilities/completion): the same -32603 with a ref."""
    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=leaky_server(secret), protocol=protocol) as client:
        with pytest.raises(RPCError) as info:
            client.complete({"type": "ref/prompt", "name": "brief"}, "topic", "w")
        masked(caplog, info.value, secret)


def test_each_failure_gets_its_own_reference(secret, caplog):
    """Two failures, two references: a user's quote finds one log line."""
    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=leaky_server(secret)) as client:
        refs = set()
        for _ in range(2):
            with pytest.raises(RPCError) as info:
                client.read_resource("files://secret")
            refs.add(masked(caplog, info.value, secret))
    assert len(refs) == 2


def test_a_capability_the_client_lacks_keeps_its_message_in_a_resource(caplog):
    """A CapabilityError of ctx is minimcp's own message about the client (handshake era: -32603
    saying what to declare; 2026-07-28 turns it into -32021), not masked."""
    server = Server("caps")

    @server.resource("caps://summary")
    def summary(ctx: Context) -> str:
        with open(os.path.join(os.sep, "srv-private", "no-such-file")) as f:  # an OSError: masked
            return ctx.sample(f.read(), max_tokens=5)["content"]["text"]

    @server.resource("caps://sampled")
    def sampled(ctx: Context) -> str:
        return ctx.sample("hi", max_tokens=5)["content"]["text"]

    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        with pytest.raises(RPCError) as info:
            client.read_resource("caps://sampled")
        assert info.value.code == INTERNAL_ERROR and "did not declare the 'sampling' capability" in info.value.message
        with pytest.raises(RPCError) as info:
            client.read_resource("caps://summary")
        assert REF.match(info.value.message) and "srv-private" not in info.value.message


def test_over_http_the_body_has_the_reference_and_not_the_path(secret, caplog):
    """The answer's bytes on the wire (Streamable HTTP, 2025-11-25) carry no part of the path."""
    caplog.set_level(logging.ERROR)
    server = leaky_server(secret)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with BackgroundServer(server.wsgi_app()) as running, requests.Session() as http:
        url = running.url + "/mcp"
        init = http.post(url, timeout=10, headers=headers, data=json.dumps({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}))
        headers.update({"Mcp-Session-Id": init.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
        assert http.post(url, timeout=10, headers=headers,
                         data=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})).status_code == 202
        reply = http.post(url, timeout=10, headers=headers, data=json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "files://secret"}}))
        http.delete(url, timeout=10, headers=headers)
    body = reply.text
    assert reply.status_code == 200 and '"code":-32603' in body.replace(" ", ""), body
    assert "srv-private" not in body and "secret.txt" not in body and "Errno" not in body, body
    ref = re.search(r"Internal error \(ref ([0-9a-f]{8})\): see the server's log", body)
    assert ref and ref.group(1) in caplog.text and secret in caplog.text, body


# -- tools ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_tools_exception_text_reaches_the_model_unless_the_server_masks_it(protocol, secret, caplog):
    """By default the model reads what went wrong, so it can recover (spec server/tools "Error
    Handling"). Server(mask_tool_errors=True): a generic isError text with a ref, the log has the
    traceback and the ref. A ToolError's text is unchanged either way."""
    caplog.set_level(logging.ERROR)
    with minimcp.connect("memory", server=leaky_server(secret), protocol=protocol) as client:
        result = client.call_tool("read_secret")
        assert result.is_error and "FileNotFoundError" in result.text and secret in result.text
        assert client.call_tool("refuse").text == "no secrets today"
    assert "tool 'read_secret' failed" in caplog.text and "Traceback" in caplog.text
    caplog.clear()
    with minimcp.connect("memory", server=leaky_server(secret, mask_tool_errors=True), protocol=protocol) as client:
        result = client.call_tool("read_secret")
        assert result.is_error and "srv-private" not in json.dumps(result.raw) and "Errno" not in result.text
        found = TOOL_REF.match(result.text)
        assert found, result.text
        [record] = [r for r in caplog.records if found.group(1) in r.getMessage()]
        assert record.exc_info is not None and secret in str(record.exc_info[1])
        assert "tool 'read_secret' failed" in record.getMessage()
        refused = client.call_tool("refuse")
        assert refused.is_error and refused.text == "no secrets today"


def test_mask_tool_errors_covers_a_result_that_breaks_the_output_schema(caplog):
    """A result that does not match the tool's outputSchema is the author's bug: with the option,
    its values (here a path) stay in the log."""
    caplog.set_level(logging.ERROR)
    server = Server("schema", mask_tool_errors=True)

    @server.tool(output_schema={"type": "object", "properties": {"size": {"type": "integer"}},
                                "required": ["size"]})
    def stat() -> dict:
        return {"size": "/srv-private/secret.txt"}

    with minimcp.connect("memory", server=server) as client:
        result = client.call_tool("stat")
    assert result.is_error and "srv-private" not in json.dumps(result.raw), result.raw
    ref = re.search(r"\(ref ([0-9a-f]{8})\)", result.text)
    assert ref and "broke its output schema" in caplog.text and ref.group(1) in caplog.text
