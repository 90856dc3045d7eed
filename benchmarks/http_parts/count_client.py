"""A client that makes a fixed number of calls and exits: what ``instructions_client.py`` counts.

    python benchmarks/http_parts/count_client.py raw|minimcp URL WIRE N

``raw`` is ``load.RawConnection`` (``http.client``, one keep-alive connection), ``minimcp``
is ``minimcp.connect(URL, protocol=WIRE)`` and ``call_tool``, public API only. Both connect
(the handshake on 2025-11-25), make one ``tools/call`` echo, then N more, close (DELETE the
session, if any) and print how many of the N answered right.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    kind, url, wire, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if kind == "raw":
        from load import RawConnection

        connection = RawConnection(url, wire, "hello")
        connection.start()  # (its one call)
        call, close = connection.call, connection.close
    else:
        import minimcp

        client = minimcp.connect(url, protocol=wire)

        def call():
            return client.call_tool("echo", {"text": "hello"}).text == "hello"
        call()
        close = client.close
    answered = sum(call() for _ in range(calls))
    close()
    print(answered, flush=True)


main()
