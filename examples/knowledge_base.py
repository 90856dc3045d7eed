"""A knowledge-base server that shows every server feature of MCP, in one file.

    python examples/knowledge_base.py          # serves stdio; start it from a client

- tools: ``search`` (structured results, logging), ``reindex`` (progress
  and cancellation), ``summarize`` (asks the client's LLM: sampling),
  ``rate`` (asks the user: elicitation), ``workspace`` (the client's roots),
  ``update`` (tells subscribers a resource changed);
- resources: ``kb://index`` (JSON) and the template ``kb://docs/{doc_id}``;
- a prompt: ``ask`` (a question about one document, which it embeds);
- completion of ``doc_id`` for both the template and the prompt.
"""

import logging
from dataclasses import dataclass
from typing import Annotated, List

from minimcp import CapabilityError, Context, EmbeddedResource, Message, Server, ToolError

log = logging.getLogger("kb")
log.setLevel(logging.DEBUG)  # let the client choose what it sees (logging/setLevel)

server = Server("knowledge-base", version="1.0.0",
                instructions="Search the knowledge base, then read kb://docs/{doc_id} for the full text.")

DOCS = {
    "threads": "# Threads\nA thread runs code concurrently with other threads in one process.",
    "queues": "# Queues\nqueue.Queue hands work between threads safely, first in, first out.",
    "futures": "# Futures\nA Future holds a result that is not ready yet; result() waits for it.",
    "mcp": "# MCP\nThe Model Context Protocol connects LLM applications to tools and data.",
}


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------

@dataclass
class Hit:
    doc_id: str
    title: str
    score: int


@server.tool(annotations={"readOnlyHint": True})
def search(query: Annotated[str, "Words to look for"], limit: int = 3) -> List[Hit]:
    """Search the documents; the best matches first."""
    words = query.lower().split()
    hits = [Hit(doc_id, text.splitlines()[0].lstrip("# "), sum(text.lower().count(w) for w in words))
            for doc_id, text in DOCS.items()]
    hits = sorted((h for h in hits if h.score), key=lambda h: -h.score)[:limit]
    log.info("search %r: %d hits", query, len(hits))  # reaches the client at level info
    return hits


@server.tool()
def reindex(seconds_per_doc: float = 0.05, ctx: Context = None) -> str:
    """Rebuild the index slowly, reporting progress; stops early when cancelled."""
    for done, doc_id in enumerate(DOCS, start=1):
        if ctx.cancelled.wait(seconds_per_doc):  # returns True as soon as the client cancels
            log.warning("reindex cancelled after %d documents", done - 1)
            return f"cancelled after {done - 1} documents"
        ctx.report_progress(done, total=len(DOCS), message=f"indexed {doc_id}")
    return f"reindexed {len(DOCS)} documents"


@server.tool()
def summarize(doc_id: str, ctx: Context) -> str:
    """Summarize a document with the client's LLM (or its first line, if the client has none)."""
    text = _doc(doc_id)
    try:
        reply = ctx.sample(f"Summarize in one sentence:\n\n{text}", max_tokens=100,
                           system_prompt="You write terse summaries.")
    except CapabilityError:
        return text.splitlines()[1]
    return reply["content"]["text"]


@server.tool()
def rate(doc_id: str, ctx: Context) -> str:
    """Ask the user to rate a document."""
    _doc(doc_id)
    answer = ctx.elicit(f"How useful is {doc_id!r}?", {
        "type": "object",
        "properties": {"stars": {"type": "integer", "minimum": 1, "maximum": 5},
                       "comment": {"type": "string", "default": ""}},
        "required": ["stars"]})
    if answer["action"] != "accept":
        return f"no rating ({answer['action']})"
    return f"{doc_id}: {answer['content']['stars']} stars {answer['content']['comment']}".rstrip()


@server.tool()
def workspace(ctx: Context) -> List[str]:
    """The client's workspace roots."""
    return [root["uri"] for root in ctx.list_roots()]


@server.tool()
def update(doc_id: str, text: str) -> str:
    """Replace a document's text; subscribers of its resource are told."""
    _doc(doc_id)
    DOCS[doc_id] = text
    server.notify_resource_updated(f"kb://docs/{doc_id}")
    return f"updated {doc_id}"


def _doc(doc_id: str) -> str:
    if doc_id not in DOCS:
        raise ToolError(f"no document {doc_id!r}; try one of {sorted(DOCS)}")
    return DOCS[doc_id]


# ---------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------

def complete_doc_id(value: str) -> List[str]:
    return [doc_id for doc_id in sorted(DOCS) if doc_id.startswith(value)]


@server.resource("kb://index", mime_type="application/json", description="Every document's id and title.")
def index() -> dict:
    return {doc_id: text.splitlines()[0].lstrip("# ") for doc_id, text in DOCS.items()}


@server.resource("kb://docs/{doc_id}", mime_type="text/markdown", complete={"doc_id": complete_doc_id})
def document(doc_id: str) -> str:
    """One document, as Markdown."""
    return DOCS[doc_id]  # a KeyError here means "resource not found" (-32002)


# ---------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------

@server.prompt(title="Ask about a document", complete={"doc_id": complete_doc_id})
def ask(question: str, doc_id: str = "mcp") -> list:
    """Ask a question about one document.

    Args:
        question: What you want to know.
        doc_id: Which document to ask about.
    """
    return [Message(EmbeddedResource(f"kb://docs/{doc_id}", _doc(doc_id), "text/markdown")),
            Message(f"Using the document above, answer: {question}")]


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)  # stderr; stdout belongs to the protocol
    server.run()
