"""Django: the MCP endpoint as a view in a project's URLconf.

Django does not mount WSGI apps, so this adapter is a view that hands the
request to the server's :class:`~minimcp.server.http.app.MCPApp` and turns what it
answers into a Django response (streamed for SSE). Sessions, the GET stream
and the 2024-11-05 ``/sse`` endpoint work as they do on their own::

    # urls.py
    from django.urls import include, path
    from minimcp.server.http.django import mcp_urls
    from myproject.mcp import server

    urlpatterns = [path("mcp", include(mcp_urls(server)))]

The view is exempt from CSRF checks: MCP clients send no CSRF token; the
app's own ``Origin`` and ``Host`` checks (and ``auth=``) guard it instead.
Django is imported here only, by a project that has it.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.urls import re_path
from django.views.decorators.csrf import csrf_exempt

from .app import MCPApp

__all__ = ["mcp_view", "mcp_urls"]


def mcp_view(target: Any, **options: Any) -> Callable[..., HttpResponse]:
    """A Django view serving ``target`` (a :class:`~minimcp.Server`, or an app from
    ``server.wsgi_app(...)``; ``options`` go to ``wsgi_app`` for a server).

    The view answers at its own URL; a ``subpath`` keyword from the URL pattern
    (``"/sse"``, ``"/messages/"``) reaches the endpoints mounted beside it.
    """
    app = target if isinstance(target, MCPApp) else target.wsgi_app(**options)

    def view(request: HttpRequest, subpath: Optional[str] = None) -> HttpResponse:
        environ = dict(request.META)  # a WSGIRequest's META is the WSGI environ
        subpath = subpath or ""
        # WSGI's mount rule: SCRIPT_NAME is where the app lives, PATH_INFO what is below it.
        environ["SCRIPT_NAME"] = request.path[:len(request.path) - len(subpath)] if subpath else request.path
        environ["PATH_INFO"] = subpath
        environ["wsgi.input"] = request  # reads the body through Django's length-limited stream
        return _response(app, environ)

    exempt: Callable[..., HttpResponse] = csrf_exempt(view)  # @csrf_exempt, spelled so the view keeps its type
    exempt.mcp_app = app  # type: ignore[attr-defined]  # for close() at shutdown, and tests
    return exempt


def mcp_urls(target: Any, **options: Any) -> List[Any]:
    """URL patterns for ``path("mcp", include(mcp_urls(server)))``: the endpoint at the
    prefix, and what is below it (the 2024-11-05 ``/sse`` and ``/messages/``)."""
    return [re_path(r"^(?P<subpath>/.*)?$", mcp_view(target, **options))]


def _response(app: MCPApp, environ: Dict[str, Any]) -> HttpResponse:
    started: Dict[str, Any] = {}

    def start_response(status: str, headers: List[Any], exc_info: Any = None) -> Callable[[bytes], None]:
        started["status"], started["headers"] = status, headers
        return _no_write

    body = app(environ, start_response)
    chunks = iter(body)
    first: List[bytes] = []
    if "status" not in started:  # WSGI allows start_response at the first chunk
        first = [next(chunks, b"")]
    code, _, reason = started["status"].partition(" ")
    if type(body) is list:  # a whole answer (JSON, 202, an error): Django sets its length
        response: HttpResponse = HttpResponse(b"".join(first + list(chunks)), status=int(code), reason=reason)
    else:  # an SSE stream: passed on as it comes; closing it ends the app's stream
        response = StreamingHttpResponse(_stream(first, chunks, body), status=int(code), reason=reason)
    del response["Content-Type"]  # Django's default; the app sets its own
    for name, value in started["headers"]:
        if name.lower() != "content-length" or type(body) is not list:
            response[name] = value
    return response


def _stream(first: List[bytes], chunks: Iterable[bytes], body: Any) -> Iterable[bytes]:
    try:
        yield from first
        yield from chunks
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()


def _no_write(data: bytes) -> None:
    raise NotImplementedError("minimcp's app returns its body; it never calls write()")
