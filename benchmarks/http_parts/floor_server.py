"""The floor: the least an MCP server over HTTP can do, with the standard library only.

    python benchmarks/http_parts/floor_server.py PORT

``http.server.ThreadingHTTPServer`` (a thread per connection, a listen
backlog of 128), HTTP/1.1 keep-alive, ``TCP_NODELAY``, and each answer written in one ``send`` (status
line, headers and body together: no Nagle / delayed-ACK stall, which costs ~44 ms a
request). It parses the body (it must, to answer with the
request's id) and answers just enough MCP for the benchmark and for
minimcp's client: ``initialize``, ``server/discover``, ``tools/list``,
``tools/call`` of ``echo`` (in either wire: 2026-07-28 results carry
``resultType``), ``ping``; 202 for notifications, 405 for GET and DELETE.
No sessions, no header checks, no validation: every other server is quoted
as a ratio to this one, so it must stay this small.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ECHO_TOOL = {
    "name": "echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
MODERN = "2026-07-28"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def answer(method, params):
    if method == "tools/call":
        return {"content": [{"type": "text", "text": params["arguments"]["text"]}], "isError": False}
    if method == "initialize":
        version = params.get("protocolVersion")
        return {"protocolVersion": version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "floor", "version": "0"}}
    if method == "server/discover":
        return {"supportedVersions": [MODERN, *reversed(HANDSHAKE_VERSIONS)], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "floor", "version": "0"}}}
    if method == "tools/list":
        return {"tools": [ECHO_TOOL]}
    if method == "ping":
        return {}
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # TCP_NODELAY

    def do_POST(self):
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message or "method" not in message:
            self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            return
        params = message.get("params") or {}
        result = answer(message["method"], params)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        else:
            if "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {}):
                result["resultType"] = "complete"
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        body = json.dumps(reply).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(body), body))

    def do_GET(self):
        self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n")

    do_DELETE = do_GET

    def log_message(self, format, *args):
        pass


class Server(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog: the stdlib's 5 resets a burst of connects


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
