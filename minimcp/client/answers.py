"""What the client answers when the server asks: sampling, elicitation and roots.

A server asks with a request in the handshake era (spec client/sampling,
client/elicitation, client/roots) and with an ``input_required`` result in
2026-07-28; either way the user's handler answers, through one of these
functions (``Client.capabilities()`` declares which the client can answer).
"""

import os
from typing import Any, Callable, Dict, Optional, Sequence, Union

from ..errors import RPCError
from ..protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

Handler = Optional[Callable[[Dict[str, Any]], Dict[str, Any]]]

#: One root: a path, a ``file://`` URI, or a ``{"uri", "name"}`` dict.
Root = Union[str, "os.PathLike[str]", Dict[str, Any]]
#: What ``roots=`` takes: the roots, or a callable returning them (asked at each ``roots/list``).
Roots = Union[Sequence[Root], Callable[[], Sequence[Root]]]


def sample(handler: Handler, params: Dict[str, Any]) -> Dict[str, Any]:
    """Answer ``sampling/createMessage`` with ``handler(params)``.

    Raises:
        RPCError: METHOD_NOT_FOUND, this client has no sampling handler.
    """
    if handler is None:
        raise RPCError(METHOD_NOT_FOUND, "this client does not support sampling")
    return handler(params)


def elicit(handler: Handler, modes: Sequence[str], params: Dict[str, Any]) -> Dict[str, Any]:
    """Answer ``elicitation/create`` with ``handler(params)``; an accepted form gets the
    schema's defaults for the fields it left out.

    Raises:
        RPCError: METHOD_NOT_FOUND with no handler, INVALID_PARAMS for a mode it cannot do.
    """
    mode = params.get("mode", "form")
    if handler is None or mode not in modes:
        raise RPCError(METHOD_NOT_FOUND if handler is None else INVALID_PARAMS,
                       f"this client does not support {mode} elicitation")
    result = dict(handler(params))
    if result.get("action") == "accept" and mode == "form":
        result["content"] = apply_defaults(params.get("requestedSchema") or {}, result.get("content"))
    return result


def apply_defaults(schema: Dict[str, Any], content: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """Fill in the schema's ``default`` for fields an elicitation answer left out (2025-11-25)."""
    filled = dict(content or {})
    for name, prop in (schema.get("properties") or {}).items():
        if name not in filled and isinstance(prop, dict) and "default" in prop:
            filled[name] = prop["default"]
    return filled


def list_roots(roots: Optional[Roots]) -> Dict[str, Any]:
    """Answer ``roots/list``: ``roots`` is a list (or a callable returning one) of paths,
    URIs or ``{"uri", "name"}`` dicts.

    Raises:
        RPCError: METHOD_NOT_FOUND, this client offers no roots.
    """
    if roots is None:
        raise RPCError(METHOD_NOT_FOUND, "this client does not offer roots")
    return {"roots": [file_uri(root) for root in (roots() if callable(roots) else roots)]}


def file_uri(root: Root) -> Dict[str, Any]:
    """One root as the spec's ``{"uri", "name"}``: a path becomes an absolute ``file://`` URI."""
    if isinstance(root, dict):
        return root
    text = os.fspath(root)
    if "://" in text:
        return {"uri": text}
    path = os.path.abspath(text)
    return {"uri": "file://" + path, "name": os.path.basename(path) or path}
