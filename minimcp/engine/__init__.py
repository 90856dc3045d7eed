"""The engine client and server share: one JSON-RPC connection served by threads.

It knows no MCP method beyond the utilities every version has (ping, cancellation,
progress), and imports no server, client, transport or HTTP module.

- :mod:`~minimcp.engine.session`: :class:`~minimcp.engine.session.Session`, and
  :func:`~minimcp.engine.session.dispatch`, the one way a request is answered;
- :mod:`~minimcp.engine.middleware`: what wraps every request answered or sent;
- :mod:`~minimcp.engine.reading`: who reads a session's stream (four ways, one interface);
- :mod:`~minimcp.engine.inflight`: the requests in flight, both ways;
- :mod:`~minimcp.engine.threads`: starting, joining and pooling threads, and the dispatcher;
- :mod:`~minimcp.engine.transport`: the interface a transport implements.
"""
