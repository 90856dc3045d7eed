"""A long job as a task: the server answers "this is a task" at once, the client polls it,
sees its progress, answers the question the job asks half-way, and gets the result.

    python examples/long_jobs.py            # the client; it starts the server below itself
    python examples/long_jobs.py --server   # the server alone, on stdio

The tool is plain minimcp code: ``task="required"`` is the only sign that it runs as a
task (the tasks extension, ``io.modelcontextprotocol/tasks``). Its ``ctx.report_progress``
becomes the task's status message, its ``ctx.elicit`` parks the task in ``input_required``
until the client answers with ``tasks/update``, and ``ctx.cancelled`` is set by ``tasks/cancel``.
"""

import sys
import threading

import minimcp
from minimcp import Context, Server

server = Server("reports")


@server.tool(task="required")
def build_report(pages: int, ctx: Context) -> str:
    """Build a report of `pages` pages; asks whether to add an appendix half-way."""
    appendix = False
    for page in range(1, pages + 1):
        if ctx.cancelled.wait(0.05):  # a page's worth of work, unless the client cancels
            return "cancelled"
        ctx.report_progress(page, pages, f"page {page} written")
        if page == pages // 2:
            answer = ctx.elicit("Add an appendix?", {"type": "object",
                                                     "properties": {"appendix": {"type": "boolean"}}})
            appendix = answer["action"] == "accept" and answer["content"].get("appendix", False)
    return f"report: {pages} pages" + (" and an appendix" if appendix else "")


def answer(params: dict) -> dict:
    """The person at the keyboard (here: always yes)."""
    print(f"the job asks: {params['message']} -> yes")
    return {"action": "accept", "content": {"appendix": True}}


def main() -> None:
    with minimcp.connect([sys.executable, __file__, "--server"], elicitation_handler=answer) as client:
        task = client.start_task("build_report", {"pages": 6})
        print(f"started a task: {task.status}")
        shown, pause = None, threading.Event()
        while not task.done:          # task.wait() does this loop, quietly
            task.refresh()            # tasks/get; an input request goes to answer() above
            if task.status_message not in (None, shown):
                shown = task.status_message
                print(f"  {task.status}: {shown}")
            pause.wait(task.poll_interval)  # the server's pollIntervalMs
        print(task.result().text)


if __name__ == "__main__":
    if "--server" in sys.argv:
        server.run()
    else:
        main()
