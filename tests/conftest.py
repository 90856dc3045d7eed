"""Shared fixtures. The autouse ``no_leaks`` fixture fails any test that leaves
a minimcp thread running or a child process behind (a zombie included)."""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Dict, Iterator, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
PY = sys.executable
TESTING_SERVER = os.path.join(ROOT, "tests", "servers", "testing_server.py")
#: The official Python SDK (``mcp``) the interop tests run against, in a venv of its own.
#: Where the peers we did not write are installed once and kept between runs.
TEST_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "minimcp-tests")
SDK_VENV = os.path.join(TEST_CACHE, "mcp-sdk")
SDK_VERSION = "2.3.0"


def example(name: str) -> str:
    """The path of an example script."""
    return os.path.join(EXAMPLES, name)


def _npm_version(manifest: str) -> Optional[str]:
    try:
        with open(manifest) as f:
            return json.load(f).get("version")
    except (OSError, ValueError, AttributeError):
        return None


def npm_package(folder: str, package: str, version: str, env: Optional[Dict[str, str]] = None) -> str:
    """Install ``package`` at ``version`` with npm into ``folder`` (once, and again when the folder
    holds another version) and return the ``node`` that runs it. ``env``: the environment npm and
    node are found and run in (its PATH). The calling test is skipped, saying why, only when Node
    or npm is missing or the npm registry cannot be reached."""
    path = (env if env is not None else os.environ).get("PATH")
    node, npm = shutil.which("node", path=path), shutil.which("npm", path=path)
    if not node or not npm:
        pytest.skip(f"Node.js and npm are needed to run {package} (.ci/run installs them)")
    manifest = os.path.join(folder, "node_modules", *package.split("/"), "package.json")
    if _npm_version(manifest) != version:
        os.makedirs(folder, exist_ok=True)
        own = os.path.join(folder, "package.json")
        if not os.path.exists(own):  # (else npm looks for one in the folders above)
            with open(own, "w") as f:
                f.write('{"private": true}\n')
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", f"{package}@{version}"],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            pytest.skip(f"could not install {package}@{version} from the npm registry: {done.stderr[-300:]}")
        installed = _npm_version(manifest)
        assert installed == version, f"npm installed {package} {installed}, not {version}"
    return node


def system_program(name: str) -> Optional[str]:
    """The path of a Debian package's program (redis-server, haproxy, nginx), found on PATH or in
    the sbin/bin folders a user's PATH may lack; None when it is not installed."""
    found = shutil.which(name)
    if found:
        return found
    for folder in ("/usr/sbin", "/usr/bin"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


def stop_process(proc: "subprocess.Popen[Any]", sig: int = signal.SIGTERM, seconds: float = 30.0) -> None:
    """Stop a process this test started, by its PID: ``sig``, then SIGKILL after ``seconds``;
    reap it and close its pipes."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def free_port() -> int:
    """A port nothing listens on now, from the OS (for a process we must tell which port to take;
    a listener of our own takes port 0 instead)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_listening(proc: subprocess.Popen, port: int, seconds: float = 30.0) -> None:
    """Until ``port`` on 127.0.0.1 accepts a connection: bounded polling of a port another process
    opens (it has no way to signal us). Fails, with its stderr when piped, if ``proc`` exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            err = err.decode(errors="replace") if isinstance(err, bytes) else err
            raise AssertionError(f"{proc.args[:3]} exited with {proc.returncode} before listening on {port}:\n{err}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port} after {seconds} s ({proc.args[:3]})")


class RawServer:
    """A server process driven line by line, as a raw client would."""

    def __init__(self, script, *args):
        self.proc = subprocess.Popen([PY, script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)

    def send(self, obj_or_line):
        line = obj_or_line if isinstance(obj_or_line, (bytes, str)) else json.dumps(obj_or_line)
        data = line.encode() if isinstance(line, str) else line
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def recv(self):
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        return json.loads(line)

    def initialize(self, version="2025-11-25"):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": version, "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "0"}}})
        reply = self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self):
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        code = self.proc.wait(10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code, rest


def _children() -> set:
    """PIDs of this process's children (zombies included), from /proc."""
    me = str(os.getpid())
    found = set()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            found.update(int(pid) for pid in f.read().split())
    except OSError:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                    if fields[1] == me:
                        found.add(int(entry))
                except OSError:
                    pass
    return found


def _minimcp_threads() -> list:
    return [t for t in threading.enumerate() if t.name.startswith("minimcp-") and t.is_alive()]


#: The servers of ``shared_server``, running for a whole module.
_SHARED: list = []


@contextlib.contextmanager
def shared_server(app: Any, **options: Any) -> Iterator[Any]:
    """A BackgroundServer shared by a module's tests (yield it from a ``scope="module"`` fixture),
    for tests that leave its state as they found it: one stop (~0.5 s, the accept loop's poll)
    for the module instead of one per test.

    ``no_leaks`` lets its listener and workers live on between tests, and gives each connection a
    test opened to it a moment (at most 5 s) to end: the server sees the client's close a
    moment after the client returns. A connection still open then is a leak, as ever.
    """
    from minimcp.server.http.wsgiserver import BackgroundServer

    running = BackgroundServer(app, **options).start()
    _SHARED.append(running)
    try:
        yield running
    finally:
        _SHARED.remove(running)
        running.stop()


def _shared_server_threads():
    """(long-lived threads, connection threads) of the running ``shared_server``s: the long-lived
    are the listener and the app's worker pool (idle workers wait for the next request)."""
    listening, serving = set(), set()
    for running in _SHARED:
        listening.add(running._thread)
        listening.update(getattr(getattr(running.httpd.app, "workers", None), "threads", ()))
        with running.httpd._conn_lock:
            serving.update(running.httpd._connections)
    return listening, serving


@pytest.fixture(autouse=True)
def no_leaks():
    """After each test: no minimcp thread alive, no child process left."""
    before = _children()
    yield
    # close() joins every thread it started and reaps every child, so this
    # checks at once, without waiting: anything still here leaked. A shared
    # server's connection thread ends when it reads the client's close: join it.
    listening, serving = _shared_server_threads()
    deadline = time.monotonic() + 5.0
    for thread in serving:
        thread.join(max(0.0, deadline - time.monotonic()))
    threads = [t for t in _minimcp_threads() if t not in listening]
    children = _children() - before
    assert not threads, f"leaked threads: {[t.name for t in threads]}"
    assert not children, f"leaked child processes: {sorted(children)}"


@pytest.fixture
def ctrl_c():
    """Ctrl-C works as in a terminal: SIGINT raises KeyboardInterrupt in this process,
    and the processes the test starts get Python's default handling too.

    A suite started as a background job of a non-interactive shell (``pytest &``
    in a script, ``nohup pytest &``) inherits SIGINT *ignored*, and Python keeps
    an ignored SIGINT ignored, in itself and in every child. A handler installed
    here is reset to the default when a child execs, so children start as from
    a terminal.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def pressing_ctrl_c(after: threading.Event) -> Iterator[None]:
    """Press Ctrl-C (SIGINT) in this thread once ``after`` is set, until it takes; one
    KeyboardInterrupt however many presses (as tests/test_session.py does). Use it with the
    ``ctrl_c`` fixture, which puts the old handler back."""
    interrupted, stop = threading.Event(), threading.Event()

    def on_ctrl_c(signum: int, frame: Any) -> None:
        if not interrupted.is_set():
            interrupted.set()
            raise KeyboardInterrupt

    def press() -> None:  # (never once the block ended: a call that did not wait is a failure to report, not to kill)
        if not after.wait(20):
            return
        for _ in range(100):
            if stop.is_set():
                return
            signal.pthread_kill(main, signal.SIGINT)
            if interrupted.wait(0.1):
                return

    signal.signal(signal.SIGINT, on_ctrl_c)  # (the ctrl_c fixture puts the old handler back)
    main = threading.get_ident()
    presser = threading.Thread(target=press)
    presser.start()
    try:
        yield
    finally:
        stop.set()
        after.set()
        presser.join()


class Wire:
    """A client middleware that keeps each request the client sends (method, params) and each
    answer it gets; ``answered`` is set when a ``tasks/get`` got its answer."""

    def __init__(self) -> None:
        self.sent: list = []
        self.answers: list = []
        self.answered = threading.Event()

    def __call__(self, request: Any, call_next: Any) -> Any:
        if request.outgoing:
            self.sent.append((request.method, dict(request.params or {})))
        answer = call_next(request)
        if request.outgoing:
            self.answers.append((request.method, answer))
            if request.method == "tasks/get":
                self.answered.set()
        return answer

    def methods(self) -> list:
        """The methods of the requests sent, in order."""
        return [method for method, _ in self.sent]

    def calls(self) -> list:
        """The params of each ``tools/call`` sent."""
        return [params for method, params in self.sent if method == "tools/call"]

    def task_id(self) -> str:
        """The id of the task the server made for the last ``tools/call``."""
        return [answer for method, answer in self.answers if method == "tools/call"][-1]["task"]["taskId"]


@pytest.fixture
def user_home(tmp_path: Any, monkeypatch: Any) -> Any:
    """A temporary home and project folder for the host-config tests: (home, project, env). This
    process's environment and working directory point there too (for ``minimcp.connect(NAME)``),
    ``env`` is the same for a subprocess, and no variable that moves a host's files (CODEX_HOME,
    COPILOT_HOME) or that a test sets (MCP_TEST_*) comes from the caller's environment."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = dict(os.environ, HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               APPDATA=str(home / "AppData" / "Roaming"), PYTHONPATH=ROOT)
    for name in [*("CODEX_HOME", "COPILOT_HOME"), *(name for name in env if name.startswith("MCP_TEST_"))]:
        env.pop(name, None)
        monkeypatch.delenv(name, raising=False)
    for name in ("HOME", "USERPROFILE", "XDG_CONFIG_HOME", "APPDATA"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.chdir(project)
    return home, project, env


@pytest.fixture(scope="module")
def oidc_provider():
    """A real OAuth / OpenID authorization server (oidc-provider, npm) on 127.0.0.1 for one test
    module; skipped, saying why, when npm cannot install it. See tests/oidc/README.md."""
    from oidc.provider import running

    yield from running()


@pytest.fixture(scope="module")
def oidc_provider_pinning():
    """The same as ``oidc_provider``, but a registered client may ask only for the scopes it registered
    with, as oidc-provider does by default (RFC 7591 §2 ``scope``): a step-up beyond them is refused
    with ``invalid_scope``. Killed by its PID when the module's tests end."""
    from oidc.provider import running

    yield from running(pin_scopes=True)


#: Why the official SDK's venv has no OpenTelemetry SDK (pip's last words), or None once it has one.
SDK_OTEL_MISSING = None


@pytest.fixture(scope="session")
def official_sdk():
    """The python of a throwaway venv holding the official SDK (``mcp``), made once and cached;
    skipped, saying why, when pip cannot install it.

    The OpenTelemetry SDK is added beside it (the tracing interop tests record the official
    side's spans with it; ``mcp`` brings only the API); when pip cannot add it, only those tests
    are skipped, with pip's reason (``SDK_OTEL_MISSING``)."""
    global SDK_OTEL_MISSING
    python = os.path.join(SDK_VENV, "bin", "python")
    check = [python, "-c", f"import importlib.metadata as m; assert m.version('mcp') == '{SDK_VERSION}'"]
    if not os.path.exists(python) or subprocess.run(check, capture_output=True).returncode != 0:
        made = subprocess.run([PY, "-m", "venv", SDK_VENV], capture_output=True, text=True)
        if made.returncode == 0:
            made = subprocess.run([python, "-m", "pip", "install", "-q", f"mcp=={SDK_VERSION}"], capture_output=True,
                                  text=True, timeout=600)
        if made.returncode != 0:
            pytest.skip(f"cannot install mcp=={SDK_VERSION} into {SDK_VENV}: {made.stderr[-300:]}")
    if subprocess.run([python, "-c", "import opentelemetry.sdk.trace"], capture_output=True).returncode != 0:
        # The SDK of the API version mcp brought, so pip changes nothing of what mcp runs on.
        api = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('opentelemetry-api'))"],
                             capture_output=True, text=True).stdout.strip()
        try:
            added = subprocess.run([python, "-m", "pip", "install", "-q", f"opentelemetry-sdk=={api}" if api
                                    else "opentelemetry-sdk"], capture_output=True, text=True, timeout=300)
            SDK_OTEL_MISSING = None if added.returncode == 0 else added.stderr[-300:] or "pip failed"
        except subprocess.TimeoutExpired:
            SDK_OTEL_MISSING = "pip install opentelemetry-sdk took over 300 s"
    return python
