"""``minimcp servers`` lists every entry of every host config file, a malformed one with its
own error next to the good ones of its file: one bad entry hides nothing else (issue 29).

A real ``minimcp`` subprocess, with HOME (and the other variables hosts read) pointed at a
temporary folder, and a project folder as its working directory: never the real user config.
"""

import json
import os
import subprocess

from conftest import PY, ROOT


def test_one_bad_entry_is_listed_with_its_error_and_hides_none_of_its_neighbours(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "good": {"type": "stdio", "command": "python", "args": ["server.py"]},
        "broken": {"args": ["no command, no url"]},
        "remote": {"type": "http", "url": "https://example.com/mcp"},
    }}), encoding="utf-8")
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               APPDATA=str(home / "AppData" / "Roaming"), PYTHONPATH=ROOT)

    def servers(*args):
        done = subprocess.run([PY, "-m", "minimcp", "servers", *args], capture_output=True, text=True,
                              encoding="utf-8", env=env, cwd=project, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    rows = {row["name"]: row for row in json.loads(servers("--json"))["servers"]}
    assert sorted(rows) == ["broken", "good", "remote"]
    assert rows["good"]["command"] == ["python", "server.py"] and rows["remote"]["url"] == "https://example.com/mcp"
    assert 'needs a "command"' in rows["broken"]["error"] and "broken" in rows["broken"]["error"]
    text = servers()
    assert "python server.py" in text and "https://example.com/mcp" in text
    assert [line for line in text.splitlines() if line.startswith("broken ")][0].endswith(rows["broken"]["error"])
