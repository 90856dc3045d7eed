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
    from typing import Any, Dict, FrozenSet, Optional, Tuple


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


# -- the wire trace -------------------------------------------------------------------------------
#
# Made for a person reading top to bottom: each message once, with its direction, its peer and
# the time since the line above; what every request repeats (the 2026-07-28 ``_meta``) folded,
# long values cut, and a note the first time either happens. Nothing of it runs unless a
# session's ``trace`` is on: the session checks that flag before calling trace().

#: MINIMCP_TRACE values that leave the trace off (what Client and Server check too).
TRACE_OFF: Tuple[str, ...] = ("", "0", "false", "no")

#: The words MINIMCP_TRACE may hold besides one that turns it on (``1``, ``yes``), joined by
#: commas (``MINIMCP_TRACE=both,pretty``): what each changes.
TRACE_WORDS: Dict[str, str] = {
    "pretty": "each message as indented JSON",
    "both": "both sides: a stdio server this process starts traces too (it gets the variable), "
            "and so does a server in this process",
    "full": "every message whole: nothing folded or shortened",
}

#: Words added to MINIMCP_TRACE's for this process (the ``minimcp`` command's ``--pretty``).
_chosen_words: str = ""


def tracing() -> bool:
    """True when ``MINIMCP_TRACE`` asks for the wire trace."""
    import os

    return os.environ.get("MINIMCP_TRACE", "") not in TRACE_OFF


def trace_words(value: Optional[str] = None) -> FrozenSet[str]:
    """The words of ``MINIMCP_TRACE`` (or ``value``) that shape the trace: ``pretty``, ``both``,
    ``full`` (see :data:`TRACE_WORDS`); empty when it only turns the trace on, or off."""
    import os

    if value is None:
        value = os.environ.get("MINIMCP_TRACE", "")
    if value in TRACE_OFF:
        return frozenset()
    return frozenset(value.lower().replace(",", " ").replace("+", " ").split())


def choose_trace_words(words: str) -> None:
    """Add ``words`` (``"pretty"``) to those of ``MINIMCP_TRACE`` for this process's trace."""
    global _chosen_words
    _chosen_words = words


def chosen_trace_words() -> str:
    """The words :func:`choose_trace_words` added (``""`` if none)."""
    return _chosen_words
