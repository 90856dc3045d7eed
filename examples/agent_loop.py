"""The agent loop, without an API key: MCP tools, a model, a tool call, its result.

A ToolHub starts the weather server and lists its tools; ``to_anthropic_tools``
turns them into the Messages API's ``tools``. ``fake_model`` stands in for
``anthropic.Anthropic().messages.create(...)``: it answers first with a canned
``tool_use`` block, then with text built from the tool result it was sent.
Swap in the real call and the loop stays the same.
"""

import json
import os
import sys

from minimcp.integrations.adapters import handle_anthropic_call, to_anthropic_tools
from minimcp.integrations.hub import ToolHub

WEATHER_SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weather_server.py")


def fake_model(messages: list, tools: list) -> dict:
    """Answer like the Messages API would: a tool call first, then text from its result."""
    last = messages[-1]["content"]
    if isinstance(last, str):  # the user's question: ask for the weather tool
        tool = next(t["name"] for t in tools if t["name"].endswith("__get_weather"))
        return {"role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Let me check the weather."},
            {"type": "tool_use", "id": "toolu_01", "name": tool, "input": {"city": "Tokyo"}}]}
    result = last[0]  # the tool_result block we were sent
    return {"role": "assistant", "stop_reason": "end_turn", "content": [
        {"type": "text", "text": f"The weather tool says: {result['content'][0]['text']}."}]}


def main() -> None:
    with ToolHub({"weather": [sys.executable, WEATHER_SERVER]}) as hub:
        tools = to_anthropic_tools(hub)
        print("tools:", ", ".join(tool["name"] for tool in tools))
        messages = [{"role": "user", "content": "What's the weather in Tokyo?"}]
        while True:
            reply = fake_model(messages, tools)
            messages.append({"role": "assistant", "content": reply["content"]})
            if reply["stop_reason"] != "tool_use":
                break
            results = []
            for block in reply["content"]:
                if block["type"] == "tool_use":
                    print("model -> tool_use", block["name"], json.dumps(block["input"]))
                    results.append(handle_anthropic_call(hub, block))
                    print("tool  ->", json.dumps(results[-1], ensure_ascii=False))
            messages.append({"role": "user", "content": results})
        print("model ->", reply["content"][0]["text"])


if __name__ == "__main__":
    main()
