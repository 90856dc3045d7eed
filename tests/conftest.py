"""Shared fixtures. The autouse ``no_leaks`` fixture fails any test that leaves
a minimcp thread running or a child process behind (a zombie included)."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
PY = sys.executable
TESTING_SERVER = os.path.join(ROOT, "tests", "servers", "testing_server.py")


def example(name: str) -> str:
    """The path of an example script."""
    return os.path.join(EXAMPLES, name)


class RawServer:
    """A server process driven line by line, as a raw client would."""

    def __init__(self, script):
        self.proc = subprocess.Popen([PY, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
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


@pytest.fixture(autouse=True)
def no_leaks():
    """After each test: no minimcp thread alive, no child process left."""
    before = _children()
    yield
    # close() joins every thread it started and reaps every child, so this
    # checks at once, without waiting: anything still here leaked.
    threads = _minimcp_threads()
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


@pytest.fixture(scope="module")
def oidc_provider():
    """A real OAuth / OpenID authorization server (oidc-provider, npm) on 127.0.0.1 for one test
    module; skipped, saying why, when npm cannot install it. See tests/oidc/README.md."""
    from oidc.provider import running

    yield from running()
