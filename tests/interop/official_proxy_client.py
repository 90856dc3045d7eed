"""The official MCP Python SDK's client driving a minimcp proxy (run in the SDK's venv):

    python official_proxy_client.py URL MODE

MODE is ``auto`` (2026-07-28, which the proxy speaks) or ``legacy`` (the initialize handshake).
It calls one tool of each feature of each server behind tests/interop/proxy_gateway.py, reads
resources, renders prompts, asks for completions, and prints one JSON object of what it saw.
"""

import asyncio
import json
import sys

from mcp.client import Client
from mcp.types import (
    CreateMessageResult,
    ElicitResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    Root,
    TextContent,
)

asked = []
logs = []


async def sampling(context, params):
    asked.append("sampling")
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="from the SDK"), model="m")


async def elicitation(context, params):
    asked.append("elicitation")
    return ElicitResult(action="accept", content={"name": "Ada"})


async def roots(context):
    asked.append("roots")
    return ListRootsResult(roots=[Root(uri="file:///srv/data", name="data")])


async def logged(params):
    logs.append(str(params.data))


def text(result) -> str:
    return " ".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main(url: str, mode: str) -> None:
    seen = {}
    async with Client(url, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation,
                      list_roots_callback=roots, logging_callback=logged, log_level="debug") as client:
        if mode == "legacy":  # the handshake era: log messages come once a level is set
            await client.set_logging_level("debug")
        tools = await client.list_tools()
        seen["tools"] = sorted(tool.name for tool in tools.tools)
        calls = {"every__echo": {"message": "hi"}, "every__get-sum": {"a": 2, "b": 3},
                 "every__trigger-sampling-request": {"prompt": "say hi", "maxTokens": 20},
                 "every__trigger-elicitation-request": {}, "every__get-roots-list": {},
                 "sdk__echo": {"text": "x"}, "sdk__ask_model": {"question": "q"}, "sdk__ask_user": {},
                 "sdk__roots": {}, "mini__ask_model": {"question": "q"}}
        seen["calls"] = {}
        for name, arguments in calls.items():
            result = await client.call_tool(name, arguments)
            seen["calls"][name] = {"error": bool(result.is_error), "text": text(result)}
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        for name, arguments in {"every__trigger-long-running-operation": {"duration": 0.3, "steps": 3},
                                "sdk__count": {"n": 3}, "mini__count": {"n": 3}}.items():
            before = len(progress)
            result = await client.call_tool(name, arguments, progress_callback=on_progress)
            seen["calls"][name] = {"error": bool(result.is_error), "text": text(result),
                                   "progress": progress[before:]}
        resources = await client.list_resources()
        seen["resources"] = sorted(str(resource.uri) for resource in resources.resources)
        templates = await client.list_resource_templates()
        seen["templates"] = sorted(t.uri_template for t in templates.resource_templates)
        seen["reads"] = {}
        for uri in ("every+demo://resource/dynamic/text/1", "sdk+sdk://readme", "mini+mini://hello"):
            read = await client.read_resource(uri)
            seen["reads"][uri] = [getattr(item, "text", None) or "blob" for item in read.contents]
        prompts = await client.list_prompts()
        seen["prompts"] = sorted(prompt.name for prompt in prompts.prompts)
        seen["rendered"] = {}
        for name, arguments in {"every__args-prompt": {"city": "Kraków"}, "sdk__review": {"code": "x = 1"},
                                "mini__greet": {"name": "Zoe"}}.items():
            rendered = await client.get_prompt(name, arguments)
            seen["rendered"][name] = rendered.messages[0].content.text
        completed = await client.complete(PromptReference(type="ref/prompt", name="every__completable-prompt"),
                                          {"name": "department", "value": ""})
        seen["completion_prompt"] = completed.completion.values
        completed = await client.complete(ResourceTemplateReference(type="ref/resource",
                                                                    uri="sdk+sdk://items/{item}"),
                                          {"name": "item", "value": "ap"})
        seen["completion_template"] = completed.completion.values
    seen["asked"] = sorted(set(asked))
    seen["logs"] = logs
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
