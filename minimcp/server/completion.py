"""Completers: suggestions for a prompt argument or a resource-template variable.

spec server/utilities/completion. A ``completion/complete`` request names a
reference (``ref/prompt`` by name, ``ref/resource`` by URI or template) and
one argument; :class:`Completers` finds the function registered for that
pair. The connection calls it and caps what goes back at 100 values.
"""

from typing import Any, Callable, Container, Dict, Optional, Tuple

from ..errors import RPCError
from ..protocol.jsonrpc import INVALID_PARAMS

#: (reference type, prompt name or resource URI, argument name)
Key = Tuple[str, str, str]


class Completers:
    """The completers a server has, by reference and argument."""

    def __init__(self) -> None:
        self._by_key: Dict[Key, Callable[..., Any]] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def add(self, fn: Callable[..., Any], prompt: Optional[str], resource: Optional[str], argument: str) -> None:
        """Register ``fn`` for ``argument`` of ``prompt`` or of ``resource`` (exactly one of them).

        A completer taking one parameter gets the partial value only; with
        two, also the arguments already chosen.

        Raises:
            TypeError: both or neither of ``prompt`` and ``resource`` were given.
        """
        if (prompt is None) == (resource is None):
            raise TypeError("name exactly one of prompt= or resource=")
        key = ("ref/prompt", prompt, argument) if prompt is not None else ("ref/resource", resource, argument)
        takes_context = getattr(getattr(fn, "__code__", None), "co_argcount", 1) >= 2
        self._by_key[key] = fn if takes_context else (lambda value, context: fn(value))  # type: ignore

    def find(self, ref: Dict[str, Any], argument: str, prompts: Container[str], uris: Container[str]) -> Optional[Callable[..., Any]]:
        """The completer for a ``completion/complete`` reference and argument, or None.

        ``prompts`` and ``uris`` are the server's prompt names and resource
        URIs / templates: a reference to anything else is an error.

        Raises:
            RPCError: ``-32602`` when the reference names no prompt or resource.
        """
        kind = ref.get("type")
        key = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        if kind == "ref/prompt" and key not in prompts:
            raise RPCError(INVALID_PARAMS, f"Unknown prompt: {key!r}")
        if kind == "ref/resource" and key not in uris:
            raise RPCError(INVALID_PARAMS, f"Unknown resource or template: {key!r}")
        if kind not in ("ref/prompt", "ref/resource"):
            raise RPCError(INVALID_PARAMS, f"Unknown reference type {kind!r}; use ref/prompt or ref/resource")
        return self._by_key.get((kind, key, argument))  # type: ignore[arg-type]
