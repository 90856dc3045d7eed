"""``async def`` handlers, run to completion on the thread that serves the request.

minimcp serves every request on a thread, so an ``async def`` tool (resource,
prompt, completer) needs no event loop of the server's: calling it makes a
coroutine, and :func:`finish` runs that on a loop of its own, made for this
one call on this thread, until it returns. ``await`` inside works (HTTP
clients, ``asyncio.sleep``, ``asyncio.gather`` …); the blocking calls of
``ctx`` (``ctx.elicit()``, ``ctx.sample()``) work too, they block that loop.

When the client cancels the request (``ctx.cancelled``), the task is
cancelled, so the coroutine gets ``asyncio.CancelledError`` at its current
``await`` and can clean up. ``asyncio`` is imported the first time an
``async def`` runs: a server of plain functions never loads it.
"""

from __future__ import annotations

import types

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Callable, Optional

from ..errors import RPCError, ToolError
from ..protocol.jsonrpc import INTERNAL_ERROR

#: ``inspect.CO_COROUTINE``, read off the code object (inspect is a slow import).
_CO_COROUTINE = 0x80

#: How often a running coroutine's loop looks at ``ctx.cancelled`` (a threading.Event
#: has no callback to wake a loop with; 20 ms is quicker than any client notices).
CANCEL_POLL = 0.02


class Cancelled(RPCError, ToolError):
    """The coroutine was cancelled because its request was. No one reads it: the session
    sends no answer to a cancelled request (spec basic/utilities/cancellation)."""

    def __init__(self) -> None:
        super().__init__(INTERNAL_ERROR, "the request was cancelled")


def is_async(fn: Callable[..., Any]) -> bool:
    """True for an ``async def`` function or method (whose calls make coroutines)."""
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return code is not None and bool(code.co_flags & _CO_COROUTINE)


def finish(value: Any, ctx: Any = None) -> Any:
    """``value`` itself, or, when it is a coroutine, what it returns once run to the end here.

    ``ctx`` (a request context, or None) is watched: its ``cancelled`` cancels the task.

    Raises:
        Cancelled: the request was cancelled while the coroutine ran.
    """
    if type(value) is not types.CoroutineType:
        return value
    return _run(value, ctx)


def _run(coroutine: Any, ctx: Optional[Any]) -> Any:
    import asyncio  # late: only a server with async handlers pays for it

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # for code that asks get_event_loop(); this thread's only
    try:
        task = loop.create_task(coroutine)
        if ctx is not None:
            def watch() -> None:
                if ctx.is_cancelled:
                    task.cancel()
                elif not task.done():
                    loop.call_later(CANCEL_POLL, watch)

            watch()
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            raise Cancelled() from None
    finally:
        try:  # what the coroutine left behind: its other tasks, async generators
            leftovers = asyncio.all_tasks(loop)
            for leftover in leftovers:
                leftover.cancel()
            if leftovers:
                loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
