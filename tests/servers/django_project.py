"""A Django project in one file: its URLconf (the test configures the settings).

The MCP endpoint is one line of ``urlpatterns``, as a project would write it:
``path("mcp", include(mcp_urls(server)))``. :func:`mount` builds it with a
fresh app, so each test can close the app it used.
"""

from django.http import HttpResponse
from django.urls import include, path
from mounted_server import server

from minimcp.server.http.django import mcp_urls


def index(request):
    return HttpResponse("the Django site")


urlpatterns: list = []


def mount():
    """Put the MCP endpoint at /mcp (and the site at /); return the app behind it."""
    patterns = mcp_urls(server)
    urlpatterns[:] = [path("mcp", include(patterns)), path("", index)]
    return patterns[0].callback.mcp_app
