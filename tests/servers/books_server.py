"""A stdio server whose resource errors carry data: the ``minimcp`` command's error line
shows only what the data adds to the message (tests/test_cli.py)."""

from minimcp import RPCError, Server
from minimcp.protocol.jsonrpc import INVALID_PARAMS

server = Server("books", version="1.0.0")
BOOKS = {"dune": "Dune, by Frank Herbert."}


@server.resource("books://{name}")
def book(name: str) -> str:
    """A book's line; a name it does not know is an error whose data says which it knows."""
    if name in BOOKS:
        return BOOKS[name]
    data = {"uri": f"books://{name}"}
    close = [known for known in BOOKS if known.startswith(name)]
    if close:
        data["did_you_mean"] = f"books://{close[0]}"
    raise RPCError(INVALID_PARAMS, f"Resource not found: books://{name} ({name})", data)


if __name__ == "__main__":
    server.run()
