"""Every example runs and prints what it should; the README's code is the examples' code."""

import os
import re
import subprocess

import pytest

import minimcp

from conftest import EXAMPLES, PY, ROOT, example, free_port, wait_until_listening


def run_example(name, **kwargs):
    return subprocess.run([PY, example(name)], capture_output=True, text=True, encoding="utf-8",
                          timeout=60, **kwargs)


def test_quickstart_lists_tools_and_calls_one():
    out = run_example("quickstart.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "connected to weather (protocol 2026-07-28)",
        "  tool get_weather: Get the current weather for a city.",
        "  tool get_forecast: Get a forecast for the next few days.",
        "Kraków: 22°C, sunny",
        "  day 1: 22°C, sunny",
        "  day 2: 23°C, sunny",
    ]


def test_quickstart_with_trace_shows_the_wire():
    out = run_example("quickstart.py", env=dict(os.environ, MINIMCP_TRACE="1"))
    assert out.returncode == 0
    assert 'client → weather_server.py  {"jsonrpc":"2.0","id":1,"method":"server/discover"' in out.stderr
    assert "server weather" not in out.stderr  # one side only
    both = run_example("quickstart.py", env=dict(os.environ, MINIMCP_TRACE="both"))
    assert both.returncode == 0
    assert 'server weather ← client  {"jsonrpc":"2.0","id":1,"method":"server/discover"' in both.stderr


def test_raw_protocol_walks_through_the_protocol():
    out = run_example("raw_protocol.py")
    assert out.returncode == 0, out.stderr
    assert "   the server agreed to protocol 2025-11-25" in out.stdout
    assert "   2 tools: get_weather, get_forecast" in out.stdout
    assert "   the tool said: Kraków: 22°C, sunny" in out.stdout
    assert "   error -32601: Method not found: weather/predict_lottery" in out.stdout
    assert "   the server exited with code 0" in out.stdout


def test_weather_server_tools_in_memory():
    import importlib.util

    spec = importlib.util.spec_from_file_location("weather_server", example("weather_server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with minimcp.connect("memory", server=module.server) as client:
        assert client.call_tool("get_weather", {"city": "London", "units": "f"}).text == "London: 57°F, rain"
        forecast = client.call_tool("get_forecast", {"city": "Tokyo", "days": 2})
        assert forecast.structured == {"city": "Tokyo", "days": [{"day": 1, "celsius": 27, "sky": "humid"},
                                                                 {"day": 2, "celsius": 28, "sky": "humid"}]}
    assert module.get_weather("Kraków") == "Kraków: 22°C, sunny"  # the decorator returned the function


def test_readme_opens_with_the_two_commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    first_block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1).splitlines()
    assert first_block == ["pip install . && python examples/quickstart.py",
                           "pip install '.[test]' && python -m pytest"]
    ci = os.path.join(ROOT, ".ci", "run")
    if os.path.exists(ci):  # a checkout; an unpacked sdist carries no CI script
        with open(ci, encoding="utf-8") as f:
            assert "pip install --quiet '.[test]'" in f.read()


def test_readme_python_snippets_are_copied_from_examples():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        snippets = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    sources = ""
    for name in os.listdir(EXAMPLES):
        if name.endswith(".py"):
            with open(os.path.join(EXAMPLES, name), encoding="utf-8") as f:
                sources += f.read()
    assert snippets
    for snippet in snippets:
        assert snippet in sources, f"README snippet not found in examples/:\n{snippet}"


def test_protected_server_example_takes_tokens_from_a_real_authorization_server(oidc_provider):
    """examples/protected_server.py, run as a user would, behind oidc-provider (tests/oidc/)."""
    import requests

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen([PY, example("protected_server.py")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PORT=str(port), MCP_ISSUER=oidc_provider.issuer))
    try:
        wait_until_listening(proc, port)
        refused = requests.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
        assert refused.status_code == 401
        metadata_url = refused.headers["WWW-Authenticate"].split('resource_metadata="')[1].split('"')[0]
        assert requests.get(metadata_url, timeout=10).json()["authorization_servers"] == [oidc_provider.issuer]
        reader = oidc_provider.client_credentials("notes:read notes:write", resource=url)["access_token"]
        with minimcp.connect(url, headers={"Authorization": f"Bearer {reader}"}) as client:
            assert client.call_tool("whoami").structured == {"subject": "service",
                                                             "scopes": ["notes:read", "notes:write"]}
            assert client.call_tool("write_note", {"title": "todo", "text": "ship it"}).text == "saved 'todo'"
            assert client.call_tool("read_note", {"title": "todo"}).text == "ship it"
        only_read = oidc_provider.client_credentials("notes:read", resource=url)["access_token"]
        with minimcp.connect(url, headers={"Authorization": f"Bearer {only_read}"}) as client:
            with pytest.raises(minimcp.RPCError, match="notes:write"):
                client.call_tool("write_note", {"title": "x", "text": "y"})
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
        proc.stderr.close()


def test_protected_server_example_says_what_to_configure():
    out = run_example("protected_server.py", env={k: v for k, v in os.environ.items() if k != "MCP_ISSUER"})
    assert out.returncode == 1 and "set MCP_ISSUER" in out.stderr


def test_long_jobs_runs_a_task_with_progress_and_a_question():
    out = run_example("long_jobs.py")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "started a task: working"
    assert "the job asks: Add an appendix? -> yes" in lines
    assert lines[-1] == "report: 6 pages and an appendix"
    progress = [line for line in lines[1:-1] if line.startswith("  ")]
    assert progress and all(re.fullmatch(r"  (working|input_required|completed): \d/6 page \d written", line)
                            for line in progress), lines


def test_oauth_client_logs_in_through_the_browser_then_reuses_the_token(tmp_path):
    from oauth_fixture import AuthServer, protect

    from minimcp.server.http.wsgiserver import BackgroundServer

    server = minimcp.Server("protected")

    @server.tool()
    def read(text: str = "x") -> str:
        """Read something."""
        return text

    app = server.wsgi_app()
    browser = tmp_path / "browser.py"  # a "browser" that logs in at once: it follows the redirects
    browser.write_text("import sys, requests\nrequests.get(sys.argv[1], timeout=10)\n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path), HOME=str(tmp_path), BROWSER=f"{PY} {browser} %s")
    with AuthServer() as auth_server:
        http = BackgroundServer(protect(app, auth_server, lambda: http.url))
        with http:
            for _ in range(2):
                out = subprocess.run([PY, example("oauth_client.py"), http.url + "/mcp"], capture_output=True,
                                     text=True, timeout=60, env=env)
                assert out.returncode == 0, out.stderr
                assert out.stdout.splitlines() == ["logged in to protected with scopes: mcp:read",
                                                   "  tool read: Read something."]
    app.close()
    assert len(auth_server.calls("/authorize")) == 1  # the second run reused the stored token


def test_middleware_times_limits_and_counts_every_request():
    out = run_example("middleware.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "add(0, 1) = 1",
        "add(1, 1) = 2",
        "add(2, 1) = 3",
        "add(3, 1) refused: rate limit: add may be called 3 times",
        "the client sent: server/discover x1, tools/call x4",
    ]
    timed = [line for line in out.stderr.splitlines() if line.startswith("server: tools/call add took ")]
    assert len(timed) == 4, out.stderr  # the refused call too: the timing middleware is the outer one


def test_call_many_submits_every_call_and_gathers_the_results():
    out = run_example("call_many.py")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Kraków: 22°C, sunny",
        "London: 14°C, rain",
        "Tokyo: 27°C, humid",
        "Lima: 22°C, sunny",
        "Oslo: 22°C, sunny",
        "2 days of forecast for Tokyo",
    ]


def test_mcp_app_runs_as_its_docstring_says():
    """examples/mcp_app.py: a client that declares MCP Apps sees the view-only tool and reads the
    view; one that does not sees only the model's tool."""
    out = run_example("mcp_app.py")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "connected to counter (protocol 2026-07-28)"
    assert lines[1:3] == ["  tool show_counter: view ui://counter/view.html, called by model and app",
                          "  tool increment: view ui://counter/view.html, called by app"]
    assert re.fullmatch(r"the view ui://counter/view.html: \d+ lines of HTML, prefersBorder=True", lines[3])
    assert lines[4:] == ["the model calls show_counter: {'count': 0}",
                         "the view's button calls increment: {'count': 1}",
                         "a client without views sees: show_counter"]
