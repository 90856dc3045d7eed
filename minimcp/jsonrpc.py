"""Old path of :mod:`minimcp.protocol.jsonrpc`, kept for code that imports it from here."""

from .protocol.jsonrpc import *  # noqa: F401,F403
from .protocol.jsonrpc import Malformed, Message, Parsed, RequestId  # noqa: F401 (the aliases are made on first use)
