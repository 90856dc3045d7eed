"""HTTP, both sides of the wire in one place.

Server side: :mod:`~minimcp.http.app` (the WSGI application, Streamable HTTP),
:mod:`~minimcp.http.legacy_app` (the 2024-11-05 HTTP+SSE endpoints mounted beside it),
:mod:`~minimcp.http.security` (Host/Origin checks, the ``auth`` hook),
:mod:`~minimcp.http.replies` (statuses and JSON-RPC error bodies),
:mod:`~minimcp.http.streams` (SSE streams and the event store),
:mod:`~minimcp.http.headers` (the 2026-07-28 header codec) and
:mod:`~minimcp.http.wsgiserver` (the built-in threaded server).
Client side: :mod:`~minimcp.http.client` (Streamable HTTP) and
:mod:`~minimcp.http.legacy_client` (2024-11-05 HTTP+SSE).
"""
