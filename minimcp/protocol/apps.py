"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension, SEP-1865) as data: the names both
sides agree on, and what a tool's ``_meta`` says about its view.

The server side is :mod:`minimcp.server.apps`, the client side :mod:`minimcp.client.apps`
(and :class:`~minimcp.client.results.Tool`, which reads a tool's view as it is made). No
I/O here, and no ``typing`` at run time: a stdio server with an app loads this module at start.

The spec is ext-apps specification/2026-01-26/apps.mdx (its sections cited below).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, Optional, Tuple

#: The extension's identifier, the key in ``capabilities.extensions`` (apps.mdx "Extension Identifier").
EXTENSION = "io.modelcontextprotocol/ui"
#: The MIME type of a view (apps.mdx "UI Resource Format": the only one defined so far); a host
#: lists the types it renders in its ``mimeTypes`` (apps.mdx "Extension Settings").
MIME_TYPE = "text/html;profile=mcp-app"
#: The extension's settings key: the view types a server serves, or a host renders (apps.mdx
#: "Extension Settings": required, with :data:`MIME_TYPE` among them).
MIME_TYPES = "mimeTypes"
#: The URI scheme every view's URI starts with (apps.mdx: "URI MUST start with ui:// scheme").
SCHEME = "ui://"

#: The key of a tool's or a view's ``_meta`` that holds the extension's fields.
UI = "ui"
#: A tool's view: ``_meta.ui.resourceUri`` (apps.mdx "Resource Discovery").
RESOURCE_URI = "resourceUri"
#: Who may call a tool: ``_meta.ui.visibility``, a list of :data:`VISIBILITIES` (apps.mdx "Visibility").
VISIBILITY = "visibility"
#: The deprecated flat key of a tool's view, ``_meta["ui/resourceUri"]``: hosts older than
#: ``_meta.ui.resourceUri`` read only it, and servers older than it send only it.
LEGACY_RESOURCE_URI = "ui/resourceUri"
#: Who may call a tool: the model (the agent), the view (the app); a tool that says nothing
#: may be called by both (apps.mdx "Visibility": the default is ``["model", "app"]``).
VISIBILITIES = ("model", "app")

#: The fields of a view's ``_meta.ui.csp`` (apps.mdx ``McpUiResourceCsp``): each a list of the
#: origins the view may reach, which a host puts into one CSP directive each.
CSP_FIELDS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
#: The browser permissions a view may ask for (apps.mdx ``UIResourceMeta.permissions``: each
#: name -> ``{}``), which a host may put into the iframe's ``allow`` attribute.
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
#: What each entry of a CSP field must be: an origin (apps.mdx: "Origins for network requests",
#: examples ``https://api.weather.com``, ``wss://realtime.service.com``), whose host may start
#: with ``*.`` ("Wildcard subdomains supported: https://*.example.com"), and nothing more. The
#: host copies each entry into its CSP header as it is (apps.mdx "CSP Construction from
#: Metadata"), so a space, ``;`` or quote in one would add a source (``*``, ``'unsafe-eval'``)
#: or a whole directive that the view never declared.
ORIGIN = r"(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:[0-9]+)?"


def extension_settings() -> Dict[str, Any]:
    """The extension's settings in ``capabilities.extensions`` (a new dict each time), the same on
    both sides: a server names the view types it serves, a host those it renders (apps.mdx
    "Extension Settings", "Client<>Server Capability Negotiation")."""
    return {MIME_TYPES: [MIME_TYPE]}


def is_origin(value: Any) -> bool:
    """Whether ``value`` may stand in a view's CSP field: a string that is wholly an :data:`ORIGIN`
    (``scheme://host[:port]``; no path, no space, no trailing newline)."""
    import re  # (late: loaded already by json; a client that reads no view never compiles the pattern)

    return isinstance(value, str) and re.fullmatch(ORIGIN, value) is not None


def tool_view(meta: Any) -> Tuple[Optional[str], Tuple[str, ...]]:
    """What a tool's ``_meta`` says about its view: the view's ``ui://`` URI (None for a tool
    without one) and who may call the tool (:data:`VISIBILITIES` when it does not say).

    The URI is ``_meta.ui.resourceUri``, else the deprecated ``_meta["ui/resourceUri"]``.
    A value of the wrong shape counts as absent, as it does to a host that knows no MCP Apps:
    the tool is then an ordinary tool. Names in ``visibility`` other than ``"model"`` and
    ``"app"`` are left out.
    """
    if type(meta) is not dict:
        return None, VISIBILITIES
    ui = meta.get(UI)
    if type(ui) is not dict:
        ui = {}
    uri = ui.get(RESOURCE_URI)
    if uri is None:
        uri = meta.get(LEGACY_RESOURCE_URI)
    said = ui.get(VISIBILITY)
    visibility = VISIBILITIES if type(said) is not list else tuple(who for who in VISIBILITIES if who in said)
    return (uri if type(uri) is str and uri.startswith(SCHEME) else None), visibility
