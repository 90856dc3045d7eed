"""Loggers that load ``logging`` only when something is logged.

``import logging`` (``traceback`` and friends behind it) is a large part of a
stdio server's start-up (benchmarks/stdio.py), and most runs log nothing.
``get_logger(__name__)`` returns a stand-in that turns into the real
``logging.Logger`` on first use; the package logger gets its ``NullHandler``
then, because a library never configures logging for its host (requests' rule).
"""

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


def get_logger(name: str) -> Any:
    """The logger called ``name``, loaded on first use."""
    return _LazyLogger(name)
