"""A Flask site with an MCP server mounted the WSGI way (werkzeug's DispatcherMiddleware).

    cd tests/servers && gunicorn -k gthread flask_app:site

The same server is mounted twice, at ``/mcp`` and at ``/tools``, with the
defaults: a mounted app serves its endpoint at the mount point.
"""

from flask import Flask
from mounted_server import server
from werkzeug.middleware.dispatcher import DispatcherMiddleware


def make_site():
    """The Flask site with the server mounted at /mcp and /tools; returns (site, the MCP app)."""
    flask_app = Flask(__name__)

    @flask_app.route("/")
    def index() -> str:
        return "the Flask site"

    mcp_app = server.wsgi_app()
    return DispatcherMiddleware(flask_app, {"/mcp": mcp_app, "/tools": mcp_app}), mcp_app


site, _ = make_site()  # for gunicorn
