"""One worker of a deployment that shares tasks and notifications through Redis.

Run as ``python shared_worker.py PORT`` (the built-in server) or under gunicorn as
``shared_worker:app``. The environment says where Redis is (``REDIS_URL``), the
lease in seconds (``MCP_LEASE``), and a folder (``MCP_MARKS``) where a tool leaves a
file when it sees its task cancelled, so that a test in another process can tell.
"""

import os
import sys

from minimcp import Context, RedisBackend, Server
from minimcp.server.tasks import TaskRunner

backend = RedisBackend(os.environ["REDIS_URL"], lease=float(os.environ.get("MCP_LEASE", "10")),
                       prefix=os.environ.get("MCP_PREFIX", "minimcp:"))
server = Server("shared", backend=backend, state_secret=b"one secret for every worker, 32b")
server.tasks = TaskRunner(backend, poll_interval_ms=20)
MARKS = os.environ.get("MCP_MARKS", "")


def mark(name: str) -> None:
    """Leave a file named ``name`` in MCP_MARKS (what the test process waits for)."""
    if MARKS:
        with open(os.path.join(MARKS, name), "w") as f:
            f.write(str(os.getpid()))


@server.tool()
def echo(text: str) -> str:
    """A plain tool: no task, no Redis."""
    return text


@server.tool()
def whoami() -> int:
    """The pid of the worker that answered."""
    return os.getpid()


@server.tool(task="required")
def ask_then_wait(tag: str, ctx: Context) -> str:
    """Ask the user, then wait (up to 60 s) to be cancelled; leave ``cancelled-TAG`` when it is."""
    answer = ctx.elicit(f"Go on with {tag}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    mark(f"answered-{tag}-{answer.get('content', {}).get('ok')}")
    if ctx.cancelled.wait(60):
        mark(f"cancelled-{tag}")
        return "stopped"
    return "not cancelled"


@server.tool(task="required")
def sleep_task(seconds: float, ctx: Context) -> str:
    """Wait ``seconds`` (or until cancelled) as a task; say which worker ran it."""
    mark(f"running-{os.getpid()}")
    ctx.cancelled.wait(seconds)
    return f"slept on {os.getpid()}"


@server.tool(task="optional")
def maybe_task(text: str) -> str:
    """A tool that may run as a task: without Redis it runs as a plain call."""
    return f"done {text}"


@server.tool()
def add_tool(name: str) -> str:
    """Register a tool here at run time: every worker's listeners hear tools/list_changed."""
    server.add_tool(lambda: name, name=name, description="added at run time")
    return name


@server.tool()
def touch(uri: str) -> str:
    """Say the resource at ``uri`` changed (notifications/resources/updated on every worker)."""
    server.notify_resource_updated(uri)
    return uri


app = server.wsgi_app(sessions=False)

if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), sessions=False)
