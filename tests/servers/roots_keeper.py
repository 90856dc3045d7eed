"""A stdio MCP server written line by line, as server-everything and the filesystem server behave:
it asks ``roots/list`` after ``notifications/initialized`` and on every
``notifications/roots/list_changed``, keeps the roots, and its one tool answers with the roots it
keeps. tests/test_proxy.py mounts it behind a proxy to check that no caller gets another's."""

import json
import sys
import threading

roots = []
lock = threading.Lock()
next_id = [1000]


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def ask_roots():
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": next_id[0], "method": "roots/list", "params": {}})


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "roots-keeper", "version": "1"}}})
    elif method in ("notifications/initialized", "notifications/roots/list_changed"):
        ask_roots()
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
            {"name": "allowed_dirs", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        text = "allowed: " + ",".join(root["uri"] for root in roots)
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
    elif "result" in message and isinstance(message["result"].get("roots"), list):
        roots = message["result"]["roots"]
    elif method is not None and "id" in message:  # (server/discover, say: this one speaks the handshake era)
        send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"unknown: {method}"}})
