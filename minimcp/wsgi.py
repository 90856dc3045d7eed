"""Old path of :mod:`minimcp.http.app` and friends: what users imported from ``minimcp.wsgi``
(``bearer_token_auth``, ``Unauthorized``, the event stores to subclass) keeps working here."""

from .http.app import MCPApp
from .http.replies import JSON_HEADERS, SSE_HEADERS
from .http.security import LOCAL_HOSTS, Unauthorized, bearer_token_auth
from .http.streams import EventStore, MemoryEventStore

__all__ = ["MCPApp", "Unauthorized", "bearer_token_auth", "EventStore", "MemoryEventStore",
           "LOCAL_HOSTS", "JSON_HEADERS", "SSE_HEADERS"]
