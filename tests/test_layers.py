"""The folder list is the architecture (DESIGN.md, "Architecture"): each package of `codememory` sits in a layer
and imports only from layers below it, entry points never import one another, and no two modules import each
other, directly or round a loop. Every import counts, including the lazy ones inside functions and the ones
only type checkers read: a dependency hidden from start-up is still a dependency."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "codememory"

# Lower number = lower layer. A package may import its own modules and any package of a strictly lower layer.
LAYERS: dict[str, int] = {
    "errors": 0,  # the one error tree
    "core": 0,  # model, dates, config, paths, project, registry, trust, safe file I/O
    "text": 1,  # entities, query syntax, privacy, rendering into context, token estimate
    "assistants": 1,  # one spec per coding assistant: pure data and small functions every layer above reads
    "store": 2,  # SQL only
    "embedding": 3,  # providers, vector index, semantic search
    "retrieval": 4,  # lexical + fuzzy, fusion, proactive retrieval
    "sessions": 4,  # checkpoints, markdown, git
    "service": 5,  # the project store as a library (open_store)
    "capture": 6,  # OpenCode db, Claude/Codex transcripts, raw events, daily log
    "remote": 6,  # the organisation's memory on Milvus: publish, org-wide search (pymilvus, lazily)
    "extract": 7,  # rules, model, budget, the capture-and-extract pass
    "operations": 8,  # one module per agent/user operation, typed results
    "web": 9,  # HTTP security shared by the daemon and `mcp --http`
    "hooks": 10,
    "mcp": 10,
    "daemon": 10,
    "install": 10,
    "cli": 11,  # the umbrella command: may start the daemon, the MCP server, run hooks and init
}
ENTRY_POINTS = {name for name, rank in LAYERS.items() if rank == 10}
ROOT = "__init__"  # `codememory` itself: the lazy public API, at the service's level
LAYERS[ROOT] = LAYERS["service"]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["codememory", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[str]:
    """Every codememory module `name` imports (a `from package import module` names the module)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                if f"{module}.{alias.name}" in MODULES:
                    yield f"{module}.{alias.name}"
                elif module in MODULES:
                    yield module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in MODULES)


GRAPH = {name: sorted(set(_imports(name, path)) - {name}) for name, path in MODULES.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def test_every_package_has_a_layer() -> None:
    assert {_package(m) for m in MODULES} <= set(LAYERS), "a new package needs a place in LAYERS (and DESIGN.md)"


def _against_layers(graph: dict[str, list[str]]) -> list[str]:
    wrong = []
    for module, imported in graph.items():
        here = _package(module)
        for target in imported:
            there = _package(target)
            if here == there:
                continue
            if LAYERS[there] > LAYERS[here] or (here in ENTRY_POINTS and there in ENTRY_POINTS):
                wrong.append(f"{module} -> {target}")
    return wrong


def test_no_layer_imports_a_higher_one_and_entry_points_stay_apart() -> None:
    wrong = _against_layers(GRAPH)
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    # A package's lazy `__init__` (PEP 562) names its own modules only in strings, so it adds no edges here.
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checks_see_what_they_forbid() -> None:
    """An empty report means something: the same checks, on a graph with one fault of each kind."""
    graph = {
        "codememory.store.database": ["codememory.retrieval.search"],  # upward
        "codememory.retrieval.search": [],
        "codememory.mcp.server": ["codememory.hooks.dispatch"],  # entry point into entry point
        "codememory.hooks.dispatch": [],
        "codememory.cli.main": ["codememory.mcp.server"],  # allowed: the CLI is above every entry point
        "codememory.text.query": ["codememory.text.entities"],  # a loop of three
        "codememory.text.entities": ["codememory.text.remember"],
        "codememory.text.remember": ["codememory.text.query"],
    }
    assert _against_layers(graph) == [
        "codememory.store.database -> codememory.retrieval.search",
        "codememory.mcp.server -> codememory.hooks.dispatch",
    ]
    assert _cycles(graph) == [["codememory.text.entities", "codememory.text.query", "codememory.text.remember"]]
