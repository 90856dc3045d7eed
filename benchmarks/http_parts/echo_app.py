"""minimcp's contender: the echo tool, served over HTTP the ways examples/http_server.py shows.

    python benchmarks/http_parts/echo_app.py PORT       # (a) the built-in server, with sessions
    gunicorn -k gthread -w 2 --threads 16 --chdir benchmarks/http_parts 'echo_app:sessionless_app'   # (b)

Public API only, the same tool as ``stdio_parts/minimcp_server.py``.
"""

import sys

from minimcp import Server

server = Server("bench-echo")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


app = server.wsgi_app()
try:
    sessionless_app = server.wsgi_app(sessions=False)
except TypeError:  # a tree from before the flag's rename, measured with --baseline
    sessionless_app = server.wsgi_app(stateless=True)

if __name__ == "__main__":
    server.run("http", port=int(sys.argv[1]))
