"""The performance fast paths keep the behaviour of the paths they skip (issue 14).

- a stdio server whose tools have builtin hints starts without importing ``typing``;
- the HTTP client's direct POST (urllib3's pool under requests) keeps a cookie the server
  sets and sends it from then on, as requests would;
- the lock hand-off that replaced a Future: an answer, an error, a timeout, a cancel.
"""

import subprocess
import threading

import minimcp
from minimcp import Server
from minimcp.errors import ConnectionClosed, RPCError, Timeout
from minimcp.http.wsgiserver import BackgroundServer
from minimcp.session import Session
from minimcp.transports.memory import pair

from conftest import PY

STDIO_SERVER = """
import sys
from minimcp import Server
server = Server("plain")

@server.tool()
def echo(text: str, times: int = 1, loud: bool = False, ratio: float = 1.0) -> str:
    '''Return the text.'''
    return text * times

import minimcp.server.running, minimcp.transports.stdio  # what run() loads for stdio
tool = server.get_tool("echo")
print(sorted(tool.input_schema["properties"]), tool.input_schema["required"], "typing" in sys.modules)
"""


def test_a_stdio_server_with_builtin_hints_starts_without_typing():
    out = subprocess.run([PY, "-I", "-c", STDIO_SERVER], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["['loud',", "'ratio',", "'text',", "'times']", "['text']", "False"]


def test_hints_typing_must_resolve_still_give_the_same_schema():
    from typing import Optional

    server = Server("hints")

    @server.tool()
    def pick(name: "str", count: Optional[int] = None) -> "int":
        """Pick."""
        return count or 0

    schema = server.get_tool("pick").input_schema
    assert schema["properties"]["name"] == {"type": "string"}
    assert schema["required"] == ["name"]
    assert server.get_tool("pick").definition["outputSchema"]["properties"]["result"] == {"type": "integer"}


def test_the_direct_post_keeps_a_cookie_the_server_sets():
    server = Server("cookies")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    app = server.wsgi_app(stateless=True)
    seen = []

    def with_cookie(environ, start_response):  # a sticky load balancer in front of the server
        seen.append(environ.get("HTTP_COOKIE"))

        def start(status, headers, exc_info=None):
            return start_response(status, headers + [("Set-Cookie", "lb=node-7; Path=/")], exc_info)
        return app(environ, start)

    with BackgroundServer(with_cookie) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25") as client:
            assert client.call_tool("echo", {"text": "one"}).text == "one"
            assert client.call_tool("echo", {"text": "two"}).text == "two"
    assert seen[0] is None
    assert seen[-1] == "lb=node-7"


def test_a_pending_request_gets_its_answer_error_timeout_or_cancel():
    a_end, b_end = pair()
    a, b = Session(a_end), Session(b_end)
    release, started = threading.Event(), threading.Event()

    def hold(params, ctx):
        started.set()
        return {"held": release.wait(10)}
    b.handlers["answer"] = lambda params, ctx: {"got": params["x"]}
    b.handlers["refuse"] = lambda params, ctx: (_ for _ in ()).throw(RPCError(-32000, "no"))
    b.handlers["hold"] = hold
    a.start()
    b.start()
    try:
        assert a.request("answer", {"x": 1}) == {"got": 1}
        try:
            a.request("refuse")
            raise AssertionError("no error")
        except RPCError as exc:
            assert exc.code == -32000
        try:
            a.request("hold", timeout=0.2)
            raise AssertionError("no timeout")
        except Timeout:
            pass
        request_id = a.new_request_id()
        result = []

        def call():
            try:
                a.request("hold", request_id=request_id)
            except ConnectionClosed as exc:
                result.append(exc)

        started.clear()
        caller = threading.Thread(target=call)
        caller.start()
        assert started.wait(10)  # the peer runs it: it is in flight
        a.cancel(request_id, "changed my mind")
        caller.join(10)
        assert result and "changed my mind" in str(result[0])
    finally:
        release.set()
        a.close()
        b.close()
