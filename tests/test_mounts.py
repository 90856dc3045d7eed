"""MCP inside a web framework, as a user mounts it: Flask (werkzeug's DispatcherMiddleware,
on werkzeug's server and under gunicorn) and Django (minimcp.server.http.django in a URLconf, on
Django's own threaded server). Real frameworks, real sockets on 127.0.0.1."""

import os
import subprocess
import sys
import threading

import pytest
import requests

import minimcp

from conftest import PY, ROOT, free_port, wait_until_listening

SERVERS = os.path.join(ROOT, "tests", "servers")
sys.path.insert(0, SERVERS)


def check_mcp(url):
    """A session, an SSE-streamed call with progress, a plain call: what a user's client does."""
    progress = []
    with minimcp.connect(url, protocol="2025-11-25") as client:
        assert client.session.transport.session_id  # a session was opened
        result = client.call_tool("count", {"n": 3}, on_progress=lambda p, t, m: progress.append((p, m)))
        assert result.text == "counted to 3"
        assert progress == [(1, "step 1"), (2, "step 2"), (3, "step 3")]
        assert client.call_tool("hello", {"name": "web"}).text == "hello, web"
    with minimcp.connect(url) as client:  # the default: whatever the server speaks best
        assert client.call_tool("hello", {"name": "again"}).text == "hello, again"


@pytest.fixture
def flask_site():
    from flask_app import make_site
    from werkzeug.serving import make_server

    site, mcp_app = make_site()
    httpd = make_server("127.0.0.1", 0, site, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, name="werkzeug-test")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(10)
        httpd.server_close()
        mcp_app.close()


def test_flask_dispatcher_middleware_mounts_the_defaults_at_any_prefix(flask_site):
    assert requests.get(flask_site + "/", timeout=10).text == "the Flask site"
    check_mcp(flask_site + "/mcp")
    check_mcp(flask_site + "/tools")  # another mount point, the same defaults
    with minimcp.connect(flask_site + "/mcp/sse") as client:  # the 2024-11-05 endpoints, below the mount
        assert type(client.session.transport).__name__ == "SSETransport"
        assert client.call_tool("hello", {"name": "old"}).text == "hello, old"


def test_a_wrong_url_says_the_url_and_the_status(flask_site):
    url = flask_site + "/wrong/mcp"
    with pytest.raises(minimcp.ConnectionClosed) as caught:
        minimcp.connect(url, timeout=10)
    message = str(caught.value)
    assert url in message and "404" in message, message
    assert "SSE GET" not in message


def test_flask_site_under_gunicorn():
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "gunicorn", "-k", "gthread", "-w", "1", "--threads", "4",
                             "-b", f"127.0.0.1:{port}", "flask_app:site"], cwd=SERVERS,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until_listening(proc, port)
        check_mcp(f"http://127.0.0.1:{port}/mcp")
        check_mcp(f"http://127.0.0.1:{port}/tools")
    finally:
        proc.terminate()
        proc.wait(20)
        proc.stderr.close()


@pytest.fixture
def django_site():
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(DEBUG=False, SECRET_KEY="not-secret", ALLOWED_HOSTS=["127.0.0.1", "localhost"],
                           ROOT_URLCONF="django_project", INSTALLED_APPS=[], USE_TZ=True,
                           MIDDLEWARE=["django.middleware.common.CommonMiddleware",
                                       "django.middleware.csrf.CsrfViewMiddleware"])
        django.setup()
    import django_project
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.urls import clear_url_caches

    mcp_app = django_project.mount()
    clear_url_caches()

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    httpd = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
    httpd.set_app(WSGIHandler())
    thread = threading.Thread(target=httpd.serve_forever, name="django-test")
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        thread.join(10)
        httpd.server_close()
        mcp_app.close()


def test_django_urlconf_serves_sessions_and_sse(django_site):
    assert requests.get(django_site + "/", timeout=10).text == "the Django site"
    check_mcp(django_site + "/mcp")  # CSRF middleware on: the view is exempt
    with minimcp.connect(django_site + "/mcp/sse") as client:
        assert type(client.session.transport).__name__ == "SSETransport"
        assert client.call_tool("count", {"n": 2}).text == "counted to 2"
    answer = requests.post(django_site + "/mcp", data=b"{", timeout=10,
                           headers={"Content-Type": "application/json",
                                    "Accept": "application/json, text/event-stream"})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32700  # the app's error, unchanged
