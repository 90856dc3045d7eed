"""What either end of a TCP connection asks of a socket without reading from it.

The client's kept-alive POST connections (:mod:`minimcp.transports.http.direct`) and the
built-in HTTP server (:mod:`minimcp.server.http.sockets`) both need to know whether the peer
closed a connection that should have nothing to read.
"""

import select
import socket


def readable(sock: socket.socket) -> bool:
    """True when ``sock`` has bytes, an end of stream or a reset to read now (one poll, no wait);
    True as well for a socket that is closed already."""
    try:
        if hasattr(select, "poll"):  # select() fails on descriptors past 1023
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True
