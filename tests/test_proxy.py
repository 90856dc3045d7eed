"""ProxyServer (minimcp/integrations/proxy.py) and ``minimcp proxy``: one MCP server in front of
others. Real servers in process, as child processes and over HTTP; real peers we did not write
(server-everything, the official Python SDK's client and server, the MCP Inspector CLI)."""

import contextlib
import json
import os
import subprocess
import threading
import time

import pytest
from test_everything import everything  # noqa: F401 - the fixture that installs server-everything

import minimcp
from minimcp import Server
from minimcp.integrations.proxy import ProxyServer, uri_prefix
from minimcp.server.context import Context
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT, free_port, wait_until_listening

# (the upstream test servers log with ctx.log(), which 2026-07-28 deprecates: said once, not the point here)
pytestmark = pytest.mark.filterwarnings("ignore:ctx.log.*logging is deprecated:DeprecationWarning")

ERAS = ["auto", "2025-11-25"]  # the caller's protocol: 2026-07-28 (a minimcp server speaks it), the handshake
UPSTREAM_ERAS = ["auto", "2025-11-25"]  # how the proxy speaks to its upstream server


def feature_server(label: str = "up", asked=None) -> Server:
    """A server with one of every feature: plain, sampling, elicitation, roots, progress and logs,
    a resource, a template, a prompt, completions."""
    server = Server(label, max_workers=8)

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return f"{label} says {text}"

    @server.tool()
    def ask_model(question: str, ctx: Context) -> str:
        """Ask the caller's model."""
        reply = ctx.sample(question, max_tokens=20)
        return f"model said {reply['content']['text']}"

    @server.tool()
    def ask_user(ctx: Context) -> str:
        """Ask the caller's user for a name."""
        answer = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"user said {answer['content']['name']}"

    @server.tool()
    def roots(ctx: Context) -> str:
        """List the caller's roots."""
        return ",".join(root["uri"] for root in ctx.list_roots())

    @server.tool()
    def count(n: int, ctx: Context) -> str:
        """Count, reporting progress and logging each step."""
        for i in range(1, n + 1):
            ctx.report_progress(i, n, f"step {i}")
            ctx.log("warning", f"step {i} of {label}")
        return f"counted to {n}"

    @server.tool()
    def wait_for_cancel(ctx: Context) -> str:
        """Wait until the caller cancels (at most 20 s)."""
        started = asked if asked is not None else {}
        started["waiting"] = threading.Event()
        started["cancelled"] = threading.Event()
        started["waiting"].set()
        if ctx.cancelled.wait(20):
            started["cancelled"].set()
        return "not cancelled"

    @server.resource("notes://index", mime_type="text/plain")
    def index() -> str:
        """The index."""
        return f"index of {label}"

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        """One note."""
        if name == "missing":
            raise KeyError(name)
        return f"note {name} of {label}"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name} from {label}"

    @server.completion(prompt="greet", argument="name")
    def names(value):
        return [n for n in ["Ann", "Anton", "Bob"] if n.startswith(value)]

    @server.completion(resource="notes://{name}", argument="name")
    def note_names(value):
        return [n for n in ["alpha", "beta"] if n.startswith(value)]

    return server


def answers():
    """Handlers for every question a server may ask, and what each was asked."""
    asked = []

    def sampler(params):
        asked.append(("sampling", params))
        return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "stand-in"}

    def elicitor(params):
        asked.append(("elicitation", params))
        return {"action": "accept", "content": {"name": "Ada"}}

    return asked, {"sampling_handler": sampler, "elicitation_handler": elicitor, "roots": ["/srv/data"]}


@pytest.mark.parametrize("upstream", UPSTREAM_ERAS)
@pytest.mark.parametrize("era", ERAS)
def test_every_feature_of_a_mounted_server_reaches_the_caller(era, upstream):
    logs, progress, asked_for = [], [], {}
    asked, handlers = answers()
    proxy = ProxyServer("gateway")
    proxy.mount("up", feature_server("up", asked_for), protocol=upstream)
    proxy.mount("other", feature_server("other"), protocol=upstream)
    with proxy, minimcp.connect("memory", server=proxy, protocol=era, on_log=logs.append, **handlers) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        assert {"up__echo", "up__ask_model", "other__echo", "other__count"} <= set(tools)
        assert tools["up__echo"].description == "Say it back."
        assert tools["up__echo"].input_schema["properties"] == {"text": {"type": "string"}}
        assert client.call_tool("up__echo", {"text": "a"}).text == "up says a"
        assert client.call_tool("other__echo", {"text": "b"}).text == "other says b"
        assert client.call_tool("up__ask_model", {"question": "q"}).text == "model said hi"
        assert client.call_tool("up__ask_user").text == "user said Ada"
        assert client.call_tool("up__roots").text == "file:///srv/data"
        assert [kind for kind, _ in asked] == ["sampling", "elicitation"]
        assert asked[0][1]["messages"][0]["content"]["text"] == "q"
        client.set_logging_level("warning") if era != "auto" else None
        result = client.call_tool("other__count", {"n": 3}, on_progress=lambda *p: progress.append(p))
        assert result.text == "counted to 3"
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
        # bad arguments: the upstream server's own isError, naming the tool as the caller called it
        bad = client.call_tool("up__echo", {"text": 5})
        assert bad.is_error and "up__echo" in bad.text
        with pytest.raises(minimcp.RPCError) as unknown:
            client.call_tool("up__nothing")
        assert unknown.value.code == -32602
        # resources, URI-prefixed; templates; reads of listed and templated URIs
        assert [r.uri for r in client.list_resources()] == ["up+notes://index", "other+notes://index"]
        assert [t.uri_template for t in client.list_resource_templates()] == ["up+notes://{name}",
                                                                               "other+notes://{name}"]
        assert client.read_resource("up+notes://index").text == "index of up"
        read = client.read_resource("other+notes://x")
        assert read.text == "note x of other" and read.contents[0]["uri"] == "other+notes://x"
        with pytest.raises(minimcp.RPCError) as missing:
            client.read_resource("up+notes://missing")
        assert missing.value.code in (-32002, -32602)
        # prompts, renamed; completions of a prompt and of a template
        assert {p.name for p in client.list_prompts()} == {"up__greet", "other__greet"}
        assert client.get_prompt("other__greet", {"name": "Zoe"}).messages[0]["content"]["text"] == \
            "Hello Zoe from other"
        assert client.complete({"type": "ref/prompt", "name": "up__greet"}, "name", "An").values == ["Ann", "Anton"]
        assert client.complete({"type": "ref/resource", "uri": "up+notes://{name}"}, "name", "b").values == ["beta"]
    if era == "2025-11-25":  # logs: the caller asked for warning and above, and got its own call's
        assert [entry["data"] for entry in logs if "step" in str(entry["data"])] == \
            ["step 1 of other", "step 2 of other", "step 3 of other"]
        assert all(entry["logger"] == "other" for entry in logs if "step" in str(entry["data"]))


@pytest.mark.parametrize("upstream", UPSTREAM_ERAS)
@pytest.mark.parametrize("era", ERAS)
def test_a_cancel_from_the_caller_cancels_the_upstream_call(era, upstream):
    seen = {}
    proxy = ProxyServer("gateway")
    proxy.mount("up", feature_server("up", seen), protocol=upstream)
    with proxy, minimcp.connect("memory", server=proxy, protocol=era) as client:
        future = client.submit_tool_call("up__wait_for_cancel")
        deadline = time.monotonic() + 10
        while "waiting" not in seen and time.monotonic() < deadline:  # bounded: the tool says when it runs
            time.sleep(0.01)
        assert seen["waiting"].wait(10)
        assert future.cancel() or future.done()
        assert seen["cancelled"].wait(5), "the upstream tool never saw the cancel"


@pytest.mark.parametrize("upstream", UPSTREAM_ERAS)
def test_list_changed_from_an_upstream_server_becomes_the_proxys_own(upstream):
    up = feature_server("up")
    changed = threading.Event()
    proxy = ProxyServer("gateway")
    proxy.mount("up", up, protocol=upstream)
    with proxy, minimcp.connect("memory", server=proxy, protocol="2025-11-25",
                                on_tools_changed=changed.set) as client:
        assert "up__late" not in [tool.name for tool in client.list_tools()]

        def late() -> str:
            """Added while the proxy serves."""
            return "late"

        up.add_tool(late)
        assert changed.wait(10), "the proxy's client was not told"
        deadline = time.monotonic() + 10
        while "up__late" not in [tool.name for tool in client.list_tools()]:
            assert time.monotonic() < deadline, "the new tool never showed up"
        assert client.call_tool("up__late").text == "late"


def test_an_unprefixed_mount_keeps_the_names_and_the_proxys_own_tools_stay():
    proxy = ProxyServer("gateway")

    @proxy.tool()
    def own() -> str:
        """The proxy's own tool."""
        return "mine"

    proxy.mount("", feature_server("plain"))
    with proxy, minimcp.connect("memory", server=proxy) as client:
        names = [tool.name for tool in client.list_tools()]
        assert names[0] == "own" and "echo" in names
        assert client.call_tool("echo", {"text": "x"}).text == "plain says x"
        assert client.call_tool("own").text == "mine"
        assert client.read_resource("notes://y").text == "note y of plain"


def test_prefixes_are_checked():
    proxy = ProxyServer("gateway")
    proxy.mount("a.b", feature_server())
    with pytest.raises(ValueError):
        proxy.mount("a_b", feature_server())  # the same tool names: a_b__echo
    with pytest.raises(ValueError):
        proxy.mount("a.b", feature_server())
    assert uri_prefix("My_Files") == "my-files+" and uri_prefix("9") == "x9+" and uri_prefix("") == ""
    proxy.close()


# -- no deadlock under load (python-sdk PR #3510) --------------------------------------------------


@contextlib.contextmanager
def serving(proxy, over):
    """Where a client reaches ``proxy``: in memory, or its WSGI app on the built-in HTTP server."""
    if over == "memory":
        yield "memory"
        return
    with BackgroundServer(proxy.wsgi_app()) as http:
        yield http.url + "/mcp"


@pytest.mark.parametrize("over", ["memory", "http"])
@pytest.mark.parametrize("era,upstream", [("2025-11-25", "2025-11-25"), ("auto", "auto"), ("auto", "2025-11-25"),
                                          ("2025-11-25", "auto")])
def test_64_concurrent_calls_that_each_sample_all_answer_with_8_workers(era, upstream, over):
    """Every call makes the upstream server ask the caller to sample, through the proxy; the proxy
    and the upstream server have 8 workers each, the caller sends 64 calls at once (python-sdk
    PR #3510 found a proxy deadlock with 40 worker slots)."""
    up = feature_server("up")
    proxy = ProxyServer("gateway", max_workers=8, max_links=8)
    proxy.mount("up", up, protocol=upstream)
    sampled = []

    def sampler(params):
        sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": params["messages"][0]["content"]["text"]},
                "model": "stand-in"}

    results, errors = {}, []
    with proxy, serving(proxy, over) as target, minimcp.connect(target, server=proxy, protocol=era,
                                                                 sampling_handler=sampler, timeout=60) as client:

        def call(i: int) -> None:
            try:
                results[i] = client.call_tool("up__ask_model", {"question": f"q{i}"}, timeout=60).text
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        started = time.monotonic()
        threads = [threading.Thread(target=call, args=(i,)) for i in range(64)]
        for thread in threads:
            thread.start()
        deadline = started + 90  # (each call also gives up after its own 60 s)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        took = time.monotonic() - started
    assert not errors, errors[:3]
    assert results == {i: f"model said q{i}" for i in range(64)}  # each answer went to its own call
    assert took < 60, f"64 calls took {took:.1f}s"


# -- an upstream server that fails leaves the others serving -------------------------------------------

COUNTING = """
import os, sys
path = sys.argv[1]
with open(path, "a") as f:
    f.write("start\\n")
mode = sys.argv[2]
if mode == "crash":
    sys.exit(3)
if mode == "hang":
    import time
    time.sleep(120)
from minimcp import Server
server = Server("counted")
@server.tool()
def hello() -> str:
    return "hello"
@server.tool()
def die() -> str:
    os._exit(1)
server.run()
"""


@pytest.fixture
def counting(tmp_path):
    script = tmp_path / "counting.py"
    script.write_text(COUNTING)

    def command(mode: str):
        starts = tmp_path / f"{mode}.starts"
        return [PY, str(script), str(starts), mode], starts

    return command


def test_a_crashed_a_hung_and_a_refused_upstream_fail_clearly_and_leave_the_others_serving(counting):
    crash, crash_starts = counting("crash")
    hang, hang_starts = counting("hang")
    refused = f"http://127.0.0.1:{free_port()}/mcp"
    proxy = ProxyServer("gateway", start_timeout=2.0)
    proxy.mount("good", feature_server("good"))
    proxy.mount("crash", crash, on_stderr=lambda line: None)
    proxy.mount("hang", hang, on_stderr=lambda line: None)
    proxy.mount("refused", refused)
    started = time.monotonic()
    with proxy:
        took = time.monotonic() - started
        assert took < 8, f"starting took {took:.1f}s: a hung upstream blocked the others"
        errors = {prefix: mount.error for prefix, mount in proxy.mounts.items()}
        assert errors["good"] is None and errors["crash"] and errors["hang"] and errors["refused"]
        with minimcp.connect("memory", server=proxy) as client:
            assert client.call_tool("good__echo", {"text": "x"}).text == "good says x"
            for prefix, starts in (("crash", crash_starts), ("hang", hang_starts), ("refused", None)):
                before = starts.read_text().count("start") if starts else 0
                result = client.call_tool(f"{prefix}__hello")
                assert result.is_error
                assert f"upstream server {prefix!r}" in result.text and "tries it again" in result.text
                if starts is not None:  # retried on this call
                    assert starts.read_text().count("start") == before + 1
            assert "Timeout" in proxy.mounts["hang"].error
            assert client.call_tool("good__echo", {"text": "still"}).text == "good says still"


def test_an_upstream_that_crashes_mid_call_fails_that_call_and_is_restarted_on_the_next(counting):
    command, starts = counting("serve")
    proxy = ProxyServer("gateway", start_timeout=10.0)
    proxy.mount("c", command, on_stderr=lambda line: None)
    with proxy, minimcp.connect("memory", server=proxy) as client:
        assert client.call_tool("c__hello").text == "hello"
        died = client.call_tool("c__die")
        assert died.is_error and "'c'" in died.text and "tries it again" in died.text
        assert client.call_tool("c__hello").text == "hello"
        assert starts.read_text().count("start") == 2


# -- the examples/proxy.py gateway -------------------------------------------------------------------


def test_the_gateway_example_serves_three_servers_as_one():
    with minimcp.connect([PY, os.path.join(ROOT, "examples", "proxy.py")], timeout=60) as client:
        names = [tool.name for tool in client.list_tools()]
        assert {"weather__get_weather", "kb__search", "clock__now"} <= set(names)
        assert client.call_tool("weather__get_weather", {"city": "Paris"}).text == "Paris: 22°C, sunny"
        assert client.read_resource("kb+kb://docs/mcp").text.startswith("# MCP")
        assert "kb__ask" in [prompt.name for prompt in client.list_prompts()]


# -- minimcp proxy: the command line ----------------------------------------------------------------

KB = os.path.join(ROOT, "examples", "knowledge_base.py")
WEATHER = os.path.join(ROOT, "examples", "weather_server.py")


def minimcp_proxy(*words):
    return [PY, "-m", "minimcp", "proxy", *words]


class Served:
    """``minimcp proxy --transport http`` running; stopped by its PID (SIGTERM) at the end."""

    def __init__(self, *words):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        command = list(words)
        cut = command.index("--") if "--" in command else len(command)
        command[cut:cut] = ["--transport", "http", "--port", str(self.port)]
        self.proc = subprocess.Popen(minimcp_proxy(*command), cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        try:
            wait_until_listening(self.proc, self.port, 60)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()


def test_proxy_bridges_a_stdio_server_to_streamable_http_under_its_own_names():
    asked, handlers = answers()
    with Served("--", PY, KB) as served:
        for protocol in ERAS:
            with minimcp.connect(served.url, protocol=protocol, **handlers) as client:
                assert client.server_info["name"] == "minimcp-proxy"
                names = [tool.name for tool in client.list_tools()]
                assert {"search", "summarize", "rate"} <= set(names)  # one server: its own names
                assert client.call_tool("search", {"query": "thread"}).structured["result"][0]["doc_id"] == "threads"
                assert "hi" in client.call_tool("summarize", {"doc_id": "mcp"}).text  # sampling over HTTP
                assert client.read_resource("kb://docs/queues").text.startswith("# Queues")
                assert [p.name for p in client.list_prompts()] == ["ask"]
        err = served.stop()
    assert "serving" in err and "knowledge_base.py" in err
    assert [kind for kind, _ in asked] == ["sampling", "sampling"]


def test_proxy_serves_every_server_of_a_config_file_under_its_name(tmp_path):
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "kb": {"command": PY, "args": [KB]},
        "weather": {"command": PY, "args": [WEATHER]},
        "gone": {"command": PY, "args": ["-c", "import sys; sys.exit(2)"]}}}))
    with Served("--config", str(config), "--start-timeout", "5") as served:
        with minimcp.connect(served.url) as client:
            names = {tool.name for tool in client.list_tools()}
            assert {"kb__search", "weather__get_weather", "weather__get_forecast"} <= names
            assert client.call_tool("weather__get_weather", {"city": "Oslo"}).text == "Oslo: 22°C, sunny"
            assert client.read_resource("kb+kb://index").raw["contents"][0]["uri"] == "kb+kb://index"
            gone = client.call_tool("gone__anything")
            assert gone.is_error and "'gone'" in gone.text
        err = served.stop()
    assert "gone is unavailable" in err


def test_proxy_carries_a_remote_server_to_a_host_that_speaks_stdio():
    asked, handlers = answers()
    with BackgroundServer(feature_server("remote").wsgi_app()) as http:
        for protocol in ERAS:
            with minimcp.connect(minimcp_proxy(http.url + "/mcp"), protocol=protocol, **handlers) as client:
                assert client.call_tool("echo", {"text": "x"}).text == "remote says x"
                assert client.call_tool("ask_model", {"question": "q"}).text == "model said hi"
                assert client.call_tool("ask_user").text == "user said Ada"
                assert client.read_resource("notes://index").text == "index of remote"


@pytest.mark.parametrize("words,message", [
    ([], "no server given"),
    (["https://a.example/mcp", "other"], "a URL is served alone"),
    (["--", ], "nothing after --"),
    (["https://a.example/mcp", "--", "python"], "not both"),
])
def test_proxy_command_line_mistakes_are_one_line_and_exit_2(words, message):
    done = subprocess.run(minimcp_proxy(*words), cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


# -- peers we did not write ---------------------------------------------------------------------------


INSPECTOR_VERSION = "2.12.0"
INSPECTOR_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "minimcp-tests", "inspector")
INSPECTOR_BIN = os.path.join(INSPECTOR_CACHE, "node_modules", ".bin", "mcp-inspector")


@pytest.fixture(scope="module")
def inspector():
    """The MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``), installed once into
    ~/.cache/minimcp-tests/inspector; skipped, saying why, only without Node/npm or the registry."""
    import shutil

    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("Node.js and npm are needed to run the MCP Inspector CLI")
    package = os.path.join(INSPECTOR_CACHE, "node_modules", "@modelcontextprotocol", "inspector", "package.json")
    try:
        with open(package) as f:
            installed = json.load(f).get("version")
    except (OSError, ValueError):
        installed = None
    if installed != INSPECTOR_VERSION or not os.path.exists(INSPECTOR_BIN):
        os.makedirs(INSPECTOR_CACHE, exist_ok=True)
        if not os.path.exists(os.path.join(INSPECTOR_CACHE, "package.json")):
            with open(os.path.join(INSPECTOR_CACHE, "package.json"), "w") as f:
                f.write('{"private": true}')
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error",
                               f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"], cwd=INSPECTOR_CACHE,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"could not install the MCP Inspector from the npm registry: {done.stderr[-300:]}")
    return [node, INSPECTOR_BIN, "--cli"]


def inspect(inspector, url, *words):
    """One Inspector CLI call against ``url``; its JSON answer."""
    done = subprocess.run([*inspector, url, *words], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, HOME=INSPECTOR_CACHE))  # (its catalog file goes there)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-2000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def gateway(everything, official_sdk):  # noqa: F811 - (the fixture imported above)
    """tests/interop/proxy_gateway.py: a minimcp proxy over HTTP in front of server-everything
    (stdio), the official SDK's server (HTTP) and a minimcp server (in process)."""
    sdk_port, port = free_port(), free_port()
    sdk = subprocess.Popen([official_sdk, os.path.join(ROOT, "tests", "interop", "sdk_features_server.py"),
                            str(sdk_port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proxy = None
    try:
        wait_until_listening(sdk, sdk_port, 60)
        proxy = subprocess.Popen([PY, os.path.join(ROOT, "tests", "interop", "proxy_gateway.py"), str(port),
                                  f"http://127.0.0.1:{sdk_port}/mcp", "--", *everything],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until_listening(proxy, port, 60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        for proc in (proxy, sdk):
            if proc is not None:
                proc.terminate()
                try:
                    proc.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.communicate()


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 (the proxy speaks it), the handshake
def test_the_official_client_reaches_every_feature_of_three_servers_through_the_proxy(gateway, official_sdk, mode):
    done = subprocess.run([official_sdk, os.path.join(ROOT, "tests", "interop", "official_proxy_client.py"), gateway,
                           mode], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    calls = seen["calls"]
    assert not [name for name, call in calls.items() if call["error"]], calls
    assert calls["every__echo"]["text"] == "Echo: hi" and "5" in calls["every__get-sum"]["text"]
    assert "from the SDK" in calls["every__trigger-sampling-request"]["text"]
    assert "Name: Ada" in calls["every__trigger-elicitation-request"]["text"]
    assert "file:///srv/data" in calls["every__get-roots-list"]["text"]
    assert calls["sdk__ask_model"]["text"] == "model said from the SDK"
    assert calls["sdk__ask_user"]["text"] == "user said Ada"
    assert calls["sdk__roots"]["text"] == "file:///srv/data"
    assert calls["mini__ask_model"]["text"] == "model said from the SDK"
    for name in ("every__trigger-long-running-operation", "sdk__count", "mini__count"):
        assert calls[name]["progress"] == [1, 2, 3], name
    assert "sdk step 3" in seen["logs"]
    assert seen["asked"] == ["elicitation", "roots", "sampling"]
    assert {"mini+mini://hello", "sdk+sdk://readme"} <= set(seen["resources"])
    assert any(uri.startswith("every+demo://") for uri in seen["resources"])
    assert {"every+demo://resource/dynamic/text/{resourceId}", "sdk+sdk://items/{item}"} <= set(seen["templates"])
    assert seen["reads"]["mini+mini://hello"] == ["hello from mini"]
    assert seen["reads"]["sdk+sdk://readme"] == ["sdk readme"]
    assert seen["reads"]["every+demo://resource/dynamic/text/1"][0].startswith("Resource 1")
    assert seen["rendered"] == {"every__args-prompt": "What's weather in Kraków?",
                                "sdk__review": "Please review: x = 1", "mini__greet": "Hello Zoe"}
    assert "Engineering" in seen["completion_prompt"]
    assert seen["completion_template"] == ["apple", "apricot"]


def test_the_inspector_cli_drives_the_proxy(gateway, inspector):
    tools = {tool["name"] for tool in inspect(inspector, gateway, "--method", "tools/list")["tools"]}
    assert {"every__echo", "sdk__echo", "mini__count"} <= tools
    summed = inspect(inspector, gateway, "--method", "tools/call", "--tool-name", "every__get-sum",
                     "--tool-arg", "a=2", "b=3")
    assert summed["content"][0]["text"] == "The sum of 2 and 3 is 5."
    echoed = inspect(inspector, gateway, "--method", "tools/call", "--tool-name", "sdk__echo", "--tool-arg", "text=hey")
    assert echoed["content"][0]["text"] == "sdk says hey"
    counted = inspect(inspector, gateway, "--method", "tools/call", "--tool-name", "mini__count", "--tool-arg", "n=2")
    assert counted["content"][0]["text"] == "counted to 2"
    read = inspect(inspector, gateway, "--method", "resources/read", "--uri", "sdk+sdk://items/7")
    assert read["contents"][0] == {"uri": "sdk+sdk://items/7", "mimeType": "text/plain", "text": "sdk item 7"} or \
        read["contents"][0]["text"] == "sdk item 7"
    rendered = inspect(inspector, gateway, "--method", "prompts/get", "--prompt-name", "mini__greet",
                       "--prompt-args", "name=Zoe")
    assert rendered["messages"][0]["content"]["text"] == "Hello Zoe"
    templates = inspect(inspector, gateway, "--method", "resources/templates/list")["resourceTemplates"]
    assert "every+demo://resource/dynamic/text/{resourceId}" in [t["uriTemplate"] for t in templates]


def test_the_inspector_cli_drives_the_stdio_to_http_bridge_in_front_of_server_everything(
        everything, inspector):  # noqa: F811 - (the fixture imported above)
    with Served("--", *everything) as served:
        tools = {tool["name"] for tool in inspect(inspector, served.url, "--method", "tools/list")["tools"]}
        assert {"echo", "get-sum", "trigger-long-running-operation"} <= tools
        echoed = inspect(inspector, served.url, "--method", "tools/call", "--tool-name", "echo",
                         "--tool-arg", "message=bridged")
        assert echoed["content"][0]["text"] == "Echo: bridged"
        prompts = {p["name"] for p in inspect(inspector, served.url, "--method", "prompts/list")["prompts"]}
        assert "args-prompt" in prompts
