"""Every protocol version minimcp speaks, and what each one knows: the one place for "since" rules.

A version is a date, so versions compare as strings. Code elsewhere never
compares them itself; it asks ``knows(version, feature)``, and a definition
or result is cut down for an older client with :func:`strip`. A new spec
revision is one line in :data:`FEATURES` (spec: each version's changelog
page) and, if it changes the wire, one constant here.

What an older client is sent goes through two functions: :func:`strip`
here for tool, resource and prompt definitions (fields are only ever
left out), and :func:`minimcp.server.content.result_for_version` for
results and content blocks (a block an old client lacks is rewritten as
text, which is content's business) — both driven by :func:`knows`.
"""

from __future__ import annotations

import functools

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, FrozenSet, Optional, Tuple

#: This package's version (``minimcp.__version__``; what ``clientInfo`` says by default).
SDK_VERSION = "0.1.0"

#: The newest protocol version with the initialize handshake; what the client offers there.
PROTOCOL_VERSION = "2025-11-25"

#: Every handshake version minimcp speaks, oldest first.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

#: The stateless protocol (no handshake: every request carries its version in ``_meta``).
STATELESS_VERSION = "2026-07-28"

#: What a Streamable HTTP request without an MCP-Protocol-Version header speaks
#: (spec 2025-06-18 basic/transports: the server SHOULD assume 2025-03-26).
HTTP_DEFAULT_VERSION = "2025-03-26"

#: Newest first: what server/discover lists, and what -32022 says is supported.
SUPPORTED_VERSIONS = (STATELESS_VERSION,) + tuple(reversed(HANDSHAKE_VERSIONS))

#: feature -> (the first version that has it, the first that no longer does, or None).
FEATURES: Dict[str, Tuple[str, Optional[str]]] = {
    # the wire
    "batches": ("2025-03-26", "2025-06-18"),            # JSON-RPC batches: 2025-03-26 alone
    "handshake": ("2024-11-05", "2026-07-28"),          # initialize / initialized / ping
    "stateless": ("2026-07-28", None),                  # _meta on every request, server/discover
    "sse_priming": ("2025-11-25", None),                # SSE event ids + retry; a server may close a stream
    # what a server declares and says about itself
    "completions": ("2025-03-26", None),                # the completions capability
    "server_title": ("2025-06-18", None),               # serverInfo.title
    "elicitation": ("2025-06-18", None),
    "elicitation_mode": ("2025-11-25", None),           # elicitation/create "mode", URL elicitation
    "sampling_tools": ("2025-11-25", None),
    # fields of tool, resource and prompt definitions
    "tool.annotations": ("2025-03-26", None),
    "tool.title": ("2025-06-18", None),
    "tool.outputSchema": ("2025-06-18", None),
    "tool._meta": ("2025-06-18", None),
    "tool.icons": ("2025-11-25", None),
    "tool.execution": ("2025-11-25", None),
    "resource.title": ("2025-06-18", None),
    "resource._meta": ("2025-06-18", None),
    "resource.icons": ("2025-11-25", None),
    "prompt.title": ("2025-06-18", None),
    "prompt._meta": ("2025-06-18", None),
    "prompt.icons": ("2025-11-25", None),
    # results and content
    "structured_content": ("2025-06-18", None),         # CallToolResult.structuredContent
    "content.audio": ("2025-03-26", None),
    "content.resource_link": ("2025-06-18", None),
    "content._meta": ("2025-06-18", None),              # _meta and annotations.lastModified on blocks
    "progress_message": ("2025-03-26", None),           # notifications/progress "message"
    "cache_hints": ("2026-07-28", None),                # ttlMs + cacheScope on list, read, discover results
}


def knows(version: str, feature: str) -> bool:
    """True if protocol ``version`` has ``feature`` (a key of :data:`FEATURES`).

    Raises:
        KeyError: ``feature`` is not in the table (a typo should fail loudly).
    """
    since, until = FEATURES[feature]
    return since <= version and (until is None or version < until)


@functools.lru_cache(maxsize=64)  # on the path of every tools/call: worked out once per version
def knows_all(version: str, features: Tuple[str, ...]) -> bool:
    """True if ``version`` has every one of ``features``."""
    return all(knows(version, feature) for feature in features)


def strip(definition: Dict[str, Any], kind: str, version: str) -> Dict[str, Any]:
    """``definition`` (of a ``tool``, ``resource`` or ``prompt``) without the fields ``version``
    does not know (the ``kind.field`` rows of :data:`FEATURES`). Fields the table does not list
    are kept; the dict itself is returned when nothing needs to go (the usual case)."""
    lacking = _lacking(kind, version)
    if lacking.isdisjoint(definition):
        return definition
    return {key: value for key, value in definition.items() if key not in lacking}


@functools.lru_cache(maxsize=64)  # a few kinds times a few versions; bounded for odd strings
def _lacking(kind: str, version: str) -> FrozenSet[str]:
    """The fields of a ``kind`` definition that ``version`` does not know."""
    prefix = kind + "."
    return frozenset(name[len(prefix):] for name in FEATURES
                     if name.startswith(prefix) and not knows(version, name))
