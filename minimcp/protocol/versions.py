"""The protocol versions minimcp speaks (spec: each version's changelog page)."""

#: The newest protocol version with the initialize handshake; what the client offers there.
PROTOCOL_VERSION = "2025-11-25"

#: Every handshake version minimcp speaks, oldest first.
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")

#: The stateless protocol (no handshake: every request carries its version in ``_meta``).
MODERN_VERSION = "2026-07-28"

#: Newest first: what server/discover lists, and what -32022 says is supported.
SUPPORTED_VERSIONS = (MODERN_VERSION,) + tuple(reversed(LEGACY_VERSIONS))
