"""The protocol itself, as data: JSON-RPC messages, protocol versions, the stateless request metadata.

No I/O and no threads live here: nothing in this folder imports a socket,
``threading``, ``subprocess``, HTTP or WebSocket module, so each module can
be read (and tested) as a plain description of the wire.

- :mod:`~minimcp.protocol.jsonrpc`: the four message kinds, ``parse()`` and ``encode()``, error codes;
- :mod:`~minimcp.protocol.versions`: every protocol version and what each one knows;
- :mod:`~minimcp.protocol.stateless`: the stateless era's ``_meta`` names and ``RequestMeta``;
- :mod:`~minimcp.protocol.headers`: the stateless era's HTTP header codec (both sides use it);
- :mod:`~minimcp.protocol.skills`: the skills extension's names and ``SKILL.md`` frontmatter;
- :mod:`~minimcp.protocol.levels`: the log levels.
"""
