"""A small typed user program: what a user's ``mypy --strict`` must accept from minimcp.

.ci/run's "types" step checks this folder with ``mypy --strict tests/typing/``, and
tests/test_typing.py runs the program, so it stays true at run time on every Python.

How it catches a regression: each ``typed_*`` helper returns a value straight from minimcp
under a declared type. If a decorator lost the function's type, or a result attribute became
``Any``, ``--strict`` fails on that line ("Returning Any from function declared to return ...",
or "Untyped decorator makes function ... untyped"); a wrong type fails as an incompatible return.
"""

from typing import Dict, List, Optional

import minimcp
from minimcp import Context, Server
from minimcp.client.results import ContentBlock, JSONValue, PromptResult, ResourceResult, Tool, ToolResult

server = Server("typed", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def shout(text: str, ctx: Context) -> str:
    """Say ``text`` louder."""
    ctx.log("info", f"shouting {len(text)} characters")
    return text.upper()


@server.tool(name="weather", annotations={"readOnlyHint": True})
def weather(city: str) -> Dict[str, float]:
    """The weather in a city, as structured content."""
    return {"celsius": 21.5 if city == "Paris" else 12.0}


@server.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """One note, by name."""
    return f"the note called {name}"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


@server.prompt
def farewell(name: str) -> str:
    """Say goodbye."""
    return f"Say goodbye to {name}."


@server.completion(prompt="greet", argument="name")
def names(value: str) -> List[str]:
    """The names that start with what was typed."""
    return [name for name in ("ada", "alan", "grace") if name.startswith(value)]


# -- the decorated functions are still the functions, with their types ------------------------

def typed_add() -> int:
    return add(2, 3)


def typed_shout(ctx: Context) -> str:
    return shout("hi", ctx)


def typed_weather() -> Dict[str, float]:
    return weather("Paris")


def typed_greet() -> str:
    return greet("Ada") + farewell("Ada")


def typed_names() -> List[str]:
    return names("a")


# -- what a client reads, with the types it has ------------------------------------------------

def typed_text(result: ToolResult) -> str:
    return result.text


def typed_content(result: ToolResult) -> List[ContentBlock]:
    return result.content


def typed_structured(result: ToolResult) -> JSONValue:
    return result.structured


def typed_celsius(result: ToolResult) -> Optional[float]:
    structured = result.structured
    if isinstance(structured, dict):  # a JSON object; from 2026-07-28 on it may be any JSON value
        celsius = structured.get("celsius")
        return float(celsius) if isinstance(celsius, (int, float)) else None
    return None


def typed_raw(result: ToolResult) -> Dict[str, object]:
    return result.raw


def typed_is_error(result: ToolResult) -> bool:
    return result.is_error


def typed_tool_names(tools: List[Tool]) -> List[str]:
    return [tool.name for tool in tools]


def typed_description(tool: Tool) -> Optional[str]:
    return tool.description


def typed_resource_text(result: ResourceResult) -> str:
    return result.text


def typed_blob(result: ResourceResult) -> Optional[bytes]:
    return result.blob


def typed_messages(result: PromptResult) -> List[Dict[str, object]]:
    return result.messages


def main() -> None:
    """Serve ``server`` in memory, call everything it offers, and check the answers."""
    assert (typed_add(), typed_weather(), typed_greet()) == (5, {"celsius": 21.5}, "Say hello to Ada.Say goodbye to Ada.")
    assert typed_names() == ["ada", "alan"]
    with minimcp.connect("memory", server=server) as client:
        assert sorted(typed_tool_names(client.list_tools())) == ["add", "shout", "weather"]
        assert typed_description(client.list_tools()[0]) == "Add two integers."
        total = client.call_tool("add", {"a": 2, "b": 40})
        assert (typed_text(total), typed_is_error(total), typed_structured(total)) == ("42", False, {"result": 42})
        assert typed_content(total) == [{"type": "text", "text": "42"}]
        assert typed_raw(total)["content"] == typed_content(total)
        assert typed_text(client.call_tool("shout", {"text": "hi"})) == "HI"
        assert typed_celsius(client.call_tool("weather", {"city": "Paris"})) == 21.5
        read = client.read_resource("notes://groceries")
        assert (typed_resource_text(read), typed_blob(read)) == ("the note called groceries", None)
        prompt = client.get_prompt("greet", {"name": "Ada"})
        assert typed_messages(prompt)[0]["role"] == "user"
        completion = client.complete({"type": "ref/prompt", "name": "greet"}, "name", "g")
        values: List[str] = completion.values
        assert values == ["grace"]


if __name__ == "__main__":
    main()
    print("ok")
