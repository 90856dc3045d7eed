"""One worker for benchmarks/shared.py: ``python worker.py PORT`` (built-in server), or
``worker:app`` under gunicorn.

``REDIS_URL`` set: a RedisBackend there; unset: this process alone (the memory backend).
Tools: ``echo`` (plain), ``quick`` (a task that returns at once), ``touch`` (tools/list_changed
on every worker).
"""

import os
import sys

from minimcp import Server
from minimcp.server.tasks import TaskRunner

backend = None
if os.environ.get("REDIS_URL"):
    from minimcp import RedisBackend

    backend = RedisBackend(os.environ["REDIS_URL"])
server = Server("shared-bench", backend=backend, state_secret=b"the same secret on every worker!")
server.tasks = TaskRunner(backend, poll_interval_ms=1)


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool(task="required")
def quick(n: int) -> int:
    """A task that ends at once."""
    return n


@server.tool()
def touch(name: str) -> str:
    """Register a tool: every worker's listeners hear tools/list_changed."""
    server.add_tool(lambda: name, name=name, description="added")
    return name


app = server.wsgi_app(sessions=False)

if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]), sessions=False)
