"""``minimcp install``, ``servers`` and connecting by name for Codex, Windsurf, Zed, Gemini CLI and
GitHub Copilot (issue 28), as a user runs them: a real ``minimcp`` subprocess, real files in a
temporary home and project folder (HOME, XDG_CONFIG_HOME, APPDATA point there; CODEX_HOME and
COPILOT_HOME are unset), real servers reached by name.

Each written file is read back the way its host reads it (``tomllib`` for Codex's TOML, JSON with
comments for Zed's and Gemini CLI's settings), and what the user had in it, comments included, is
still there.
"""

import json
import os
import re
import subprocess
import sys

import pytest

import minimcp
from minimcp.client.config import find_server
from minimcp.integrations import hosts as host_files

from conftest import PY, example

WEATHER = example("weather_server.py")
INSTALLED = [PY, "-m", "minimcp", "run", WEATHER]  # what `install HOST server.py` writes
URL = "https://mcp.example.com/mcp"


def cli(args, env, cwd, **kwargs):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          env=env, cwd=cwd, timeout=60, **kwargs)


def jsonc(text):
    """Read JSON with // and /* */ comments and trailing commas, as Zed and Gemini CLI do (the test's
    own reader: not minimcp's)."""
    out, at = [], 0
    while at < len(text):
        if text[at] == '"':
            end = at + 1
            while text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[at:end + 1])
            at = end + 1
        elif text.startswith("//", at):
            at = text.find("\n", at) if "\n" in text[at:] else len(text)
        elif text.startswith("/*", at):
            at = text.index("*/", at) + 2
        else:
            out.append(text[at])
            at += 1
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", "".join(out)))


def toml(text):
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads(text)
    import tomlkit

    return tomlkit.parse(text).unwrap()


# host: (its default file under (home, project), how the host reads it, where its servers are, what the
# user had in the file before, the lines of it that must survive, what else of it must survive)
HOSTS = {
    "codex": (lambda home, project: home / ".codex" / "config.toml", toml, "mcp_servers",
              '# my Codex settings\nmodel = "o3"  # the model I use\n\n[profiles.fast]\nmodel = "o4-mini"\n',
              ["# my Codex settings", 'model = "o3"  # the model I use'],
              {"model": "o3", "profiles": {"fast": {"model": "o4-mini"}}}),
    "zed": (lambda home, project: home / ".config" / "zed" / "settings.json", jsonc, "context_servers",
            '// Zed settings\n//\n// For information on how to configure Zed, see the Zed docs.\n{\n'
            '  "theme": "One Dark", // my theme\n  /* modal editing */ "vim_mode": true,\n}\n',
            ["// For information on how to configure Zed, see the Zed docs.", '"theme": "One Dark", // my theme',
             '/* modal editing */ "vim_mode": true'],
            {"theme": "One Dark", "vim_mode": True}),
    "gemini": (lambda home, project: project / ".gemini" / "settings.json", jsonc, "mcpServers",
               '{\n  // this project\'s Gemini CLI settings\n  "contextFileName": "AGENTS.md",\n'
               '  "mcpServers": {}\n}\n',
               ["// this project's Gemini CLI settings"], {"contextFileName": "AGENTS.md"}),
    "windsurf": (lambda home, project: home / ".codeium" / "windsurf" / "mcp_config.json", json.loads, "mcpServers",
                 json.dumps({"mcpServers": {"other": {"command": "npx", "args": ["-y", "other"]}}}, indent=2),
                 [], {}),
    "copilot": (lambda home, project: home / ".copilot" / "mcp-config.json", json.loads, "mcpServers",
                json.dumps({"mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
                                                      "tools": ["*"]}}}, indent=4),
                [], {}),
}

STDIO_ENTRIES = {  # each host's entry for `install HOST weather_server.py --env UNITS=c`
    "codex": {"command": PY, "args": INSTALLED[1:], "env": {"UNITS": "c"}},
    "zed": {"command": PY, "args": INSTALLED[1:], "env": {"UNITS": "c"}},
    "gemini": {"command": PY, "args": INSTALLED[1:], "env": {"UNITS": "c"}},
    "windsurf": {"command": PY, "args": INSTALLED[1:], "env": {"UNITS": "c"}},
    "copilot": {"type": "stdio", "command": PY, "args": INSTALLED[1:], "env": {"UNITS": "c"}, "tools": ["*"]},
}

URL_ENTRIES = {  # each host's entry for `install HOST URL --header 'X-Team: blue' --token-env MCP_TEST_TOKEN`
    "codex": {"url": URL, "bearer_token_env_var": "MCP_TEST_TOKEN", "http_headers": {"X-Team": "blue"}},
    "gemini": {"httpUrl": URL, "headers": {"X-Team": "blue", "Authorization": "Bearer ${MCP_TEST_TOKEN}"}},
    "windsurf": {"serverUrl": URL, "headers": {"X-Team": "blue", "Authorization": "Bearer ${env:MCP_TEST_TOKEN}"}},
    "copilot": {"type": "http", "url": URL, "headers": {"X-Team": "blue", "Authorization": "Bearer ${MCP_TEST_TOKEN}"},
                "tools": ["*"]},
}


def seeded(host, home, project):
    """The host's default file, holding what the user had written in it."""
    where, _, _, before, _, _ = HOSTS[host]
    path = where(home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(before, encoding="utf-8")
    return path


@pytest.mark.parametrize("host", list(HOSTS))
def test_install_a_server_file_keeps_the_users_file_and_is_found_by_name(user_home, host):
    home, project, env = user_home
    path = seeded(host, home, project)
    _, read, section, before, kept_lines, kept = HOSTS[host]
    out = cli(["install", host, WEATHER, "--name", "weather", "--env", "UNITS=c"], env, project)
    assert out.returncode == 0, out.stderr
    assert f"added server 'weather' in {path}" in out.stdout
    text = path.read_text(encoding="utf-8")
    data = read(text)  # the file still parses the way its host reads it
    assert data[section]["weather"] == STDIO_ENTRIES[host]
    for line in kept_lines:  # comments included
        assert line in text
    for key, value in kept.items():
        assert data[key] == value
    assert (path.parent / (path.name + ".bak")).read_text(encoding="utf-8") == before
    # `servers` lists it, from its file ...
    listed = json.loads(cli(["servers", "--json"], env, project).stdout)["servers"]
    row = next(row for row in listed if row["name"] == "weather")
    assert (row["host"], row["file"], row["command"], row["env"]) == (host, str(path), INSTALLED, {"UNITS": "c"})
    # ... and the name reaches the server, from the command line and from Python, with no config= given.
    out = cli(["call", "weather", "get_weather", "city=Oslo"], env, project)
    assert (out.returncode, out.stdout, out.stderr) == (0, "Oslo: 22°C, sunny\n", "")
    with minimcp.connect("weather") as client:
        assert client.call_tool("get_weather", {"city": "Lima"}).text == "Lima: 22°C, sunny"


@pytest.mark.parametrize("host", list(URL_ENTRIES))
def test_install_a_url_with_a_header_and_a_token_from_the_environment(user_home, host, monkeypatch):
    home, project, env = user_home
    path = seeded(host, home, project)
    _, read, section, _, kept_lines, _ = HOSTS[host]
    out = cli(["install", host, URL, "--name", "remote", "--header", "X-Team: blue", "--token-env", "MCP_TEST_TOKEN"],
              env, project)
    assert out.returncode == 0, out.stderr
    text = path.read_text(encoding="utf-8")
    assert read(text)[section]["remote"] == URL_ENTRIES[host]
    assert all(line in text for line in kept_lines)
    assert "s3cret" not in text
    # Read back the way the host would connect: the token from the environment, the same for every host.
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    assert find_server("remote", config=str(path)) == {
        "url": URL, "transport": "http", "headers": {"X-Team": "blue", "Authorization": "Bearer s3cret"}}
    monkeypatch.delenv("MCP_TEST_TOKEN")
    with pytest.raises(minimcp.ConfigError, match="needs the environment variable\\(s\\) MCP_TEST_TOKEN"):
        find_server("remote", config=str(path))


def test_zed_takes_a_header_but_no_token_from_the_environment(user_home):
    home, project, env = user_home
    path = seeded("zed", home, project)
    before = path.read_text(encoding="utf-8")
    out = cli(["install", "zed", URL, "--name", "remote", "--token-env", "MCP_TEST_TOKEN"], env, project)
    assert out.returncode == 1
    assert "Zed reads no environment variable in its config file" in out.stderr
    assert "--header 'Authorization: Bearer TOKEN'" in out.stderr
    assert path.read_text(encoding="utf-8") == before  # untouched
    out = cli(["install", "zed", URL, "--name", "remote", "-H", "Authorization: Bearer abc"], env, project)
    assert out.returncode == 0, out.stderr
    text = path.read_text(encoding="utf-8")
    assert jsonc(text)["context_servers"]["remote"] == {"url": URL, "headers": {"Authorization": "Bearer abc"}}
    assert "// my theme" in text and "/* modal editing */" in text


def test_url_servers_of_every_format_are_reached_by_name(user_home):
    """One real HTTP server, installed as a URL into each host's file: each entry (url, serverUrl,
    httpUrl, Codex's table) reaches it by name."""
    home, project, env = user_home
    proc = subprocess.Popen([PY, "-m", "minimcp", "run", WEATHER, "--transport", "http", "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        found = re.fullmatch(r"serving MCP at (http://127\.0\.0\.1:\d+/mcp)\n", proc.stderr.readline())
        assert found
        for host in ("codex", "zed", "gemini", "windsurf", "copilot"):
            out = cli(["install", host, found.group(1), "--name", f"weather-{host}", "-H", "X-Team: blue"],
                      env, project)
            assert out.returncode == 0, out.stderr
            path = HOSTS[host][0](home, project)
            with minimcp.connect(f"weather-{host}") as client:  # the search finds it ...
                assert client.call_tool("get_weather", {"city": "Rome"}).text == "Rome: 22°C, sunny"
            with minimcp.connect(f"weather-{host}", config=str(path)) as client:  # ... and so does its file
                assert client.server_info["name"] == "weather"
    finally:
        proc.terminate()
        assert proc.wait(20) == 0
        proc.stderr.close()


def test_replacing_an_entry_keeps_the_comments_around_it(user_home):
    home, project, env = user_home
    path = home / ".config" / "zed" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('// Zed settings\n{\n  "context_servers": {\n    // the weather, for the agent\n'
                    '    "weather": {"command": "old-weather", "args": []}, // to be replaced\n'
                    '    "other": {"command": "other", "args": []}\n  }\n}\n', encoding="utf-8")
    out = cli(["install", "zed", WEATHER, "--name", "weather"], env, project)
    assert out.returncode == 1 and "already has a server named 'weather'" in out.stderr
    out = cli(["install", "zed", WEATHER, "--name", "weather", "--force"], env, project)
    assert out.returncode == 0 and "replaced server 'weather'" in out.stdout
    text = path.read_text(encoding="utf-8")
    assert "// the weather, for the agent" in text and "// to be replaced" in text and "// Zed settings" in text
    assert list(jsonc(text)["context_servers"]) == ["weather", "other"]
    assert jsonc(text)["context_servers"]["weather"] == {"command": PY, "args": INSTALLED[1:]}
    again = cli(["install", "zed", WEATHER, "--name", "weather"], env, project)
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_codex_replacing_an_entry_keeps_the_other_tables_and_comments(user_home):
    home, project, env = user_home
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('model = "o3"\n\n# the servers I use\n[mcp_servers.weather]\ncommand = "old-weather"\n\n'
                    '[mcp_servers.docs]  # documentation\nurl = "https://docs.example/mcp"\n\n'
                    '[profiles.fast]\nmodel = "o4-mini"\n', encoding="utf-8")
    out = cli(["install", "codex", "--name", "weather", "--force", "--", "python", WEATHER], env, project)
    assert out.returncode == 0, out.stderr
    text = path.read_text(encoding="utf-8")
    assert "# the servers I use" in text and "[mcp_servers.docs]  # documentation" in text
    data = toml(text)
    assert data["mcp_servers"] == {"weather": {"command": "python", "args": [WEATHER]},
                                   "docs": {"url": "https://docs.example/mcp"}}
    assert data["profiles"] == {"fast": {"model": "o4-mini"}} and data["model"] == "o3"


BLOCK_TOMLKIT = "import sys; sys.modules['tomlkit'] = None; from minimcp.cli import main; sys.exit(main(sys.argv[1:]))"


def test_writing_toml_without_tomlkit_says_what_to_install(user_home):
    home, project, env = user_home
    path = seeded("codex", home, project)
    before = path.read_text(encoding="utf-8")
    out = subprocess.run([PY, "-c", BLOCK_TOMLKIT, "install", "codex", WEATHER, "--name", "weather"],
                         capture_output=True, text=True, env=env, cwd=project, timeout=60)
    assert out.returncode == 1
    assert (f"writing {path} (TOML) needs the tomlkit package: pip install 'tomlkit>=0.11.6' (minimcp's toml extra)"
            in out.stderr)
    assert path.read_text(encoding="utf-8") == before
    # Reading needs no extra where the standard library has tomllib (3.11+); before, it says the same.
    assert cli(["install", "codex", WEATHER, "--name", "weather"], env, project).returncode == 0
    listed = subprocess.run([PY, "-c", BLOCK_TOMLKIT, "servers", "--json"], capture_output=True, text=True,
                            env=env, cwd=project, timeout=60)
    row = next(row for row in json.loads(listed.stdout)["servers"] if row["file"] == str(path))
    if sys.version_info >= (3, 11):
        assert row["name"] == "weather" and row["command"] == INSTALLED
    else:
        assert "pip install 'tomlkit>=0.11.6'" in row["error"]


def test_the_host_files_each_os_uses(user_home, monkeypatch):
    """Zed and Codex follow their own variables: XDG_CONFIG_HOME moves Zed's settings on Linux,
    CODEX_HOME and COPILOT_HOME move Codex's and Copilot's folders."""
    home, project, env = user_home
    env = dict(env, XDG_CONFIG_HOME=str(home / "xdg"), CODEX_HOME=str(home / "codex-home"),
               COPILOT_HOME=str(home / "copilot-home"))
    for host, path in (("codex", home / "codex-home" / "config.toml"),
                       ("copilot", home / "copilot-home" / "mcp-config.json"),
                       ("windsurf", home / ".codeium" / "windsurf" / "mcp_config.json"),
                       ("gemini", home / ".gemini" / "settings.json"),
                       ("zed", home / "xdg" / "zed" / "settings.json" if sys.platform.startswith("linux")
                        else None)):
        scope = ["--scope", "user"] if host == "gemini" else []
        out = cli(["install", host, WEATHER, "--name", "w", *scope], env, project)
        assert out.returncode == 0, out.stderr
        if path is not None:
            assert f"added server 'w' in {path}" in out.stdout
    for host, path in (("gemini", project / ".gemini" / "settings.json"), ("zed", project / ".zed" / "settings.json"),
                       ("codex", project / ".codex" / "config.toml"), ("copilot", project / ".mcp.json")):
        default = [] if host == "gemini" else ["--scope", "project"]
        out = cli(["install", host, WEATHER, "--name", "w", *default], env, project)
        assert out.returncode == 0 and f"added server 'w' in {path}" in out.stdout, out.stderr
    out = cli(["install", "windsurf", WEATHER, "--scope", "project"], env, project)
    assert out.returncode == 1 and "Windsurf has no 'project' config; use user" in out.stderr


# -- what an install must never do to a file --------------------------------------------------------


def test_codex_root_keys_after_dotted_server_keys_stay_at_the_root(user_home):
    """`mcp_servers.a.command = "x"` then `model = "o3"`: tomlkit put the new [mcp_servers.NAME] table
    between them, and `model` became a key of the new server. The result is read back, and the table
    goes at the end of the file instead."""
    home, project, env = user_home
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('mcp_servers.docs.command = "docs-srv"  # my docs\nmodel = "o3"\n', encoding="utf-8")
    out = cli(["install", "codex", WEATHER, "--name", "weather"], env, project)
    assert out.returncode == 0, out.stderr
    text = path.read_text(encoding="utf-8")
    assert toml(text) == {"model": "o3", "mcp_servers": {"docs": {"command": "docs-srv"},
                                                        "weather": {"command": PY, "args": INSTALLED[1:]}}}
    assert text.startswith('mcp_servers.docs.command = "docs-srv"  # my docs\nmodel = "o3"\n')


def test_a_toml_file_that_would_not_read_back_right_is_left_alone_with_the_entry_to_add(user_home):
    """Replacing a server written as dotted keys, followed by a root key: no edit reads back as the
    old document plus the entry, so nothing is written and the error shows the table to add."""
    home, project, env = user_home
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    before = 'mcp_servers.weather.command = "old-weather"\nmodel = "o3"\n'
    path.write_text(before, encoding="utf-8")
    out = cli(["install", "codex", "--name", "weather", "--force", "--", "python", "w.py"], env, project)
    assert out.returncode == 1 and f"minimcp cannot edit {path} safely; add this entry by hand" in out.stderr
    assert path.read_text(encoding="utf-8") == before and not (path.parent / "config.toml.bak").exists()
    with pytest.raises(minimcp.ConfigError) as caught:
        host_files.plan_install(host_files.host("codex"), "weather", {"command": "python", "args": ["w.py"], "env": {"K": "v"}},
                     path=str(path), force=True)
    assert str(caught.value) == (f"minimcp cannot edit {path} safely; add this entry by hand:\n[mcp_servers.weather]\n"
                                 f'command = "python"\nargs = ["w.py"]\nenv = {{ K = "v" }}')


def test_codex_force_keeps_the_comment_that_introduces_the_next_table(user_home):
    home, project, env = user_home
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[mcp_servers.weather]\ncommand = "old-weather"\n\n# the docs server, for the agent\n'
                    '[mcp_servers.docs]\nurl = "https://docs.example/mcp"\n', encoding="utf-8")
    out = cli(["install", "codex", "--name", "weather", "--force", "--", "python", "w.py"], env, project)
    assert out.returncode == 0, out.stderr
    text = path.read_text(encoding="utf-8")
    assert "\n\n# the docs server, for the agent\n[mcp_servers.docs]\n" in text
    assert toml(text)["mcp_servers"] == {"weather": {"command": "python", "args": ["w.py"]},
                                         "docs": {"url": "https://docs.example/mcp"}}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions and symbolic links")
@pytest.mark.parametrize("host", ["codex", "zed"])
def test_a_private_file_stays_private_and_a_link_stays_a_link(user_home, host):
    """A 0600 config holds tokens: the new file and its backup stay 0600. A config that is a symbolic
    link (to a dotfiles repository, say) is written through: the link stays, its target changes."""
    home, project, env = user_home
    path = HOSTS[host][0](home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    real = home / "dotfiles" / path.name
    real.parent.mkdir()
    real.write_text(HOSTS[host][3], encoding="utf-8")
    real.chmod(0o600)
    path.symlink_to(real)
    out = cli(["install", host, WEATHER, "--name", "weather"], env, project)
    assert out.returncode == 0, out.stderr
    assert path.is_symlink() and os.readlink(path) == str(real)
    assert "weather" in HOSTS[host][1](real.read_text(encoding="utf-8"))[HOSTS[host][2]]
    backup = real.parent / (real.name + ".bak")
    assert f"the previous file is kept as {backup}" in out.stdout
    assert backup.read_text(encoding="utf-8") == HOSTS[host][3]
    assert (real.stat().st_mode & 0o777, backup.stat().st_mode & 0o777) == (0o600, 0o600)
    assert sorted(os.listdir(real.parent)) == [real.name, backup.name]  # no temporary file left behind


@pytest.mark.parametrize("host, before", [
    ("zed", '\ufeff// Zed settings\r\n{\r\n  "theme": "One Dark", // my theme\r\n}\r\n'),
    ("codex", '\ufeff# my Codex settings\r\nmodel = "o3"\r\n\r\n[profiles.fast]\r\nmodel = "o4-mini"\r\n'),
], ids=["zed", "codex"])
def test_line_endings_and_byte_order_mark_are_kept_and_backups_are_exact_and_never_overwritten(user_home, host, before):
    home, project, env = user_home
    path = HOSTS[host][0](home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(before.encode("utf-8"))
    out = cli(["install", host, WEATHER, "--name", "weather"], env, project)
    assert out.returncode == 0, out.stderr
    written = path.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf") and written.count(b"\n") == written.count(b"\r\n") > 5
    assert "weather" in HOSTS[host][1](written.decode("utf-8-sig"))[HOSTS[host][2]]
    backup = path.parent / (path.name + ".bak")
    assert backup.read_bytes() == before.encode("utf-8")  # byte for byte
    out = cli(["install", host, WEATHER, "--name", "weather2"], env, project)
    assert out.returncode == 0, out.stderr
    assert f"the previous file is kept as {backup}.1" in out.stdout
    assert backup.read_bytes() == before.encode("utf-8")  # the first backup is kept ...
    assert (path.parent / (path.name + ".bak.1")).read_bytes() == written  # ... and the second is the first edit
