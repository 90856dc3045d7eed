"""The floor: the least a stdio MCP server can do, with ``json`` and ``sys`` only.

One loop on the main thread: read a line, answer it, flush. It speaks just
enough MCP for the benchmark (``initialize``, ``tools/list``, ``tools/call``
of ``echo``, ``ping``) and ignores notifications. Every other contender is
quoted as a ratio to this one, so it must stay this small: no threads, no
validation, no imports beyond ``json`` and ``sys``.
"""

import json
import sys

ECHO_TOOL = {
    "name": "echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}


def answer(method, params):
    if method == "tools/call":
        return {"content": [{"type": "text", "text": params["arguments"]["text"]}], "isError": False}
    if method == "initialize":
        return {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0"}}
    if method == "tools/list":
        return {"tools": [ECHO_TOOL]}
    if method == "ping":
        return {}
    return None


def main():
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification (or a stray response): nothing to answer
        result = answer(message["method"], message.get("params") or {})
        if result is None:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": -32601, "message": "Method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


main()
