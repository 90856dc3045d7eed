"""The HTTP client's direct POST (minimcp/transports/http/direct.py: ``http.client`` on kept-alive connections).

Against a scripted HTTP/1.1 server on a raw socket, which does what real servers and proxies
do to a kept-alive connection:

- closes it while it is idle (its keep-alive timeout): the next POST sees that before it goes
  and takes a fresh connection; the server reads it once;
- reads a POST and closes without answering (a worker killed mid-request): that request fails
  with a clear error and is not sent again (a tool must not run twice); the next is answered;
- closes it in the middle of an answer: that request fails with a clear error and is not
  sent again; the next request is answered on a fresh connection;
- ``close()`` of the transport closes the connection it kept alive.
"""

import json
import socket
import threading
import time

from minimcp.errors import ConnectionClosed
from minimcp.protocol.jsonrpc import Request, Response
from minimcp.transports import Failed
from minimcp.transports.http.streamable import StreamableHTTPTransport


class ScriptedServer:
    """Answers the POSTs of each accepted connection as ``script`` says, one list per connection:
    ``"answer"`` (JSON, kept alive), ``"cut"`` (half an answer, then close), ``"drop"`` (read
    the POST, close with no answer). After its list the connection is closed (``closed[i]`` is
    set then), or with ``wait_for_eof`` read until the client closes it."""

    def __init__(self, script, wait_for_eof=False):
        self.script = script
        self.wait_for_eof = wait_for_eof
        self.bodies = []  # every POST body read, in order
        self.eof_seen = []  # per connection: did the client close it (wait_for_eof)
        self.closed = [threading.Event() for _ in script]
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(10)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/mcp"
        self.thread = threading.Thread(target=self._serve, name="scripted-server")
        self.thread.start()

    def _serve(self):
        with self.listener:
            for index, actions in enumerate(self.script):
                conn, _ = self.listener.accept()
                with conn:
                    conn.settimeout(10)
                    reader = conn.makefile("rb")
                    for action in actions:
                        body = self._read_request(reader)
                        self.bodies.append(body)
                        if action == "drop":
                            break
                        answer = json.dumps({"jsonrpc": "2.0", "id": body["id"],
                                             "result": {"echo": body["id"]}}).encode()
                        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                f"Content-Length: {len(answer)}\r\n\r\n").encode()
                        conn.sendall(head + (answer if action == "answer" else answer[:5]))
                        if action == "cut":
                            break
                    if self.wait_for_eof:
                        self.eof_seen.append(reader.read() == b"")  # (bounded by the socket's timeout)
                    reader.close()
                self.closed[index].set()

    @staticmethod
    def _read_request(reader):
        length = 0
        for _ in range(100):  # the request line and headers
            line = reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(reader.read(length))

    def join(self):
        self.thread.join(15)
        assert not self.thread.is_alive()


def call(transport, request_id):
    """One request as the session sends it: written, then posted and read on this thread."""
    transport.write(Request(request_id, "tools/call", {"name": "echo", "arguments": {}}))
    got = []
    transport.exchange(request_id, time.monotonic() + 10, got.append)
    return got[0] if got else transport.read()  # (an SSE answer is read on a thread: the queue)


def test_a_kept_alive_connection_the_server_closed_while_idle_is_replaced():
    server = ScriptedServer([["answer"], ["answer"]])  # the first connection closes after one answer
    transport = StreamableHTTPTransport(server.url, timeout=10)
    try:
        first = call(transport, 1)
        assert server.closed[0].wait(10)  # the server closed the kept-alive connection while idle
        second = call(transport, 2)  # seen before the POST went: on a fresh connection
    finally:
        transport.close()
        server.join()
    assert type(first) is Response and first.result == {"echo": 1}
    assert type(second) is Response and second.result == {"echo": 2}, second
    assert [body["id"] for body in server.bodies] == [1, 2]  # each read once


def test_a_post_read_then_dropped_without_an_answer_is_not_sent_again():
    server = ScriptedServer([["answer", "drop"], ["answer"]])
    transport = StreamableHTTPTransport(server.url, timeout=10)
    try:
        assert call(transport, 1).result == {"echo": 1}
        dropped = call(transport, 2)  # read by the server, then its connection closed: no answer
        answered = call(transport, 3)
    finally:
        transport.close()
        server.join()
    assert type(dropped) is Failed and dropped.request_id == 2
    assert isinstance(dropped.error, ConnectionClosed) and "without answering" in str(dropped.error), dropped.error
    assert type(answered) is Response and answered.result == {"echo": 3}
    assert [body["id"] for body in server.bodies] == [1, 2, 3]  # 2 once: it may have run


def test_an_answer_cut_off_fails_its_request_and_is_not_sent_again():
    server = ScriptedServer([["cut"], ["answer"]])
    transport = StreamableHTTPTransport(server.url, timeout=10)
    try:
        failed = call(transport, 1)
        answered = call(transport, 2)
    finally:
        transport.close()
        server.join()
    assert type(failed) is Failed and failed.request_id == 1
    assert isinstance(failed.error, ConnectionClosed) and "broke off" in str(failed.error), failed.error
    assert type(answered) is Response and answered.result == {"echo": 2}
    assert [body["id"] for body in server.bodies] == [1, 2]  # 1 once: no resend after bytes came


def test_close_closes_the_kept_alive_connection():
    server = ScriptedServer([["answer", "answer"]], wait_for_eof=True)
    transport = StreamableHTTPTransport(server.url, timeout=10)
    try:
        assert call(transport, 1).result == {"echo": 1}
        assert call(transport, 2).result == {"echo": 2}  # the same connection, kept alive
    finally:
        transport.close()
        server.join()
    assert server.eof_seen == [True]
