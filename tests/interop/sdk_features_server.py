"""The official Python SDK (mcp 2.3.0) as a server with one of each feature, for tests/test_proxy.py.

    SDK_PYTHON sdk_features_server.py PORT

Serves Streamable HTTP at http://127.0.0.1:PORT/mcp: ``echo``; ``ask_model`` (sampling),
``ask_user`` (elicitation), ``roots`` (roots/list), ``count`` (progress and a log message
per step); the resource ``sdk://readme``, the template ``sdk://items/{item}``, the prompt
``review`` and completions for it.
"""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, PromptReference, SamplingMessage, TextContent
from pydantic import BaseModel

port = int(sys.argv[1])
server = MCPServer("sdk-features")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return f"sdk says {text}"


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Ask the caller's model."""
    reply = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=20,
        related_request_id=ctx.request_id)
    return f"model said {reply.content.text}"


class Name(BaseModel):
    name: str


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Ask the caller's user for a name."""
    answer = await ctx.elicit("Your name?", Name)
    return f"user said {answer.data.name}" if answer.action == "accept" else f"user {answer.action}"


@server.tool()
async def roots(ctx: Context) -> str:
    """List the caller's roots."""
    listed = await ctx.session.list_roots()
    return ",".join(str(root.uri) for root in listed.roots)


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Count, reporting progress and logging each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await ctx.warning(f"sdk step {i}")
    return f"counted to {n}"


@server.resource("sdk://readme")
def readme() -> str:
    """The readme."""
    return "sdk readme"


@server.resource("sdk://items/{item}")
def item(item: str) -> str:
    """One item."""
    return f"sdk item {item}"


@server.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review: {code}"


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and argument.name == "code":
        return Completion(values=[v for v in ["print()", "pass"] if v.startswith(argument.value)])
    return Completion(values=[v for v in ["apple", "apricot"] if v.startswith(argument.value)])


server.run("streamable-http", host="127.0.0.1", port=port)
