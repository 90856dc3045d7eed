"""gunicorn settings for a minimcp app behind nginx (see nginx.conf beside this file).

    gunicorn -c examples/deploy/gunicorn.conf.py 'examples.http_server:sessionless_app'

nginx takes the clients: it holds idle and slow connections (thousands, in one
event loop) and hands gunicorn only whole requests, so gunicorn's threads serve
MCP calls instead of waiting on sockets. Alone on a public port, gthread gunicorn
is stalled by a few dozen connections that send nothing.

An app with sessions (``wsgi_app()``, handshake-era clients) on several workers: one
gunicorn per worker, each with ``MCP_WORKERS=1`` and a ``MCP_BIND`` of its own, behind
haproxy.cfg or nginx-sticky.conf (see ``workers`` below).
"""

import os

# Where nginx reaches gunicorn: loopback only (or a unix socket: "unix:/run/mcp.sock").
bind = os.environ.get("MCP_BIND", "127.0.0.1:8000")

# Threads, not processes, serve the calls: a call that waits on the client (an SSE
# stream, a GET stream, a tool that asks for sampling) holds one thread, not a process.
worker_class = "gthread"
threads = int(os.environ.get("MCP_THREADS", "16"))
# The sessionless app (and every 2026-07-28 request) may use several workers, one per
# core. An app with sessions keeps each one in the memory of one worker process, and
# no proxy can choose among the processes behind one port: give it one worker
# (MCP_WORKERS=1); for more, one such gunicorn per port, behind haproxy.cfg or
# nginx-sticky.conf (beside this file), which send each session to its worker.
workers = int(os.environ.get("MCP_WORKERS", "2"))

# Longer than nginx's upstream keepalive_timeout (60 s), so that nginx, not gunicorn,
# closes an idle upstream connection: no request is ever sent on a closing socket.
keepalive = 75

# On SIGTERM, requests in flight get this long to finish; an SSE stream whose client
# has left ends within a second (minimcp polls its socket), one still listening is
# cut at the deadline, and its client reconnects. A stop takes seconds, not 30.
graceful_timeout = int(os.environ.get("MCP_GRACEFUL_TIMEOUT", "5"))
