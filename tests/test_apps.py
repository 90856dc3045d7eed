"""MCP Apps (the io.modelcontextprotocol/ui extension, SEP-1865), both sides: views and the
tools that name them on the wire, who may see and call what, the extension declared in both
eras, the client's helpers, the example's view driven through the host bridge, and the
official Python SDK on the other side, both ways.

The spec is ext-apps specification/2026-01-26/apps.mdx (cited by section below).
"""

import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import threading

import pytest

import minimcp
from minimcp import Context, RPCError, Server
from minimcp.client.apps import for_model, read_app, server_has_apps, ui_resource_uri, visibility
from minimcp.client.results import Tool
from minimcp.errors import ProtocolError
from minimcp.protocol.jsonrpc import INVALID_PARAMS
from minimcp.server.apps import EXTENSION, MIME_TYPE, renders_views, supports_apps
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT, example

VIEW = "ui://shop/cart.html"
HTML = "<!doctype html><html><body><p>cart</p><script>/* inline */</script></body></html>"
UI = {"csp": {"connectDomains": ["https://api.shop.example"], "resourceDomains": ["https://cdn.shop.example"]},
      "permissions": {"clipboardWrite": {}}, "domain": "shop.example", "prefersBorder": True}
ERAS = ["2026-07-28", "2025-11-25"]
TRANSPORTS = ["memory", "http"]


def shop() -> Server:
    """A server with a view, a tool for model and view, one for the view alone, one for the model alone."""
    server = Server("shop")

    @server.ui_resource(VIEW, csp={"connectDomains": ["https://api.shop.example"],
                                   "resourceDomains": ["https://cdn.shop.example"]},
                        permissions=["clipboardWrite"], domain="shop.example", prefers_border=True, title="Cart")
    def cart_view() -> str:
        """The cart, with buttons.

        More than the description."""
        return HTML

    @server.ui_tool(VIEW)
    def show_cart(ctx: Context) -> dict:
        """Show the cart."""
        return {"items": 2, "renders views": supports_apps(ctx)}

    @server.ui_tool(VIEW, visibility=["app"])
    def update_quantity(item: str = "pen", quantity: int = 1) -> dict:
        """Change an item's quantity (the view's buttons)."""
        return {"item": item, "quantity": quantity}

    @server.ui_tool(VIEW, visibility=["model"], meta={"example.com/owner": "shop"})
    def checkout() -> str:
        """Pay for the cart."""
        return "paid"

    @server.tool
    def plain() -> str:
        """A tool without a view."""
        return "plain"

    return server


#: What a client that renders views declares (apps.mdx "Client (Host) Capabilities").
CAPABILITY = {EXTENSION: {"mimeTypes": [MIME_TYPE]}}


@contextlib.contextmanager
def connected(server, transport, protocol, apps):
    if transport == "memory":
        with minimcp.connect("memory", server=server, protocol=protocol, apps=apps, timeout=20) as client:
            yield client
        return
    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running, minimcp.connect(running.url + "/mcp", protocol=protocol,
                                                                apps=apps, timeout=20) as client:
            yield client
    finally:
        app.close()


def resource_request(client, method, params=None):
    """The raw result, as it came over the wire (the client's escape hatch)."""
    return client.request(method, params)


# -- the wire ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tools_name_their_view_and_who_may_call_them(transport, protocol):
    """apps.mdx "Resource Discovery": _meta.ui.resourceUri, _meta.ui.visibility (the flat
    "ui/resourceUri" too, deprecated but still read); other _meta keys kept."""
    with connected(shop(), transport, protocol, apps=True) as client:
        tools = {tool["name"]: tool for tool in resource_request(client, "tools/list")["tools"]}
    assert tools["show_cart"]["_meta"] == {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}
    assert tools["update_quantity"]["_meta"] == {"ui": {"resourceUri": VIEW, "visibility": ["app"]},
                                                 "ui/resourceUri": VIEW}
    assert tools["checkout"]["_meta"] == {"example.com/owner": "shop", "ui": {"resourceUri": VIEW, "visibility": ["model"]},
                                          "ui/resourceUri": VIEW}
    assert "_meta" not in tools["plain"]
    assert tools["show_cart"]["description"] == "Show the cart."  # still an ordinary tool otherwise


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_view_is_listed_and_read_with_its_mime_type_and_ui_meta(transport, protocol):
    """apps.mdx "UI Resource Format": a ui:// resource, text/html;profile=mcp-app, _meta.ui on the
    content item (and, as the draft's "Metadata Location" allows, on the listing too)."""
    with connected(shop(), transport, protocol, apps=True) as client:
        (listed,) = resource_request(client, "resources/list")["resources"]
        read = resource_request(client, "resources/read", {"uri": VIEW})
    assert listed == {"uri": VIEW, "name": "cart_view", "title": "Cart", "description": "The cart, with buttons.",
                      "mimeType": MIME_TYPE, "_meta": {"ui": UI}}
    assert read["contents"] == [{"uri": VIEW, "mimeType": MIME_TYPE, "text": HTML, "_meta": {"ui": UI}}]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_declares_the_extension_in_every_handshake_version(version):
    """apps.mdx "Client<>Server Capability Negotiation": the extensions capability (SEP-1724)."""
    with minimcp.connect("memory", server=shop(), protocol=version) as client:
        assert client.protocol_version == version
        assert client.server_capabilities["extensions"] == {EXTENSION: {"mimeTypes": [MIME_TYPE]}}
        assert server_has_apps(client)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_server_discover_declares_it_beside_the_other_extensions(transport):
    server = shop()

    @server.tool(task="optional")
    def long_job() -> str:
        return "done"

    with connected(server, transport, "2026-07-28", apps=False) as client:
        discovered = client.request("server/discover")
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {"mimeTypes": [MIME_TYPE]},
                                                       "io.modelcontextprotocol/tasks": {}}


def test_a_server_without_apps_declares_no_extension():
    server = Server("plain")
    server.tool(lambda: "x", name="x")
    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        assert "extensions" not in client.server_capabilities and not server_has_apps(client)
    with minimcp.connect("memory", server=server) as client:
        assert "extensions" not in client.server_capabilities and client.era == "stateless"


# -- who may see and call what --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_client_that_renders_views_sees_and_calls_every_tool(transport, protocol):
    """apps.mdx "Visibility": an app-only tool stays callable (by the host, for its view)."""
    with connected(shop(), transport, protocol, apps=True) as client:
        assert [tool.name for tool in client.list_tools()] == ["show_cart", "update_quantity", "checkout", "plain"]
        assert client.call_tool("update_quantity", {"item": "ink", "quantity": 3}).structured == {
            "item": "ink", "quantity": 3}
        assert client.call_tool("show_cart").structured == {"items": 2, "renders views": True}


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_client_without_the_extension_never_sees_or_calls_the_views_own_tools(transport, protocol):
    """apps.mdx "Visibility" (the host MUST keep app-only tools from its model: a host that does not
    know the extension cannot) and "Server Behavior" (servers SHOULD check client capabilities);
    a tool with a view is an ordinary tool to it ("Graceful Degradation")."""
    with connected(shop(), transport, protocol, apps=False) as client:
        assert [tool.name for tool in client.list_tools()] == ["show_cart", "checkout", "plain"]
        with pytest.raises(RPCError) as refused:
            client.call_tool("update_quantity", {"item": "ink"})
        assert refused.value.code == INVALID_PARAMS
        assert "only an MCP App's view calls it" in refused.value.message and EXTENSION in refused.value.message
        assert client.call_tool("show_cart").structured == {"items": 2, "renders views": False}
        assert client.call_tool("checkout").text == "paid"
        assert read_app(client, VIEW).html == HTML  # the view itself is no secret


def test_a_version_without_tool_meta_still_hides_the_views_own_tools():
    """2025-03-26 knows no tool _meta (stripped from what it gets): the server's own definitions decide."""
    with minimcp.connect("memory", server=shop(), protocol="2025-03-26") as client:
        tools = client.list_tools()
        assert [tool.name for tool in tools] == ["show_cart", "checkout", "plain"]
        assert all("_meta" not in tool.raw for tool in tools)
    with minimcp.connect("memory", server=shop(), protocol="2025-03-26", apps=True) as client:
        assert [tool.name for tool in client.list_tools()] == ["show_cart", "update_quantity", "checkout", "plain"]


def test_only_the_extension_with_the_html_mime_type_counts():
    """apps.mdx "Extension Settings": mimeTypes is required; a client that lists no HTML renders none."""
    def other_views(request, call_next):
        if request.outgoing and request.method == "initialize":
            request.params["capabilities"] = {"extensions": {EXTENSION: {"mimeTypes": ["text/uri-list"]}}}
        return call_next(request)

    with minimcp.connect("memory", server=shop(), protocol="2025-11-25", middleware=[other_views]) as client:
        assert "update_quantity" not in [tool.name for tool in client.list_tools()]


def test_a_server_with_no_app_only_tool_adds_no_middleware():
    server = Server("views")
    server.ui_resource(VIEW)(lambda: HTML)
    server.ui_tool(VIEW, visibility=["model", "app"])(lambda: "x")
    assert server.middleware == []
    server.ui_tool(VIEW, visibility=["app"], name="refresh")(lambda: "y")
    server.ui_tool(VIEW, visibility=["app"], name="again")(lambda: "z")
    assert len(server.middleware) == 1  # once


def test_middleware_given_to_the_server_first_sees_the_refused_call_too():
    seen = []

    def audit(request, call_next):
        seen.append(request.method)
        return call_next(request)

    server = Server("audited", middleware=[audit])
    server.ui_tool(VIEW, visibility=["app"], name="refresh")(lambda: "y")
    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:
        assert client.list_tools() == []
        with pytest.raises(RPCError):
            client.call_tool("refresh")
    assert seen == ["initialize", "tools/list", "tools/call"]
    assert server.middleware[0] is audit  # the apps middleware comes after (inside) the server's own


@pytest.mark.parametrize("protocol", ["2025-11-25", "2025-06-18"])
def test_a_sessionless_app_hides_nothing_when_it_cannot_know_what_the_client_declared(protocol):
    """A sessionless app's handshake-era POST comes on a connection that ran no initialize (its
    client's went to another POST): what the client declared is unknown, not "nothing", so its
    view's own tools are listed and callable (hiding them is a courtesy, not access control),
    and supports_apps() says False (the tool says it all in text). A 2026-07-28 request
    declares its capabilities itself: hidden from one that does not declare the extension."""
    server = shop()

    @server.tool()
    def declared(ctx: Context) -> dict:
        return {"renders_views": renders_views(ctx), "supports_apps": supports_apps(ctx)}

    every = ["show_cart", "update_quantity", "checkout", "plain", "declared"]
    app = server.wsgi_app(sessions=False)
    try:
        with BackgroundServer(app) as running:
            for apps in (True, False):
                with minimcp.connect(running.url + "/mcp", protocol=protocol, apps=apps, timeout=20) as client:
                    assert [tool.name for tool in client.list_tools()] == every
                    assert client.call_tool("update_quantity", {"item": "ink"}).structured == {
                        "item": "ink", "quantity": 1}
                    assert client.call_tool("declared").structured == {"renders_views": None, "supports_apps": False}
            for apps in (True, False):
                with minimcp.connect(running.url + "/mcp", protocol="2026-07-28", apps=apps, timeout=20) as client:
                    names = [tool.name for tool in client.list_tools()]
                    assert names == (every if apps else [name for name in every if name != "update_quantity"])
                    assert client.call_tool("declared").structured == {"renders_views": apps, "supports_apps": apps}
    finally:
        app.close()


def list_pages(client):
    """Every page of tools/list, as the names on each (following nextCursor, at most 10 pages)."""
    pages, cursor = [], None
    for _ in range(10):
        result = client.request("tools/list", {"cursor": cursor} if cursor else {})
        pages.append([tool["name"] for tool in result["tools"]])
        cursor = result.get("nextCursor")
        if not cursor:
            return pages
    raise AssertionError(f"tools/list did not end in 10 pages: {pages}")


@pytest.mark.parametrize("protocol", ERAS)
def test_the_views_own_tools_are_left_out_before_the_list_is_paged(protocol):
    """Spec server/utilities/pagination: a page is the server's page size, not what is left of
    it after the view's own tools were taken out (which once gave a client without the
    extension an empty first page)."""
    server = Server("paged", page_size=2)
    server.ui_resource(VIEW)(lambda: HTML)
    for name in ("a0", "a1", "a2"):
        server.ui_tool(VIEW, visibility=["app"], name=name)(lambda: "app")
    for name in ("m0", "m1", "m2"):
        server.tool(name=name)(lambda: "model")
    with minimcp.connect("memory", server=server, protocol=protocol) as client:
        assert list_pages(client) == [["m0", "m1"], ["m2"]]
    with minimcp.connect("memory", server=server, protocol=protocol, apps=True) as client:
        assert list_pages(client) == [["a0", "a1"], ["a2", "m0"], ["m1", "m2"]]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_stateless_tools_list_that_depends_on_the_client_is_private_to_it(transport):
    """Spec 2026-07-28 caching: a server with tools only a view calls lists them to some clients
    and not others, so its tools/list may be kept by the client's own cache (cacheScope
    "private", with the server's ttlMs), never by one shared between clients; a server without
    any keeps its own scope."""
    server = shop()
    server.cache_ttl_ms = 60_000
    for apps in (True, False):
        with connected(server, transport, "2026-07-28", apps=apps) as client:
            listed = client.request("tools/list")
            assert (listed["cacheScope"], listed["ttlMs"]) == ("private", 60_000)
            assert ("update_quantity" in [tool["name"] for tool in listed["tools"]]) is apps
            assert client.request("prompts/list")["cacheScope"] == "public"  # (only tools/list depends on it)
    plain = Server("views", cache_ttl_ms=60_000)
    plain.ui_resource(VIEW)(lambda: HTML)
    plain.ui_tool(VIEW)(lambda: "x")  # a view, but no tool that only it calls: the same list for all
    with connected(plain, transport, "2026-07-28", apps=False) as client:
        assert client.request("tools/list")["cacheScope"] == "public"


# -- views: what a function may be and return ------------------------------------------------------


def test_a_view_may_take_ctx_be_async_and_return_bytes():
    server = Server("views")

    @server.ui_resource("ui://a/ctx.html")
    def with_ctx(ctx: Context) -> str:
        return f"<p>{ctx.client_info.get('name')}</p>"

    @server.ui_resource("ui://a/async.html")
    async def later() -> str:
        return "<p>async</p>"

    @server.ui_resource("ui://a/bytes.html", prefers_border=False)
    def raw() -> bytes:
        return "<p>zażółć</p>".encode()

    @server.ui_resource("ui://a/wrong.html")
    def wrong() -> int:
        return 3

    assert with_ctx.__name__ == "with_ctx"  # the decorator returns the function
    with minimcp.connect("memory", server=server, client_info={"name": "host", "version": "1"}) as client:
        assert read_app(client, "ui://a/ctx.html").html == "<p>host</p>"
        assert read_app(client, "ui://a/async.html").html == "<p>async</p>"
        blob = client.read_resource("ui://a/bytes.html").contents[0]
        assert blob["mimeType"] == MIME_TYPE and "blob" in blob and blob["_meta"] == {"ui": {"prefersBorder": False}}
        view = read_app(client, "ui://a/bytes.html")
        assert view.html == "<p>zażółć</p>" and view.prefers_border is False
        with pytest.raises(RPCError) as failed:
            client.read_resource("ui://a/wrong.html")
        assert failed.value.code == -32603  # the author's bug: in the server's log, not the client's message


def no_schema(event: threading.Event) -> str:
    return "x"


@pytest.mark.parametrize("register, message", [
    (lambda s: s.ui_resource("https://x/view.html")(lambda: HTML), "fixed ui:// URI"),
    (lambda s: s.ui_resource("ui://x/{page}.html")(lambda page: HTML), "fixed ui:// URI"),
    (lambda s: s.ui_resource(VIEW, csp={"scriptDomains": ["https://x"]})(lambda: HTML),
     "csp has no field 'scriptDomains'; the fields are connectDomains"),
    (lambda s: s.ui_resource(VIEW, csp={"connectDomains": "https://x"})(lambda: HTML), "list of origins"),
    # each entry goes into the host's CSP header as it is: an origin, nothing more
    (lambda s: s.ui_resource(VIEW, csp={"resourceDomains": ["https://cdn.example; connect-src *"]})(lambda: HTML),
     """csp["resourceDomains"]: 'https://cdn.example; connect-src *' is not an origin; give scheme://host"""),
    *[(lambda s, bad=bad: s.ui_resource(VIEW, csp={"connectDomains": ["https://ok.example", bad]})(lambda: HTML),
       f"{bad!r} is not an origin") for bad in [
        "*", "'unsafe-eval'", "data:", "https:", "https://*", "cdn.example", "ftp://cdn.example",
        "https://cdn.example/path", "https://cdn.example ", "https://cdn.example\n", "https://a.*.example",
        "https://user@cdn.example", "https://cdn.example:port"]],
    (lambda s: s.ui_resource(VIEW, permissions=["clipboard-write"])(lambda: HTML),
     "unknown permission 'clipboard-write' (give a list of names); the permissions are camera, microphone, geolocation, clipboardWrite"),
    (lambda s: s.ui_resource(VIEW, meta={"ui": {}})(lambda: HTML), "csp=, permissions="),
    (lambda s: s.ui_resource(VIEW, mime_type="text/html")(lambda: HTML), "leave mime_type out"),
    (lambda s: s.ui_resource(VIEW)(lambda city: HTML), "takes no arguments, or only ctx"),
    (lambda s: s.ui_tool("https://x/view.html")(lambda: "x"), "a tool's view is a ui:// URI"),
    (lambda s: s.ui_tool(VIEW, visibility=[])(lambda: "x"), 'visibility is a list of "model" and/or "app"'),
    (lambda s: s.ui_tool(VIEW, visibility="app")(lambda: "x"), 'visibility is a list of "model" and/or "app"'),
    (lambda s: s.ui_tool(VIEW, visibility=["user"])(lambda: "x"), 'visibility is a list of "model" and/or "app"'),
    (lambda s: s.ui_tool(VIEW, meta={"ui": {}})(lambda: "x"), "resource_uri and visibility="),
    (lambda s: s.ui_tool(VIEW, visibility=["app"])(no_schema), "no JSON Schema"),
    (lambda s: s.ui_resource(VIEW, colour="red")(lambda: HTML), "colour"),
])
def test_mistakes_are_refused_at_registration_saying_what_to_do(register, message):
    server = Server("mistakes")
    with pytest.raises((ValueError, TypeError)) as refused:
        register(server)
    assert message in str(refused.value)
    assert server.resources() == [] and server.tools() == [] and "apps" not in server.__dict__
    assert server.middleware == [] and "extensions" not in server.capabilities()


# -- the client's helpers ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25", "2025-06-18"])
def test_a_tool_says_its_view_and_who_may_call_it(protocol):
    """Tool.ui_resource_uri and Tool.visibility, read from tools/list (apps.mdx "Resource
    Discovery", "Visibility"); the helpers say the same."""
    with minimcp.connect("memory", server=shop(), protocol=protocol, apps=True) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
    assert {name: tool.ui_resource_uri for name, tool in tools.items()} == {
        "show_cart": VIEW, "update_quantity": VIEW, "checkout": VIEW, "plain": None}
    assert {name: tool.visibility for name, tool in tools.items()} == {
        "show_cart": ("model", "app"), "update_quantity": ("app",), "checkout": ("model",),
        "plain": ("model", "app")}
    assert all(ui_resource_uri(tool) == tool.ui_resource_uri and visibility(tool) == tool.visibility
               for tool in tools.values())


@pytest.mark.parametrize("meta, uri, who", [
    (None, None, ("model", "app")),
    ({"example.com/x": 1}, None, ("model", "app")),
    ({"ui": {"resourceUri": "ui://a/v.html"}}, "ui://a/v.html", ("model", "app")),
    ({"ui/resourceUri": "ui://old/v.html"}, "ui://old/v.html", ("model", "app")),  # the deprecated flat key
    ({"ui": {"resourceUri": "ui://new/v.html"}, "ui/resourceUri": "ui://old/v.html"}, "ui://new/v.html",
     ("model", "app")),  # the nested key first
    ({"ui": {"visibility": ["app"]}, "ui/resourceUri": "ui://old/v.html"}, "ui://old/v.html", ("app",)),
    ({"ui": {"resourceUri": "ui://a/v.html", "visibility": ["app", "model", "user"]}}, "ui://a/v.html",
     ("model", "app")),  # an unknown name left out, the spec's order
    ({"ui": {"resourceUri": "ui://a/v.html", "visibility": []}}, "ui://a/v.html", ()),
    # the wrong shape counts as absent, as to a host that knows no MCP Apps
    ({"ui": "ui://a/v.html"}, None, ("model", "app")),
    ({"ui": {"resourceUri": "https://a/v.html", "visibility": "app"}}, None, ("model", "app")),
    ({"ui": {"resourceUri": 7}}, None, ("model", "app")),
    ("not an object", None, ("model", "app")),
])
def test_a_tool_reads_its_view_from_any_meta(meta, uri, who):
    raw = {"name": "t", "inputSchema": {"type": "object"}}
    if meta is not None:
        raw["_meta"] = meta
    tool = Tool(raw)
    assert (tool.ui_resource_uri, tool.visibility) == (uri, who)
    assert tool.raw is raw


def test_the_client_helpers_read_tools_and_views():
    with minimcp.connect("memory", server=shop(), apps=True) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        assert [tool.name for tool in for_model(tools.values())] == ["show_cart", "checkout", "plain"]
        view = read_app(client, VIEW)
        assert repr(client.read_app(VIEW)) == repr(view)  # the Client's method, the same
    assert (view.uri, view.html, view.ui) == (VIEW, HTML, UI)
    assert view.csp == UI["csp"] and view.permissions == ["clipboardWrite"]
    assert (view.domain, view.prefers_border) == ("shop.example", True)
    assert view.raw["mimeType"] == MIME_TYPE and "AppView(uri='ui://shop/cart.html'" in repr(view)


def test_apps_true_declares_the_extension_in_both_eras_beside_what_else_the_client_declares():
    """apps.mdx "Client<>Server Capability Negotiation": initialize's capabilities, and each
    2026-07-28 request's _meta clientCapabilities (the tasks extension kept there)."""
    sent = []

    def spy(request, call_next):
        sent.append((request.method, json.loads(json.dumps(request.params))))
        return call_next(request)

    with minimcp.connect("memory", server=shop(), middleware=[spy], roots=["/tmp"], apps=True) as client:
        assert client.apps is True
        client.list_tools()
    with minimcp.connect("memory", server=shop(), protocol="2025-11-25", middleware=[spy],
                         roots=["/tmp"], apps=True) as client:
        client.list_tools()
    stateless = [params["_meta"]["io.modelcontextprotocol/clientCapabilities"] for method, params in sent
                 if method in ("server/discover", "tools/list") and "_meta" in params]
    assert stateless and all(caps == {"roots": {}, "extensions": {"io.modelcontextprotocol/tasks": {}, **CAPABILITY}}
                             for caps in stateless)
    (initialize,) = [params for method, params in sent if method == "initialize"]
    assert initialize["capabilities"] == {"roots": {"listChanged": True}, "extensions": CAPABILITY}
    sent.clear()
    with minimcp.connect("memory", server=shop(), middleware=[spy], roots=["/tmp"]) as client:  # apps=False
        assert client.apps is False
        client.list_tools()
    assert all(params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] ==
               {"io.modelcontextprotocol/tasks": {}} for _, params in sent)


def test_read_app_takes_the_listings_ui_meta_when_the_content_has_none_and_refuses_what_is_no_view():
    """The draft's "Metadata Location": hosts check the content item, then the listing entry."""
    server = Server("by hand")
    server.add_resource(lambda: HTML, "ui://hand/view.html", mime_type=MIME_TYPE, meta={"ui": {"prefersBorder": True}})
    server.add_resource(lambda: HTML, "ui://hand/plain.html", mime_type="text/html")
    server.add_resource(lambda: [{"uri": "ui://hand/elsewhere.html", "mimeType": MIME_TYPE, "text": HTML}],
                        "ui://hand/moved.html")
    with minimcp.connect("memory", server=server) as client:
        view = read_app(client, "ui://hand/view.html")
        assert view.prefers_border is True and view.html == HTML
        with pytest.raises(ProtocolError, match="as 'text/html', not 'text/html;profile=mcp-app'"):
            read_app(client, "ui://hand/plain.html")
        with pytest.raises(ProtocolError, match="has no content for ui://hand/moved.html"):
            read_app(client, "ui://hand/moved.html")


def test_a_views_csp_and_permissions_hold_only_what_the_spec_defines(caplog):
    """A host copies ui.csp into its CSP header and ui.permissions into the iframe's allow
    attribute (apps.mdx "CSP Construction from Metadata"). A view may ask for origins (a
    wildcard subdomain, a port: apps.mdx McpUiResourceCsp) and the spec's permissions; anything
    else a server sends (a ";" that starts a directive of its own, "*", "'unsafe-eval'") is
    dropped by read_app, with a warning, so that it never reaches the host's header."""
    server = Server("csp")
    good = {"connectDomains": ["https://api.example", "wss://rt.example:8443", "http://localhost:3000"],
            "resourceDomains": ["https://*.cdn.example"], "frameDomains": [], "baseUriDomains": ["https://b.example"]}
    server.ui_resource("ui://csp/good.html", csp=good,
                       permissions=["camera", "microphone", "geolocation", "clipboardWrite"])(lambda: HTML)
    hostile = {"csp": {"resourceDomains": ["https://cdn.example; connect-src *; frame-src *", "https://ok.example"],
                       "connectDomains": ["*", "'unsafe-eval'", "data:", "https://ok.example\n", 7],
                       "scriptDomains": ["https://x.example"], "frameDomains": "https://x.example"},
               "permissions": {"camera": {}, "display-capture *": {}, "clipboardWrite": {}}, "prefersBorder": True}
    item = {"uri": "ui://csp/hostile.html", "mimeType": MIME_TYPE, "text": HTML, "_meta": {"ui": hostile}}
    server.add_resource(lambda: [item], "ui://csp/hostile.html")
    with minimcp.connect("memory", server=server, apps=True) as client:
        view = read_app(client, "ui://csp/good.html")
        assert (view.csp, view.ui["csp"]) == (good, good)
        assert view.permissions == ["camera", "clipboardWrite", "geolocation", "microphone"]
        with caplog.at_level("WARNING", logger="minimcp.client.apps"):
            view = read_app(client, "ui://csp/hostile.html")
    assert view.csp == {"resourceDomains": ["https://ok.example"], "connectDomains": []}
    assert view.permissions == ["camera", "clipboardWrite"]
    assert view.ui == {"csp": view.csp, "permissions": {"camera": {}, "clipboardWrite": {}}, "prefersBorder": True}
    assert view.raw == item  # what the server sent, as it sent it
    warned = "\n".join(record.getMessage() for record in caplog.records)
    for dropped in ("connect-src *", "'unsafe-eval'", "data:", "scriptDomains", "frameDomains", "display-capture *"):
        assert dropped in warned
    assert all(record.levelname == "WARNING" and "ui://csp/hostile.html" in record.getMessage()
               for record in caplog.records)


def test_a_legacy_flat_resource_uri_is_read_too():
    server = Server("old")
    server.tool(lambda: "x", name="old_style", meta={"ui/resourceUri": "ui://old/view.html"})
    server.tool(lambda: "y", name="not_a_view", meta={"ui": {"resourceUri": "https://old/view.html"}})
    with minimcp.connect("memory", server=server) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
    assert tools["old_style"].ui_resource_uri == ui_resource_uri(tools["old_style"]) == "ui://old/view.html"
    assert tools["not_a_view"].ui_resource_uri is None and ui_resource_uri(tools["not_a_view"]) is None


# -- the example's view, through the host bridge ---------------------------------------------------------

#: A window for the view's script to run in under Node: postMessage to the parent prints the
#: message; stdin lines deliver the host's messages, click a button, or read an element.
WINDOW = r"""
const readline = require("readline");
const fs = require("fs");
const listeners = [];
const elements = {};
function element(id) {
  if (!elements[id]) elements[id] = {id, textContent: "", disabled: false, title: "", clicks: [],
                                     addEventListener(type, fn) { if (type === "click") this.clicks.push(fn); }};
  return elements[id];
}
const styles = {};  // what the view set on :root
const parent = {postMessage(message, origin) { console.log(JSON.stringify({posted: message, origin})); }};
const window = {parent, addEventListener(type, fn) { if (type === "message") listeners.push(fn); }};
const document = {getElementById: element, body: {scrollWidth: 320, scrollHeight: 120},
                  documentElement: {style: {setProperty(name, value) { styles[name] = value; }}}};
element("increment").disabled = true;  // as the HTML has it
new Function("window", "document", fs.readFileSync(process.argv[2], "utf8"))(window, document);
readline.createInterface({input: process.stdin}).on("line", (line) => {
  const command = JSON.parse(line);
  if (command.deliver) listeners.forEach((fn) => fn({data: command.deliver, source: command.stranger ? {} : parent}));
  if (command.click) element(command.click).clicks.forEach((fn) => fn({}));
  if (command.read) { const e = element(command.read); console.log(JSON.stringify({read: e.textContent, disabled: e.disabled, title: e.title})); }
  if (command.styles) console.log(JSON.stringify({styles}));
});
"""


class ViewUnderNode:
    """The view's inline script running in Node, with this test as its host."""

    def __init__(self, node, script_path, window_path):
        self.process = subprocess.Popen([node, window_path, script_path], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, name="test-node-reader", daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def next(self):
        line = self.lines.get(timeout=20)
        assert line is not None, "the view's Node process ended"
        return line

    def posted(self):
        line = self.next()
        assert line["origin"] == "*"
        return line["posted"]

    def send(self, command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def read(self, element_id):
        self.send({"read": element_id})
        return self.next()

    def styles(self):
        self.send({"styles": True})
        return self.next()["styles"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=20)
        self.reader.join(timeout=20)


@pytest.fixture
def node():
    found = shutil.which("node")
    if found is None:
        pytest.skip("Node.js runs the view's script (.ci/run installs it)")
    return found


def view_under_node(node, tmp_path, html):
    """The inline script of the view ``html`` started under Node (asserting it is all inline)."""
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert "<script src" not in html and "<link" not in html  # all of it inline
    (tmp_path / "view.js").write_text(script, encoding="utf-8")
    (tmp_path / "window.js").write_text(WINDOW, encoding="utf-8")
    return ViewUnderNode(node, str(tmp_path / "view.js"), str(tmp_path / "window.js"))


#: A view's size, as the view under Node reports it.
SIZE = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 320, "height": 120}}


def test_the_examples_view_calls_its_tool_through_the_host_bridge(node, tmp_path):
    """apps.mdx "Lifecycle" and "Standard MCP Messages": ui/initialize, initialized, tool-input and
    tool-result from the host; the view's tools/call passed on to the server by the host; its
    size from the start ("Container Dimensions"), the host's theme applied ("Theming")."""
    with minimcp.connect([PY, example("mcp_app.py"), "--server"], apps=True, timeout=20) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        view = client.read_app(tools["show_counter"].ui_resource_uri)
        assert view.csp == {}
        running = view_under_node(node, tmp_path, view.html)
        try:
            hello = running.posted()
            assert hello["method"] == "ui/initialize" and hello["params"]["protocolVersion"] == "2026-01-26"
            assert running.read("increment") == {"read": "", "disabled": True, "title": ""}
            running.send({"deliver": {"jsonrpc": "2.0", "id": hello["id"], "result": {
                "protocolVersion": "2026-01-26", "hostInfo": {"name": "test host", "version": "1"},
                "hostCapabilities": {"serverTools": {}}, "hostContext": {"theme": "dark", "styles": {"variables": {
                    "--color-text-primary": "light-dark(#171717, #fafafa)", "--font-sans": "Serif, serif",
                    "--border-radius-md": None, "color": "red"}}}}}})
            assert running.posted() == {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}
            assert running.posted() == SIZE  # at once: the host sizes the iframe before any result
            assert running.styles() == {"--color-text-primary": "light-dark(#171717, #fafafa)",
                                        "--font-sans": "Serif, serif", "color-scheme": "dark"}  # variables only
            running.send({"deliver": {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed",
                                      "params": {"theme": "light", "styles": {"variables": {"--font-sans": "Sans"}}}}})
            assert running.styles() == {"--color-text-primary": "light-dark(#171717, #fafafa)",
                                        "--font-sans": "Sans", "color-scheme": "light"}  # merged
            assert running.read("increment")["disabled"] is False
            shown = client.call_tool("show_counter")  # the model's call, whose result the view shows
            running.send({"deliver": {"jsonrpc": "2.0", "method": "ui/notifications/tool-input",
                                      "params": {"arguments": {}}}})
            running.send({"deliver": {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
                                      "params": shown.raw}})
            assert running.posted()["method"] == "ui/notifications/size-changed"
            assert running.read("count")["read"] == "0"
            running.send({"deliver": {"jsonrpc": "2.0", "method": "ui/notifications/tool-result",
                                      "params": {"content": [], "structuredContent": {"count": 99}}},
                          "stranger": True})  # not from the host: ignored
            running.send({"click": "increment"})
            call = running.posted()
            assert call["method"] == "tools/call" and call["params"] == {"name": "increment", "arguments": {"by": 1}}
            # the host: the view may call it ("app" in its visibility), so it goes to the server
            assert "app" in tools[call["params"]["name"]].visibility
            answer = client.request("tools/call", call["params"])
            running.send({"deliver": {"jsonrpc": "2.0", "id": call["id"], "result": answer}})
            assert running.posted()["method"] == "ui/notifications/size-changed"
            assert running.read("count")["read"] == "1"
            running.send({"deliver": {"jsonrpc": "2.0", "id": "bye", "method": "ui/resource-teardown",
                                      "params": {"reason": "closed"}}})
            assert running.posted() == {"jsonrpc": "2.0", "id": "bye", "result": {}}
        finally:
            running.close()
    assert running.process.returncode == 0


def test_the_examples_view_refused_by_its_host_keeps_its_button_disabled_and_says_why(node, tmp_path):
    """A host may answer ui/initialize with an error: the view then sends no initialized, calls
    nothing, and shows the reason (on the page, and on the disabled button)."""
    with open(os.path.join(ROOT, "examples", "mcp_app.html"), encoding="utf-8") as f:
        running = view_under_node(node, tmp_path, f.read())
    try:
        hello = running.posted()
        assert hello["method"] == "ui/initialize"
        running.send({"deliver": {"jsonrpc": "2.0", "id": hello["id"],
                                  "error": {"code": -32000, "message": "views are off"}}})
        assert running.posted() == SIZE  # (its size, for the message: not initialized)
        reason = "the host did not start this view: views are off"
        assert running.read("status")["read"] == reason
        assert running.read("increment") == {"read": "", "disabled": True, "title": reason}
    finally:
        running.close()
    assert running.process.returncode == 0


# -- interop: the official Python SDK ----------------------------------------------------------------------

OFFICIAL_CLIENT = os.path.join(ROOT, "tests", "interop", "official_apps_client.py")
SDK_SERVER = os.path.join(ROOT, "tests", "interop", "sdk_apps_server.py")


def run_official_client(official_sdk, mode, declare):
    done = subprocess.run([official_sdk, OFFICIAL_CLIENT, mode, "yes" if declare else "no",
                           PY, example("mcp_app.py"), "--server"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode, version", [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_official_client_lists_and_reads_our_app(official_sdk, mode, version):
    seen = run_official_client(official_sdk, mode, declare=True)
    assert seen["protocolVersion"] == version
    assert seen["extensions"] == {EXTENSION: {"mimeTypes": [MIME_TYPE]}}
    assert seen["tools"] == {
        "show_counter": {"ui": {"resourceUri": "ui://counter/view.html"}, "ui/resourceUri": "ui://counter/view.html"},
        "increment": {"ui": {"resourceUri": "ui://counter/view.html", "visibility": ["app"]},
                      "ui/resourceUri": "ui://counter/view.html"}}
    (listed,) = seen["resources"]
    assert (listed["uri"], listed["mimeType"], listed["_meta"]) == ("ui://counter/view.html", MIME_TYPE,
                                                                    {"ui": {"prefersBorder": True}})
    (item,) = seen["views"]["ui://counter/view.html"]
    with open(os.path.join(ROOT, "examples", "mcp_app.html"), encoding="utf-8") as f:
        assert item == {"uri": "ui://counter/view.html", "mimeType": MIME_TYPE, "text": f.read(),
                        "_meta": {"ui": {"prefersBorder": True}}}
    assert seen["calls"] == {"show_counter": {"isError": False, "structuredContent": {"count": 0}},
                             "increment": {"isError": False, "structuredContent": {"count": 1}}}


def test_the_official_client_without_the_extension_is_not_shown_the_views_own_tool(official_sdk):
    seen = run_official_client(official_sdk, "legacy", declare=False)
    assert list(seen["tools"]) == ["show_counter"] and list(seen["calls"]) == ["show_counter"]
    assert list(seen["views"]) == ["ui://counter/view.html"]


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_our_client_reads_the_official_sdks_app(official_sdk, protocol):
    with minimcp.connect([official_sdk, SDK_SERVER], protocol=protocol, apps=True, timeout=60) as client:
        # the SDK declares the extension in server/discover only (its handshake leaves it out)
        assert server_has_apps(client) == (client.era == "stateless")
        tools = {tool.name: tool for tool in client.list_tools()}
        assert {name: (tool.ui_resource_uri, tool.visibility) for name, tool in tools.items()} == {
            "get_weather": ("ui://weather/view.html", ("model", "app")),
            "refresh": ("ui://weather/view.html", ("app",))}
        assert [tool.name for tool in for_model(tools.values())] == ["get_weather"]
        view = read_app(client, "ui://weather/view.html")
        assert view.html.startswith("<!doctype html>") and "<script>" in view.html
        assert view.csp == {"connectDomains": ["https://api.example.com"]}
        assert (view.permissions, view.prefers_border, view.domain) == (["clipboardWrite"], False, None)
        assert client.call_tool("refresh").text == "refreshed"
