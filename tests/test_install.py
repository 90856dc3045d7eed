"""``minimcp install``, ``servers`` and ``run``, and the README's config commands, as a user runs
them: real subprocesses, real files in a temporary home folder (HOME, XDG_CONFIG_HOME and APPDATA
point there), never the real user config."""

import json
import os
import re
import subprocess
import sys

import pytest

import minimcp

from conftest import PY, ROOT, example

WEATHER = example("weather_server.py")


@pytest.fixture
def home(tmp_path):
    """A temporary home and project folder, and the environment that points a subprocess at them."""
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               APPDATA=str(home / "AppData" / "Roaming"))
    for name in ("CODEX_HOME", "COPILOT_HOME"):
        env.pop(name, None)
    return home, project, env


def minimcp_cli(args, env, cwd, **kwargs):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          env=env, cwd=cwd, timeout=60, **kwargs)


# Where each host's default file lands under the temporary home (Linux/XDG paths on this OS).
def default_file(host, home, project):
    return {"claude-desktop": home / ".config" / "Claude" / "claude_desktop_config.json",
            "claude-code": project / ".mcp.json", "cursor": home / ".cursor" / "mcp.json",
            "vscode": project / ".vscode" / "mcp.json"}[host]


@pytest.mark.parametrize("host", ["claude-desktop", "claude-code", "cursor", "vscode"])
def test_install_a_server_file_then_the_host_can_start_it(home, host):
    home, project, env = home
    out = minimcp_cli(["install", host, WEATHER, "--name", "weather", "--env", "UNITS=c"], env, project)
    assert out.returncode == 0, out.stderr
    path = default_file(host, home, project)
    assert f"added server 'weather' in {path}" in out.stdout
    data = json.loads(path.read_text())
    entry = data["servers" if host == "vscode" else "mcpServers"]["weather"]
    assert entry["command"] == sys.executable and entry["args"] == ["-m", "minimcp", "run", WEATHER]
    assert entry["env"] == {"UNITS": "c"}
    assert entry.get("type") == ("stdio" if host in ("claude-code", "vscode") else None)
    # What the host will do: start the command from its entry (here through minimcp's own reader).
    with minimcp.connect("weather", config=str(path)) as client:
        assert client.call_tool("get_weather", {"city": "Oslo"}).text == "Oslo: 22°C, sunny"


def test_install_merges_keeps_a_backup_and_refuses_to_overwrite(home):
    home, project, env = home
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    original = {"globalShortcut": "Ctrl+Space", "mcpServers": {"files": {"command": "npx", "args": ["fs"]}}}
    path.write_text(json.dumps(original))
    out = minimcp_cli(["install", "claude-desktop", "--name", "files", "--", "uvx", "other"], env, project)
    assert out.returncode == 1 and "already has a server named 'files'" in out.stderr and "--force" in out.stderr
    assert json.loads(path.read_text()) == original  # untouched
    out = minimcp_cli(["install", "claude-desktop", "--name", "weather", "--", "python", WEATHER], env, project)
    assert out.returncode == 0, out.stderr
    merged = json.loads(path.read_text())
    assert merged["globalShortcut"] == "Ctrl+Space"
    assert list(merged["mcpServers"]) == ["files", "weather"]
    assert merged["mcpServers"]["weather"] == {"command": "python", "args": [WEATHER]}
    assert json.loads((path.parent / "claude_desktop_config.json.bak").read_text()) == original
    out = minimcp_cli(["install", "claude-desktop", "--name", "files", "--force", "--", "uvx", "other"], env, project)
    assert out.returncode == 0 and "replaced server 'files'" in out.stdout
    assert json.loads(path.read_text())["mcpServers"]["files"] == {"command": "uvx", "args": ["other"]}
    again = minimcp_cli(["install", "claude-desktop", "--name", "files", "--", "uvx", "other"], env, project)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_dry_run_prints_the_change_and_writes_nothing(home):
    home, project, env = home
    out = minimcp_cli(["install", "cursor", "https://mcp.example.com/mcp", "--name", "remote", "--dry-run"],
                      env, project)
    assert out.returncode == 0, out.stderr
    assert '+    "remote": {' in out.stdout and '+      "url": "https://mcp.example.com/mcp"' in out.stdout
    assert "dry run" in out.stdout
    assert not (home / ".cursor").exists()


def test_claude_code_user_scope_and_listing_every_host(home):
    home, project, env = home
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 3, "projects": {}}))
    assert minimcp_cli(["install", "claude-code", WEATHER, "--scope", "user", "--name", "w1"], env,
                       project).returncode == 0
    data = json.loads(claude_json.read_text())
    assert data["numStartups"] == 3 and data["mcpServers"]["w1"]["type"] == "stdio"
    assert minimcp_cli(["install", "vscode", "--scope", "user", "--name", "w2", "--", PY, WEATHER], env,
                       project).returncode == 0
    assert minimcp_cli(["install", "claude-code", "--name", "w3", "--", "python", WEATHER], env,
                       project).returncode == 0
    out = minimcp_cli(["servers", "--json"], env, project)
    assert out.returncode == 0, out.stderr
    found = {(row["name"], row["host"], row["scope"], row["file"]) for row in json.loads(out.stdout)["servers"]}
    assert found == {("w1", "claude-code", "user", str(claude_json)),
                     ("w2", "vscode", "user", str(home / ".config" / "Code" / "User" / "mcp.json")),
                     ("w3", "claude-code", "project", str(project / ".mcp.json"))}
    text = minimcp_cli(["servers"], env, project).stdout
    assert f"from {claude_json} (Claude Code, user)" in text
    with minimcp.connect("w2", config=str(home / ".config" / "Code" / "User" / "mcp.json")) as client:
        assert client.server_info["name"] == "weather"


def test_install_refuses_what_cannot_work(home):
    home, project, env = home
    out = minimcp_cli(["install", "claude-desktop", "https://x.example/mcp"], env, project)
    assert out.returncode == 1 and "stdio servers only" in out.stderr
    out = minimcp_cli(["install", "cursor", "nope.py"], env, project)
    assert out.returncode == 2 and "no such file: 'nope.py'" in out.stderr
    out = minimcp_cli(["install", "claude-desktop", WEATHER, "--scope", "project"], env, project)
    assert out.returncode == 1 and "Claude Desktop has no 'project' config" in out.stderr
    assert not any(home.rglob("*.json"))


def test_url_options_are_for_url_servers_and_env_for_started_ones(home):
    home, project, env = home
    out = minimcp_cli(["install", "cursor", WEATHER, "--token-env", "TOKEN"], env, project)
    assert out.returncode == 2 and "--token-env is for a URL server" in out.stderr and "--env KEY=VALUE" in out.stderr
    out = minimcp_cli(["install", "cursor", WEATHER, "-H", "X-A: b"], env, project)
    assert out.returncode == 2 and "--header is for a URL server" in out.stderr
    out = minimcp_cli(["install", "cursor", "https://x.example/mcp", "--env", "A=b"], env, project)
    assert out.returncode == 2 and "--token-env VAR" in out.stderr
    out = minimcp_cli(["install", "cursor", "https://x.example/mcp", "-H", "no colon"], env, project)
    assert out.returncode == 2 and "expected --header 'Name: value'" in out.stderr
    out = minimcp_cli(["install", "claude-desktop", "https://x.example/mcp", "--token-env", "T"], env, project)
    assert out.returncode == 1 and "stdio servers only" in out.stderr
    out = minimcp_cli(["install", "claude-code", "https://x.example/mcp", "--token-env", "T", "-H",
                       "authorization: Bearer x"], env, project)
    assert out.returncode == 1 and "give the token one way" in out.stderr
    assert not any(home.rglob("*.json"))
    out = minimcp_cli(["install", "claude-code", "https://x.example/mcp", "--name", "x", "--token-env", "X_TOKEN"],
                      env, project)
    assert out.returncode == 0, out.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["x"] == {
        "type": "http", "url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${X_TOKEN}"}}


def test_help_describes_every_option_and_groups_them_by_when_they_apply():
    def help_of(command):
        out = subprocess.run([PY, "-m", "minimcp", command, "--help"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return re.sub(r"\s+", " ", out.stdout)

    run = help_of("run")
    assert "--transport {stdio,http} stdio (the default): serve on stdin and stdout" in run
    assert "http: serve Streamable HTTP at http://HOST:PORT/mcp" in run
    assert "with --transport http: --host HOST" in run and "--port PORT the port" in run
    install = help_of("install")
    for title in ("Claude Desktop", "Claude Code", "Cursor", "VS Code", "GitHub Copilot", "Windsurf", "Gemini CLI",
                  "Zed", "Codex"):
        assert title in install
    assert "a server the host starts (SERVER.py, or a command after --): --env KEY=VALUE" in install
    # (argparse 3.13 names a short and long option's metavar once: "-H, --header 'NAME: VALUE'")
    assert ("a URL server: -H 'NAME: VALUE', --header 'NAME: VALUE'" in install
            or "a URL server: -H, --header 'NAME: VALUE'" in install) and "--token-env VAR" in install
    assert "windsurf user;" in install and "codex user (default), project" in install
    servers = help_of("servers")
    assert "--json" in servers and "--env" not in servers and "--transport" not in servers


# -- minimcp run ---------------------------------------------------------------------------------

NO_MAIN = '''
print("a banner printed at import")   # would corrupt stdout on stdio: minimcp run sends it to stderr
from minimcp import Server

notes = Server("notes")

@notes.tool()
def add(a: int, b: int) -> int:
    return a + b
'''


def test_run_serves_a_file_without_a_main_block_over_stdio(tmp_path):
    script = tmp_path / "notes_server.py"
    script.write_text(NO_MAIN)
    with minimcp.connect([PY, "-m", "minimcp", "run", str(script)]) as client:
        assert client.server_info["name"] == "notes"
        assert client.call_tool("add", {"a": 2, "b": 3}).structured == {"result": 5}


def test_run_picks_a_server_by_name_and_refuses_to_guess(tmp_path):
    script = tmp_path / "two.py"
    script.write_text(NO_MAIN + '\nother = Server("other")\n')
    out = subprocess.run([PY, "-m", "minimcp", "run", str(script)], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 2 and "several Servers (notes, other)" in out.stderr and "two.py:notes" in out.stderr
    with minimcp.connect([PY, "-m", "minimcp", "run", f"{script}:other"]) as client:
        assert client.server_info["name"] == "other"


def test_run_over_http_says_where_it_serves():
    proc = subprocess.Popen([PY, "-m", "minimcp", "run", WEATHER, "--transport", "http", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # the first thing it says: where
        found = re.fullmatch(r"serving MCP at (http://127\.0\.0\.1:\d+/mcp)\n", line)
        assert found, line
        with minimcp.connect(found.group(1)) as client:
            assert client.call_tool("get_weather", {"city": "Rome"}).text == "Rome: 22°C, sunny"
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
        proc.stderr.close()


# -- the README's config commands ------------------------------------------------------------------


def test_readme_config_commands_work_from_a_fresh_clone(home):
    """Every `minimcp ... --config FILE` line of the README, run from the repository root as written."""
    _, _, env = home
    env["PATH"] = os.path.dirname(PY) + os.pathsep + env.get("PATH", "")  # `python` is this venv's, as for a user
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.startswith("minimcp ") and "--config" in line]
    assert lines
    for line in lines:
        words = line.split()[1:]
        out = minimcp_cli(words, env, ROOT)
        assert out.returncode == 0, (line, out.stderr)
        if "--json" in words:
            assert json.loads(out.stdout)["content"][0]["text"] == "Paris: 22°C, sunny"
