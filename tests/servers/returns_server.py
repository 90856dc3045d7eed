"""A stdio server whose tools return what the return rules cover (docs/return-values.md)."""

from typing import List, Optional

from minimcp import EmbeddedResource, Image, Server

server = Server("typed", version="1.0.0")

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4"
       b"\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
NOTES = {"greeting": "hello"}


@server.tool()
def chart(title: str) -> list:
    """A chart with a caption and its data."""
    return [f"Here is {title}:", Image(PNG), EmbeddedResource("file:///data.csv", "x,y\n1,2\n", "text/csv")]


@server.tool()
def chart_unannotated(title: str):
    """The same, with no return annotation."""
    return [Image(PNG), f"{title}, above"]


@server.tool()
def lookup(key: str) -> Optional[str]:
    """A note, or nothing."""
    return NOTES.get(key)


@server.tool()
def find(key: str) -> Optional[dict]:
    """A note as an object, or nothing."""
    return {"key": key, "note": NOTES[key]} if key in NOTES else None


@server.tool()
def stats(values: List[float], tags: List[str] = None) -> dict:
    """Sum some values."""
    return {"sum": sum(values), "tags": tags or []}


if __name__ == "__main__":
    server.run()
