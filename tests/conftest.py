"""Shared fixtures. The autouse ``no_leaks`` fixture fails any test that leaves
a minimcp thread running or a child process behind (a zombie included)."""

import os
import sys
import threading

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
PY = sys.executable


def example(name: str) -> str:
    """The path of an example script."""
    return os.path.join(EXAMPLES, name)


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
