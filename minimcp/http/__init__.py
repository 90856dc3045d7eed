"""HTTP, both sides of the wire in one place.

Server side: :mod:`~minimcp.http.app` (the WSGI application: Streamable HTTP and
the 2024-11-05 HTTP+SSE endpoints), :mod:`~minimcp.http.streams` (SSE streams and
the event store), :mod:`~minimcp.http.wsgiserver` (the built-in threaded server).
Client side: :mod:`~minimcp.http.client` (Streamable HTTP) and
:mod:`~minimcp.http.legacy_client` (2024-11-05 HTTP+SSE).
"""
