"""Prompts on the server side: message templates the user picks (say, as slash commands).

spec server/prompts. The function's parameters are the prompt's
arguments (strings on the wire; converted to an annotated ``int``,
``float``, ``bool``, ``datetime``, ``UUID`` ...: ``resources.text_reader``),
required unless they have a default. It may return:

- a ``str``: one user message;
- a list of ``str``, content helpers (``Image``...), ``Message`` objects or
  ``{"role": ..., "content": ...}`` dicts: one message each (a bare string
  or helper is a user message).
"""

import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..engine.inflight import RequestContext
from ..errors import RPCError
from ..protocol.jsonrpc import INVALID_PARAMS
from ..protocol.versions import strip
from .content import Message, block_for_version
from .coroutines import finish
from .docstrings import parse_docstring
from .resources import text_reader
from .schema import is_context, type_hints


class ServerPrompt:
    """A registered prompt: its arguments, its definition, and how to render it."""

    #: OAuth scopes a caller needs (``add_prompt(scopes=…)``; checked before ``get``).
    scopes: Tuple[Any, ...] = ()

    def __init__(self, fn: Callable[..., Any], name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, icons: Optional[List[Dict[str, Any]]] = None,
                 meta: Optional[Dict[str, Any]] = None) -> None:
        self.fn = fn
        self.name: str = name or fn.__name__
        hints = type_hints(fn)  # as written, on every Python (3.9/3.10 add Optional[] for a None default)
        code = fn.__code__
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        defaults = set(names[code.co_argcount - len(fn.__defaults__ or ()):code.co_argcount])
        defaults.update(fn.__kwdefaults__ or {})
        doc, param_docs = parse_docstring(fn.__doc__)
        self.context_param: Optional[str] = None
        self.arguments: List[Dict[str, Any]] = []
        self._converters: Dict[str, Tuple[Callable[..., Any], str]] = {}
        for arg in names:
            hint = hints.get(arg, str)
            if arg == "ctx" or is_context(hint, (RequestContext,)):
                self.context_param = arg
                continue
            entry: Dict[str, Any] = {"name": arg}
            base = hint
            if typing.get_origin(hint) is typing.Annotated:
                base = typing.get_args(hint)[0]
                text = next((m for m in typing.get_args(hint)[1:] if isinstance(m, str)), None)
                if text:
                    entry["description"] = text
            if "description" not in entry and arg in param_docs:
                entry["description"] = param_docs[arg]
            entry["required"] = arg not in defaults
            self.arguments.append(entry)
            self._converters[arg] = text_reader(base)
        definition: Dict[str, Any] = {"name": self.name}
        if title:
            definition["title"] = title
        description = description if description is not None else doc
        if description:
            definition["description"] = description
        if self.arguments:
            definition["arguments"] = self.arguments
        if icons:
            definition["icons"] = icons
        if meta:
            definition["_meta"] = meta
        self.definition = definition

    def definition_for(self, version: str) -> Dict[str, Any]:
        """The definition without the fields ``version`` does not know (``prompt.*`` in ``versions.FEATURES``)."""
        return strip(self.definition, "prompt", version)

    def get(self, arguments: Dict[str, Any], ctx: RequestContext, version: str) -> Dict[str, Any]:
        """Render the prompt: the ``GetPromptResult`` for ``prompts/get``.

        Raises:
            RPCError: ``-32602`` for a missing required, unknown, or unconvertible argument.
        """
        known = {a["name"] for a in self.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise RPCError(INVALID_PARAMS, f"Prompt {self.name!r} has no argument(s) {unknown}; "
                                           f"it takes {sorted(known) or 'none'}")
        missing = [a["name"] for a in self.arguments if a["required"] and a["name"] not in arguments]
        if missing:
            raise RPCError(INVALID_PARAMS, f"Prompt {self.name!r} is missing required argument(s) {missing}")
        kwargs: Dict[str, Any] = {}
        for name, value in arguments.items():
            convert, what = self._converters[name]
            try:
                kwargs[name] = convert(value) if isinstance(value, str) else value
            except (ValueError, ArithmeticError):  # (decimal.InvalidOperation is an ArithmeticError)
                raise RPCError(INVALID_PARAMS,
                               f"Prompt {self.name!r}: argument {name!r}={value!r} is not {what}") from None
        if self.context_param:
            kwargs[self.context_param] = ctx
        value = finish(self.fn(**kwargs), ctx)
        items = value if isinstance(value, list) else [value]
        messages = [_message(item) for item in items]
        for message in messages:
            message["content"] = block_for_version(message["content"], version)
        result: Dict[str, Any] = {"messages": messages}
        if "description" in self.definition:
            result["description"] = self.definition["description"]
        return result

    def __repr__(self) -> str:
        return f"<ServerPrompt {self.name!r} -> {self.fn.__qualname__}>"


def _message(item: Any) -> Dict[str, Any]:
    if isinstance(item, Message):
        return item.to_dict()
    if type(item) is dict and "role" in item:
        return Message(item["content"], item["role"]).to_dict()
    return Message(item).to_dict()
