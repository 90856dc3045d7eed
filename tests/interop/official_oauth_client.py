"""The official MCP Python SDK's client against a protected minimcp server (run in the SDK's venv).

    python official_oauth_client.py static URL TOKEN
        a 401 without a token, the SDK's own parsing of our challenge and RFC 9728 metadata,
        then a tool call with the token as a plain bearer header;
    python official_oauth_client.py oauth URL
        the SDK's OAuthClientProvider on its own: discovery, dynamic registration, the
        authorization code flow with PKCE against the authorization server our metadata names
        (this script plays the browser on its login and consent pages), a tool call, and a
        step-up on 403 insufficient_scope.

Prints one JSON object per step on stdout; the test reads them.
"""

import asyncio
import html.parser
import json
import sys
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp.client import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken, ProtectedResourceMetadata

REDIRECT = "http://127.0.0.1:9/callback"


def say(**step):
    print(json.dumps(step), flush=True)


class Form(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.action, self.fields, self.done = None, {}, False

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = values.get("action") or ""
        elif tag in ("input", "button") and self.action is not None and not self.done and values.get("name"):
            self.fields[values["name"]] = values.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.done = True


def play_browser(url, login):
    """Sign in and consent on the authorization server's own pages; the redirect's query."""
    with httpx2.Client(timeout=10) as browser:
        for _ in range(20):
            response = browser.get(url)
            while response.is_redirect:
                url = urljoin(url, response.headers["Location"])
                if url.startswith(REDIRECT):
                    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
                response = browser.get(url)
            form = Form()
            form.feed(response.text)
            fields = dict(form.fields)
            if fields.get("prompt") == "login":
                fields.update(login=login, password="any")
            response = browser.post(urljoin(url, form.action), data=fields)
            url = urljoin(url, response.headers["Location"])
            if url.startswith(REDIRECT):
                return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    raise RuntimeError("never redirected back")


class Memory:
    def __init__(self):
        self.tokens, self.client = None, None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


async def static(url, token):
    async with httpx2.AsyncClient(timeout=10) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        refused = await http.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
        metadata_url = extract_resource_metadata_from_www_auth(refused)
        urls = build_protected_resource_metadata_discovery_urls(metadata_url, url)
        metadata = ProtectedResourceMetadata.model_validate_json((await http.get(urls[0])).content)
        say(step="challenge", status=refused.status_code, resource_metadata=metadata_url,
            scope=extract_scope_from_www_auth(refused), discovery=urls, resource=str(metadata.resource),
            authorization_servers=[str(a) for a in metadata.authorization_servers])
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("whoami", {})
            say(step="call", text=result.content[0].text)


async def oauth(url):
    pending = {}

    async def redirect_handler(authorization_url):
        query = parse_qs(urlsplit(authorization_url).query)
        say(step="authorize", scope=query.get("scope", [""])[0], resource=query.get("resource", [""])[0],
            code_challenge_method=query.get("code_challenge_method", [""])[0])
        back = play_browser(authorization_url, "dana")
        if "code" not in back:
            raise RuntimeError(f"the authorization server refused: {back}")
        pending.clear()
        pending.update(back)

    async def callback_handler():
        return AuthorizationCodeResult(code=pending["code"], state=pending.get("state"), iss=pending.get("iss"))

    provider = OAuthClientProvider(url, OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="official sdk",
                                                            grant_types=["authorization_code", "refresh_token"],
                                                            response_types=["code"], token_endpoint_auth_method="none"),
                                   Memory(), redirect_handler, callback_handler)
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("whoami", {})
            say(step="call", text=result.content[0].text)
            result = await client.call_tool("write_file", {"name": "a", "text": "b"})
            say(step="step-up", text=result.content[0].text, is_error=bool(result.is_error))


if __name__ == "__main__":
    mode = sys.argv[1]
    asyncio.run(static(sys.argv[2], sys.argv[3]) if mode == "static" else oauth(sys.argv[2]))
