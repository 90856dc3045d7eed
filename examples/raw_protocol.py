"""MCP line by line: talk to the weather server with nothing but json and subprocess.

This is the whole protocol a stdio client speaks, with no library in the
way. Every line sent (→) and received (←) is printed.

    python examples/raw_protocol.py
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Setup: the client starts the server as a child process. The server reads
# JSON-RPC messages from its stdin and writes them to its stdout, one per
# line; its stderr is free for logs.
# ---------------------------------------------------------------------------
server = subprocess.Popen([sys.executable, os.path.join(HERE, "weather_server.py")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")


def send(message: dict) -> None:
    line = json.dumps(message, ensure_ascii=False)  # one line: json.dumps never emits a raw newline
    print("→", line)
    server.stdin.write(line + "\n")
    server.stdin.flush()


def receive() -> dict:
    line = server.stdout.readline()
    print("←", line.rstrip("\n"))
    return json.loads(line)


# ---------------------------------------------------------------------------
# 1. The handshake. The client says which protocol version it speaks and
#    what it can do; the server answers with the version it agrees to, its
#    capabilities and its name. Then the client confirms with a
#    notification (no "id": nobody answers a notification).
# ---------------------------------------------------------------------------
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                 "clientInfo": {"name": "raw-protocol-example", "version": "1.0"}}})
init = receive()
print(f"   the server agreed to protocol {init['result']['protocolVersion']}")
send({"jsonrpc": "2.0", "method": "notifications/initialized"})

# ---------------------------------------------------------------------------
# 2. Discovery. tools/list returns each tool's name, description and the
#    JSON Schema of its arguments (a longer list would come in pages, with
#    "nextCursor" pointing at the next one).
# ---------------------------------------------------------------------------
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools = receive()["result"]["tools"]
print(f"   {len(tools)} tools: {', '.join(tool['name'] for tool in tools)}")

# ---------------------------------------------------------------------------
# 3. A call. The answer's "content" is a list of blocks for the model to
#    read; "isError": true would mean the tool ran and failed.
# ---------------------------------------------------------------------------
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
      "params": {"name": "get_weather", "arguments": {"city": "Kraków"}}})
result = receive()["result"]
print(f"   the tool said: {result['content'][0]['text']}")

# ---------------------------------------------------------------------------
# 4. A mistake. Asking for a method that does not exist is a JSON-RPC
#    error (-32601), not a crash: the connection lives on.
# ---------------------------------------------------------------------------
send({"jsonrpc": "2.0", "id": 4, "method": "weather/predict_lottery"})
error = receive()["error"]
print(f"   error {error['code']}: {error['message']}")

# ---------------------------------------------------------------------------
# 5. Shutdown. Closing the server's stdin is the signal to exit.
# ---------------------------------------------------------------------------
server.stdin.close()
print(f"   the server exited with code {server.wait(timeout=10)}")
server.stdout.close()
