"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640) as data: the names,
digests, and the YAML frontmatter of a ``SKILL.md``.

A skill is a folder with a ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``, then Markdown) and supporting files. A server lists each
skill as an entry: ``uri`` (its ``SKILL.md``), ``frontmatter`` (as JSON), and
``resources``, the manifest of every file with its SHA-256 digest and size,
so a client can verify what it reads. Both sides use what is here: the
server to publish (:mod:`minimcp.server.skills`), the client to verify
(:mod:`minimcp.client.skills`).

minimcp reads a YAML *subset* (no YAML library is a dependency): ``key:
value`` lines whose values are plain or quoted scalars, nested mappings by
indentation, and ``- item`` lists of scalars. Anything else is a
``ValueError`` naming the line.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Dict, List, Optional, Tuple

EXTENSION = "io.modelcontextprotocol/skills"
DIRECTORY_MIME = "inode/directory"
#: The Agent Skills naming rule for a skill name (the last segment of its path).
NAME_RULE = re.compile(r"^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$")
_FRONT = re.compile(r"^\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S)


def digest(data: bytes) -> str:
    """The manifest digest of a file's raw bytes: ``sha256:<64 lowercase hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def frontmatter(text: str) -> Dict[str, Any]:
    """The YAML frontmatter at the top of a ``SKILL.md``, as a dict.

    Raises:
        ValueError: there is none, or it uses YAML beyond minimcp's subset.
    """
    match = _FRONT.match(text)
    if match is None:
        raise ValueError("SKILL.md must begin with YAML frontmatter between --- lines")
    lines = [(number, line) for number, line in enumerate(match.group(1).splitlines(), 2)
             if line.strip() and not line.lstrip().startswith("#")]
    value, rest = _block(lines, 0)
    if rest or type(value) is not dict:
        raise ValueError(f"SKILL.md frontmatter line {(rest or lines or [(2, '')])[0][0]}: not a mapping")
    return value


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: List[Tuple[int, str]], indent: int) -> Tuple[Any, List[Tuple[int, str]]]:
    """Parse the lines at ``indent`` into a mapping or a list; return it and the lines after it."""
    if lines and lines[0][1].lstrip().startswith("- "):
        items: List[Any] = []
        while lines and _indent(lines[0][1]) == indent and lines[0][1].lstrip().startswith("- "):
            items.append(_scalar(lines[0][1].lstrip()[2:].strip(), lines[0][0]))
            lines = lines[1:]
        return items, lines
    mapping: Dict[str, Any] = {}
    while lines and _indent(lines[0][1]) == indent:
        number, line = lines[0]
        key, colon, value = line.strip().partition(":")
        if not colon or not key or (value and not value.startswith((" ", "\t"))):
            raise ValueError(f"SKILL.md frontmatter line {number}: expected 'key: value', got {line.strip()!r}")
        key, value, lines = _scalar(key.strip(), number), value.strip(), lines[1:]
        if value:
            mapping[key] = _scalar(value, number)
        elif lines and _indent(lines[0][1]) > indent:
            mapping[key], lines = _block(lines, _indent(lines[0][1]))
        elif lines and _indent(lines[0][1]) == indent and lines[0][1].lstrip().startswith("- "):
            mapping[key], lines = _block(lines, indent)
        else:
            mapping[key] = None
    if lines and _indent(lines[0][1]) > indent:
        raise ValueError(f"SKILL.md frontmatter line {lines[0][0]}: unexpected indentation")
    return mapping, lines


def _scalar(text: str, number: int) -> Any:
    """One YAML scalar: quoted, or plain (null, booleans, numbers, else the text itself)."""
    if text[:1] in ("'", '"'):
        if len(text) < 2 or text[-1] != text[0]:
            raise ValueError(f"SKILL.md frontmatter line {number}: unterminated quoted string")
        if text[0] == '"':
            return json.loads(text)
        return text[1:-1].replace("''", "'")
    if text[:1] in ("|", ">", "[", "{", "&", "*", "!"):
        raise ValueError(f"SKILL.md frontmatter line {number}: {text[:1]!r} is beyond minimcp's YAML subset "
                         f"(use plain or quoted one-line values)")
    if " #" in text:
        text = text.split(" #", 1)[0].rstrip()
    lowered = text.lower()
    if lowered in ("null", "~", ""):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[-+]?([0-9]*\.[0-9]+|[0-9]+\.[0-9]*)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


def skill_name(uri: str) -> Optional[str]:
    """The skill name in a ``.../<name>/SKILL.md`` URI, or None."""
    path = uri.split("://", 1)[-1].split("/")
    return path[-2] if len(path) >= 2 and path[-1] == "SKILL.md" and path[-2] else None
