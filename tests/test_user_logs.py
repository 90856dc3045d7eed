"""What a person sees on stderr: where ``server.run("http")`` serves, the client's warnings in
the ``minimcp`` command (a server's stray stdout), and everything with ``--trace``."""

import subprocess

import minimcp
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, example, free_port, wait_until_listening

BANNER_SERVER = f"""
print("Welcome to the weather server!")   # a banner on stdout: not JSON-RPC
import runpy
runpy.run_path({example("weather_server.py")!r}, run_name="__main__")
"""


def cli(*args, timeout=60):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          stdin=subprocess.DEVNULL, timeout=timeout)


def test_the_cli_shows_the_warning_about_a_servers_stray_stdout():
    out = cli("tools", "--", PY, "-c", BANNER_SERVER)
    assert out.returncode == 0, out.stderr
    assert "get_weather(" in out.stdout
    assert "minimcp: WARNING: skipping non-JSON output from the server" in out.stderr
    assert "Welcome to the weather server!" in out.stderr
    quiet = cli("tools", "-q", "--", PY, "-c", BANNER_SERVER)
    assert quiet.returncode == 0 and "skipping non-JSON" not in quiet.stderr


def test_a_server_that_prints_a_banner_and_hangs_says_why():
    out = cli("tools", "--timeout", "1", "--", PY, "-c", "import sys; print('starting...', flush=True); sys.stdin.read()")
    assert out.returncode == 3
    assert "skipping non-JSON output from the server" in out.stderr and "'starting...\\n'" in out.stderr
    assert "timed out" in out.stderr


def test_trace_shows_everything_the_client_logs():
    with BackgroundServer(minimcp.Server("x").wsgi_app()) as running:
        url = running.url + "/nothing-here"
        plain = cli("info", url, "--timeout", "10")
        traced = cli("info", url, "--timeout", "10", "--trace")
    for out in (plain, traced):
        assert out.returncode == 3 and f"{url} answered HTTP 404" in out.stderr, out.stderr
    assert "refused Streamable HTTP" not in plain.stderr
    assert "minimcp: INFO minimcp.client.connect: " in traced.stderr and "refused Streamable HTTP" in traced.stderr


def test_run_http_quiet_says_nothing():
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "minimcp", "run", example("weather_server.py"), "--transport", "http",
                             "--port", str(port), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        wait_until_listening(proc, port)
        with minimcp.connect(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.server_info["name"] == "weather"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "serving MCP" not in err and out == ""


def test_the_cli_warns_when_it_falls_back_to_http_sse():
    with BackgroundServer(minimcp.Server("old").wsgi_app(path="/new", sse_path="/old")) as running:
        out = cli("info", running.url + "/old", "--timeout", "10")
    assert out.returncode == 0, out.stderr
    assert "server        old" in out.stdout
    assert "minimcp: WARNING: " in out.stderr and "deprecated 2024-11-05 HTTP+SSE transport" in out.stderr
