"""minimcp's contender: the echo tool served the way the README shows, public API only."""

from minimcp import Server

server = Server("bench-echo")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


server.run()
