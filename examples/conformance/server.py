"""The MCP conformance suite's "everything server", written with minimcp's public API.

    python examples/conformance/server.py --port 3001      # serves http://127.0.0.1:3001/mcp

The official conformance suite (``@modelcontextprotocol/conformance``) acts
as a client against this URL and checks each answer; the tools, resources
and prompts below are the fixtures it calls, with the exact names and texts
it expects. Run it (see ``../shared/conformance/README.md``)::

    run-server.sh http://127.0.0.1:3001/mcp 0.2.0-alpha.12 --suite all --spec-version 2025-11-25
    run-server.sh http://127.0.0.1:3001/mcp 0.1.16 --suite all

Use a fresh server process for each suite run. Stop it with Ctrl-C or SIGTERM.

It also reads as a tour of the server API:

- content helpers: ``Image``, ``Audio``, ``EmbeddedResource``, ``Message``;
- ``ctx.log`` (``notifications/message``), ``ctx.report_progress``,
  ``ctx.sample`` (``sampling/createMessage``), ``ctx.elicit``
  (``elicitation/create``), ``ctx.close_sse_stream()`` (SSE polling);
- ``ToolError`` for a tool failure the model reads (``isError: true``);
- a hand-written JSON Schema 2020-12 ``input_schema`` sent verbatim;
- resources, a resource template, subscriptions, prompts and completion.
"""

import argparse
import base64
import json
import logging
import time

from minimcp import Audio, Context, EmbeddedResource, Image, Message, Server, ToolError

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
