"""MCP tools in the shapes LLM APIs use for tool calling, and the model's tool calls back.

For each API, four plain-dict steps (no vendor SDK is imported)::

                       OpenAI Chat Completions     OpenAI Responses              Anthropic Messages
    tool definitions   to_openai_chat_tools        to_openai_responses_tools     to_anthropic_tools
    read a call        parse_openai_chat_call      parse_openai_responses_call   parse_anthropic_call
    result -> reply    openai_chat_result          openai_responses_result       anthropic_result
    all of it          handle_openai_chat_call     handle_openai_responses_call  handle_anthropic_call

What the model got wrong comes back to the model as an error result, not as
an exception: arguments that are not a JSON object, or a tool name it made up
(a server's ``-32602``). Only a failing connection (``Timeout``,
``ConnectionClosed``) raises. This module does not call any LLM API and does
not keep the conversation: add the dicts it returns to your own messages.

The shapes follow the vendors' own SDK type definitions. openai-python
``src/openai/types/``: ``shared_params/function_definition.py`` (names
``[a-zA-Z0-9_-]``, at most 64), ``chat/chat_completion_message_tool_call.py``,
``chat/chat_completion_tool_message_param.py`` (text only),
``responses/function_tool_param.py`` (``strict`` defaults to true),
``responses/response_function_tool_call.py``, ``responses/response_input_item_param.py``
(``output``: a string or ``input_text`` / ``input_image`` items).
anthropic-sdk-python ``src/anthropic/types/``: ``tool_param.py``,
``tool_use_block.py``, ``tool_result_block_param.py``; and the docs page
platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls.
"""

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..client.client import Client
from ..client.results import Tool, ToolResult
from ..errors import RPCError
from .hub import ToolHub

__all__ = [
    "ToolCall",
    "to_openai_chat_tools",
    "to_openai_responses_tools",
    "to_anthropic_tools",
    "parse_openai_chat_call",
    "parse_openai_responses_call",
    "parse_anthropic_call",
    "run_tool_call",
    "openai_chat_result",
    "openai_responses_result",
    "anthropic_result",
    "handle_openai_chat_call",
    "handle_openai_responses_call",
    "handle_anthropic_call",
]

#: What runs a model's tool calls: one server's client, or a hub of several.
Caller = Union[Client, ToolHub]
#: Where tool definitions come from: a client or hub, or its tools (``Tool`` or ``tools/list`` dicts).
Tools = Union[Client, ToolHub, Iterable[Union[Tool, Dict[str, Any]]]]

#: The tool names both vendors accept.
API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# The image types both vendors take in a tool result; others become a note.
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false"}


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call a tool, read from any of the three APIs.

    Attributes:
        id: the API's id for the call; the reply must carry it back.
        name: the tool's name, as the model wrote it.
        arguments: the arguments (``{}`` when they could not be read).
        error: why the arguments could not be read, or ``None``. A call with
            an error is not made; the model is told the error instead.
    """

    id: str
    name: str
    arguments: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None


# -- tool definitions ------------------------------------------------------------------------


def _tool_list(tools: Tools) -> List[Tool]:
    if isinstance(tools, (Client, ToolHub)):
        tools = tools.tools
    found = []
    for tool in tools:
        tool = tool if isinstance(tool, Tool) else Tool(tool)
        if not API_NAME.fullmatch(tool.name):
            raise ValueError(f"the tool name {tool.name!r} is not one LLM APIs accept ([A-Za-z0-9_-], "
                             f"at most 64 characters); list the tools through a minimcp.integrations.hub.ToolHub, "
                             f"which renames them")
        found.append(tool)
    return found


def _described(tool: Tool) -> Tuple[str, str, Dict[str, Any]]:
    # A copy of the schema: a caller adjusting one API's tools must not change the client's cache.
    return tool.name, tool.description or tool.title or "", copy.deepcopy(tool.input_schema)


def to_openai_chat_tools(tools: Tools) -> List[Dict[str, Any]]:
    """Return ``tools`` as Chat Completions ``tools``: ``{"type": "function", "function": {...}}``.

    Args:
        tools: a :class:`~minimcp.Client`, a ToolHub, or a list of
            :class:`~minimcp.client.results.Tool` (or ``tools/list`` dicts).

    Returns:
        One definition per tool, with a copy of its input schema.

    Raises:
        ValueError: a tool name the APIs would refuse (use a ToolHub, which renames).
    """
    result = []
    for tool in _tool_list(tools):
        name, description, schema = _described(tool)
        result.append({"type": "function",
                       "function": {"name": name, "description": description, "parameters": schema}})
    return result


def to_openai_responses_tools(tools: Tools) -> List[Dict[str, Any]]:
    """Return ``tools`` as Responses API ``tools``: ``{"type": "function", "name", ...}``.

    ``strict`` is false: the Responses API makes it true by default, and a
    strict schema must list every property as required, which an MCP tool
    with optional arguments does not.

    Args, Returns and Raises: as for :func:`to_openai_chat_tools`.
    """
    result = []
    for tool in _tool_list(tools):
        name, description, schema = _described(tool)
        result.append({"type": "function", "name": name, "description": description, "parameters": schema,
                       "strict": False})
    return result


def to_anthropic_tools(tools: Tools) -> List[Dict[str, Any]]:
    """Return ``tools`` as Messages API ``tools``: ``{"name", "description", "input_schema"}``.

    Args, Returns and Raises: as for :func:`to_openai_chat_tools`.
    """
    result = []
    for tool in _tool_list(tools):
        name, description, schema = _described(tool)
        result.append({"name": name, "description": description, "input_schema": schema})
    return result


# -- reading the model's calls ---------------------------------------------------------------


def _field(obj: Any, key: str) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for a vendor SDK object; ``None`` if absent."""
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _check_type(obj: Any, expected: str) -> None:
    kind = _field(obj, "type")
    if kind is not None and kind != expected:
        raise ValueError(f"expected a {expected!r} item, got type {kind!r}")


def _read_arguments(raw: Any, name: str) -> Tuple[Dict[str, Any], Optional[str]]:
    """Return ``(arguments, None)``, or ``({}, what to tell the model)``."""
    if isinstance(raw, str):
        if not raw.strip():  # some models send "" for a tool without parameters
            return {}, None
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, (f"The arguments for tool {name!r} are not valid JSON ({exc.msg}: line {exc.lineno} "
                        f"column {exc.colno}). Send one JSON object that matches the tool's input schema.")
    if raw is None:
        return {}, None
    if not isinstance(raw, dict):
        what = _JSON_TYPES.get(type(raw), type(raw).__name__)
        return {}, f"The arguments for tool {name!r} must be a JSON object, not {what}."
    return raw, None


def parse_openai_chat_call(tool_call: Any) -> ToolCall:
    """Read one entry of a Chat Completions ``message.tool_calls``.

    Args:
        tool_call: ``{"id", "type": "function", "function": {"name", "arguments"}}``
            (``arguments`` a JSON string), as a dict or an SDK object.

    Returns:
        The call; its ``error`` is set when the arguments are not a JSON object.

    Raises:
        ValueError: the item's ``type`` is not ``"function"`` (a programming error, not the model's).
    """
    _check_type(tool_call, "function")
    function = _field(tool_call, "function") or {}
    name = str(_field(function, "name") or "")
    arguments, error = _read_arguments(_field(function, "arguments"), name)
    return ToolCall(str(_field(tool_call, "id") or ""), name, arguments, error)


def parse_openai_responses_call(item: Any) -> ToolCall:
    """Read a Responses API ``function_call`` output item.

    Args:
        item: ``{"type": "function_call", "call_id", "name", "arguments"}``, a dict or an SDK object.

    Returns and Raises: as for :func:`parse_openai_chat_call` (the id is ``call_id``).
    """
    _check_type(item, "function_call")
    name = str(_field(item, "name") or "")
    arguments, error = _read_arguments(_field(item, "arguments"), name)
    return ToolCall(str(_field(item, "call_id") or ""), name, arguments, error)


def parse_anthropic_call(block: Any) -> ToolCall:
    """Read an Anthropic ``tool_use`` content block.

    Args:
        block: ``{"type": "tool_use", "id", "name", "input"}``, a dict or an SDK object.

    Returns and Raises: as for :func:`parse_openai_chat_call`.
    """
    _check_type(block, "tool_use")
    name = str(_field(block, "name") or "")
    arguments, error = _read_arguments(_field(block, "input"), name)
    return ToolCall(str(_field(block, "id") or ""), name, arguments, error)


def _error_result(message: str) -> ToolResult:
    return ToolResult({"content": [{"type": "text", "text": message}], "isError": True})


def run_tool_call(target: Caller, call: ToolCall, *, timeout: Optional[float] = None) -> ToolResult:
    """Make the call on a client or hub; what the model got wrong becomes an error result.

    Args:
        target: the :class:`~minimcp.Client` or ToolHub to call.
        call: the model's call, from one of the ``parse_*`` functions.
        timeout: seconds to wait (default: the client's).

    Returns:
        The tool's result; an error result (``is_error``) for unreadable
        arguments or a call the server refused (say, a tool name the model made up).

    Raises:
        Timeout, ConnectionClosed: the server did not answer; that is not the model's to fix.
    """
    if call.error is not None:
        return _error_result(call.error)
    try:
        return target.call_tool(call.name, call.arguments, timeout=timeout)
    except RPCError as exc:  # most often -32602, a tool name the model made up
        return _error_result(f"The call to tool {call.name!r} was refused: {exc.message}")


# -- results back to the model -----------------------------------------------------------------


def _text(text: str) -> Dict[str, Any]:
    return {"type": "text", "text": text}


def _parts(result: ToolResult) -> List[Dict[str, Any]]:
    """The result's content as the text and image parts all three APIs take; the rest as notes."""
    parts = []
    for block in result.content:
        kind = block.get("type")
        resource = block.get("resource") or {}
        if kind == "text":
            parts.append(_text(block.get("text") or ""))
        elif kind == "image" and block.get("mimeType") in _IMAGE_TYPES:
            parts.append({"type": "image", "mime": block["mimeType"], "data": block.get("data", "")})
        elif kind == "resource" and "text" in resource:
            parts.append(_text(resource["text"]))
        elif kind == "resource_link":
            parts.append(_text(f"[resource {block.get('name', '')}: {block.get('uri', '')}]"))
        else:
            mime = block.get("mimeType") or resource.get("mimeType") or "unknown type"
            parts.append(_text(f"[{kind} content ({mime}) left out: only text and images can be passed on]"))
    if not parts and result.structured is not None:
        # spec 2025-06-18 server/tools: structured content SHOULD also come as text; not every server does.
        parts.append(_text(json.dumps(result.structured, ensure_ascii=False)))
    return parts


def _openai_parts(result: ToolResult) -> List[Dict[str, Any]]:
    parts = [part for part in _parts(result) if part["type"] != "text" or part["text"]]
    if result.is_error:  # OpenAI replies have no error flag: say it in words
        if parts and parts[0]["type"] == "text":
            parts[0] = _text("Error: " + parts[0]["text"])
        else:
            parts.insert(0, _text("Error"))
    return parts


def openai_chat_result(call_id: str, result: ToolResult) -> Dict[str, Any]:
    """Return the Chat Completions ``{"role": "tool", "tool_call_id", "content"}`` message for a result.

    Args:
        call_id: the ``id`` of the model's tool call.
        result: the tool's result.

    Returns:
        The message; its content is text, since Chat Completions tool messages
        carry no images (an image becomes a note saying it was left out), and
        an error result's text starts with ``Error:``.
    """
    lines = [part["text"] if part["type"] == "text"
             else f"[{part['mime']} image left out: Chat Completions tool messages carry text only]"
             for part in _openai_parts(result)]
    return {"role": "tool", "tool_call_id": call_id, "content": "\n".join(lines)}


def openai_responses_result(call_id: str, result: ToolResult) -> Dict[str, Any]:
    """Return the Responses API ``{"type": "function_call_output", "call_id", "output"}`` item.

    Args:
        call_id: the ``call_id`` of the model's ``function_call``.
        result: the tool's result.

    Returns:
        The item; ``output`` is a string, or, when the result has images, a
        list of ``input_text`` and ``input_image`` (data URL) items. An error
        result's text starts with ``Error:``.
    """
    parts = _openai_parts(result)
    if all(part["type"] == "text" for part in parts):
        output: Union[str, List[Dict[str, Any]]] = "\n".join(part["text"] for part in parts)
    else:
        output = [{"type": "input_text", "text": part["text"]} if part["type"] == "text"
                  else {"type": "input_image", "image_url": f"data:{part['mime']};base64,{part['data']}"}
                  for part in parts]
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def anthropic_result(tool_use_id: str, result: ToolResult) -> Dict[str, Any]:
    """Return the Anthropic ``tool_result`` block for a result (it goes in the next user message).

    Args:
        tool_use_id: the ``id`` of the model's ``tool_use`` block.
        result: the tool's result.

    Returns:
        The block: MCP text becomes text blocks, images base64 image blocks,
        and ``is_error`` carries the result's ``isError``.
    """
    content = []
    for part in _parts(result):
        if part["type"] == "image":
            content.append({"type": "image",
                            "source": {"type": "base64", "media_type": part["mime"], "data": part["data"]}})
        elif part["text"]:  # the API refuses empty text blocks
            content.append({"type": "text", "text": part["text"]})
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content,
            "is_error": result.is_error}


# -- all of it: call in, reply out ------------------------------------------------------------


def handle_openai_chat_call(target: Caller, tool_call: Any, *, timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run one entry of an assistant message's ``tool_calls``; return the ``role: "tool"`` reply.

    Example::

        for tool_call in message["tool_calls"]:
            messages.append(handle_openai_chat_call(hub, tool_call))

    Args:
        target: the :class:`~minimcp.Client` or ToolHub to call.
        tool_call: the entry, as :func:`parse_openai_chat_call` takes it.
        timeout: seconds to wait (default: the client's).

    Returns:
        The reply, as :func:`openai_chat_result` builds it.

    Raises:
        Timeout, ConnectionClosed: see :func:`run_tool_call`.
    """
    call = parse_openai_chat_call(tool_call)
    return openai_chat_result(call.id, run_tool_call(target, call, timeout=timeout))


def handle_openai_responses_call(target: Caller, item: Any, *, timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run one ``function_call`` output item; return its ``function_call_output`` input item.

    Args, Returns: as for :func:`handle_openai_chat_call`, with :func:`openai_responses_result`.

    Raises:
        Timeout, ConnectionClosed: see :func:`run_tool_call`.
    """
    call = parse_openai_responses_call(item)
    return openai_responses_result(call.id, run_tool_call(target, call, timeout=timeout))


def handle_anthropic_call(target: Caller, block: Any, *, timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run one ``tool_use`` content block; return its ``tool_result`` block.

    Example::

        results = [handle_anthropic_call(hub, block) for block in reply["content"]
                   if block["type"] == "tool_use"]
        messages.append({"role": "user", "content": results})

    Args, Returns: as for :func:`handle_openai_chat_call`, with :func:`anthropic_result`.

    Raises:
        Timeout, ConnectionClosed: see :func:`run_tool_call`.
    """
    call = parse_anthropic_call(block)
    return anthropic_result(call.id, run_tool_call(target, call, timeout=timeout))
