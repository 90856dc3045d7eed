"""A server whose tools run as tasks (the tasks extension), over stdio or imported for HTTP.

Usage: python tasks_server.py   (TASKS_TTL_MS in the environment sets the tasks' TTL)
"""

import os
import threading
import time
from typing import Callable, Optional

from minimcp import Context, Server, ToolError
from minimcp.server.tasks import TaskRunner, starts_task_later
from minimcp.server.tools import RequestFailed

#: Set whenever a task tool saw its ctx.cancelled (in-process tests read it).
SAW_CANCEL = threading.Event()
#: Set whenever ``work`` starts (a task cancelled before its tool runs never runs it).
WORK_STARTED = threading.Event()


def make_server(ttl_ms: Optional[int] = 3600000, clock: Callable[[], float] = time.time) -> Server:
    """The server, with a task runner of this TTL and clock."""
    server = Server("tasks-test", version="0.0.1")
    server.tasks = TaskRunner(ttl_ms=ttl_ms, poll_interval_ms=10, clock=clock)

    @server.tool(task="optional")
    def work(seconds: float, ctx: Context, tag: str = "") -> str:
        """Work for `seconds` (reporting progress) unless cancelled."""
        WORK_STARTED.set()
        if ctx.cancelled.wait(seconds):
            SAW_CANCEL.set()
            return "stopped"
        ctx.report_progress(1, 1, "done")
        return f"worked {tag}"

    @server.tool(task="required")
    def confirm(filename: str, ctx: Context) -> str:
        """Ask the user in the middle of the task."""
        answer = ctx.elicit(f"Delete {filename}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return f"{answer['action']} {filename} ok={answer.get('content', {}).get('ok')}"

    @server.tool(task="optional")
    def broken() -> str:
        """A tool that raises: the task completes with isError."""
        raise ToolError("it broke")

    @server.tool(task="optional")
    def backend_down() -> str:
        """A protocol-level failure: the task fails."""
        raise RequestFailed(-32603, "backend down")

    @server.tool(task="required")
    @starts_task_later
    def book(ctx: Context) -> str:
        """Ask first (input_required rounds), then become a task."""
        answer = ctx.elicit("Name?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="who")
        ctx.start_task()
        return f"booked ok={answer['content']['ok']} task={type(ctx).__name__}"

    @server.tool()
    def plain(text: str) -> str:
        """Never a task."""
        return text

    return server


if __name__ == "__main__":
    ttl = os.environ.get("TASKS_TTL_MS")
    make_server(ttl_ms=int(ttl) if ttl else 3600000).run()
