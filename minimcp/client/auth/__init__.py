"""OAuth 2.1 for the client: reach MCP servers that ask for authorization.

::

    import minimcp
    from minimcp.client.auth import OAuth, ClientCredentials

    minimcp.connect(url, auth=OAuth())                                  # a person, in a browser
    minimcp.connect(url, auth=OAuth(headless=True))                     # ... on a machine with no browser
    minimcp.connect(url, auth=ClientCredentials("svc", client_secret=s))  # a service
    minimcp.connect(url, auth="a-token-you-already-have")               # a bearer token

The modules, in the order a flow uses them: ``discovery`` (the challenge,
the protected resource metadata, the authorization server metadata),
``registration`` (who the client is), ``pkce`` and ``redirect`` (the
browser round trip), ``tokens`` (the token request), ``signing`` (JWTs:
client assertions, DPoP), ``store`` (tokens between runs), ``authorizer``
(the hook the HTTP transports call), ``flows`` (one class per grant); and
``urls``, the rule every URL a server names passes before it is used.
"""

from ...errors import AuthError
from .authorizer import Authorizer
from .flows import BearerToken, ClientCredentials, EnterpriseAuth, JWTBearer, OAuth
from .store import FileTokenStore, MemoryTokenStore, TokenStore
from .tokens import Token

__all__ = ["OAuth", "ClientCredentials", "JWTBearer", "EnterpriseAuth", "BearerToken", "Authorizer",
           "TokenStore", "FileTokenStore", "MemoryTokenStore", "Token", "AuthError"]
