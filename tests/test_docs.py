"""The documentation says what is true: its code runs, its install lines install, its reference
shows what the code takes.

The tutorial (docs/tutorial/first-server-and-client.md) is followed as a reader
would: its two files are written out, the client is run, and its output is
compared with the page's console block. Every ``pip install`` line of the README,
the docs and the examples is either a checkout install, run here offline, or the
package-index line marked for the release that does not exist yet (issue 28). The
site is built (`python -m mkdocs build --strict`, as .ci/run does, from the `docs`
extra in a venv of its own, made once and cached) and its API reference read back.
"""

import glob
import html
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLES, PY, ROOT, SDK_VENV

DOCS = os.path.join(ROOT, "docs")
TUTORIAL = os.path.join(DOCS, "tutorial", "first-server-and-client.md")
#: Throwaway venvs the tests make once and keep (beside the official SDK's).
CACHE = os.path.dirname(SDK_VENV)


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


# ---- install lines (issue 28) ------------------------------------------------------------------

#: The directory a docs page installs from: a checkout of the repository (or its unpacked sdist).
CHECKOUT = "minimcp-sync"
PIP = re.compile(r"(?:python3? -m )?pip install\s+([^&#;)`\n]*)")
ONCE_RELEASED = re.compile(r"\bonce\b[^.]*\breleased\b", re.I)
#: Index lines not yet reworded to the checkout install and "once released" (none left).
NOT_YET_MARKED: set = set()


def pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        return f.read()


def extras():
    """``{name: [requirement, ...]}`` of pyproject.toml's optional dependencies (no tomllib on 3.9)."""
    table = pyproject().split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return {name: re.findall(r'^\s*"([^"]+)"', body, re.M)
            for name, body in re.findall(r"^([A-Za-z][\w-]*) = \[(.*?)^\]", table, re.M | re.S)}


def build_requires():
    return re.findall(r'"([^"]+)"', re.search(r"^requires = \[(.*?)\]", pyproject(), re.M | re.S).group(1))


def paragraph(lines, index):
    """The blank-line-delimited paragraph of ``lines`` around ``lines[index]``, as one string."""
    start, end = index, index
    while start > 0 and lines[start - 1].strip():
        start -= 1
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return " ".join(lines[start:end + 1])


def install_lines():
    """``(file, line number, pip's arguments, the words around them)`` for every ``pip install`` in the
    README, the docs pages and the examples: a shell block's line, an inline code span, a Python comment."""
    files = ([os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))
             + sorted(glob.glob(os.path.join(EXAMPLES, "**", "*.py"), recursive=True)))
    found = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        markdown, fenced = path.endswith(".md"), False
        for index, line in enumerate(lines):
            if markdown and line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if markdown and not fenced:
                segments, around = re.findall(r"`([^`]+)`", line), paragraph(lines, index)
            else:
                segments, around = [line], line   # a block's line says it all, or its comment does
            for segment in segments:
                for args in PIP.findall(segment):
                    found.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), index + 1, args.strip(), around))
    return found


def parse_install(args):
    """``(options, local targets, requirements)`` of ``pip install ARGS``: a local target is a path
    (``.``, ``./minimcp-sync``, maybe with ``[extras]``), a requirement a name from an index."""
    words, options, local, wanted = shlex.split(args), [], [], []
    while words:
        word = words.pop(0)
        if word in ("-e", "--editable"):
            options.append(word)
        elif word in ("-C", "--config-settings"):
            options += [word, words.pop(0)]
        elif word.startswith("-"):
            raise AssertionError(f"pip install {args}: teach this test what {word} does")
        elif word.startswith((".", "/")):
            local.append(word)
        else:
            wanted.append(word)
    return options, local, wanted


def test_every_install_line_is_a_checkout_or_waits_for_the_release():
    """No line tells a reader to install what cannot be installed: a checkout install names the checkout
    and an extra that exists; ``minimcp-sync`` from the index is said to come once released; ``minimcp``
    (an unrelated project on the index) is never installed."""
    lines = install_lines()
    known = set(extras())
    from_checkout = {file for file, _, args, _ in lines if parse_install(args)[1]}
    assert {"README.md", "docs/index.md", "docs/tutorial/first-server-and-client.md"} <= from_checkout
    assert [(file, n, args) for file, n, args, _ in lines[:2]] == [   # the README's two commands, first
        ("README.md", 4, "."), ("README.md", 5, "'.[test]'")]
    wrong = []
    for file, number, args, around in lines:
        where = f"{file}:{number}: pip install {args}"
        options, local, wanted = parse_install(args)
        for target in local:
            path, _, extra = target.partition("[")
            if path not in (".", f"./{CHECKOUT}"):
                wrong.append(f"{where}: {path} is not the checkout ('.' inside it, ./{CHECKOUT} beside it)")
            if set(extra.rstrip("]").split(",")) - known - {""}:
                wrong.append(f"{where}: no extra [{extra} in pyproject.toml")
        for requirement in wanted:
            name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement).group(0).lower().replace("_", "-")
            extra = re.search(r"\[([^\]]+)\]", requirement)
            if name == "minimcp":
                wrong.append(f"{where}: 'minimcp' on the index is an unrelated project")
            elif name == "minimcp-sync":
                if extra and set(extra.group(1).split(",")) - known:
                    wrong.append(f"{where}: no extra [{extra.group(1)}] in pyproject.toml")
                if not ONCE_RELEASED.search(around) and (file, args) not in NOT_YET_MARKED:
                    wrong.append(f"{where}: nothing is released yet: give the checkout install and say "
                                 "this line is for once minimcp is released")
    assert wrong == []


def cached_venv(name, requirements):
    """The python of a venv under ~/.cache/minimcp-tests holding ``requirements``, made once and made
    anew when they change; skipped, saying why, when pip cannot install them (the first time needs the
    package index; every later run is offline)."""
    venv = os.path.join(CACHE, name)
    python = os.path.join(venv, "bin", "python")
    stamp, wanted = os.path.join(venv, "minimcp-requirements.txt"), "\n".join(requirements) + "\n"
    if os.path.exists(python) and os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            if f.read() == wanted:
                return python
    made = subprocess.run([PY, "-m", "venv", "--clear", venv], capture_output=True, text=True)
    if made.returncode == 0:
        made = subprocess.run([python, "-m", "pip", "install", "-q", *requirements], capture_output=True, text=True,
                              timeout=600)
    if made.returncode != 0:
        pytest.skip(f"cannot install {requirements} into {venv}: {made.stderr[-300:]}")
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(wanted)
    return python


def copy_checkout(to):
    """A copy of the work tree at ``to`` without what builds and tools leave in it: pip builds a checkout
    in place (build/, *.egg-info), and the test must not write into the repository."""
    left_out = shutil.ignore_patterns(".git", ".venv*", "build", "dist", "site", "*.egg-info", "__pycache__",
                                      ".*_cache", ".hypothesis", "conformance-results", "node_modules")
    shutil.copytree(ROOT, to, ignore=left_out, symlinks=True)


@pytest.mark.timeout(600)   # the first run makes the build venv (pip, from the index); later runs take seconds
def test_the_checkout_install_lines_install_offline(tmp_path):
    """Each kind of checkout install line of the docs runs as written, from a copy of the checkout of its own, with
    pip kept offline (``--no-index --no-deps --no-build-isolation``, the build backend from a cached venv):
    the README's first, ``pip install .``, for real into a folder, and then the quickstart runs on what was
    installed, not on the source tree; the others as ``--dry-run`` (built, not written anywhere)."""
    python = cached_venv("build", build_requires())
    kinds = {}   # the first line of each kind of install (its path, editable or not, its settings), as written
    for file, number, args, _ in install_lines():
        options, local, wanted = parse_install(args)
        if local:   # each line's path, extras and quoting are checked above; what comes from the index is left out
            paths = tuple(sorted({target.partition("[")[0] for target in local}))
            words = [word for word in shlex.split(args) if word not in wanted]
            kinds.setdefault((paths, tuple(options)), (words, paths, f"{file}:{number}: pip install {args}"))
    runs = list(kinds.values())
    # the README's `pip install .`, the tutorial's and the docs home's `pip install ./minimcp-sync`, editables
    assert {(".",), (f"./{CHECKOUT}",)} <= {paths for _, paths, _ in runs} and len(runs) >= 3, runs
    procs = []
    try:
        for index, (words, paths, where) in enumerate(runs):
            checkout = tmp_path / f"run{index}" / CHECKOUT   # pip builds in place: a copy each, run side by side
            copy_checkout(checkout)
            command = [python, "-m", "pip", "install", "--no-index", "--no-deps", "--no-build-isolation"]
            if words == ["."]:   # the README's first command: installed for real, then run below
                installed = tmp_path / f"run{index}" / "installed"
                command += ["--no-compile", "--target", str(installed)]
            else:                # the others: pip reads the checkout and builds its metadata, then writes nothing
                command.append("--dry-run")
            cwd = checkout if paths == (".",) else checkout.parent   # "." inside the checkout, ./minimcp-sync beside
            procs.append((where, subprocess.Popen([*command, *words], cwd=cwd, stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE, text=True)))
        for where, proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"{where}\n{out[-1500:]}{err[-1500:]}"
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    # `pip install . && python examples/quickstart.py`, the README's first line, on the installed copy
    env = dict(os.environ, PYTHONPATH=str(installed))
    where = subprocess.run([PY, "-c", "import minimcp; print(minimcp.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(installed)), where
    out = subprocess.run([PY, os.path.join("examples", "quickstart.py")], cwd=installed.parent / CHECKOUT, env=env,
                         capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("connected to weather (protocol 2026-07-28)\n"), out.stdout


# ---- the API reference, as the site renders it (issue 28) ---------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """``{page: html}`` of the built site's API reference (client, server): `mkdocs build --strict` as
    .ci/run runs it, from the `docs` extra in a cached venv; skipped when that venv cannot be made."""
    if sys.version_info < (3, 10):
        pytest.skip("the docs extra (mkdocstrings-python 2) needs Python 3.10 or newer")
    python = cached_venv("docs", extras()["docs"])
    site = tmp_path_factory.mktemp("site")
    # Material for MkDocs prints an end-of-life banner on every build (mkdocs.yml says what follows).
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    out = subprocess.run([python, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    pages = {}
    for page in ("client", "server"):
        with open(os.path.join(site, "reference", page, "index.html"), encoding="utf-8") as f:
            pages[page] = f.read()
    return pages


def text(fragment):
    """What a reader sees of an HTML fragment: no tags, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def section(page, anchor):
    """The HTML from the heading ``anchor`` to the next object heading."""
    start = page.index(f'id="{anchor}"')
    end = page.find('class="doc doc-heading', page.index('class="doc doc-heading', start) + 1)
    return page[start:end if end > 0 else len(page)]


def parameters(page, anchor=None):
    """``{name: (type, default)}`` of the parameter table under the heading ``anchor`` (of every table)."""
    table = {}
    for row in re.findall(r'<tr class="doc-section-item">(.*?)</tr>', section(page, anchor) if anchor else page, re.S):
        cells = [" ".join(text(cell).split()) for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]
        if len(cells) == 4:   # name, type, description, default: a parameters table
            table[cells[0]] = (cells[1], cells[3])
    return table


def signatures(page, anchor):
    return [text(sig) for sig in re.findall(r'class="doc-signature[^"]*">(.*?)</code>', section(page, anchor), re.S)]


@pytest.mark.timeout(900)   # the first run makes the docs venv (pip, from the index); later runs take seconds
def test_the_reference_shows_what_the_code_takes(reference):
    """The parameter tables take each row's type and default from the signature: ``**handlers`` keeps its
    stars (``handlers={...}`` is a TypeError), a docstring line that names two parameters is two rows, each
    typed, with its default (not *required*). Signatures are formatted one parameter a line, and a method
    with typing overloads shows one signature."""
    client, server = reference["client"], reference["server"]
    connect = parameters(client, "minimcp.connect")
    assert connect["**handlers"][0] == "Any" and "handlers" not in connect
    assert connect["timeout"] == ("float", "60.0")
    assert parameters(server, "minimcp.Server")["cache_ttl_ms"] == ("int", "0")
    assert parameters(server, "minimcp.Server")["cache_scope"] == ("str", "'public'")
    add_tool = parameters(server, "minimcp.Server.add_tool")
    assert add_tool["input_schema"] == add_tool["output_schema"] == ("Optional[Dict[str, Any]]", "None")
    sample = parameters(server, "minimcp.Context.sample")
    assert sample["tools"] == ("Optional[List[Dict[str, Any]]]", "None")
    assert sample["tool_choice"] == ("Optional[Dict[str, Any]]", "None")
    assert [name for name in parameters(client + server) if "," in name] == []

    assert server.count('id="minimcp.Server.tool"') == 1
    (tool,) = signatures(server, "minimcp.Server.tool")   # the implementation's, not each overload's
    assert " ".join(tool.split()) == "tool( fn: Optional[F] = None, **options: Any ) -> Union[F, Callable[[F], F]]"
    (connect_signature,) = signatures(client, "minimcp.connect")
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        line_length = int(re.search(r"^\s*line_length: (\d+)", f.read(), re.M).group(1))
    assert "\n    **handlers: Any,\n" in connect_signature
    assert max(map(len, connect_signature.splitlines())) <= line_length
