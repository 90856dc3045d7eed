"""The ``minimcp`` command, run as a real subprocess against the example servers.

Plus unit tests of its pure parts: key=value parsing, the command-line split at
``--``, result formatting, the progress line and error messages.
"""

import io
import json
import os
import signal
import subprocess
import sys

import pytest

from minimcp import cli
from minimcp.client.config import ServerNotFound
from minimcp.client.results import Tool
from minimcp.errors import ConnectionClosed, RPCError, Timeout

from conftest import PY, ROOT, TESTING_SERVER, example

WEATHER = ["--", PY, example("weather_server.py")]
KB = ["--", PY, example("knowledge_base.py")]
TESTING = ["--", PY, TESTING_SERVER]


def _env():
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.pop("MINIMCP_TRACE", None)
    return env


def minimcp(*args, stdin=None):
    """Run ``python -m minimcp ARGS`` and return the CompletedProcess (text)."""
    return subprocess.run([PY, "-m", "minimcp", *args], cwd=ROOT, env=_env(), input=stdin, capture_output=True,
                          text=True, encoding="utf-8", timeout=60)


def one_line_error(out, status):
    """Check that a run failed with ``status`` and said why in exactly one line; return the line."""
    assert out.returncode == status, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("minimcp"), out.stderr
    assert "Traceback" not in out.stderr
    return lines[0]


# -- help ---------------------------------------------------------------------------------------


def test_help_lists_commands_targets_and_exit_statuses():
    out = minimcp("--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: minimcp COMMAND")
    for command in ("tools", "call", "resources", "read", "prompts", "prompt", "info"):
        assert f"\n  {command} " in out.stdout
    assert "-- SERVER_COMMAND" in out.stdout and "--config FILE" in out.stdout
    assert "exit status:" in out.stdout


def test_call_help_shows_both_forms_and_options():
    out = minimcp("call", "--help")
    assert out.returncode == 0, out.stderr
    assert "usage: minimcp call [options] TOOL [key=value ...] -- SERVER_COMMAND [ARG ...]" in out.stdout
    assert "minimcp call [options] TARGET TOOL [key=value ...]" in out.stdout
    for option in ("--json", "--args JSON", "--trace", "--timeout SECONDS", "--quiet", "--config FILE"):
        assert option in out.stdout


def test_each_command_s_help_says_only_what_applies_to_it():
    """The top-level help keeps the overview; a command's own help names its server forms,
    its examples and exit statuses, and key=value only where it takes them (issue 28)."""
    overview = minimcp("--help").stdout
    assert "key=value" in overview and "-- SERVER_COMMAND" in overview and "exit status:" in overview
    tools = minimcp("tools", "--help")
    assert tools.returncode == 0, tools.stderr
    assert "key=value" not in tools.stdout and "--args" not in tools.stdout and "Prompt arguments" not in tools.stdout
    assert "minimcp tools -- python examples/weather_server.py" in tools.stdout
    assert "minimcp call" not in tools.stdout  # no other command's examples
    assert "1 the tool reported an error" not in tools.stdout
    for name in ("resources", "read", "prompts", "info"):
        assert "key=value" not in minimcp(name, "--help").stdout, name
    call = minimcp("call", "--help").stdout
    assert "key=value is read as JSON" in call and "1 the tool reported an error" in call
    prompt = minimcp("prompt", "--help").stdout
    assert "prompt arguments are text" in prompt and "--args" not in prompt
    for name in ("login", "logout"):
        out = minimcp(name, "--help")
        assert out.returncode == 0, out.stderr
        assert "SERVER_COMMAND" not in out.stdout and "key=value" not in out.stdout
        assert f"usage: minimcp {name} [options] URL" in out.stdout
        for option in ("--json", "--header", "--log-level", "--protocol", "--quiet"):
            assert option not in out.stdout, (name, option)
    login = minimcp("login", "--help").stdout
    assert "--headless" in login and "--client-id" in login and "--trace" in login


def test_every_command_that_connects_takes_protocol():
    for name in ("tools", "call", "resources", "read", "prompts", "prompt", "info"):
        assert "--protocol VERSION" in minimcp(name, "--help").stdout, name
    out = minimcp("info", "--protocol", "2025-11-25", *WEATHER)
    assert out.returncode == 0, out.stderr
    assert "protocol      2025-11-25" in out.stdout
    assert "protocol      2026-07-28" in minimcp("info", "--protocol", "2026-07-28", *WEATHER).stdout
    line = one_line_error(minimcp("info", "--protocol", "2025-01-01", *WEATHER), 2)
    assert "--protocol" in line and "2025-11-25" in line, line


def test_version():
    out = minimcp("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"minimcp {cli.__version__}"


# -- tools and call -----------------------------------------------------------------------------


def test_tools_shows_signatures_and_descriptions():
    out = minimcp("tools", *WEATHER)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        'get_weather(city: string, units: "c" | "f" = "c")',
        "    Get the current weather for a city.",
        "      city  City name",
        "",
        "get_forecast(city: string, days: integer = 3)",
        "    Get a forecast for the next few days.",
        "      city  City name.",
        "      days  How many days, 1 to 7.",
    ]


def test_tools_json_is_the_raw_list():
    out = minimcp("tools", "--json", *KB)
    assert out.returncode == 0, out.stderr
    tools = json.loads(out.stdout)["tools"]
    assert [tool["name"] for tool in tools] == ["search", "reindex", "summarize", "rate", "workspace", "update"]
    assert tools[0]["annotations"] == {"readOnlyHint": True}


def test_call_prints_text():
    out = minimcp("call", "get_weather", "city=Kraków", *WEATHER)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Kraków: 22°C, sunny\n"


def test_call_pretty_prints_structured_content_once():
    out = minimcp("call", "get_forecast", "city=Tokyo", "days=2", *WEATHER)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"city": "Tokyo", "days": [{"day": 1, "celsius": 27, "sky": "humid"},
                                                                {"day": 2, "celsius": 28, "sky": "humid"}]}
    assert out.stdout.startswith("{\n  ")


def test_call_json_prints_the_raw_result():
    out = minimcp("call", "add", "a=2", "b=3", "--json", *TESTING)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5},
                                      "isError": False, "resultType": "complete"}  # 2026-07-28 wire


def test_call_keeps_text_for_string_arguments():
    """``01234`` parses as JSON to nothing valid and ``123`` to a number; a string argument keeps both as typed."""
    for value in ("01234", "123", "true", '{"a": 1}'):
        out = minimcp("call", "echo", f"text={value}", "--json", *TESTING)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["content"][0]["text"] == value


def test_call_args_object_and_stdin():
    out = minimcp("call", "add", "--args", '{"a": 1}', "b=4", *TESTING)
    assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr
    out = minimcp("call", "add", "--args", "-", *TESTING, stdin='{"a": 20, "b": 22}')
    assert (out.returncode, out.stdout) == (0, "42\n"), out.stderr


def test_call_options_may_come_anywhere_before_the_server_command():
    out = minimcp("call", "--quiet", "add", "a=1", "--timeout", "30", "b=2", "--json", *TESTING)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["structuredContent"] == {"result": 3}


@pytest.mark.parametrize("tool", ["refuse", "fail"])
def test_tool_error_prints_its_message_and_exits_1(tool):
    out = minimcp("call", tool, "message=no way", *TESTING)
    line = one_line_error(out, 1)
    assert line.startswith(f"minimcp: tool {tool!r} failed: ") and "no way" in line
    assert out.stdout == ""


def test_tool_error_json_still_prints_the_result():
    out = minimcp("call", "refuse", "message=no", "--json", *TESTING)
    assert out.returncode == 1
    assert json.loads(out.stdout) == {"content": [{"type": "text", "text": "no"}], "isError": True,
                                      "resultType": "complete"}


def test_bad_argument_type_is_a_tool_error():
    out = minimcp("call", "add", "a=1", "b=two", *TESTING)
    assert "'b'" in one_line_error(out, 1)


def test_unknown_tool_names_the_tools_there_are():
    line = one_line_error(minimcp("call", "nope", *TESTING), 1)
    assert "nope" in line and "-32602" in line and "echo, add" in line


def test_progress_draws_nothing_when_stderr_is_not_a_terminal():
    out = minimcp("call", "count", "n=5", *TESTING)
    assert (out.returncode, out.stdout, out.stderr) == (0, "counted 5\n", "")


# -- failures -----------------------------------------------------------------------------------


def test_command_not_found():
    line = one_line_error(minimcp("tools", "--", "no-such-mcp-server-xyz"), 3)
    assert "'no-such-mcp-server-xyz' was not found" in line


def test_server_crash_mid_call():
    out = minimcp("call", "crash", "--quiet", *TESTING)
    line = one_line_error(out, 3)
    assert "exited with code 3" in line and "about to crash" in line


def test_server_stderr_is_shown_unless_quiet():
    out = minimcp("call", "crash", *TESTING)
    assert out.returncode == 3
    lines = out.stderr.splitlines()
    assert "about to crash" in lines and lines[-1].startswith("minimcp: ") and "exited with code 3" in lines[-1]
    out = minimcp("call", "noisy", "text=hi", *TESTING)
    assert out.returncode == 0 and "this goes to stderr" in out.stderr and out.stdout == "hi\n"
    out = minimcp("call", "noisy", "text=hi", "-q", *TESTING)
    assert (out.returncode, out.stdout, out.stderr) == (0, "hi\n", "")


def test_timeout_cancels_the_call():
    out = minimcp("call", "wait_for_cancel", "seconds=30", "--timeout", "0.5", "--quiet", *TESTING)
    line = one_line_error(out, 3)
    assert line.startswith("minimcp: timed out: ") and "0.5s" in line and "--timeout" in line


def test_trace_shows_the_wire_on_stderr():
    out = minimcp("call", "wait_for_cancel", "seconds=30", "--timeout", "0.5", "--trace", "-q", *TESTING)
    assert out.returncode == 3
    assert 'client → testing_server.py  {"jsonrpc":"2.0","id":1,"method":"server/discover"' in out.stderr
    assert "client ← testing_server.py  " in out.stderr and '"method":"tools/call"' in out.stderr
    assert '"method":"notifications/cancelled"' in out.stderr
    assert out.stdout == ""


def test_trace_leaves_stdout_alone():
    plain, traced = minimcp("tools", *WEATHER), minimcp("tools", "--trace", *WEATHER)
    assert traced.returncode == 0 and traced.stdout == plain.stdout
    assert '"method":"tools/list"' in traced.stderr


def test_ctrl_c_exits_130_without_a_traceback(ctrl_c):
    proc = subprocess.Popen([PY, "-m", "minimcp", "call", "wait_for_cancel", "seconds=30", "--trace", *TESTING],
                            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            encoding="utf-8")
    try:
        for line in proc.stderr:  # wait until the call is on the wire
            if '"method":"tools/call"' in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err and err.splitlines()[-1] == "minimcp: interrupted"
    assert '"method":"notifications/cancelled"' in err


def test_the_ctrl_c_tests_pass_in_a_suite_started_with_sigint_ignored():
    # As `pytest &` in a script does: the ctrl_c fixture must undo the inherited SIG_IGN.
    tests = ["tests/test_cli.py::test_ctrl_c_exits_130_without_a_traceback",
             "tests/test_session.py::test_ctrl_c_while_waiting_cancels_at_the_peer"]
    ignore_then_run = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                       "os.execv(sys.executable, [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', "
                       "*sys.argv[1:]])")
    out = subprocess.run([PY, "-c", ignore_then_run, *tests], cwd=ROOT, env=_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout


@pytest.mark.parametrize("argv, expected", [
    (["tools"], "no server given"),
    (["call", "--", PY, TESTING_SERVER], "missing TOOL"),
    (["read", "--", PY, TESTING_SERVER], "missing URI"),
    (["tools", "extra", "--", PY, TESTING_SERVER], "unexpected argument 'extra'"),
    (["call", "add", "a", "--", PY, TESTING_SERVER], "expected key=value, got 'a'"),
    (["call", "add", "a=1", "a=2", "--", PY, TESTING_SERVER], "argument 'a' given twice"),
    (["call", "add", "--args", "[1]", "--", PY, TESTING_SERVER], "must be a JSON object"),
    (["call", "add", "--args", "{", "--", PY, TESTING_SERVER], "--args is not valid JSON"),
    (["tools", "--timeout", "0", "--", PY, TESTING_SERVER], "must be more than 0"),
    (["nope"], "invalid choice: 'nope'"),
    (["tools", "-H", "no colon", "--", PY, TESTING_SERVER], "expected --header 'Name: value'"),
    (["tools", "examples/weather_server.py"], "'minimcp tools -- python examples/weather_server.py'"),
])
def test_usage_errors_exit_2_with_one_line(argv, expected):
    assert expected in one_line_error(minimcp(*argv), 2)


def test_unreachable_url():
    """Port 1 refuses connections: a one-line error, whether or not this build has an HTTP transport."""
    out = minimcp("tools", "http://127.0.0.1:1/mcp", "-H", "Authorization: Bearer x")
    assert "http://127.0.0.1:1/mcp" in one_line_error(out, out.returncode)
    assert out.returncode in (2, 3)


def test_unknown_config_name():
    assert "no-such-server" in one_line_error(minimcp("tools", "no-such-server", "--config", os.devnull), 3)


def test_config_name_target(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"weather": {"command": PY, "args": [example("weather_server.py")]}}}))
    out = minimcp("call", "weather", "get_weather", "city=London", "--config", str(config))
    assert (out.returncode, out.stdout) == (0, "London: 14°C, rain\n"), out.stderr


# -- resources, prompts, info -------------------------------------------------------------------


def test_resources_lists_resources_and_templates():
    out = minimcp("resources", *KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "resources:",
        "  kb://index  (application/json)  index",
        "    Every document's id and title.",
        "templates:",
        "  kb://docs/{doc_id}  (text/markdown)  document",
        "    One document, as Markdown.",
    ]
    data = json.loads(minimcp("resources", "--json", *KB).stdout)
    assert [r["uri"] for r in data["resources"]] == ["kb://index"]
    assert [t["uriTemplate"] for t in data["resourceTemplates"]] == ["kb://docs/{doc_id}"]


def test_listing_what_a_server_does_not_offer_is_empty():
    out = minimcp("resources", *TESTING)
    assert (out.returncode, out.stdout) == (0, "(no resources)\n(no templates)\n"), out.stderr
    out = minimcp("prompts", "--json", *TESTING)
    assert (out.returncode, json.loads(out.stdout)) == (0, {"prompts": []}), out.stderr
    assert "'prompts' capability" in one_line_error(minimcp("prompt", "ask", *TESTING), 1)


def test_read_prints_the_text():
    out = minimcp("read", "kb://docs/threads", *KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "# Threads\nA thread runs code concurrently with other threads in one process.\n"
    raw = json.loads(minimcp("read", "kb://index", "--json", *KB).stdout)
    assert raw["contents"][0]["mimeType"] == "application/json"


def test_read_unknown_resource():
    assert "-32602] Resource not found" in one_line_error(minimcp("read", "kb://nope", "-q", *KB), 1)  # 2026-07-28


# -- MCP Apps ---------------------------------------------------------------------------------------

APP = ["--", PY, example("mcp_app.py"), "--server"]
VIEW_HTML = os.path.join(ROOT, "examples", "mcp_app.html")

#: A server with a view sent as a blob, and a resource of two entries, the first binary.
BLOBS = """
from minimcp import Server

server = Server("blobs")
server.ui_resource("ui://blobs/view.html")(lambda: "<p>zażółć</p>".encode())
server.add_resource(lambda: [{"uri": "data://two", "mimeType": "image/png", "blob": "iVBORw0KGgo="},
                             {"uri": "data://two/b", "mimeType": "text/plain", "text": "second"}], "data://two")
server.run()
"""


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_tools_marks_the_tools_with_a_view_and_shows_the_views_own(protocol):
    """The command declares MCP Apps (in either era), so the server shows it the tool only the
    view calls; each tool with a view says which, and who may call it."""
    out = minimcp("tools", "--protocol", protocol, *APP)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "show_counter()  [view ui://counter/view.html]",
        "    Show the counter, with a button to count.",
        "",
        "increment(by: integer = 1)  [view ui://counter/view.html, app only]",
        "    Add `by` to the counter (the view's +1 button).",
    ]


def test_call_reaches_a_tool_only_the_view_calls():
    out = minimcp("call", "increment", "by=2", *APP)
    assert (out.returncode, out.stdout) == (0, '{\n  "count": 2\n}\n'), out.stderr


def test_format_tool_marks_views_and_who_may_call():
    def tool(ui=None, **more):
        return Tool({"name": "t", "inputSchema": {"type": "object"}, **({"_meta": {"ui": ui}} if ui else {}), **more})

    def head(t):
        return cli.output.format_tool(t).splitlines()[0]

    assert head(tool()) == "t()"
    assert head(tool({"resourceUri": "ui://a/v.html"})) == "t()  [view ui://a/v.html]"
    assert head(tool({"resourceUri": "ui://a/v.html", "visibility": ["model"]})) == "t()  [view ui://a/v.html, model only]"
    assert head(tool({"resourceUri": "ui://a/v.html", "visibility": ["app"]},
                     annotations={"readOnlyHint": True})) == "t()  [read-only, view ui://a/v.html, app only]"
    assert head(tool({"visibility": ["model"]})) == "t()"  # no view: the model's, as every tool is
    assert head(Tool({"name": "t", "_meta": {"ui/resourceUri": "ui://old/v.html"}})) == "t()  [view ui://old/v.html]"


def test_read_prints_a_views_html():
    out = minimcp("read", "ui://counter/view.html", *APP)
    assert out.returncode == 0, out.stderr
    with open(VIEW_HTML, encoding="utf-8") as f:
        assert out.stdout == f.read() + "\n"


def test_read_output_saves_the_contents_and_says_so(tmp_path):
    saved = tmp_path / "view.html"
    saved.write_text("an older copy", encoding="utf-8")  # replaced, as curl -o and > replace
    out = minimcp("read", "ui://counter/view.html", "-o", str(saved), *APP)
    assert (out.returncode, out.stdout) == (0, ""), out.stderr
    with open(VIEW_HTML, "rb") as f:
        html = f.read()
    assert saved.read_bytes() == html
    assert out.stderr == (f"saved ui://counter/view.html (text/html;profile=mcp-app, {len(html)} bytes) "
                          f"to {saved}\n")
    both = minimcp("read", "ui://counter/view.html", "--output", str(tmp_path / "again.html"), "--json", *APP)
    assert both.returncode == 0, both.stderr
    assert (tmp_path / "again.html").read_bytes() == html
    assert json.loads(both.stdout)["contents"][0]["text"].encode() == html  # --json still prints the raw result


def test_read_output_saves_a_blob_decoded_and_prints_a_blob_view_as_text(tmp_path):
    server = tmp_path / "blobs.py"
    server.write_text(BLOBS, encoding="utf-8")
    blobs = ["--", PY, str(server)]
    out = minimcp("read", "data://two", "-o", str(tmp_path / "two.png"), *blobs)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "two.png").read_bytes() == b"\x89PNG\r\n\x1a\n"
    assert out.stderr == (f"saved data://two (image/png, 8 bytes) to {tmp_path / 'two.png'}; "
                          "1 more entry not saved (shown without -o)\n")
    view = minimcp("read", "ui://blobs/view.html", "-o", str(tmp_path / "view.html"), *blobs)
    assert view.returncode == 0, view.stderr
    assert (tmp_path / "view.html").read_text(encoding="utf-8") == "<p>zażółć</p>"
    assert f"(text/html;profile=mcp-app, {len('<p>zażółć</p>'.encode())} bytes)" in view.stderr  # bytes, not characters
    shown = minimcp("read", "ui://blobs/view.html", *blobs)
    assert (shown.returncode, shown.stdout) == (0, "<p>zażółć</p>\n"), shown.stderr


def test_read_output_refuses_a_folder_or_a_missing_folder_before_starting_the_server(tmp_path):
    never = ["--", PY, "-c", f"open({str(tmp_path / 'started')!r}, 'w')"]  # would leave a file if started
    line = one_line_error(minimcp("read", "ui://counter/view.html", "-o", str(tmp_path), *never), 2)
    assert f"is a folder: give a file name (--output {tmp_path / 'view.html'})" in line
    line = one_line_error(minimcp("read", "kb://index", "-o", str(tmp_path / "no" / "x.json"), *never), 2)
    assert f"there is no folder {str(tmp_path / 'no')!r}" in line
    assert not (tmp_path / "started").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/full: every write fails (as root too)")
def test_read_output_that_cannot_be_written_says_why():
    line = one_line_error(minimcp("read", "kb://index", "-o", "/dev/full", "-q", *KB), 2)
    assert line == "minimcp: cannot write /dev/full: No space left on device"


def test_prompts_and_prompt():
    out = minimcp("prompts", *KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:2] == ["ask(question, doc_id?)", "    Ask a question about one document."]
    out = minimcp("prompt", "ask", "question=What is it?", "doc_id=mcp", *KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[user]", "[resource: kb://docs/mcp (text/markdown, 77 characters)]",
                                       "[user]", "Using the document above, answer: What is it?"]
    raw = json.loads(minimcp("prompt", "ask", "question=3", "--json", *KB).stdout)
    assert raw["messages"][1]["content"]["text"].endswith("answer: 3")


def test_prompt_missing_argument():
    assert "question" in one_line_error(minimcp("prompt", "ask", "-q", *KB), 1)


def test_info():
    out = minimcp("info", *KB)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "server        knowledge-base 1.0.0",
        "protocol      2026-07-28",
        "capabilities  completions, logging, prompts (listChanged), resources (listChanged, subscribe), "
        "tools (listChanged)",
        "instructions  Search the knowledge base, then read kb://docs/{doc_id} for the full text.",
    ]
    info = json.loads(minimcp("info", "--json", *WEATHER).stdout)
    assert info["serverInfo"] == {"name": "weather", "version": "1.0.0"}
    assert info["protocolVersion"] == "2026-07-28" and info["instructions"] is None
    assert "tools" in info["capabilities"]


# -- the pure parts -----------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [
    ("Paris", "Paris"), ("3", 3), ("2.5", 2.5), ("true", True), ("null", None), ('["a"]', ["a"]),
    ('{"a": 1}', {"a": 1}), ("01234", "01234"), ("NaN", "NaN"), ("Infinity", "Infinity"), ("", ""),
    ("[unclosed", "[unclosed"), ('"quoted"', "quoted"),
])
def test_parse_value(text, value):
    assert cli.parse_value(text) == value


def test_convert_arguments_follows_the_schema():
    schema = {"properties": {"zip": {"type": "string"}, "days": {"type": "integer"},
                             "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                             "units": {"enum": ["1", "2"]}, "either": {"type": ["string", "integer"]}}}
    pairs = [("zip", "01234"), ("days", "3"), ("maybe", "7"), ("units", "1"), ("either", "5"), ("other", "[1]")]
    assert cli.convert_arguments(pairs, schema) == {"zip": "01234", "days": 3, "maybe": "7", "units": "1",
                                                   "either": 5, "other": [1]}
    assert cli.convert_arguments([("zip", "01234"), ("n", "2")]) == {"zip": "01234", "n": 2}


def test_split_pairs():
    assert cli.split_pairs(["a=1", "b==2", "c="]) == [("a", "1"), ("b", "=2"), ("c", "")]
    for words in (["a"], ["=1"], ["a=1", "a=2"]):
        with pytest.raises(cli.UsageError):
            cli.split_pairs(words)


def test_parse_args_splits_at_the_first_double_dash():
    args = cli.parse_args(["call", "get_weather", "city=Paris", "--json", "--", "srv", "--json", "--", "x"])
    assert args.target == ["srv", "--json", "--", "x"]
    assert (args.name, args.pairs, args.json) == ("get_weather", [("city", "Paris")], True)
    args = cli.parse_args(["call", "weather", "--timeout", "5", "get_weather", "days=2"])
    assert (args.target, args.name, args.pairs, args.timeout) == ("weather", "get_weather", [("days", "2")], 5.0)


def test_signature_and_type_names():
    tool = Tool({"name": "t", "inputSchema": {"properties": {
        "a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}},
        "c": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}, "d": {"$ref": "#/$defs/Point"},
        "e": {}}, "required": ["a", "b", "d"]}})
    assert cli.signature(tool) == "t(a: string, b: integer[], c: string | null = null, d: Point, e?: any)"


def test_format_result_summarises_media_and_resources():
    content = [{"type": "text", "text": "hello"},
               {"type": "image", "mimeType": "image/png", "data": "AAAA" * 512},
               {"type": "audio", "mimeType": "audio/wav", "data": "AAA="},
               {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
               {"type": "resource", "resource": {"uri": "kb://x", "mimeType": "text/plain", "text": "abc"}},
               {"type": "resource", "resource": {"uri": "kb://y", "blob": "AAAA"}}]
    assert cli.format_result(content, None).splitlines() == [
        "hello", "[image: image/png, 1.5 KB]", "[audio: audio/wav, 2 bytes]",
        "[resource link: file:///a.txt, text/plain]", "[resource: kb://x (text/plain, 3 characters)]",
        "[resource: kb://y (3 bytes)]"]


def test_format_result_shows_structured_content_once():
    assert cli.format_result([{"type": "text", "text": "5"}], {"result": 5}) == "5"
    assert cli.format_result([{"type": "text", "text": "done"}], {"n": 1}) == 'done\n{\n  "n": 1\n}'
    assert cli.format_result([], [1]) == "[\n  1\n]"


def test_render_progress():
    assert cli.render_progress(1, 4, "step 1") == "[#####---------------] 1/4 step 1"
    assert cli.render_progress(2.5, None, None) == "2.5"
    assert cli.render_progress(7, 5, "a\nb", width=20) == "[####################"[:19]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_then_erases_and_ignores_late_reports():
    stream = FakeTerminal()
    bar = cli.ProgressBar(stream)
    bar.update(1, 2, "half")
    bar.finish()
    bar.update(2, 2, "late")
    assert stream.getvalue().startswith("\r[##########----------] 1/2 half")
    assert stream.getvalue().endswith("\r\x1b[K") and "late" not in stream.getvalue()
    quiet = io.StringIO()
    cli.ProgressBar(quiet).update(1, 2)
    assert quiet.getvalue() == ""


def test_explain_gives_one_line():
    crash = ConnectionClosed("the MCP server 'python' exited with code 3; its last stderr lines:\nboom\n",
                             exit_code=3, stderr_tail="boom\n")
    assert cli.explain(crash) == (3, "the MCP server 'python' exited with code 3")
    assert cli.explain(crash, quiet=True) == (3, "the MCP server 'python' exited with code 3 "
                                                 "(its last stderr line: boom)")
    assert cli.explain(RPCError(-32602, "bad\nthing"))[1] == "the server answered with an error: [-32602] bad thing"
    assert cli.explain(Timeout("x"))[0] == 3
    assert cli.explain(ServerNotFound("no MCP server named 'x'")) == (3, "no MCP server named 'x'")
    assert cli.explain(FileNotFoundError("cannot start the MCP server")) == (3, "cannot start the MCP server")
    assert cli.explain(KeyError("x")) is None
    assert cli.explain(ZeroDivisionError("x")) is None


def test_main_reports_a_bug_in_one_line_or_with_trace_a_traceback(monkeypatch, capsys):
    def broken(args):
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(cli, "run", broken)
    assert cli.main(["tools", "--", "srv"]) == 1
    assert capsys.readouterr().err == "minimcp: unexpected error: ZeroDivisionError: oops (--trace shows where)\n"
    with pytest.raises(ZeroDivisionError):
        cli.main(["tools", "--trace", "--", "srv"])


def test_main_turns_ctrl_c_into_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run", interrupted)
    assert cli.main(["info", "--", "srv"]) == 130
    assert capsys.readouterr().err == "minimcp: interrupted\n"


# -- issue 28: the CLI says what to do ----------------------------------------------------------


def test_a_tool_name_taken_for_a_server_says_to_put_the_command_after_dashes():
    out = minimcp("call", "convert", "value=1")
    assert out.returncode == 3, out.stderr
    lines = out.stderr.splitlines()
    assert lines[0] == "minimcp: no MCP server named 'convert' in any host config file", out.stderr
    assert "put its command after --: 'minimcp call convert value=1 -- python server.py'" in lines[1]
    tried = [line for line in lines if line.endswith(("(no such file)", ")")) and line.startswith("    ")]
    assert len(tried) >= 2 and f"looked in {len(tried)} files:" in out.stderr  # one path a line
    assert lines[-1] == "  --config FILE names another file"
    assert "config=" not in out.stderr and "Traceback" not in out.stderr


def _flags(parser):
    return {flag for action in parser._actions for flag in action.option_strings}


def test_every_flag_a_message_names_exists_on_the_commands_it_is_shown_for():
    import ast
    import re

    from minimcp.cli import install

    _, connecting = cli.build_parser()
    each = [_flags(p) for p in connecting.values()]
    local = [_flags(install._parser(name)) for name in cli.LOCAL_COMMANDS]
    # (logout sends no request: no timeout, no server error; explain()'s hints are for the others)
    sending = [_flags(p) for name, p in connecting.items() if name != "logout"]
    allowed = {  # module: the flags every command whose messages it writes has (or any of them, for help)
        "__init__.py": set.intersection(*each, *local), "commands.py": set.intersection(*sending),
        "command_line.py": set.union(*each), "output.py": set.intersection(*each),
        "login.py": _flags(connecting["login"]), "install.py": set.union(*local),
    }
    folder = os.path.dirname(cli.__file__)
    wrong = []
    for name, flags in allowed.items():
        tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
                      and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                # (on each line, what follows a " -- " is a server's command: its flags are its own)
                ours = "\n".join(line.split(" -- ", 1)[0] for line in node.value.splitlines())
                wrong += [(name, flag) for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", ours)
                          if flag not in flags | {"--help", "--version"}]
    assert not wrong


def test_run_s_unexpected_error_names_a_flag_run_has(tmp_path):
    odd = tmp_path / "odd.py"
    odd.write_text("raise RuntimeError('boom')\n")
    line = one_line_error(minimcp("run", str(odd)), 1)
    assert "RuntimeError: boom" in line
    helped = minimcp("run", "--help").stdout
    named = [flag for flag in line.replace("(", " ").replace(")", " ").split() if flag.startswith("--")]
    assert named and all(flag in helped for flag in named), (named, helped)
    shown = minimcp("run", str(odd), "--trace")
    assert shown.returncode == 1 and "Traceback" in shown.stderr and "odd.py\", line 1" in shown.stderr


def test_run_on_a_busy_port_names_the_port_and_port_0():
    import socket

    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = minimcp("run", example("weather_server.py"), "--transport", "http", "--port", str(port), "-q")
    finally:
        taken.close()
    line = one_line_error(out, 2)
    assert f"port {port} is in use" in line and "--port 0 for any free one" in line, line


def test_a_crashed_server_is_named_by_its_script(tmp_path):
    script = tmp_path / "odd.py"
    script.write_text("import sys\nsys.exit(7)\n")
    line = one_line_error(minimcp("tools", "-q", "--", PY, "-u", str(script)), 3)
    assert line.startswith(f"minimcp: the MCP server 'odd.py' ({PY} -u {script}) exited"), line
    assert line.endswith("exited with code 7"), line


def test_an_error_s_data_is_shown_only_when_it_adds_something_and_as_json():
    line = one_line_error(minimcp("read", "kb://nope", "-q", *KB), 1)
    assert line.endswith("[-32602] Resource not found: kb://nope") and "data" not in line, line
    books = ["--", PY, os.path.join(ROOT, "tests", "servers", "books_server.py")]
    for protocol in ("2026-07-28", "2025-06-18"):
        line = one_line_error(minimcp("read", "books://nope", "--protocol", protocol, *books), 1)
        assert line.endswith("[-32602] Resource not found: books://nope (nope)"), line
        # What the data adds, as JSON; the entry that repeats the message (its "uri") left out.
        line = one_line_error(minimcp("read", "books://dun", "--protocol", protocol, *books), 1)
        assert line.endswith('[-32602] Resource not found: books://dun (dun) (data: {"did_you_mean": "books://dune"})')
    _, text = cli.explain(RPCError(-32602, "Resource not found: kb://x", {"uri": "kb://x", "known": ["kb://a"]}))
    assert text.endswith('not found: kb://x (data: {"known": ["kb://a"]})'), text
    _, text = cli.explain(RPCError(-32602, "Bad cursor", {"cursor": 7}))
    assert text.endswith("Bad cursor (data: {\"cursor\": 7})"), text


def test_an_entry_to_add_by_hand_keeps_its_lines():
    # The Python API's message, shown as the file would hold it (a TOML table is lines, not one line).
    from minimcp.errors import ConfigError

    status, message = cli.explain(ConfigError("minimcp cannot edit /x/config.toml safely; add this entry by hand:\n"
                                              "[mcp_servers.weather]\ncommand = \"python\"\nargs = [\"w.py\"]"))
    assert message.splitlines() == ["minimcp cannot edit /x/config.toml safely; add this entry by hand:",
                                    "[mcp_servers.weather]", 'command = "python"', 'args = ["w.py"]']
