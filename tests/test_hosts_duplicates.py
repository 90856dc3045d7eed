"""One name in two host config files (issue 28): connecting by name takes the first file in the
search order, and when the other file's entry differs it says so, naming both files and how to
pick the other (``--config FILE`` on the command line, ``config=`` in Python). Entries that start
the same server, each in its own host's spelling, are no cause for a warning.

Real files in a temporary home and project folder, a real ``minimcp`` subprocess for the command
line, and the real weather example as the server.
"""

import json
import logging
import subprocess

import pytest

import minimcp

from conftest import PY, example

WEATHER = example("weather_server.py")


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def cli(args, env, cwd):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          env=env, cwd=cwd, timeout=60)


def two_demos(home, project):
    """``demo`` in the project's .mcp.json (searched first) and in Windsurf's user file, differently:
    the first sets UNITS=c, the second UNITS=f."""
    first = write(project / ".mcp.json", {"mcpServers": {"demo": {
        "type": "stdio", "command": PY, "args": [WEATHER], "env": {"UNITS": "c"}}}})
    second = write(home / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": {"demo": {
        "command": PY, "args": [WEATHER], "env": {"UNITS": "f"}}}})
    return first, second


def test_the_command_line_says_which_one_it_took_and_how_to_take_the_other(user_home):
    home, project, env = user_home
    first, second = two_demos(home, project)
    out = cli(["call", "demo", "get_weather", "city=Oslo"], env, project)
    assert out.returncode == 0 and out.stdout == "Oslo: 22°C, sunny\n", out.stderr
    warning = [line for line in out.stderr.splitlines() if line.startswith("minimcp: WARNING:")]
    assert len(warning) == 1, out.stderr
    assert "server 'demo' is defined differently in 2 host config files" in warning[0]
    assert f"using the one in {first}" in warning[0] and f"also in: {second}" in warning[0]
    assert f"--config {second}" in warning[0]
    # The way out it names works, and says nothing more.
    out = cli(["call", "demo", "get_weather", "city=Oslo", "--config", second], env, project)
    assert (out.returncode, out.stdout, out.stderr) == (0, "Oslo: 22°C, sunny\n", "")
    # --quiet hides it, as it hides every warning.
    assert cli(["call", "demo", "get_weather", "city=Oslo", "-q"], env, project).stderr == ""


def test_python_gets_the_warning_through_logging(user_home, caplog):
    home, project, _ = user_home
    first, second = two_demos(home, project)
    with caplog.at_level(logging.WARNING, logger="minimcp"):
        with minimcp.connect("demo") as client:
            assert client.call_tool("get_weather", {"city": "Oslo"}).text == "Oslo: 22°C, sunny"
    records = [r for r in caplog.records if r.name == "minimcp.client.config"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING
    message = records[0].getMessage()
    assert first in message and second in message
    assert f"connect('demo', config={second!r})" in message
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="minimcp"):
        minimcp.connect("demo", config=second).close()
    assert not [r for r in caplog.records if r.name == "minimcp.client.config"]


def test_the_same_server_in_each_hosts_spelling_is_no_cause_for_a_warning(user_home, caplog):
    """Claude Code's entry, Copilot's ("local", "tools") and Codex's (TOML) start the same server,
    and ${VAR} and ${env:VAR} name the same variable, set or not: no warning."""
    home, project, env = user_home
    write(project / ".mcp.json", {"mcpServers": {"demo": {
        "type": "stdio", "command": PY, "args": [WEATHER], "env": {"UNITS": "${MCP_TEST_UNITS}"}}}})
    write(home / ".copilot" / "mcp-config.json", {"mcpServers": {"demo": {
        "type": "local", "command": PY, "args": [WEATHER], "env": {"UNITS": "${MCP_TEST_UNITS}"},
        "tools": ["*"]}}})
    write(home / ".cursor" / "mcp.json", {"mcpServers": {"demo": {
        "command": PY, "args": [WEATHER], "env": {"UNITS": "${env:MCP_TEST_UNITS}"}}}})
    env["MCP_TEST_UNITS"] = "c"
    out = cli(["call", "demo", "get_weather", "city=Oslo"], env, project)
    assert (out.returncode, out.stderr) == (0, ""), out.stderr
    servers = json.loads(cli(["servers", "--json"], env, project).stdout)["servers"]
    assert len(servers) == 3 and not any("shadowed_by" in row for row in servers)
    with caplog.at_level(logging.WARNING, logger="minimcp"):
        with pytest.raises(minimcp.ConfigError, match="MCP_TEST_UNITS"):  # unset here: it is still named
            minimcp.connect("demo")
    assert not [r for r in caplog.records if r.name == "minimcp.client.config"]


def test_servers_marks_the_entry_a_name_does_not_reach(user_home):
    home, project, env = user_home
    first, second = two_demos(home, project)
    rows = json.loads(cli(["servers", "--json"], env, project).stdout)["servers"]
    assert [(row["file"], row.get("shadowed_by")) for row in rows] == [(first, None), (second, first)]
    text = cli(["servers"], env, project).stdout
    assert f"from {second} (Windsurf, user)\n" in text
    assert f"(not the one its name reaches, which is {first}'s: name this file as the config to reach this one)" in text


def test_a_broken_file_after_the_one_that_names_the_server_is_no_obstacle(user_home):
    home, project, env = user_home
    write(project / ".mcp.json", {"mcpServers": {"demo": {"command": PY, "args": [WEATHER]}}})
    write(home / ".codeium" / "windsurf" / "mcp_config.json", '{"mcpServers": {"demo": ')
    out = cli(["call", "demo", "get_weather", "city=Oslo"], env, project)
    assert (out.returncode, out.stdout, out.stderr) == (0, "Oslo: 22°C, sunny\n", "")
