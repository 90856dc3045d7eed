"""The bridge from Python's ``logging`` to MCP's ``notifications/message``.

A record logged while a handler runs goes to that handler's client, at the
level the client asked for (see :class:`LogBridge`). ``logging`` itself is
loaded only when the program has imported it.
"""

from __future__ import annotations

import sys
import threading

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict

from ..protocol.levels import from_python


class LogBridge:
    """Forward ``logging`` records made inside a handler to that handler's client.

    While a tool, resource or prompt function runs, its worker thread is
    mapped to its ``Context``; a record logged on that thread (at a level
    its logger lets through) becomes ``notifications/message``, if the
    client asked for that level. minimcp's own records are never forwarded.
    The handler goes on the root logger the first time a function runs
    after ``logging`` was imported (a program that never imports it never
    logs, and never pays for the import).
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._contexts: Dict[int, Any] = {}
        self._handler: Any = None

    def can_forward(self) -> bool:
        """False while no record can reach a client: the bridge is off, or ``logging`` was never
        imported (the handler goes on the root logger only once it is; before, nothing logs)."""
        return self.enabled and (self._handler is not None or "logging" in sys.modules)

    def handling(self, ctx: Any) -> _Handling:
        """A context manager mapping this thread to ``ctx`` while user code runs."""
        return _Handling(self, ctx)

    def uninstall(self) -> None:
        """Stop forwarding (removes the handler from the root logger)."""
        if self._handler is not None:
            import logging

            logging.getLogger().removeHandler(self._handler)
            self._handler = None

    def emit(self, record: Any) -> None:
        """Send the record to the client of the request this thread serves, if any."""
        ctx = self._contexts.get(threading.get_ident())
        if ctx is None or record.name.startswith("minimcp"):
            return
        try:
            ctx.log(from_python(record.levelno), self._handler.format(record), logger=record.name)
        except Exception:
            self._handler.handleError(record)


def _root_handler(bridge: LogBridge) -> Any:
    """A ``logging.Handler`` on the root logger that passes records to ``bridge``."""
    import logging

    class Bridge(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            bridge.emit(record)

    handler = Bridge()
    logging.getLogger().addHandler(handler)
    return handler


class _Handling:
    __slots__ = ("bridge", "ctx")

    def __init__(self, bridge: LogBridge, ctx: Any) -> None:
        self.bridge: LogBridge = bridge
        self.ctx: Any = ctx  # the request's Context

    def __enter__(self) -> None:
        bridge = self.bridge
        if bridge.enabled:
            if bridge._handler is None and "logging" in sys.modules:
                bridge._handler = _root_handler(bridge)
            bridge._contexts[threading.get_ident()] = self.ctx

    def __exit__(self, *exc_info: Any) -> None:
        if self.bridge.enabled:
            self.bridge._contexts.pop(threading.get_ident(), None)
