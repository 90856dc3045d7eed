"""``minimcp bundle`` and ``minimcp registry`` as a user runs them (real subprocesses, real files),
and what they write checked by the tools the ecosystem checks with:

- the bundles by the official MCPB command line, ``@anthropic-ai/mcpb`` from npm (``mcpb
  validate``, ``mcpb info``, ``mcpb unpack``), installed into ~/.cache/minimcp-tests as
  tests/test_everything.py installs its server; a ``python`` bundle is also unpacked and run;
- the server.json files against the MCP Registry's schema 2025-12-11
  (static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json). The registry publishes it
  in no package of its own; skillsaw (PyPI) ships a byte-for-byte copy (its SCHEMA-SOURCE.md names
  the upstream revision), which the fixture downloads as a wheel and reads out of it, pinned by digest.

The tests that need npm or PyPI are skipped, saying why, only when Node/npm is missing or the
registry cannot be reached.
"""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

import jsonschema
import pytest

import minimcp
from minimcp.cli import ship
from minimcp.protocol.versions import SDK_VERSION

from conftest import PY, ROOT, TEST_CACHE, npm_package

SHIPPED = os.path.join(ROOT, "tests", "servers", "shipped_server.py")
CACHE_ROOT = TEST_CACHE
MCPB_VERSION = "2.1.2"
MCPB_HOME = os.path.join(CACHE_ROOT, f"mcpb-{MCPB_VERSION}")
MCPB_BIN = os.path.join(MCPB_HOME, "node_modules", ".bin", "mcpb")
SKILLSAW = "skillsaw==0.22.0"
SCHEMA_IN_WHEEL = "skillsaw/schemas/mcp_registry/v2025_12_11/server.schema.json"
# The published schema's digest (independent copies in other projects pin the same one).
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"


def minimcp_cli(*args, cwd, env=None):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture(scope="module")
def mcpb():
    """A function that runs the official ``mcpb`` command line and returns the finished process."""
    node = npm_package(MCPB_HOME, "@anthropic-ai/mcpb", MCPB_VERSION)

    def run(*args, cwd):
        return subprocess.run([node, MCPB_BIN, *args], capture_output=True, text=True, cwd=cwd, timeout=120)

    return run


@pytest.fixture(scope="module")
def server_schema():
    """A validator of the MCP Registry's server.json schema 2025-12-11, with format checks."""
    folder = os.path.join(CACHE_ROOT, SKILLSAW.replace("==", "-"))
    wheels = glob.glob(os.path.join(folder, "*.whl"))
    if not wheels:
        done = subprocess.run([PY, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                               "-d", folder, SKILLSAW], capture_output=True, text=True, timeout=300)
        wheels = glob.glob(os.path.join(folder, "*.whl"))
        if done.returncode != 0 or not wheels:
            pytest.skip(f"could not download {SKILLSAW} (it ships the schema) from PyPI: {done.stderr[-300:]}")
    with zipfile.ZipFile(wheels[0]) as wheel:
        data = wheel.read(SCHEMA_IN_WHEEL)
    assert hashlib.sha256(data).hexdigest() == SCHEMA_SHA256
    schema = json.loads(data)
    assert schema["$id"] == ship.SERVER_SCHEMA
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def unzipped(path, folder):
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(folder)
        return {info.filename: bundle.read(info) for info in bundle.infolist()}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def project(tmp_path, *, urls="", readme=None, pyproject_extra=""):
    """A project folder with a pyproject.toml, a src/ layout server and a module of its own it imports."""
    root = tmp_path / "acme"
    write(str(root / "pyproject.toml"), f"""\
[project]
name = "acme-weather"
version = "2.1.0"
description = "Weather forecasts for your assistant"
authors = [{{ name = "Alice Example", email = "alice@example.com" }}]
requires-python = ">=3.9"
dependencies = ["requests>=2"]
license = "MIT"
keywords = ["weather"]
{pyproject_extra}
{urls}
""")
    write(str(root / "src" / "acme_weather" / "helpers.py"), """\
import os


def units():
    return os.getenv("WEATHER_UNITS", "c")
""")
    write(str(root / "src" / "acme_weather" / "server.py"), """\
import os

from helpers import units

from minimcp import Server

server = Server("weather", version="0.0.1", instructions="Forecasts from Acme.")


@server.tool()
def forecast(city: str) -> str:
    \"\"\"Forecast for a city.\"\"\"
    return f"{city}: sunny, {units()} ({bool(os.environ['WEATHER_API_KEY'])})"


if __name__ == "__main__":
    server.run("http", port=int(os.environ.get("PORT", "8000")))
""")
    write(str(root / "src" / "acme_weather" / "cities.json"), '["Oslo"]\n')
    if readme is not None:
        write(str(root / "README.md"), readme)
    return root


# -- bundle --------------------------------------------------------------------------------------


def test_the_command_line_routes_both_commands_and_loads_ship_only_for_them():
    from minimcp import cli

    assert cli._SHIP_COMMANDS == tuple(ship.SHIP_COMMANDS)
    loaded = subprocess.run([PY, "-c", "import sys; from minimcp.cli import main; "
                             "main(['run', 'no-such-file.py']); print('minimcp.cli.ship' in sys.modules)"],
                            capture_output=True, text=True, timeout=60)
    assert loaded.stdout.splitlines()[-1] == "False", loaded.stdout + loaded.stderr
    for command in ship.SHIP_COMMANDS:
        helped = subprocess.run([PY, "-m", "minimcp", command, "--help"], capture_output=True, text=True, timeout=60)
        assert helped.returncode == 0 and helped.stdout.startswith(f"usage: minimcp {command} "), helped.stderr
        assert "--force" in helped.stdout and "--trace" in helped.stdout


def test_a_bundle_lists_the_server_and_the_official_mcpb_cli_accepts_it(mcpb, tmp_path):
    """MCPB MANIFEST.md (manifest 0.4): server.type uv with a pyproject.toml, tools and prompts,
    user_config for each setting, ${user_config.KEY} in mcp_config.env."""
    out = minimcp_cli("bundle", SHIPPED, "-o", str(tmp_path / "x.mcpb"), cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"wrote {tmp_path / 'x.mcpb'} (")
    files = unzipped(tmp_path / "x.mcpb", tmp_path / "x")
    assert sorted(files) == ["manifest.json", "pyproject.toml", "server/main.py", "server/shipped_server.py"]
    manifest = json.loads(files["manifest.json"])
    assert manifest["manifest_version"] == "0.4"
    assert (manifest["name"], manifest["display_name"], manifest["version"]) == ("shipped", "Shipped Server", "3.2.1")
    assert manifest["description"] == "Tools to test shipping with."
    assert manifest["server"] == {
        "type": "uv", "entry_point": "server/main.py",
        "mcp_config": {"command": "uv", "args": ["run", "--directory", "${__dirname}", "${__dirname}/server/main.py"],
                       "env": {"SHIPPED_API_KEY": "${user_config.shipped_api_key}",
                               "SHIPPED_UNITS": "${user_config.shipped_units}",
                               "SHIPPED_REGION": "${user_config.shipped_region}",
                               "SHIPPED_DEBUG": "${user_config.shipped_debug}"}}}
    assert manifest["tools"] == [
        {"name": "settings", "description": "Report the settings the server sees, and where minimcp came from."},
        {"name": "add", "description": "Add two numbers."}]
    assert manifest["prompts"] == [
        {"name": "summarize", "description": "Ask for a summary.", "arguments": ["topic", "words"],
         "text": "Summarize ${arguments.topic} in 50 words."},  # `words: int` cannot be a placeholder
        {"name": "shout", "description": "Say it louder.", "arguments": ["text"], "text": "Say it louder."}]
    assert "prompt 'shout' does not render with placeholder arguments" in out.stdout
    config = manifest["user_config"]
    assert list(config) == ["shipped_api_key", "shipped_units", "shipped_region", "shipped_debug"]  # not HOME, PORT
    assert config["shipped_api_key"] == {
        "type": "string", "title": "SHIPPED_API_KEY", "required": True, "sensitive": True,
        "description": "The SHIPPED_API_KEY environment variable (shipped_server.py:21 reads it)"}
    assert config["shipped_units"]["default"] == "c" and config["shipped_units"]["required"] is False
    assert "sensitive" not in config["shipped_region"] and config["shipped_debug"]["required"] is False
    assert manifest["compatibility"] == {"runtimes": {"python": ">=3.9"}}
    # No project: the author is a guess, and the output says so.
    assert f"  author: {manifest['author']['name']!r}, your login name (--author NAME sets another)" in out.stdout
    assert f'"{ship.DISTRIBUTION}=={SDK_VERSION}",' in files["pyproject.toml"].decode()
    assert b'main(["run", os.path.join(HERE, "shipped_server.py")])' in files["server/main.py"]
    with open(SHIPPED, "rb") as f:
        assert files["server/shipped_server.py"] == f.read()

    checked = mcpb("validate", "manifest.json", cwd=str(tmp_path / "x"))
    assert checked.returncode == 0 and "Manifest schema validation passes!" in checked.stdout, checked.stdout
    info = mcpb("info", "x.mcpb", cwd=str(tmp_path))
    assert info.returncode == 0 and "File: x.mcpb" in info.stdout, info.stdout + info.stderr
    unpacked = mcpb("unpack", "x.mcpb", "unpacked", cwd=str(tmp_path))
    assert unpacked.returncode == 0, unpacked.stdout + unpacked.stderr
    for name, data in files.items():  # mcpb reads the zip as written, modes included
        assert (tmp_path / "unpacked" / name).read_bytes() == data
        assert oct((tmp_path / "unpacked" / name).stat().st_mode & 0o777) == "0o644"
    assert mcpb("validate", "unpacked", cwd=str(tmp_path)).returncode == 0


def test_a_python_bundle_carries_its_dependencies_and_runs_from_them(mcpb, tmp_path):
    """server.type python: minimcp and its dependencies in server/lib, the host's Python runs
    server/main.py (here with -I -S: nothing but the bundle and the standard library)."""
    out = minimcp_cli("bundle", SHIPPED, "--runtime", "python", "-o", "py.mcpb", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    files = unzipped(tmp_path / "py.mcpb", tmp_path / "py")
    assert "pyproject.toml" not in files
    for module in ("minimcp/__init__.py", "minimcp/py.typed", "requests/__init__.py", "jsonschema/__init__.py",
                   "websocket/__init__.py", "sseclient/__init__.py"):
        assert "server/lib/" + module in files, module
    manifest = json.loads(files["manifest.json"])
    assert manifest["server"]["type"] == "python"
    assert manifest["server"]["mcp_config"]["command"] == "python"
    assert manifest["server"]["mcp_config"]["args"] == ["${__dirname}/server/main.py"]
    compiled = any(name.endswith((".so", ".pyd")) for name in files)
    if compiled:  # (rpds-py, which jsonschema needs, is compiled): this platform and Python only
        version = sys.version_info
        assert manifest["compatibility"]["runtimes"]["python"] == f">={version[0]}.{version[1]} <{version[0]}." \
                                                                  f"{version[1] + 1}"
        assert manifest["compatibility"]["platforms"] == [sys.platform]
        assert "compiled: the bundle runs on" in out.stdout
    assert mcpb("validate", "manifest.json", cwd=str(tmp_path / "py")).returncode == 0

    # As a host runs it: the user's values in the environment; one left empty, one the host left as
    # its placeholder: both unset by server/main.py, so the server's own defaults apply.
    env = {"SHIPPED_API_KEY": "k-123", "SHIPPED_UNITS": "", "SHIPPED_REGION": "${user_config.shipped_region}"}
    command = [sys.executable, "-I", "-S", str(tmp_path / "py" / "server" / "main.py")]
    with minimcp.connect(command, env=env, cwd=str(tmp_path), timeout=60) as client:
        assert client.server_info["name"] == "shipped"
        seen = client.call_tool("settings").structured
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    assert seen["api_key"] == "k-123" and seen["units"] == "c" and seen["region"] is None
    assert seen["minimcp"] == str(tmp_path / "py" / "server" / "lib" / "minimcp")


def test_a_project_s_metadata_modules_and_files_go_into_the_bundle(mcpb, tmp_path):
    root = project(tmp_path)
    server = root / "src" / "acme_weather" / "server.py"
    out = minimcp_cli("bundle", str(server), "--include", str(server.parent / "cities.json"), cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "the project's modules it imports: helpers.py" in out.stdout
    files = unzipped(tmp_path / "acme-weather.mcpb", tmp_path / "unzipped")  # named after the project, here
    assert sorted(files) == ["manifest.json", "pyproject.toml", "server/cities.json", "server/helpers.py",
                             "server/main.py", "server/server.py"]
    manifest = json.loads(files["manifest.json"])
    assert (manifest["name"], manifest["version"]) == ("acme-weather", "2.1.0")
    assert manifest["description"] == "Weather forecasts for your assistant"
    assert manifest["long_description"] == "Forecasts from Acme."
    assert manifest["author"] == {"name": "Alice Example", "email": "alice@example.com"}
    assert (manifest["license"], manifest["keywords"]) == ("MIT", ["weather"])
    assert list(manifest["user_config"]) == ["weather_api_key", "weather_units"]  # the file's first; not PORT
    assert manifest["user_config"]["weather_units"]["description"].endswith("(helpers.py:5 reads it)")
    pyproject = files["pyproject.toml"].decode()
    assert f'"{ship.DISTRIBUTION}=={SDK_VERSION}",\n    "requests>=2",' in pyproject
    assert 'name = "acme-weather"' in pyproject and 'version = "2.1.0"' in pyproject
    assert mcpb("validate", "manifest.json", cwd=str(tmp_path / "unzipped")).returncode == 0


def test_the_same_server_makes_the_same_bytes_and_nothing_is_overwritten_without_force(tmp_path):
    first = minimcp_cli("bundle", SHIPPED, "-o", "a.mcpb", cwd=str(tmp_path))
    second = minimcp_cli("bundle", SHIPPED, "-o", "b.mcpb", cwd=str(tmp_path))
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert (tmp_path / "a.mcpb").read_bytes() == (tmp_path / "b.mcpb").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.mcpb") as bundle:
        infos = bundle.infolist()
    assert [info.filename for info in infos] == sorted(info.filename for info in infos)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}

    again = minimcp_cli("bundle", SHIPPED, "-o", "a.mcpb", cwd=str(tmp_path))
    assert again.returncode == 0 and again.stdout == "a.mcpb is up to date\n"
    (tmp_path / "a.mcpb").write_bytes(b"someone else's file")
    refused = minimcp_cli("bundle", SHIPPED, "-o", "a.mcpb", cwd=str(tmp_path))
    assert refused.returncode == 2
    assert refused.stderr == "minimcp: a.mcpb exists: --force replaces it, or -o FILE writes another file\n"
    assert (tmp_path / "a.mcpb").read_bytes() == b"someone else's file"
    forced = minimcp_cli("bundle", SHIPPED, "-o", "a.mcpb", "--force", cwd=str(tmp_path))
    assert forced.returncode == 0 and (tmp_path / "a.mcpb").read_bytes() == (tmp_path / "b.mcpb").read_bytes()
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".minimcp-")]  # no temporary file left


def test_every_way_of_reading_the_environment_is_found_and_the_rest_is_not(tmp_path):
    write(str(tmp_path / "env_server.py"), """\
import os as o
from os import environ as E, getenv
import os

from minimcp import Server

server = Server("env")
LEVEL = getenv("LOG_LEVEL", default="info")   # read as it loads, with a default


@server.tool()
def show() -> str:
    \"\"\"Show.\"\"\"
    o.environ["WRITTEN"] = "x"                  # a write: not a setting
    del o.environ["WRITTEN"]
    return str([o.environ["DB_PASSWORD"], E.get("TIMEOUT", 30), o.getenv("GITHUB_TOKEN"),
                "VERBOSE" in o.environ, E.setdefault("REGION", "eu"), os.environ.get(f"DYNAMIC_{LEVEL}"),
                os.environ.get("HOME"), os.environ["KEYBOARD_LAYOUT"], o.environ.get("TIMEOUT")])


if __name__ == "__main__":
    print(os.environ["ONLY_IN_MAIN"])
""")
    out = minimcp_cli("bundle", "env_server.py", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    with zipfile.ZipFile(tmp_path / "env.mcpb") as bundle:
        config = json.loads(bundle.read("manifest.json"))["user_config"]
    found = {entry["title"]: (entry["required"], entry.get("default"), entry.get("sensitive", False))
             for entry in config.values()}
    assert found == {"LOG_LEVEL": (False, "info", False), "DB_PASSWORD": (True, None, True),
                     "TIMEOUT": (False, "30", False), "GITHUB_TOKEN": (False, None, True),
                     "VERBOSE": (False, None, False), "REGION": (False, "eu", False),
                     "KEYBOARD_LAYOUT": (True, None, False)}
    assert list(found)[:2] == ["LOG_LEVEL", "DB_PASSWORD"]  # in the order the file reads them


def test_bundle_refusals_say_what_to_do(tmp_path):
    write(str(tmp_path / "empty.py"), "x = 1\n")
    out = minimcp_cli("bundle", "empty.py", cwd=str(tmp_path))
    assert out.returncode == 2 and "empty.py defines no minimcp Server at the top level" in out.stderr
    assert not os.path.exists(tmp_path / "empty.mcpb") and not os.path.exists(tmp_path / "server.mcpb")
    out = minimcp_cli("bundle", "nope.py", cwd=str(tmp_path))
    assert (out.returncode, out.stderr) == (2, "minimcp: no such file: 'nope.py'\n")
    write(str(tmp_path / "keyed.py"), "import os\nfrom minimcp import Server\n"
                                      "server = Server('k')\nKEY = os.environ['ACME_KEY']\n")
    env = {k: v for k, v in os.environ.items() if k != "ACME_KEY"}
    out = minimcp_cli("bundle", "keyed.py", cwd=str(tmp_path), env=env)
    assert out.returncode == 2, out.stderr
    assert "keyed.py failed to load: KeyError: 'ACME_KEY'; if ACME_KEY is an environment variable" in out.stderr
    assert "set it for this command: ACME_KEY=... minimcp" in out.stderr
    out = minimcp_cli("bundle", "keyed.py", "--include", "/etc/hostname", cwd=str(tmp_path),
                      env=dict(env, ACME_KEY="k"))
    assert out.returncode == 2 and "--include /etc/hostname: give a file or folder inside" in out.stderr
    shown = minimcp_cli("bundle", "keyed.py", "--trace", cwd=str(tmp_path), env=env)
    assert shown.returncode == 1 and "Traceback" in shown.stderr and "KeyError: 'ACME_KEY'" in shown.stderr

    write(str(tmp_path / "two.py"), "from minimcp import Server\npublic = Server('public')\nadmin = Server('admin')\n")
    out = minimcp_cli("bundle", "two.py", cwd=str(tmp_path))
    assert out.returncode == 2 and "defines several Servers (public, admin); say which" in out.stderr
    out = minimcp_cli("bundle", "two.py:admin", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    with zipfile.ZipFile(tmp_path / "admin.mcpb") as bundle:
        assert b'main(["run", os.path.join(HERE, "two.py:admin")])' in bundle.read("server/main.py")


# -- registry ------------------------------------------------------------------------------------


def test_registry_writes_a_server_json_the_registry_schema_accepts(server_schema, tmp_path):
    """MCP Registry publishing guide: a PyPI package is checked by the `mcp-name: NAME` line in its README."""
    root = project(tmp_path, urls='[project.urls]\nRepository = "https://github.com/alice/acme-weather"\n'
                                  'Homepage = "https://acme.example/weather"')
    server = str(root / "src" / "acme_weather" / "server.py")
    out = minimcp_cli("registry", server, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    written = json.loads((root / "server.json").read_text())
    assert list(server_schema.iter_errors(written)) == []
    assert written == {
        "$schema": ship.SERVER_SCHEMA, "name": "io.github.alice/acme-weather",
        "description": "Weather forecasts for your assistant", "version": "2.1.0",
        "repository": {"url": "https://github.com/alice/acme-weather", "source": "github"},
        "websiteUrl": "https://acme.example/weather",
        "packages": [{"registryType": "pypi", "identifier": "acme-weather", "version": "2.1.0", "runtimeHint": "uvx",
                      "transport": {"type": "stdio"}, "environmentVariables": [
                          {"name": "WEATHER_API_KEY", "description": "The WEATHER_API_KEY setting (server.py:13 reads "
                                                                     "it)", "isRequired": True, "format": "string",
                           "isSecret": True},
                          {"name": "WEATHER_UNITS", "description": "The WEATHER_UNITS setting (helpers.py:5 reads it)",
                           "isRequired": False, "format": "string", "isSecret": False, "default": "c"}]}]}
    lines = out.stdout.splitlines()
    assert lines[0] == f"wrote {root / 'server.json'}: io.github.alice/acme-weather 2.1.0 (version from pyproject.toml)"
    assert "from the GitHub repository alice/acme-weather" in lines[1] and "--name NAMESPACE/NAME" in lines[1]
    assert lines[-1] == "mcp-name: io.github.alice/acme-weather"
    assert "add this line to the README that PyPI shows" in lines[-2]
    assert ("has no console script named acme-weather, which 'uvx acme-weather' runs: add one that calls "
            "server.run(), such as [project.scripts] acme-weather = \"acme_weather.server:main\"") in out.stdout

    # Deployed too, under another name, with the README line in place: a remote, and nothing to add.
    (root / "README.md").write_text("# Acme weather\n\n<!-- mcp-name: com.acme/weather -->\n")
    out = minimcp_cli("registry", server, "--name", "com.acme/weather", "--url", "https://mcp.acme.example/mcp",
                      "-o", "other.json", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    other = json.loads((tmp_path / "other.json").read_text())
    assert list(server_schema.iter_errors(other)) == []
    assert other["name"] == "com.acme/weather"
    assert other["remotes"] == [{"type": "streamable-http", "url": "https://mcp.acme.example/mcp"}]
    assert out.stdout.splitlines()[-1] == "README.md has the line the registry checks on PyPI: mcp-name: com.acme/weather"
    # The schema would refuse what --name refuses.
    assert list(server_schema.iter_errors(dict(other, name="weather")))
    bad = minimcp_cli("registry", server, "--name", "weather", cwd=str(tmp_path))
    assert bad.returncode == 2 and "--name weather: a registry name is NAMESPACE/NAME" in bad.stderr


def test_registry_names_come_from_the_repository_the_homepage_or_are_a_placeholder(server_schema, tmp_path):
    cases = {  # what the project says -> the name derived, and what the output says about it
        "origin": ("", "io.github.bob/acme-weather", "from the GitHub repository bob/acme-weather"),
        "homepage": ('[project.urls]\nHomepage = "https://www.acme.example/weather"',
                     "example.acme/acme-weather", "from the Homepage URL (the registry checks you own acme.example)"),
        "nothing": ("", "io.github.YOUR-GITHUB-USER/acme-weather",
                    "is a placeholder: no GitHub repository or homepage in the project's metadata or in .git/config "
                    "says who you are; run again with --name io.github.<your GitHub login>/acme-weather"),
    }
    for case, (urls, name, said) in cases.items():
        root = project(tmp_path / case, urls=urls)
        if case == "origin":
            write(str(root / ".git" / "config"), '[core]\n\tbare = false\n[remote "origin"]\n'
                                                 '\turl = git@github.com:bob/acme-weather.git\n')
        out = minimcp_cli("registry", str(root / "src" / "acme_weather" / "server.py"), cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        written = json.loads((root / "server.json").read_text())
        assert written["name"] == name, case
        assert said in out.stdout, (case, out.stdout)
        assert list(server_schema.iter_errors(written)) == []


def test_registry_without_a_project_needs_a_package_or_a_url(server_schema, tmp_path):
    shutil.copy(SHIPPED, tmp_path / "shipped_server.py")
    out = minimcp_cli("registry", "shipped_server.py", cwd=str(tmp_path))
    assert out.returncode == 2
    assert "shipped_server.py is in no Python project" in out.stderr
    assert "--package PYPI_NAME names the one it is published as, --url URL an address" in out.stderr
    out = minimcp_cli("registry", "shipped_server.py", "--url", "https://shipped.example/mcp", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    written = json.loads((tmp_path / "server.json").read_text())
    assert list(server_schema.iter_errors(written)) == []
    assert (written["name"], written["version"], written["title"]) == (
        "io.github.YOUR-GITHUB-USER/shipped", "3.2.1", "Shipped Server")  # the Server's name and version
    assert "packages" not in written and "mcp-name" not in out.stdout  # no PyPI package to prove
    out = minimcp_cli("registry", "shipped_server.py", "--package", "shipped-mcp", "--force", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    written = json.loads((tmp_path / "server.json").read_text())
    assert written["packages"][0]["identifier"] == "shipped-mcp" and "remotes" not in written
    assert out.stdout.splitlines()[-1] == "mcp-name: io.github.YOUR-GITHUB-USER/shipped-mcp"
    assert list(server_schema.iter_errors(written)) == []


def test_the_how_to_shows_what_the_commands_do(server_schema, tmp_path):
    """docs/how-to/ship-your-server.md: its project, written out, gives its console blocks and its server.json."""
    import re

    with open(os.path.join(ROOT, "docs", "how-to", "ship-your-server.md"), encoding="utf-8") as f:
        page = f.read()
    root = tmp_path / "weather-mcp"
    for title, code in re.findall(r'```\w+ title="([^"]+)"\n(.*?)```', page, re.S):
        write(str(root / title), code)
    write(str(root / "README.md"), "# weather-mcp\n")
    consoles = re.findall(r"```console\n\$ minimcp (.*?)\n(.*?)```", page, re.S)
    shown = {command: output for command, output in consoles}
    for command in ("bundle src/weather_mcp/server.py", "registry src/weather_mcp/server.py"):
        out = minimcp_cli(*command.split(), cwd=str(root))
        assert out.returncode == 0, out.stderr
        assert out.stdout == shown[command].replace("/home/alice/weather-mcp", str(root)), command
    written = json.loads((root / "server.json").read_text())
    assert written == json.loads(re.search(r"```json\n(\{.*?)```", page, re.S).group(1))
    assert list(server_schema.iter_errors(written)) == []
