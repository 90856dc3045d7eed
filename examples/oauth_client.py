"""Log in to an MCP server that asks for OAuth authorization, then list its tools.

    python examples/oauth_client.py https://mcp.example.com/mcp
    python examples/oauth_client.py https://mcp.example.com/mcp --headless   # no browser on this machine

The first run opens your browser on the server's login page (headless: it
prints the URL, and you paste back the URL the browser ends up on). The
token is kept in ~/.config/minimcp/oauth (readable by you alone), so the
next run goes straight in, refreshing the token when it has expired.
What happens in between, all done by minimcp.client.auth.OAuth: the server's 401
names its protected resource metadata, which names its authorization
server; minimcp reads that server's metadata, registers itself there
(or uses the client you name), and runs the authorization code flow with
PKCE, for the scopes the server asks for.
"""

import sys

import minimcp
from minimcp.client.auth import OAuth


def main(argv: list) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    url = argv[0]
    auth = OAuth(headless="--headless" in argv)
    with minimcp.connect(url, auth=auth) as client:
        token = auth.token_for(url)
        print(f"logged in to {client.server_info.get('name')} with scopes: {' '.join(token.scopes or [])}")
        for tool in client.list_tools():
            print(f"  tool {tool.name}: {tool.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
