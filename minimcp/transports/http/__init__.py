"""The client's HTTP transports.

- :mod:`~minimcp.transports.http.streamable`: Streamable HTTP (:class:`StreamableHTTPTransport`);
- :mod:`~minimcp.transports.http.direct`: its POST on kept-alive ``http.client`` connections;
- :mod:`~minimcp.transports.http.responses`: reading, aborting and closing ``requests`` responses;
- :mod:`~minimcp.transports.http.sse`: the 2024-11-05 HTTP+SSE transport (:class:`SSETransport`).

``requests`` is imported by these modules, so nothing here is loaded until a client connects
over HTTP (:func:`minimcp.connect` picks the transport from the URL).
"""
