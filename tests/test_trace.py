"""The wire trace (``MINIMCP_TRACE``, ``--trace``, ``--pretty``), read as a person reads it.

Each test runs real processes (``python -m minimcp`` against the example servers, or a
client script) and reads their stderr: each message once, with its direction, its peer and
the time since the line above; one side only unless asked; the 2026-07-28 ``_meta`` folded
with a note; long values shortened; colour on a terminal only; and the trace that
docs/explanation/protocol-line-by-line.md shows still the one the code prints (issue 28).
"""

import os
import pty
import re
import select
import subprocess
import time

from conftest import PY, ROOT, TESTING_SERVER, example

WEATHER = ["--", PY, example("weather_server.py")]
TESTING = ["--", PY, TESTING_SERVER]
SCENARIO = os.path.join(ROOT, "tests", "servers", "line_by_line.py")
PAGE = os.path.join(ROOT, "docs", "explanation", "protocol-line-by-line.md")

#: One line of the trace: the time since the line above, whose side, the arrow, the peer, the message.
LINE = re.compile(r"^ *\+[0-9.]+(?:ms|s) (?P<who>client|server \S+) (?P<arrow>[→←]) (?P<peer>\S+)(?:  (?P<text>.*))?$")
#: What a message is: its id (if any), and its method, or whether it is a result or an error.
WHAT = re.compile(r'^\{"jsonrpc":"2\.0",(?:"id":(?P<id>[^,]+),)?(?:"method":"(?P<method>[^"]+)"|"(?P<kind>result|error)")')


def _env(**extra):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    for name in ("MINIMCP_TRACE", "NO_COLOR"):
        env.pop(name, None)
    env.update(extra)
    return env


def minimcp(*args, **env):
    """Run ``python -m minimcp ARGS`` with ``env`` added; the CompletedProcess (text)."""
    return subprocess.run([PY, "-m", "minimcp", *args], cwd=ROOT, env=_env(**env), capture_output=True, text=True,
                          encoding="utf-8", timeout=60)


def python(code, **env):
    """Run a Python program with ``env`` added; the CompletedProcess (text)."""
    return subprocess.run([PY, "-c", code], cwd=ROOT, env=_env(**env), capture_output=True, text=True,
                          encoding="utf-8", timeout=60)


def traced(stderr):
    """The trace lines of ``stderr``: ``(who, arrow, peer, text)`` each."""
    return [match.group("who", "arrow", "peer", "text") for match in map(LINE.match, stderr.splitlines()) if match]


def shapes(lines):
    """What each traced message is, without what changes from run to run (times, states):
    ``(who, arrow, id, method or "result"/"error", "input_required" or "")``."""
    found = []
    for who, arrow, _, text in lines:
        what = WHAT.match(text or "")
        assert what, text
        found.append((who, arrow, what.group("id"), what.group("method") or what.group("kind"),
                      "input_required" if '"resultType":"input_required"' in text else ""))
    return found


# -- each message once, with its direction and peer ----------------------------------------------


def test_each_message_is_one_line_with_its_direction_its_peer_and_the_time():
    out = minimcp("call", "get_weather", "city=Paris", "--trace", *WEATHER)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Paris: 22°C, sunny\n"
    lines = traced(out.stderr)
    assert {(who, peer) for who, _, peer, _ in lines} == {("client", "weather_server.py")}
    assert [shape[1:4] for shape in shapes(lines)] == [
        ("→", "1", "server/discover"), ("←", "1", "result"), ("→", "2", "tools/list"), ("←", "2", "result"),
        ("→", "3", "tools/call"), ("←", "3", "result")]
    assert out.stderr.splitlines()[0] == "minimcp trace: → sent, ← received, +time since the line above"
    assert "\x1b" not in out.stderr  # not a terminal: no colour


def test_the_child_server_traces_only_when_asked():
    """MINIMCP_TRACE=1 traces this client only (the server it starts would show each message
    again); =both hands the variable on; so does env= given to connect()."""
    one = minimcp("call", "get_weather", "city=Paris", *WEATHER, MINIMCP_TRACE="1")
    assert one.returncode == 0, one.stderr
    assert {who for who, _, _, _ in traced(one.stderr)} == {"client"} and len(traced(one.stderr)) == 6
    both = minimcp("call", "get_weather", "city=Paris", *WEATHER, MINIMCP_TRACE="both")
    lines = traced(both.stderr)
    server = [(arrow, peer) for who, arrow, peer, _ in lines if who == "server weather"]
    assert len(server) == 6 and {peer for _, peer in server} == {"client"}
    assert len([who for who, _, _, _ in lines if who == "client"]) == 6
    asked = python(f"import minimcp; c = minimcp.connect([{PY!r}, {example('weather_server.py')!r}], trace=False, "
                   "env={'MINIMCP_TRACE': '1'}); c.call_tool('get_weather', {'city': 'Oslo'}); c.close()")
    assert asked.returncode == 0, asked.stderr
    assert {who for who, _, _, _ in traced(asked.stderr)} == {"server weather"}


def test_a_server_in_the_same_process_is_left_out_unless_both():
    code = ("import minimcp\n"
            "server = minimcp.Server('inproc')\n"
            "server.tool()(lambda text: text)\n"
            "with minimcp.connect('memory', server=server) as client:\n"
            "    client.call_tool('<lambda>', {'text': 'hi'})\n")
    one = python(code, MINIMCP_TRACE="1")
    assert one.returncode == 0, one.stderr
    assert {who for who, _, _, _ in traced(one.stderr)} == {"client"}
    assert one.stderr.count("the side of the server in this process is left out") == 1
    both = python(code, MINIMCP_TRACE="both")
    assert {who for who, _, _, _ in traced(both.stderr)} == {"client", "server inproc"}


def test_the_trace_when_off_is_never_made():
    """Off (the default), a call formats nothing: the sessions check their flag first, and the
    renderer is never even loaded."""
    out = python("import sys, minimcp\n"
                 "server = minimcp.Server('quiet')\n"
                 "server.tool()(lambda: 'ok')\n"
                 "with minimcp.connect('memory', server=server) as client:\n"
                 "    client.call_tool('<lambda>', {})\n"
                 "print('minimcp.wiretrace' not in sys.modules)")
    assert (out.returncode, out.stdout, out.stderr) == (0, "True\n", "")


# -- what it leaves out: the repeated _meta, the long values ---------------------------------------


def test_the_meta_every_request_repeats_is_folded_and_the_trace_says_so():
    """spec 2026-07-28 basic "Per-request metadata": every request carries the version and the
    client's capabilities; the trace shows them once."""
    out = minimcp("call", "get_weather", "city=Paris", "--trace", *WEATHER)
    lines = [text for _, arrow, _, text in traced(out.stderr) if arrow == "→"]
    assert '"io.modelcontextprotocol/clientInfo":{"name":"minimcp","version":"0.1.0"}' in lines[0]
    assert out.stderr.count("io.modelcontextprotocol/protocolVersion") == 1
    assert '"_meta":{…4 as before}' in lines[2]  # tools/call: the version, capabilities, info, log level
    assert out.stderr.count("…N as before: N _meta keys with the values they had in the last message") == 1
    full = minimcp("call", "get_weather", "city=Paris", "--trace", *WEATHER, MINIMCP_TRACE="full")
    assert full.stderr.count("io.modelcontextprotocol/protocolVersion") == 3 and "as before" not in full.stderr


def test_long_values_are_shortened_and_the_trace_says_so():
    text = "a long line " * 30
    out = minimcp("call", "echo", f"text={text}", "--trace", *TESTING)
    assert out.returncode == 0, out.stderr
    assert out.stdout == text + "\n"
    calls = [line for _, _, _, line in traced(out.stderr) if '"a long line' in line]
    assert len(calls) == 2  # the call, its result
    for line in calls:
        assert f'"{text[:63]}…" (+{len(text) - 63} chars)' in line
    assert out.stderr.count("long values are shortened") == 1
    big = minimcp("call", "big", "size=100000", "--trace", *TESTING)
    assert big.returncode == 0 and len(big.stdout) > 100000
    assert max(len(line) for line in big.stderr.splitlines()) < 500
    whole = minimcp("call", "echo", f"text={text}", "--trace", *TESTING, MINIMCP_TRACE="full")
    assert whole.stderr.count(text) == 2 and "(+" not in whole.stderr


def test_a_peer_s_control_characters_are_shown_escaped():
    """A value that would drive the terminal (a C1 control, a bidi override) is written as its escape."""
    out = minimcp("call", "echo", "text=\x9b31m\u202eevil", "--trace", *TESTING)
    assert out.returncode == 0, out.stderr
    assert "\x9b" not in out.stderr and "\u202e" not in out.stderr
    assert "\\u009b31m\\u202eevil" in out.stderr


def test_an_unknown_word_in_minimcp_trace_is_said():
    out = minimcp("tools", *WEATHER, MINIMCP_TRACE="prety")
    assert out.returncode == 0 and traced(out.stderr)
    assert "MINIMCP_TRACE=prety: not a word the trace knows; it knows pretty, both, full" in out.stderr


# -- the forms: pretty, colour ---------------------------------------------------------------------


def test_pretty_indents_each_message_under_its_line():
    plain = minimcp("tools", *WEATHER)
    out = minimcp("tools", "--pretty", *WEATHER)
    assert out.returncode == 0 and out.stdout == plain.stdout
    err = out.stderr.splitlines()
    heads = [at for at, line in enumerate(err) if LINE.match(line)]
    assert len(heads) == 4 and all(LINE.match(err[at]).group("text") is None for at in heads)
    assert [err[at + 1] for at in heads] == ["    {"] * 4
    assert '      "jsonrpc": "2.0",' in err and '      "method": "tools/list",' in err
    assert '      "params": {"_meta": {"io.modelcontextprotocol/logLevel": "info", …3 as before}}' in err  # (folded)
    same = minimcp("tools", *WEATHER, MINIMCP_TRACE="pretty")
    assert [LINE.sub("", line) for line in same.stderr.splitlines()] == [LINE.sub("", line) for line in err]


def _on_a_terminal(*args, **env):
    """Run ``python -m minimcp ARGS`` with stderr on a pseudo-terminal; what it wrote there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([PY, "-m", "minimcp", *args], cwd=ROOT, env=_env(**env), stdout=subprocess.DEVNULL,
                            stderr=slave)
    os.close(slave)
    written = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # (Linux: EIO once the child's end is closed)
                break
            if not chunk:
                break
            written += chunk
    finally:
        os.close(master)
        proc.wait(timeout=30)
    return written.decode("utf-8")


def test_colour_only_on_a_terminal_and_never_with_no_color():
    coloured = _on_a_terminal("tools", "--trace", *WEATHER)
    assert "\x1b[36mclient → weather_server.py\x1b[0m" in coloured  # sent
    assert "\x1b[32mclient ← weather_server.py\x1b[0m" in coloured  # received
    assert '"method":\x1b[1m"tools/list"\x1b[0m' in coloured
    plain = _on_a_terminal("tools", "--trace", *WEATHER, NO_COLOR="1")
    assert not re.search("\x1b\\[[0-9;]*m", plain) and "client → weather_server.py" in plain  # no colour


# -- the protocol version ----------------------------------------------------------------------------


def test_protocol_2025_11_25_shows_the_handshake_and_2026_07_28_none():
    """spec 2025-11-25 basic/lifecycle: initialize, its result, notifications/initialized;
    spec 2026-07-28 basic: no handshake, every request stands alone."""
    old = minimcp("tools", "--trace", "--protocol", "2025-11-25", *WEATHER)
    assert old.returncode == 0, old.stderr
    methods = [shape[3] for shape in shapes(traced(old.stderr))]
    assert methods[:3] == ["initialize", "result", "notifications/initialized"] and "server/discover" not in methods
    new = minimcp("tools", "--trace", "--protocol", "2026-07-28", *WEATHER)
    assert new.returncode == 0, new.stderr
    methods = [shape[3] for shape in shapes(traced(new.stderr))]
    assert methods[0] == "server/discover" and "initialize" not in methods
    assert "notifications/initialized" not in methods and "logging/setLevel" not in methods


# -- the docs page ---------------------------------------------------------------------------------


def _page_sections():
    """The page's trace lines by era: ``{version: [lines]}``, in the page's order."""
    with open(PAGE, encoding="utf-8") as f:
        page = f.read()
    sections = {}
    for section in re.split(r"^(?=## )", page, flags=re.M):  # (an era's heading ends with its version)
        era = re.match(r"## .*\((\d{4}-\d\d-\d\d)\)\n", section)
        if era:
            sections[era.group(1)] = traced("".join(re.findall(r"```text\n(.*?)```", section, re.S)))
    return sections


def test_the_page_shows_the_trace_the_code_prints():
    """docs/explanation/protocol-line-by-line.md walks through a real trace of each era: the same
    messages, in the same order, from the same sides, as tests/servers/line_by_line.py prints now."""
    sections = _page_sections()
    assert set(sections) == {"2025-11-25", "2026-07-28"}
    for version, shown in sections.items():
        out = subprocess.run([PY, SCENARIO, "--client", version], cwd=ROOT, env=_env(), capture_output=True,
                             text=True, encoding="utf-8", timeout=60)
        assert out.returncode == 0, out.stderr
        printed = traced(out.stderr)
        assert shapes(shown) == shapes(printed), version
        assert [peer for _, _, peer, _ in shown] == [peer for _, _, peer, _ in printed]
        methods = {shape[3] for shape in shapes(printed)}
        assert {"tools/list", "notifications/progress", "notifications/cancelled"} <= methods
        assert ("initialize" in methods) == (version == "2025-11-25")
