"""A POST over the body cap under gunicorn (issue 29): a client that sends the whole body before
it reads (``http.client``, as most scripts) reads the 413 and its JSON-RPC error, not a broken
pipe. gunicorn drains only 64 KiB of a body the app left unread, then closes, and the client's
kernel, still sending, gets a reset (RFC 9112 §9.6); the app now reads and drops the body first,
up to ``replies.DRAIN_BYTES``."""

import json
import os
import subprocess
from http.client import HTTPConnection

import pytest

from conftest import PY, ROOT, free_port, wait_until_listening

ACCEPT = "application/json, text/event-stream"
MiB = 1024 * 1024
INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})


@pytest.fixture(scope="module")
def gunicorn():
    """A real gunicorn (gthread) serving examples/http_server.py's app (max_body: 4 MiB)."""
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "gunicorn", "-k", "gthread", "-w", "1", "--threads", "2",
                             "-b", f"127.0.0.1:{port}", "examples.http_server:sessionless_app"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    try:
        wait_until_listening(proc, port)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:  # (never left running)
            proc.kill()
            proc.wait(5)
        proc.stderr.close()


def oversized(megabytes: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"method":"ping","pad":"' + b"x" * (megabytes * MiB) + b'"}'


def assert_413(conn: HTTPConnection) -> None:
    answer = conn.getresponse()
    body = json.loads(answer.read())
    assert answer.status == 413, (answer.status, body)
    assert body["id"] is None and body["error"]["code"] == -32600
    assert body["error"]["message"].startswith("Payload Too Large: the limit is 4194304 bytes")


def test_a_16mb_body_over_a_4mb_cap_gets_a_413_the_client_reads_under_gunicorn(gunicorn):
    conn = HTTPConnection("127.0.0.1", gunicorn, timeout=20)
    try:
        conn.request("POST", "/mcp", body=oversized(16), headers={"Content-Type": "application/json", "Accept": ACCEPT})
        assert_413(conn)  # was: BrokenPipeError from conn.request(), the answer never read
        # The body was read to its end: the same connection serves the next request.
        conn.request("POST", "/mcp", body=INIT, headers={"Content-Type": "application/json", "Accept": ACCEPT})
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["result"]["serverInfo"]
    finally:
        conn.close()


def test_a_chunked_body_over_the_cap_gets_a_413_the_client_reads_under_gunicorn(gunicorn):
    """No Content-Length: the app finds the body too large after max_body + 1 bytes, then reads
    the rest to its end before answering."""
    data = oversized(16)
    chunks = (data[i:i + MiB] for i in range(0, len(data), MiB))
    conn = HTTPConnection("127.0.0.1", gunicorn, timeout=20)
    try:
        conn.request("POST", "/mcp", body=chunks, encode_chunked=True,
                     headers={"Content-Type": "application/json", "Accept": ACCEPT, "Transfer-Encoding": "chunked"})
        assert_413(conn)
    finally:
        conn.close()
