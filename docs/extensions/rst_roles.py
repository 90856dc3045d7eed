"""A griffe extension for the API reference: the docstrings as the reference should show them.

minimcp's docstrings are written for ``help()`` and an editor first, so they use a
little reStructuredText: roles (``:class:`~minimcp.Client```) and ``Example::``
before an indented block. Markdown would show the role markup as it is; this turns a
role into a code span (``~`` keeps the last name only, as in Sphinx) and ``::`` at the
end of a line into ``:`` (the indented block after it is already a code block).

The parameter tables come from the docstrings' ``Args:`` sections, and griffe takes each
row's type and default from the signature by the row's name. Two habits of the
docstrings broke that lookup, so they are rewritten before griffe parses them:

- one line for several names (``cache_ttl_ms, cache_scope: the cache hints ...``) is a
  name nothing has, so the row showed no type and *required*: it becomes one row per name,
  each with the line's description;
- ``handlers:`` for a ``**handlers`` parameter showed as a plain parameter, as if
  ``handlers={...}`` were how to pass it: the row gets the stars of the signature.

Loaded by mkdocs.yml (plugins → mkdocstrings → extensions); not part of the package.
tests/test_docs.py builds the site and checks what these rows render as.
"""

import re
from typing import Dict, List

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`(~?)([^`]+)`")
LITERAL = re.compile(r"(\S)::$", re.M)
#: The Google-style section titles whose items are names (griffe's own list, lower case).
NAMED_SECTIONS = {"args", "arguments", "params", "parameters", "keyword args", "keyword arguments",
                  "other args", "other arguments", "other params", "other parameters", "attributes"}
SECTION = re.compile(r"^(\s*)([A-Za-z][A-Za-z ]*):\s*$")
#: An item's first line: ``name:``, ``a, b:``, each name maybe starred, maybe ``(type)`` after them.
ITEM = re.compile(r"^(\s+)(\**\w+(?:\s*,\s*\**\w+)*)(\s*\([^)]*\))?:(\s.*)?$")


def _role(match: "re.Match[str]") -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _rewrite_items(text: str, stars: Dict[str, str]) -> str:
    """One item per name in the named sections of ``text``; ``stars`` maps a name to its ``*``/``**``."""
    lines = text.split("\n")
    out: List[str] = []
    i = 0
    while i < len(lines):
        header = SECTION.match(lines[i])
        out.append(lines[i])
        i += 1
        if not header or header.group(2).strip().lower() not in NAMED_SECTIONS:
            continue
        is_parameters = header.group(2).strip().lower() != "attributes"
        section_indent = len(header.group(1))
        # The section runs until a line indented no deeper than its title (blank lines inside are kept).
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > section_indent):
            item = ITEM.match(lines[i])
            if not item:
                out.append(lines[i])
                i += 1
                continue
            indent, names, annotation, rest = item.group(1), item.group(2), item.group(3) or "", item.group(4) or ""
            body = []  # the item's continuation lines, indented deeper than its first
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(indent)):
                if not lines[i].strip() and (i + 1 >= len(lines) or _indent(lines[i + 1]) <= len(indent)):
                    break  # a blank line before the next item or the end stays outside the item
                body.append(lines[i])
                i += 1
            for name in (part.strip() for part in names.split(",")):
                if is_parameters and not name.startswith("*"):
                    name = stars.get(name, "") + name
                out.append(f"{indent}{name}{annotation}:{rest}")
                out.extend(body)
    return "\n".join(out)


def _variadic_stars(obj: griffe.Object) -> Dict[str, str]:
    """``{"handlers": "**", "args": "*"}`` for the variadic parameters of a function, or of a class's ``__init__``."""
    try:
        parameters = obj.parameters  # type: ignore[attr-defined]  # functions; classes give their __init__'s
    except (AttributeError, KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return {}  # no parameters, or an __init__ inherited from outside the package
    prefix = {griffe.ParameterKind.var_positional: "*", griffe.ParameterKind.var_keyword: "**"}
    return {p.name: prefix[p.kind] for p in parameters if p.kind in prefix}


class RstRoles(griffe.Extension):
    """Rewrite each docstring: its roles as griffe loads the object, its items once the tree is complete."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = LITERAL.sub(r"\1:", ROLE.sub(_role, obj.docstring.value))

    def on_object(self, *, obj: griffe.Object, **kwargs: object) -> None:
        # Here, not in on_instance: a class's __init__ (where its parameters are) is loaded after the class.
        if obj.docstring is not None:
            obj.docstring.value = _rewrite_items(obj.docstring.value, _variadic_stars(obj))
