"""The documentation site's code runs and prints what the pages say it prints.

The tutorial (docs/tutorial/first-server-and-client.md) is followed as a reader
would: its two files are written out, the client is run, and its output is
compared with the page's console block. The site itself is built by .ci/run
(`python -m mkdocs build --strict`), which needs the `docs` extra.
"""

import os
import re
import subprocess

import pytest

from conftest import PY, ROOT

DOCS = os.path.join(ROOT, "docs")
TUTORIAL = os.path.join(DOCS, "tutorial", "first-server-and-client.md")


def titled_blocks(path):
    """``{title: code}`` of the page's ```python title="..." blocks."""
    with open(path, encoding="utf-8") as f:
        page = f.read()
    return dict(re.findall(r'```python title="([^"]+)"\n(.*?)```', page, re.S)), page


@pytest.mark.skipif(not os.path.exists(TUTORIAL), reason="the docs are not in this tree")
def test_the_tutorial_runs_as_written(tmp_path):
    blocks, page = titled_blocks(TUTORIAL)
    assert set(blocks) == {"notes_server.py", "notes_client.py"}
    for name, code in blocks.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    out = subprocess.run([PY, "notes_client.py"], cwd=tmp_path, capture_output=True, text=True, encoding="utf-8",
                         timeout=60)
    assert out.returncode == 0, out.stderr
    shown = re.search(r"```console\n\$ python notes_client.py\n(.*?)```", page, re.S).group(1)
    assert out.stdout == shown


def test_the_readme_renders_on_an_index():
    """README.md is the long description on the package index: links there must be absolute."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    links = re.findall(r"\]\(([^)]+)\)", readme)
    assert links and [link for link in links if not link.startswith(("https://", "http://", "#"))] == []
    # The two commands of a checkout come first; right after them, the line an index reader can use.
    assert readme.split("```")[1].startswith("sh\npip install . && ")
    assert "pip install minimcp-sync" in readme.split("```")[2].split("\n\n")[1]


def test_every_docs_page_is_in_the_nav():
    """mkdocs --strict (in .ci/run) fails on a page left out of mkdocs.yml's nav: catch it here, fast."""
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        nav = f.read().split("\nnav:", 1)[1]
    docs = os.path.join(ROOT, "docs")
    pages = [os.path.relpath(os.path.join(folder, name), docs).replace(os.sep, "/")
             for folder, _, names in os.walk(docs) for name in names
             if name.endswith(".md") and "extensions" not in folder]
    assert pages and [page for page in pages if page not in nav] == []
