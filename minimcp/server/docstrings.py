"""Reading a function's docstring: its description and a sentence per parameter.

:func:`parse_docstring` understands the two common styles, Google::

    '''Add two numbers.

    Args:
        a (int): the first.
        b: the second.
    '''

and NumPy::

    '''Add two numbers.

    Parameters
    ----------
    a : int
        the first.
    '''

The description becomes a tool's or prompt's ``description``, the per-parameter
text each argument's ``description`` (see :mod:`minimcp.server.schema`).
"""


from __future__ import annotations

import re

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, List, Optional, Tuple


class _lazy_re:  # noqa: N801 (reads like re.compile)
    """A regular expression compiled the first time it is used."""

    __slots__ = ("source", "_compiled")

    def __init__(self, source: str) -> None:
        self.source: str = source
        self._compiled: Optional[re.Pattern[str]] = None

    def __getattr__(self, attr: str) -> Any:  # match, fullmatch, ...
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return getattr(self._compiled, attr)


# A section starts at a line that is one of these words, perhaps with a colon.
_ARGS_SECTIONS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments"}
_SECTIONS = _ARGS_SECTIONS | {"Other Parameters", "Return", "Returns", "Yield", "Yields", "Raises", "Example",
                              "Examples", "Note", "Notes", "See Also", "References", "Warning", "Warnings"}
# Compiled on first use, so only for a docstring with an Args section (each re.compile is
# costly, and a stdio server would pay it at start-up: benchmarks/instructions.py counts that).
_GOOGLE_ARG = _lazy_re(r"^\*{0,2}(\w+)(?:\s*\(([^)]*)\))?:\s*(.*)$")  # "name (type): text"
_NUMPY_ARG = _lazy_re(r"^\*{0,2}(\w+)\s*(?::\s*(.*))?$")  # "name : type", text on the next lines


def _cleandoc(doc: str) -> List[str]:
    """Dedent a docstring the way ``inspect.cleandoc`` does."""
    lines = doc.expandtabs().splitlines()
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents) if indents else 0
    cleaned = [lines[0].strip()] + [line[margin:].rstrip() for line in lines[1:]]
    while cleaned and not cleaned[-1]:
        cleaned.pop()
    while cleaned and not cleaned[0]:
        cleaned.pop(0)
    return cleaned


def _section_header(line: str) -> Optional[str]:
    """The section a line starts (``Args``, ``Returns:`` ...), or None."""
    if line.startswith(" "):
        return None
    name = line.strip()
    if name.endswith(":"):
        name = name[:-1].rstrip()
    return name if name in _SECTIONS else None


def parse_docstring(doc: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """Split a docstring into its description and per-parameter descriptions.

    Understands Google style (``Args:`` then ``name (type): text``) and NumPy
    style (``Parameters`` / ``----------`` then ``name : type`` and indented text).
    """
    if not doc:
        return "", {}
    lines = _cleandoc(doc)
    description: List[str] = []
    params: Dict[str, List[str]] = {}
    section = None
    current: Optional[str] = None
    entry_indent = None
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _section_header(line)
        if header:
            section = header
            current = None
            entry_indent = None
            if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                i += 1  # NumPy underline
            i += 1
            continue
        if section is None:
            description.append(line)
        elif section in _ARGS_SECTIONS and line.strip():
            indent = len(line) - len(line.lstrip())
            if entry_indent is None:
                entry_indent = indent
            if indent == entry_indent:
                match = _GOOGLE_ARG.match(line.strip()) or _NUMPY_ARG.match(line.strip())
                if match:
                    current = match.group(1)
                    text = match.group(3) if match.re.pattern == _GOOGLE_ARG.source else ""
                    params[current] = [text.strip()] if text and text.strip() else []
            elif current is not None:
                params[current].append(line.strip())
        i += 1
    text = "\n".join(description).strip()
    return text, {name: " ".join(parts) for name, parts in params.items() if parts}
