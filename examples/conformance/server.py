"""The MCP conformance suite's "everything server", written with minimcp's public API.

    python examples/conformance/server.py --port 3001      # serves http://127.0.0.1:3001/mcp

The official conformance suite (``@modelcontextprotocol/conformance``) acts
as a client against this URL and checks each answer; the tools, resources
and prompts below are the fixtures it calls, with the exact names and texts
it expects. Run it as ``.ci/run`` does (``bash .ci/conformance/setup.sh`` installs
the suites into ``$CF_HOME``, by default ``~/.cache/mcp-conformance``)::

    python examples/conformance/server.py --port 3001 &
    conformance=~/.cache/mcp-conformance/suite-0.2.0-alpha.12/node_modules/.bin/conformance
    $conformance server --url http://127.0.0.1:3001/mcp --suite all --spec-version 2025-11-25
    $conformance server --url http://127.0.0.1:3001/mcp --suite all --spec-version 2026-07-28

One process serves both wires at one URL: the handshake versions
(``initialize`` + ``Mcp-Session-Id``) and the stateless 2026-07-28 protocol
(every request carries its version and client capabilities in ``_meta``).
The same fixtures serve both; only the last section is 2026-07-28 specific.
Use a fresh server process for each suite run. Stop it with Ctrl-C or SIGTERM.

It also reads as a tour of the server API:

- content helpers: ``Image``, ``Audio``, ``EmbeddedResource``, ``Message``;
- ``ctx.log`` (``notifications/message``), ``ctx.report_progress``,
  ``ctx.sample`` (``sampling/createMessage``), ``ctx.elicit``
  (``elicitation/create``), ``ctx.close_sse_stream()`` (SSE polling);
- ``ToolError`` for a tool failure the model reads (``isError: true``);
- a hand-written JSON Schema 2020-12 ``input_schema`` sent verbatim;
- resources, a resource template, subscriptions, prompts and completion;
- 2026-07-28: ``ctx.elicit/sample/list_roots(..., key=...)`` answered with
  ``input_required`` rounds, ``with ctx.inputs():`` to ask several things in
  one round, ``ctx.client_capabilities`` read from the request itself, an
  ``x-mcp-header`` argument mirrored in an HTTP header, and list changes
  sent to ``subscriptions/listen`` streams.
"""

import argparse
import base64
import json
import logging
import os
import time

from minimcp import Audio, Context, EmbeddedResource, Image, Message, Server, ToolError
from minimcp.errors import RequestFailed
from minimcp.server.skills import publish_skills
from minimcp.server.tasks import starts_task_later

# Test media: a 1x1 PNG and a minimal WAV file.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

# log_level="info": send log messages at info and above even before the
# client calls logging/setLevel (the spec lets the server choose until then).
server = Server("minimcp-conformance-server", version="1.0.0", log_level="info")


# ---------------------------------------------------------------------------
# Tools: content of every kind
# ---------------------------------------------------------------------------

@server.tool()
def test_simple_text() -> str:
    """Returns one text item."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> Image:
    """Returns one PNG image."""
    return Image(PNG)  # the MIME type (image/png) is read from the bytes


@server.tool()
def test_audio_content() -> Audio:
    """Returns one WAV audio clip."""
    return Audio(WAV, "audio/wav")


@server.tool()
def test_embedded_resource() -> EmbeddedResource:
    """Returns one embedded text resource."""
    return EmbeddedResource("test://embedded-resource", "This is an embedded resource content.", "text/plain")


@server.tool()
def test_multiple_content_types():  # no "-> list": that would declare a structured (JSON) result
    """Returns text, an image and an embedded resource, in that order."""
    return [
        {"type": "text", "text": "Multiple content types test:"},  # in a list, text is spelled as a block
        Image(PNG),
        EmbeddedResource("test://mixed-content-resource", '{"test":"data","value":123}', "application/json"),
    ]


@server.tool()
def test_error_handling() -> str:
    """Always fails: a tool error (isError: true), not a protocol error."""
    raise ToolError("This tool intentionally returns an error for testing")


# ---------------------------------------------------------------------------
# Tools: talking to the client while running
# ---------------------------------------------------------------------------

@server.tool()
def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages (notifications/message) while it runs."""
    ctx.log("info", "Tool execution started")
    time.sleep(0.05)
    ctx.log("info", "Tool processing data")
    time.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@server.tool()
def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100 (when the caller sent a progressToken)."""
    for step in (0, 50, 100):
        if step:
            time.sleep(0.05)
        ctx.report_progress(step, total=100, message=f"Completed step {step} of 100")
    return f"Progress reported for token {ctx.progress_token!r}"


@server.tool()
def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM to answer the prompt (sampling/createMessage)."""
    reply = ctx.sample(prompt, max_tokens=100)  # no sampling capability: CapabilityError, an isError result
    return f"LLM response: {reply['content'].get('text', '(not text)')}"


@server.tool()
def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email address (elicitation/create)."""
    answer = ctx.elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return f"User response: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool()
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicits a form whose fields all have defaults (SEP-1034)."""
    answer = ctx.elicit("Please provide user information", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    })
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool()
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicits a form with the five enum shapes of SEP-1330."""
    answer = ctx.elicit("Please select values using different enum schema types", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Simple enum without titles",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Enum with titled options",
                             "oneOf": [{"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Legacy enum with enumNames",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Multi-select without titles",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Multi-select with titled options",
                            "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                {"const": "value2", "title": "Second Choice"},
                                                {"const": "value3", "title": "Third Choice"}]}},
        },
    })
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content', {}))}"


@server.tool()
def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream mid-call; the client resumes with GET + Last-Event-ID (SEP-1699)."""
    ctx.log("info", "Before disconnect")
    ctx.close_sse_stream()  # the HTTP response ends; what follows is kept for the resumed stream
    time.sleep(0.2)
    ctx.log("info", "After reconnect")
    return "Reconnection test completed"


# ---------------------------------------------------------------------------
# A tool with a hand-written JSON Schema 2020-12, listed exactly as written
# ---------------------------------------------------------------------------

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def json_schema_2020_12_tool(**arguments) -> str:
    """Tool with JSON Schema 2020-12 features."""
    return f"Received: {json.dumps(arguments)}"


server.add_tool(json_schema_2020_12_tool, input_schema=JSON_SCHEMA_2020_12)


# ---------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------

@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG image) for testing."""
    return PNG  # bytes are sent as a base64 blob


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with parameter substitution."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


@server.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource that can be subscribed to for updates."""
    return "Watched resource content"


# ---------------------------------------------------------------------------
# Prompts and completion
# ---------------------------------------------------------------------------

@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."  # one user message


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt that includes an embedded resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [Message(EmbeddedResource(resourceUri, "Embedded resource content for testing.", "text/plain")),
            Message("Please process the embedded resource above.")]


@server.prompt()
def test_prompt_with_image() -> list:
    """A prompt that includes image content."""
    return [Message(Image(PNG)), Message("Please analyze the image above.")]


@server.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str) -> list:
    return [word for word in ("test", "testing", "tested") if word.startswith(value)]


# ---------------------------------------------------------------------------
# 2026-07-28 (stateless) fixtures
#
# There is no handshake: each request names its protocol version and the
# client's capabilities in params._meta, and a server never sends the
# client a request. When a handler calls ctx.elicit / ctx.sample /
# ctx.list_roots, minimcp answers {"resultType": "input_required",
# "inputRequests": {key: ...}, "requestState": ...} instead; the client
# calls again with "inputResponses" (and the signed requestState), and
# minimcp re-runs the handler, whose ctx.* calls now return the answers.
# ``key=`` names each question (the suite checks the names). In a
# handshake-era session the same calls are ordinary requests to the client.
# ---------------------------------------------------------------------------

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_x_mcp_header(region: str) -> str:
    """Echoes its region; 2026-07-28 clients mirror it in the Mcp-Param-Region header."""
    return f"region={region}"


# A hand-written schema: "x-mcp-header" asks clients to send the argument as an
# HTTP header too, and minimcp checks that header against the body (-32020).
server.add_tool(test_x_mcp_header, input_schema={
    "type": "object",
    "properties": {"region": {"type": "string", "description": "A region name", "x-mcp-header": "Region"}},
    "required": ["region"],
})


@server.tool()
def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: a request that did not declare it gets error -32021."""
    reply = ctx.sample("Say hello", max_tokens=20, key="hello")  # CapabilityError -> -32021 (2026-07-28)
    return f"LLM response: {reply['content'].get('text', '(not text)')}"


@server.tool()
def test_trigger_tool_change() -> str:
    """Adds and removes a tool: notifications/tools/list_changed reaches the listeners."""
    def test_dynamic_tool() -> str:
        """Exists only while test_trigger_tool_change runs."""
        return "dynamic"

    server.add_tool(test_dynamic_tool)  # each change is sent to every subscriptions/listen
    server.remove_tool("test_dynamic_tool")  # stream that asked for toolsListChanged
    return "Tool list changed"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Adds and removes a prompt: notifications/prompts/list_changed reaches the listeners."""
    def test_dynamic_prompt() -> str:
        """Exists only while test_trigger_prompt_change runs."""
        return "dynamic"

    server.add_prompt(test_dynamic_prompt)
    server.remove_prompt("test_dynamic_prompt")
    return "Prompt list changed"


@server.tool()
def test_logging_tool(ctx: Context) -> str:
    """Logs at info; a 2026-07-28 request gets the messages only if its _meta asked for a logLevel."""
    ctx.log("info", "test_logging_tool started")
    ctx.log("info", "test_logging_tool finished")
    return "Logged twice"


@server.tool()
def test_input_required_result_elicitation(ctx: Context) -> str:
    """One round of input: asks for a name (key user_name)."""
    answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {answer['content']['name']}!"


# The same function again, under the name server-stateless looks for: its 2026-07-28
# response stream must carry the input_required result, never a request to the client.
server.add_tool(test_input_required_result_elicitation, name="test_streaming_elicitation",
                description="Asks the user something: an input_required result, never a request on the stream.")


@server.tool()
def test_input_required_result_sampling(ctx: Context) -> str:
    """One round of input: asks the client's LLM (key capital_question)."""
    reply = ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"LLM response: {reply['content'].get('text', '(not text)')}"


@server.tool()
def test_input_required_result_list_roots(ctx: Context) -> str:
    """One round of input: asks for the client's roots (key client_roots)."""
    roots = ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root["uri"] for root in roots)


@server.tool()
def test_input_required_result_request_state(ctx: Context) -> str:
    """The retry must echo requestState: minimcp signs it and checks it before the handler re-runs."""
    answer = ctx.elicit("Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                           "required": ["ok"]}, key="confirm")
    return f"state-ok: confirmed={answer['content'].get('ok')}"


@server.tool()
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Three questions in one round: ``with ctx.inputs()`` collects them before asking."""
    with ctx.inputs():  # inside, an unanswered question returns None instead of stopping the handler
        name = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        greeting = ctx.sample("Generate a greeting", max_tokens=50, key="greeting")
        roots = ctx.list_roots(key="client_roots")
    return (f"name={name['content']['name']}, greeting={greeting['content'].get('text')}, "
            f"roots={[root['uri'] for root in roots]}")


@server.tool()
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds: the second question is asked only once the first is answered."""
    name = ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    color = ctx.elicit("Step 2: What is your favorite color?",
                       {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
                       key="step2")
    return f"{name['content']['name']} likes {color['content']['color']}"


@server.tool()
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """A changed requestState fails minimcp's HMAC check: error -32602, the handler never runs."""
    answer = ctx.elicit("Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                           "required": ["ok"]}, key="confirm")
    return f"confirmed={answer['content'].get('ok')}"


@server.tool()
def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the client can answer: ctx.client_capabilities (this request's _meta)."""
    asked = [kind for kind in ("sampling", "elicitation", "roots") if kind in ctx.client_capabilities]
    with ctx.inputs():
        if "sampling" in asked:
            ctx.sample("What is 2 + 2?", max_tokens=10, key="question")
        if "elicitation" in asked:
            ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        if "roots" in asked:
            ctx.list_roots(key="client_roots")
    return f"Asked for: {', '.join(asked) or 'nothing'}"


@server.prompt()
def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt can ask too (prompts/get answers input_required)."""
    answer = ctx.elicit("What context should the prompt use?",
                        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
                        key="user_context")
    return f"Answer using this context: {answer['content']['context']}"


# -- the tasks extension (io.modelcontextprotocol/tasks): a tool says task="optional" or
# "required"; a request that declares the extension gets a task, polled with tasks/get.


@server.tool()
def greet(name: str) -> str:
    """A plain tool, never a task."""
    return f"Hello, {name}!"


@server.tool(task="optional")
def slow_compute(seconds: float, ctx: Context, label: str = "") -> str:
    """Works for ``seconds`` seconds as a task; tasks/cancel stops it (ctx.cancelled)."""
    deadline = time.monotonic() + seconds
    while not ctx.cancelled.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            return f"computed {label or 'it'} in {seconds:g}s"
        ctx.report_progress(seconds - (deadline - time.monotonic()), seconds, "computing")
    return "cancelled"


@server.tool(task="optional")
def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, in the middle of the task (input_required, then tasks/update)."""
    answer = ctx.elicit(f"Delete {filename}?", {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                                 "required": ["confirm"]})
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
    return f"deleted {filename}" if confirmed else f"kept {filename}"


@server.tool(task="required")
def failing_job(ctx: Context) -> str:
    """Always a task (-32021 for a client without the extension); fails as a tool: isError."""
    ctx.cancelled.wait(0.2)
    raise ToolError("the job failed, as it always does")


@server.tool(task="optional")
def protocol_error_job() -> str:
    """Fails at the protocol level: the task ends "failed" with this JSON-RPC error."""
    raise RequestFailed(-32603, "Internal error: the job's backend is gone")


@server.tool(task="optional")
def multi_input(ctx: Context) -> str:
    """Two questions at once (``with ctx.inputs()``): the task waits until both are answered."""
    form = {"type": "object", "properties": {"name": {"type": "string"}}}
    with ctx.inputs():
        first = ctx.elicit("First name?", form, key="first")
        second = ctx.elicit("Second name?", form, key="second")
    return f"first={first['content'].get('name')}, second={second['content'].get('name')}"


@server.tool(task="required")
@starts_task_later
def test_tool_with_task(ctx: Context) -> str:
    """Asks for a name over input_required rounds, then becomes a task (ctx.start_task())."""
    answer = ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    ctx.start_task()  # the call answers CreateTaskResult here; the task runs this again, answered
    return f"Hello, {answer['content']['name']}!"


# -- the skills extension (io.modelcontextprotocol/skills): one call publishes the folder skills/
# (skills/list, skills/get, resources/directory/read, and each file as a skill:// resource).
publish_skills(server, os.path.join(os.path.dirname(os.path.abspath(__file__)), "skills"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3001, help="port to listen on (default 3001)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # retry_ms: the reconnection delay sent in each SSE priming event (2025-11-25 polling).
    server.run("http", host=args.host, port=args.port, retry_ms=100)


if __name__ == "__main__":
    main()
