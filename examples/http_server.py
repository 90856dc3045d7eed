"""The weather server over Streamable HTTP: built-in server, or any WSGI server.

    python examples/http_server.py                 # http://127.0.0.1:8000/mcp
    gunicorn -c examples/deploy/gunicorn.conf.py 'examples.http_server:sessionless_app'

In production, nginx sits in front of gunicorn: examples/deploy/nginx.conf.

With sessions (``app``), a client's requests must reach the worker that
holds its session: behind several workers, one process per port behind
examples/deploy/haproxy.cfg or nginx-sticky.conf (hashing the ``Mcp-Session-Id``
header does not stick: ``initialize`` has no id yet). ``sessionless_app`` keeps
no sessions, so any worker can answer any request (server-to-client requests
then work only inside a call, on its SSE stream).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from weather_server import server  # noqa: E402  (the same tools as over stdio)

app = server.wsgi_app()
sessionless_app = server.wsgi_app(sessions=False)

if __name__ == "__main__":
    server.run("http", port=int(os.environ.get("PORT", "8000")))
