"""The shape of the package, as ARCHITECTURE.md states it: its floors, as rules about what must
never import what, and no import cycle.

The rules count every kind of import: at the top of a module, inside a function, and under
``TYPE_CHECKING`` (a type-only import names a module whose objects the code then calls). They
read the source (``ast``), so they run in milliseconds and fail with the module and line that
broke the rule. Two more are checked at run time, in a fresh interpreter: a client loads no
server module, and a server no client module.
"""

import ast
import importlib
import os
import subprocess
import sys

import minimcp

PACKAGE = os.path.dirname(minimcp.__file__)
#: Modules a folder of pure protocol description must never import (they do I/O or start threads).
IO_MODULES = {"socket", "threading", "subprocess", "http", "urllib", "requests", "websocket", "websockets",
              "socketserver", "wsgiref", "select", "selectors", "sseclient", "queue", "concurrent"}

#: The floors, bottom to top: a folder may import those below it, never one above.
#: (``errors`` and ``logs``, with ``wiretrace`` that ``logs`` loads to trace, are the ground floor
#: every folder stands on.)
FLOORS = ["protocol", "engine", "transports", "server", "client", "integrations", "cli"]

#: folder -> the folders it must never import (beyond "nothing above it on FLOORS").
NEVER = {
    "protocol": {"engine", "transports", "server", "client", "integrations", "cli", "logs", "wiretrace"},
    "engine": {"transports", "server", "client", "integrations", "cli"},
    "transports": {"server", "client", "integrations", "cli"},
    "server": {"client", "integrations", "cli"},
    "client": {"server", "integrations", "cli"},
    "integrations": {"cli"},
}


def _modules():
    """``{dotted name: path}`` of every module in the package."""
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, os.path.dirname(PACKAGE))[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                found[".".join(rel)] = path
    return found


def _imports(module, path, modules, type_checking=True):
    """``(line, imported module)`` for each import of ``module``, wherever it stands; without
    ``type_checking``, those under ``if TYPE_CHECKING:`` are left out."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    skip = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
                skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # `from . import jsonrpc` imports a module
                if f"{target}.{alias.name}" in modules:
                    yield node.lineno, f"{target}.{alias.name}"
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


def _folder(module):
    """The top-level part of minimcp a module belongs to: a folder's name, ``errors``, ``logs``,
    or ``face`` for the package's own ``__init__`` (and ``__main__``)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "face"
    return parts[1]


def _all_imports():
    modules = _modules()
    for module, path in sorted(modules.items()):
        for line, imported in _imports(module, path, modules):
            if imported == "minimcp" or imported.startswith("minimcp."):
                yield module, line, imported


def test_the_protocol_folder_does_no_io_and_starts_no_threads():
    modules = _modules()
    for module, path in modules.items():
        if module.startswith("minimcp.protocol"):
            for line, imported in _imports(module, path, modules):
                assert imported.split(".")[0] not in IO_MODULES, f"{module}:{line} imports {imported}"


def test_each_floor_imports_only_the_floors_below_it():
    broken = []
    for module, line, imported in _all_imports():
        mine, theirs = _folder(module), _folder(imported)
        if mine == theirs or mine == "face" or theirs in ("errors", "logs", "wiretrace"):
            continue
        if theirs == "face" and mine != "cli":  # (the command line is a user of the public API)
            broken.append(f"{module}:{line} imports the package face ({imported}): import from the module itself")
        elif theirs in NEVER.get(mine, ()):
            broken.append(f"{module}:{line} imports {imported}: {mine}/ must never import {theirs}/")
        elif mine in FLOORS and theirs in FLOORS and FLOORS.index(theirs) > FLOORS.index(mine):
            broken.append(f"{module}:{line} imports {imported}, a floor above {mine}/")
    assert not broken, "\n".join(broken)


def test_protocol_imports_nothing_of_minimcp_but_itself_and_errors():
    broken = [f"{module}:{line} imports {imported}" for module, line, imported in _all_imports()
              if _folder(module) == "protocol" and _folder(imported) not in ("protocol", "errors")]
    assert not broken, "\n".join(broken)


def test_no_two_folders_import_each_other():
    edges = {(_folder(m), _folder(i)) for m, _, i in _all_imports() if _folder(m) != _folder(i)}
    both = sorted(f"{a} <-> {b}" for a, b in edges if (b, a) in edges and a < b and "face" not in (a, b))
    assert not both, both


def test_no_import_cycle():
    """Between modules, as they load (type-only and late imports left out: they run later)."""
    modules = _modules()
    graph = {}
    for m, p in modules.items():
        tree = ast.parse(open(p, encoding="utf-8").read())
        late = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(f)}
        graph[m] = {i for line, i in _imports(m, p, modules, type_checking=False) if i in modules and i != m
                    and not any(getattr(n, "lineno", None) == line and id(n) in late for n in ast.walk(tree))}
    for module in graph:  # a package's __init__ importing its own submodules is not a cycle
        graph[module] = {i for i in graph[module] if not module.startswith(i + ".")}
    state = {}

    def visit(module, trail):
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                cycle = trail[trail.index(imported):] + [imported] if imported in trail else [module, imported]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if imported not in state:
                visit(imported, trail + [imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def _loaded_after(code):
    """The ``minimcp.*`` modules loaded in a fresh interpreter after running ``code``."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                          "print('\\n'.join(m for m in sys.modules if m.startswith('minimcp')))"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return set(out.split())


def test_a_client_loads_no_server_module():
    loaded = _loaded_after("import minimcp.client\nfrom minimcp import connect, Client")
    assert not {m for m in loaded if m.startswith("minimcp.server")}, sorted(loaded)


def test_a_server_loads_no_client_module():
    loaded = _loaded_after("from minimcp import Server\nserver = Server('s')\n"
                           "@server.tool()\ndef echo(text: str) -> str:\n    return text\n"
                           "app = server.wsgi_app()")
    assert "minimcp.server.server" in loaded
    assert not {m for m in loaded if m.startswith(("minimcp.client", "minimcp.integrations", "minimcp.cli"))}, \
        sorted(loaded)


#: The import paths README.md, docs/ and examples/ show, and a name each must have.
DOCUMENTED = {
    "minimcp": ["Server", "Context", "connect", "Client"],
    "minimcp.server": ["Server", "Context"],
    "minimcp.client": ["Client", "connect"],
    "minimcp.server.http": ["MCPApp", "bearer_token_auth", "Unauthorized", "EventStore", "MemoryEventStore"],
    "minimcp.server.http.wsgiserver": ["serve", "BackgroundServer"],
    "minimcp.server.http.django": ["mcp_urls"],
    "minimcp.server.auth": ["ProtectedResource", "JWTVerifier", "IntrospectionVerifier", "Principal"],
    "minimcp.client.auth": ["OAuth", "ClientCredentials", "BearerToken", "FileTokenStore"],
    "minimcp.integrations.hub": ["ToolHub"],
    "minimcp.integrations.adapters": ["to_anthropic_tools", "to_openai_chat_tools", "handle_anthropic_call"],
    "minimcp.protocol.jsonrpc": ["parse", "encode", "Request", "INVALID_PARAMS"],
    "minimcp.engine.tracing": ["tracing", "session_digest"],
}


def test_the_documented_import_paths_work():
    for module, names in DOCUMENTED.items():
        if module == "minimcp.server.http.django":
            continue  # (needs Django settings to import; tests/test_mounts.py imports it in a project)
        imported = importlib.import_module(module)
        missing = [name for name in names if not hasattr(imported, name)]
        assert not missing, f"{module} lost {missing}"
