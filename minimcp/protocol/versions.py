"""The protocol versions minimcp speaks (spec: each version's changelog page)."""

#: The newest protocol version with the initialize handshake; what the client offers there.
PROTOCOL_VERSION = "2025-11-25"

#: Every handshake version minimcp speaks, oldest first.
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
