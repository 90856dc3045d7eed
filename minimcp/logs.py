"""Loggers that load ``logging`` only when something is logged.

``import logging`` (``traceback`` and friends behind it) is a large part of a
stdio server's start-up (benchmarks/stdio.py), and most runs log nothing.
``get_logger(__name__)`` returns a stand-in that turns into the real
``logging.Logger`` on first use; the package logger gets its ``NullHandler``
then, because a library never configures logging for its host (requests' rule).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger as Logger  # (re-exported: modules annotate their loggers with it)
    from typing import Any


class _LazyLogger:
    """A ``logging.Logger`` that is only looked up when first used."""

    __slots__ = ("name", "_real")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: Any = None

    def __getattr__(self, attr: str) -> Any:  # called for debug, info, exception, ...
        real = self._real
        if real is None:
            import logging

            package = logging.getLogger("minimcp")
            if not any(isinstance(h, logging.NullHandler) for h in package.handlers):
                package.addHandler(logging.NullHandler())
            real = self._real = logging.getLogger(self.name)
        return getattr(real, attr)

    def __repr__(self) -> str:
        return f"<logger {self.name} (lazy)>"


def trace(name: str, arrow: str, message: Any) -> None:
    """Write one message of the wire trace to stderr (``MINIMCP_TRACE=1``): ``→`` sent, ``←`` received."""
    import sys

    from .protocol import jsonrpc

    try:
        text = jsonrpc.dumps(message)
    except (TypeError, ValueError, AttributeError):
        text = repr(message)
    sys.stderr.write(f"{name} {arrow} {text}\n")
    sys.stderr.flush()


def reference() -> str:
    """A new reference for one failure: 8 hex digits, which the peer's error message and our log
    line both carry, so that an operator finds the traceback a user quotes (while the message
    itself says nothing the peer must not learn: CWE-209)."""
    import os

    return os.urandom(4).hex()


def get_logger(name: str) -> Logger:
    """The logger called ``name``, loaded on first use."""
    # The checker is right that _LazyLogger is no Logger subclass: it stands in for one, every
    # attribute forwarded by __getattr__, so callers are checked against Logger's methods.
    return _LazyLogger(name)  # type: ignore[return-value]
