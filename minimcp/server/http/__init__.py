"""The server's HTTP: a :class:`~minimcp.server.Server` served over Streamable HTTP as a WSGI app.

- :mod:`~minimcp.server.http.app`: :class:`MCPApp`, the WSGI application (POST, GET and
  DELETE of Streamable HTTP, both protocol eras, the sessions, the standalone GET stream);
- :mod:`~minimcp.server.http.sse`: the 2024-11-05 HTTP+SSE endpoints mounted beside it;
- :mod:`~minimcp.server.http.security`: Host and Origin checks, the ``auth`` hook;
- :mod:`~minimcp.server.http.replies`: statuses and JSON-RPC error bodies;
- :mod:`~minimcp.server.http.streams`: SSE response streams and the event store;
- :mod:`~minimcp.server.http.wsgiserver`, :mod:`~minimcp.server.http.handler`,
  :mod:`~minimcp.server.http.request`, :mod:`~minimcp.server.http.sockets`: the built-in
  threaded HTTP server;
- :mod:`~minimcp.server.http.django`: the app as a Django view (imported only by a Django project).

The names below are what an application imports::

    from minimcp.server.http import MCPApp, bearer_token_auth
"""

from .app import MCPApp
from .replies import JSON_HEADERS, SSE_HEADERS
from .security import LOCAL_HOSTS, Unauthorized, bearer_token_auth
from .streams import EventStore, MemoryEventStore

__all__ = ["MCPApp", "Unauthorized", "bearer_token_auth", "EventStore", "MemoryEventStore",
           "LOCAL_HOSTS", "JSON_HEADERS", "SSE_HEADERS"]
