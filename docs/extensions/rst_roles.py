"""A griffe extension for the API reference: the docstrings' reST bits, read as Markdown.

minimcp's docstrings are written for ``help()`` and an editor first, so they use a
little reStructuredText: roles (``:class:`~minimcp.Client```) and ``Example::``
before an indented block. Markdown would show the role markup as it is; this turns a
role into a code span (``~`` keeps the last name only, as in Sphinx) and ``::`` at the
end of a line into ``:`` (the indented block after it is already a code block).
Loaded by mkdocs.yml (plugins → mkdocstrings → extensions); not part of the package.
"""

import re

import griffe

ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):`(~?)([^`]+)`")
LITERAL = re.compile(r"(\S)::$", re.M)


def _role(match: "re.Match[str]") -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


class RstRoles(griffe.Extension):
    """Rewrite each docstring once, as griffe loads its object."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = LITERAL.sub(r"\1:", ROLE.sub(_role, obj.docstring.value))
