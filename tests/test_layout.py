"""The shape of the package, as ARCHITECTURE.md states it: layers, sizes, no import cycle.

These read the source (``ast``), so they run in milliseconds and fail with the
module and line that broke the rule.
"""

import ast
import os

import minimcp
import minimcp.wsgi  # noqa: F401  (an old path, checked below)

PACKAGE = os.path.dirname(minimcp.__file__)
#: The longest a module may grow: about 450 lines, as ARCHITECTURE.md says, with a little room for a
#: docstring. A module that needs more is asking to be split along a seam.
LONGEST = 470
#: Modules a folder of pure protocol description must never import (they do I/O or start threads).
IO_MODULES = {"socket", "threading", "subprocess", "http", "urllib", "requests", "websocket", "websockets",
              "socketserver", "wsgiref", "select", "selectors", "sseclient", "queue", "concurrent"}


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


def _imports(module, path, modules):
    """``(line, imported module)`` for each import of ``module``, type-checking-only ones left out."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    skip = set()
    for node in ast.walk(tree):  # `if TYPE_CHECKING:` blocks are for the type checker alone
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


def test_the_protocol_folder_does_no_io_and_starts_no_threads():
    modules = _modules()
    for module, path in modules.items():
        if module.startswith("minimcp.protocol"):
            for line, imported in _imports(module, path, modules):
                assert imported.split(".")[0] not in IO_MODULES, f"{module}:{line} imports {imported}"


def test_no_import_cycle():
    modules = _modules()
    graph = {m: {i for _, i in _imports(m, p, modules) if i in modules and i != m} for m, p in modules.items()}
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


def test_modules_stay_short_and_the_top_level_small():
    long = {m: n for m, p in _modules().items() if (n := sum(1 for _ in open(p, encoding="utf-8"))) > LONGEST}
    assert not long, f"modules past {LONGEST} lines: {long}"
    top = [name for name in os.listdir(PACKAGE) if name.endswith(".py")]
    assert len(top) <= 12, sorted(top)


#: What users could import from the modules the restructuring moved (each old path is a thin alias now).
OLD_PATHS = {
    "minimcp.wsgi": ["MCPApp", "Unauthorized", "bearer_token_auth", "EventStore", "MemoryEventStore",
                     "LOCAL_HOSTS", "JSON_HEADERS", "SSE_HEADERS"],
    "minimcp.hub": ["ToolHub", "qualified_names", "ServerStartError", "MAX_NAME", "SEPARATOR", "Target", "parse_entry"],
    "minimcp.adapters": ["ToolCall", "Caller", "Tools", "API_NAME", "to_openai_chat_tools", "to_openai_responses_tools",
                         "to_anthropic_tools", "parse_openai_chat_call", "parse_openai_responses_call",
                         "parse_anthropic_call", "run_tool_call", "openai_chat_result", "openai_responses_result",
                         "anthropic_result", "handle_openai_chat_call", "handle_openai_responses_call",
                         "handle_anthropic_call"],
    "minimcp.jsonrpc": ["PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
                        "RESOURCE_NOT_FOUND", "URL_ELICITATION_REQUIRED", "HEADER_MISMATCH",
                        "MISSING_REQUIRED_CLIENT_CAPABILITY", "UNSUPPORTED_PROTOCOL_VERSION", "RequestId", "Request",
                        "Notification", "Response", "ErrorResponse", "Malformed", "Message", "Parsed", "parse",
                        "from_dict", "dumps", "encode"],
    "minimcp.server": ["Server", "Context"],
    "minimcp.client": ["Client", "connect"],
}


def test_old_import_paths_keep_working():
    import importlib

    for module, names in OLD_PATHS.items():
        imported = importlib.import_module(module)
        missing = [name for name in names if not hasattr(imported, name)]
        assert not missing, f"{module} lost {missing}"
    assert minimcp.wsgi.bearer_token_auth is importlib.import_module("minimcp.http.security").bearer_token_auth
