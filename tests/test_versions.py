"""The protocol-version rules (minimcp.protocol.versions) against what each version is sent.

The expected field sets below are written out from each version's schema.ts, not derived
from FEATURES, so a wrong row in the table fails here. What a result or a content block
becomes per version is pinned in test_server_features.py (test_wire_shapes_per_version,
test_content_an_old_version_lacks_becomes_text); this file covers the definitions, the
table's own rules, and the 2026-07-28 cache hints of a resource read.
"""

import pytest

from minimcp import Server
from minimcp.engine.session import Session
from minimcp.protocol import versions
from minimcp.protocol.versions import FEATURES, HANDSHAKE_VERSIONS, STATELESS_VERSION, knows, strip
from minimcp.transports import memory

ICONS = [{"src": "https://example.com/i.png", "mimeType": "image/png"}]

#: version -> the keys a tool / resource / prompt definition with every optional field has there.
EXPECTED = {
    "2024-11-05": {"tool": {"name", "description", "inputSchema"},
                   "resource": {"uri", "name", "description", "mimeType"},
                   "prompt": {"name", "description", "arguments"}},
    "2025-03-26": {"tool": {"name", "description", "inputSchema", "annotations"},
                   "resource": {"uri", "name", "description", "mimeType"},
                   "prompt": {"name", "description", "arguments"}},
    "2025-06-18": {"tool": {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"},
                   "resource": {"uri", "name", "title", "description", "mimeType", "_meta"},
                   "prompt": {"name", "title", "description", "arguments", "_meta"}},
}
EXPECTED["2025-11-25"] = {kind: keys | {"icons"} for kind, keys in EXPECTED["2025-06-18"].items()}
EXPECTED[STATELESS_VERSION] = EXPECTED["2025-11-25"]

STATELESS_META = {"io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}}


def make_server() -> Server:
    """One tool, resource and prompt with every optional field set."""
    server = Server("everything-set", cache_ttl_ms=7000)

    @server.tool(title="Add", icons=ICONS, meta={"x": 1}, annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.resource("notes://today", title="Today", icons=ICONS, meta={"x": 1}, mime_type="text/plain")
    def today() -> str:
        """Today's note."""
        return "buy milk"

    @server.resource("notes://shared", cache_scope="public")
    def shared() -> str:
        return "for everyone"

    @server.resource("notes://hot", ttl_ms=100)
    def hot() -> str:
        return "changes often"

    @server.prompt(title="Greet", icons=ICONS, meta={"x": 1})
    def greet(who: str) -> str:
        """Greet someone."""
        return f"Hello {who}"

    return server


def open_session(server: Server) -> Session:
    client_end, server_end = memory.pair()
    served = server.serve(server_end)
    client_end.on_close = served.session.close
    session = Session(client_end, timeout=10)
    session.start()
    return session


def listed(version: str) -> dict:
    """kind -> the first definition each list method sends a client of ``version``."""
    session = open_session(make_server())
    try:
        if version == STATELESS_VERSION:
            def ask(method):
                return session.request(method, {"_meta": STATELESS_META})
        else:
            session.request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {}})
            session.notify("notifications/initialized")
            ask = session.request
        return {"tool": ask("tools/list")["tools"][0], "resource": ask("resources/list")["resources"][0],
                "prompt": ask("prompts/list")["prompts"][0]}
    finally:
        session.close()


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS + (STATELESS_VERSION,))
def test_each_version_is_sent_the_definition_fields_its_schema_has(version):
    """spec schema.ts of each version: annotations 2025-03-26; title, outputSchema, _meta 2025-06-18;
    icons 2025-11-25. strip() is what decides it, so it agrees with the wire."""
    got = listed(version)
    server = make_server()
    mine = {"tool": server.tools()[0], "resource": server.resources()[0], "prompt": server.prompts()[0]}
    for kind, expected in EXPECTED[version].items():
        assert set(got[kind]) == expected, kind
        assert set(strip(mine[kind].definition, kind, version)) == expected, kind


@pytest.mark.parametrize("version, has, lacks", [
    ("2024-11-05", {"handshake"}, {"batches", "completions", "tool.annotations", "content.audio"}),
    ("2025-03-26", {"batches", "completions", "tool.annotations", "content.audio", "progress_message"},
     {"server_title", "elicitation", "structured_content", "content.resource_link"}),
    ("2025-06-18", {"server_title", "elicitation", "structured_content", "content.resource_link", "content._meta"},
     {"batches", "sse_priming", "elicitation_mode", "tool.icons"}),
    ("2025-11-25", {"handshake", "sse_priming", "elicitation_mode", "sampling_tools", "tool.icons"},
     {"stateless", "cache_hints"}),
    (STATELESS_VERSION, {"stateless", "cache_hints", "tool.icons", "structured_content"}, {"handshake", "batches"}),
])
def test_knows_per_version(version, has, lacks):
    """What each version's changelog added and what it still lacks, including the two features
    with an end: batches (2025-03-26 only) and the handshake (gone in 2026-07-28)."""
    assert [feature for feature in sorted(has) if not knows(version, feature)] == []
    assert [feature for feature in sorted(lacks) if knows(version, feature)] == []


def test_knows_fails_loudly_on_a_feature_it_does_not_have():
    with pytest.raises(KeyError):
        knows("2025-11-25", "tool.titel")


def test_strip_keeps_unlisted_fields_and_returns_the_same_dict_when_nothing_goes():
    definition = {"name": "t", "inputSchema": {}, "x-vendor": 1}
    assert strip(definition, "tool", "2024-11-05") is definition
    full = dict(definition, title="T")
    assert strip(full, "tool", "2025-11-25") is full
    assert strip(full, "tool", "2024-11-05") == definition


def test_strip_honours_a_field_that_a_later_version_removed(monkeypatch):
    """FEATURES rows may end; strip() asks knows(), so a field gone in a version is left out there."""
    monkeypatch.setitem(FEATURES, "tool.retired", ("2025-03-26", "2025-11-25"))
    versions._lacking.cache_clear()  # strip caches what each (kind, version) lacks
    try:
        definition = {"name": "t", "retired": True}
        assert "retired" not in strip(definition, "tool", "2024-11-05")
        assert "retired" in strip(definition, "tool", "2025-06-18")
        assert "retired" not in strip(definition, "tool", "2025-11-25")
    finally:
        monkeypatch.undo()
        versions._lacking.cache_clear()


# -- 2026-07-28 cache hints of a resource read ----------------------------------------------------


@pytest.mark.parametrize("uri, hints", [
    ("notes://today", (7000, "private")),   # a read is private by default, whatever the server's scope
    ("notes://shared", (7000, "public")),   # a scope given without a ttl is kept
    ("notes://hot", (100, "private")),
])
def test_a_resource_read_carries_its_own_scope(uri, hints):
    """spec 2026-07-28 basic, caching hints: resources/read results carry ttlMs and cacheScope;
    lists carry the server's."""
    session = open_session(make_server())
    try:
        read = session.request("resources/read", {"uri": uri, "_meta": STATELESS_META})
        listed = session.request("resources/list", {"_meta": STATELESS_META})
    finally:
        session.close()
    assert (read["ttlMs"], read["cacheScope"]) == hints
    assert (listed["ttlMs"], listed["cacheScope"]) == (7000, "public")


def test_a_handshake_read_has_no_cache_hints():
    session = open_session(make_server())
    try:
        session.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})
        session.notify("notifications/initialized")
        read = session.request("resources/read", {"uri": "notes://hot"})
    finally:
        session.close()
    assert set(read) == {"contents"}
