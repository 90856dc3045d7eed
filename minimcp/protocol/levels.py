"""The log levels of ``logging/setLevel`` and ``notifications/message`` (spec server/utilities/logging).

They are the RFC 5424 severities, least severe first. :data:`RANK` orders
them; :data:`PYTHON_LEVELS` maps each to the nearest ``logging`` level (a
client logging what a server sent), and :func:`from_python` goes the other way.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Dict

#: RFC 5424 severities, least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

#: level -> its place in :data:`LOG_LEVELS` (higher is more severe).
RANK: Dict[str, int] = {level: rank for rank, level in enumerate(LOG_LEVELS)}

#: level -> the ``logging`` module's number for it.
PYTHON_LEVELS: Dict[str, int] = {"debug": 10, "info": 20, "notice": 25, "warning": 30, "error": 40,
                                 "critical": 50, "alert": 50, "emergency": 50}


def from_python(levelno: int) -> str:
    """The MCP level for a ``logging`` record's ``levelno``."""
    if levelno >= 50:
        return "critical"
    if levelno >= 40:
        return "error"
    if levelno >= 30:
        return "warning"
    if levelno >= 20:
        return "info"
    return "debug"
