"""HTTP headers that mirror the body, 2026-07-28 (spec basic/transports "Streamable HTTP").

A 2026-07-28 POST repeats what a load balancer needs to route it without
reading the body: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, and
``Mcp-Param-*`` for tool arguments marked ``x-mcp-header`` in the tool's
schema. The client encodes them (:func:`encode_header_value`); the server
checks that they agree with the body (:func:`check_headers`).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (a stdio server never needs it)
if TYPE_CHECKING:  # annotations only: a server's tools import this module as they are registered
    from typing import Any, Dict, Optional

from .stateless import NAME_FIELDS, VERSION_KEY

_TOKEN_CHARS = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def encode_header_value(value: Any) -> str:
    """A header value for a body value, the same text the body's JSON carries for it: text as
    is when it is plain visible ASCII, else ``=?base64?...?=``; integers in decimal; booleans
    ``true``/``false``; an Enum member as its value (a ``(str, Enum)`` member is ``red``, as in
    the body, not ``Color.RED``); a datetime, UUID, bytes … as their JSON text."""
    enum = sys.modules.get("enum")  # (an Enum member exists only once enum is loaded)
    if enum is not None and isinstance(value, enum.Enum):
        value = value.value  # (first: an IntEnum is an int, a (str, Enum) a str, whose str() is not the body's)
    if not isinstance(value, (str, int, float)) and value is not None:  # a datetime, UUID, bytes …
        from .jsonrpc import json_form

        try:
            value = json_form(value)  # the text the body carries for it
        except (TypeError, ValueError):
            pass  # no JSON form: the body cannot carry it either, and says so
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)  # (json's own spelling: a subclass's str() may differ)
    if isinstance(value, float):
        text = float.__repr__(value)  # 3.0 is "3.0" in the body and here
    elif isinstance(value, str):
        text = str.__str__(value)  # (a subclass's content, as json writes it)
    else:
        text = str(value)  # None, and what has no JSON form: as before
    # plain: visible ASCII and space, 0x20 to 0x7E (isprintable() refuses control characters and DEL)
    plain = (text and text == text.strip() and text.isascii() and text.isprintable()
             and not (text.startswith("=?base64?") and text.endswith("?=")))
    if plain:
        return text
    import base64  # (here: only a value that is not plain needs it, and a server imports this module)

    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str) -> str:
    """The body value a header carries (``=?base64?...?=`` decoded, outer spaces ignored).

    Raises:
        ValueError: the base64 form is malformed.
    """
    value = value.strip()
    if value.startswith("=?base64?") and value.endswith("?="):
        import base64  # (here: see encode_header_value)

        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    return value


def header_params(schema: Dict[str, Any]) -> Optional[Dict[str, str]]:
    """A tool's ``x-mcp-header`` annotations: argument -> header name (``{}`` when none).

    Returns None when the annotations break the rules (a client MUST then
    drop the tool): a header name that is not an HTTP token, used twice, or
    on a property that is not a top-level string, integer or boolean.
    """
    found: Dict[str, str] = {}
    for name, prop in (schema.get("properties") or {}).items():
        header = prop.get("x-mcp-header") if isinstance(prop, dict) else None
        if header is None:
            continue
        if (not isinstance(header, str) or not header or set(header) - _TOKEN_CHARS
                or prop.get("type") not in ("string", "integer", "boolean")
                or header.lower() in (h.lower() for h in found.values())):
            return None
        found[name] = header
    return found


def _same(header: str, value: Any) -> bool:
    """Does a (decoded) header value carry this argument? Integers compare as numbers."""
    if value is True or value is False:
        return header == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(header) == value
        except ValueError:
            return False
    return header == str(value)


def check_headers(message: Any, headers: Dict[str, str], param_headers: Optional[Dict[str, str]]) -> Optional[str]:
    """Say what is wrong with the headers of a stateless-era POST, or None (they mirror the body).
    ``param_headers``: the called tool's ``x-mcp-header`` annotations (:func:`header_params` of its
    input schema), for a ``tools/call``."""
    params = message.params or {}
    meta = params.get("_meta")
    version = meta.get(VERSION_KEY) if type(meta) is dict else None
    if version is not None and headers.get("mcp-protocol-version", "").strip() != version:
        return f"MCP-Protocol-Version header must be {version!r}"  # (no version in _meta: -32602 later)
    if not hasattr(message, "id"):
        return None  # notifications: no header rules are defined
    if headers.get("mcp-method", "").strip() != message.method:
        return f"Mcp-Method header must be {message.method!r}"
    try:
        if message.method in NAME_FIELDS:
            expected = params.get(NAME_FIELDS[message.method])
            name = headers.get("mcp-name", "").strip()
            if name.startswith("=?") and name.endswith("?="):  # (else the value is as sent)
                name = decode_header_value(name)
            if name != expected:
                return f"Mcp-Name header must be {expected!r}"
        if message.method == "tools/call" and param_headers:
            arguments = params.get("arguments") or {}
            for argument, header in param_headers.items():
                given = headers.get("mcp-param-" + header.lower())
                value = arguments.get(argument)
                if value is None:
                    if given is not None:
                        return f"Mcp-Param-{header} sent without the argument {argument!r}"
                    continue
                if given is None or not _same(decode_header_value(given), value):
                    return f"Mcp-Param-{header} header must carry the argument {argument!r}"
    except (ValueError, UnicodeError):
        return "a header's =?base64?...?= value is not valid base64"
    return None
