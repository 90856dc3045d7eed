"""Resources on the server side: fixed URIs and URI templates.

spec server/resources. A function registered with a fixed URI
(``docs://readme``) is listed by ``resources/list``; one registered with an
RFC 6570 template (``users://{id}/profile``) is listed by
``resources/templates/list`` and answers every URI that matches, its
variables bound to the function's parameters (converted to the annotated
``int``/``float``/``bool``, or ``datetime``, ``UUID`` ...: :func:`text_reader`).

A function that raises ``LookupError`` (``KeyError``, ``IndexError``) is
saying "no such resource", as is a URI nothing matches: the client gets
``-32002`` in the handshake versions (spec server/resources "Error
Handling"), ``-32602`` from 2026-07-28 on (which dropped -32002).

Caching (2026-07-28): a read carries the resource's ``cacheScope``,
``"private"`` unless it was registered with another. A read is often
somebody's own data (it may depend on ``ctx.principal``), and a private
hint is never wrong, where a public one lets a shared cache hand one user's
contents to another (spec 2026-07-28 basic, caching hints; digest base.md §9.7). Its ``ttlMs`` is the
resource's ``ttl_ms``, else the server's ``cache_ttl_ms``.

Templates: ``{var}`` matches one path segment (no ``/``) and is
percent-decoded, as level-1 expansion encodes; ``{+var}`` (reserved
expansion, level 2) matches the rest, slashes included — use it for paths:
``file:///{+path}``.
"""

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..engine.inflight import RequestContext
from ..errors import RPCError
from ..protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND
from ..protocol.versions import knows, strip
from .content import resource_contents
from .coroutines import finish
from .docstrings import _lazy_re
from .schema import is_context, text_form, type_hints

_VARIABLE = _lazy_re(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ValueError(f"not a boolean: {text!r}")


_CONVERT: Dict[Any, Callable[[str], Any]] = {int: int, float: float, bool: _parse_bool, str: str}
_WHAT = {int: "an integer", float: "a number", bool: "a boolean (true or false)", str: "text"}


def text_reader(hint: Any) -> Tuple[Callable[[str], Any], str]:
    """How a string from the wire (a URI template's variable, a prompt's argument) becomes
    the type its parameter is annotated with, and what that type is, for an error: ``int``,
    ``float``, ``bool``, and the types a tool reads from text too (``datetime``, ``date``,
    ``time``, ``UUID``, ``Decimal``, a path, base64 ``bytes``: ``schema.text_form``). Any
    other hint leaves the string as it came. The function raises ``ValueError`` or
    ``ArithmeticError`` for text that is not of the type."""
    if hint in _CONVERT:
        return _CONVERT[hint], _WHAT[hint]
    form = text_form(hint)
    return (form[1], form[2]) if form is not None else (str, "text")


class ServerResource:
    """A registered resource or resource template.

    Args:
        fn: returns the contents: ``str`` (text), ``bytes`` (a base64 blob),
            or anything JSON-able (JSON text, ``application/json``).
        uri: a fixed URI, or a template with ``{variables}``.
    """

    #: OAuth scopes a caller needs (``add_resource(scopes=…)``; checked before ``read``).
    scopes: Tuple[Any, ...] = ()

    def __init__(self, fn: Callable[..., Any], uri: str, *, name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, mime_type: Optional[str] = None,
                 icons: Optional[List[Dict[str, Any]]] = None, annotations: Optional[Dict[str, Any]] = None,
                 size: Optional[int] = None, meta: Optional[Dict[str, Any]] = None, ttl_ms: Optional[int] = None,
                 cache_scope: str = "private") -> None:
        self.fn = fn
        self.uri = uri
        #: Cache hints for 2026-07-28 reads (``ttl_ms`` None: the server's ``cache_ttl_ms``).
        self.ttl_ms: Optional[int] = ttl_ms
        self.cache_scope: str = cache_scope
        self.mime_type = mime_type
        self.variables: List[Any] = [m.group(2) for m in _VARIABLE.finditer(uri)]
        self.is_template: bool = bool(self.variables)
        hints = type_hints(fn, include_extras=False)  # as written, on every Python
        code = fn.__code__
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        self.context_param: Optional[str] = next((p for p in params if p == "ctx" or is_context(hints.get(p), (RequestContext,))),
                                  None)
        missing = [v for v in self.variables if v not in params]
        if missing:
            raise TypeError(f"{fn.__qualname__} has no parameter for template variable(s) {missing} of {uri!r}")
        self._converters = {v: text_reader(hints.get(v, str)) for v in self.variables}
        self._pattern = re.compile(self._regex(uri)) if self.is_template else None
        if description is None and fn.__doc__:
            description = fn.__doc__.strip().split("\n\n")[0].strip()
        definition: Dict[str, Any] = {"uriTemplate" if self.is_template else "uri": uri,
                                      "name": name or fn.__name__}
        for key, value in (("title", title), ("description", description), ("mimeType", mime_type),
                           ("size", size), ("annotations", annotations), ("icons", icons), ("_meta", meta)):
            if value is not None:
                definition[key] = value
        self.definition = definition

    @staticmethod
    def _regex(template: str) -> str:
        parts, last = [], 0
        for match in _VARIABLE.finditer(template):
            parts.append(re.escape(template[last:match.start()]))
            segment = ".+" if match.group(1) else "[^/]+"
            parts.append(f"(?P<{match.group(2)}>{segment})")
            last = match.end()
        parts.append(re.escape(template[last:]))
        return "".join(parts)

    def match(self, uri: str) -> Optional[Dict[str, str]]:
        """The template variables ``uri`` binds, or ``None`` if it does not match."""
        if not self.is_template:
            return {} if uri == self.uri else None
        found = self._pattern.fullmatch(uri)  # type: ignore[union-attr]
        if not found:
            return None
        from urllib.parse import unquote  # late: a server that reads no template never pays for it

        return {k: unquote(v) for k, v in found.groupdict().items()}

    def definition_for(self, version: str) -> Dict[str, Any]:
        """The definition without the fields ``version`` does not know (``resource.*`` in ``versions.FEATURES``)."""
        return strip(self.definition, "resource", version)

    def read(self, uri: str, variables: Dict[str, str], ctx: RequestContext) -> Dict[str, Any]:
        """Call the function and build the ``ReadResourceResult`` (with this resource's cache
        hints for a 2026-07-28 request; the server adds its ``ttlMs`` when this has none).

        Raises:
            RPCError: ``-32602`` when a variable does not convert to its type;
                ``-32002`` when the function raises ``LookupError`` (the
                connection makes that ``-32602`` for a 2026-07-28 request).
        """
        kwargs: Dict[str, Any] = {}
        for name, text in variables.items():
            convert, what = self._converters[name]
            try:
                kwargs[name] = convert(text)
            except (ValueError, ArithmeticError):  # (decimal.InvalidOperation is an ArithmeticError)
                raise RPCError(INVALID_PARAMS, f"Invalid resource URI {uri!r}: {name}={text!r} is not {what}") \
                    from None
        if self.context_param:
            kwargs[self.context_param] = ctx
        try:
            value = finish(self.fn(**kwargs), ctx)
        except LookupError as exc:
            raise RPCError(RESOURCE_NOT_FOUND, f"Resource not found: {uri} ({exc})", {"uri": uri}) from None
        if type(value) is list and value and all(type(v) is dict and "uri" in v for v in value):
            result: Dict[str, Any] = {"contents": value}  # already ResourceContents: several (a directory, say)
        else:
            result = {"contents": [resource_contents(uri, value, self.mime_type)]}
        version = getattr(ctx, "protocol_version", None)  # a server Context has one; a bare RequestContext not
        if version is not None and knows(version, "cache_hints"):
            result["cacheScope"] = self.cache_scope
            if self.ttl_ms is not None:
                result["ttlMs"] = self.ttl_ms
        return result

    def __repr__(self) -> str:
        kind = "template" if self.is_template else "resource"
        return f"<ServerResource {kind} {self.uri!r} -> {self.fn.__qualname__}>"
