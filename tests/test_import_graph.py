"""ARCH-ACYCLIC: the package's modules import one another without a cycle.

The graph is built from the source with ``ast`` (every Import/ImportFrom a module runs, at module
level or in a function; ``if TYPE_CHECKING:`` blocks left out), so a lazy import inside a function
that closes a cycle is found too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

#: Source folder -> dotted package name (pyproject's package-dir).
ROOTS = {
    REPO / "prefixexec": "prefixexec",
    REPO / "kernel": "prefixexec.kernel",
    REPO / "adapters": "prefixexec.adapters",
}


def module_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for root, package in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        package = name if is_package else name.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in files else module
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


@pytest.mark.spec("ARCH-ACYCLIC")
def test_the_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.spec("ARCH-ACYCLIC")
def test_the_cycle_finder_finds_a_lazy_cycle() -> None:
    # The checker itself: a graph with a two-module cycle, and the real graph with one edge added
    # back from the kernel to the command line (a lazy import would add exactly this edge).
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    graph = import_graph()
    # The command line reaches the kernel (through prefixexec.options and the pipeline since the
    # typed options, API-PIPELINE): an edge back from the kernel closes a cycle.
    reached: set[str] = set()
    todo = ["prefixexec.cli"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph[module])
    assert any(m.startswith("prefixexec.kernel") for m in reached)
    graph["prefixexec.kernel"].add("prefixexec.cli")
    assert find_cycle(graph) is not None


@pytest.mark.spec("ARCH-ACYCLIC")
def test_each_benchmark_adapter_is_a_package_with_reader_and_semantics() -> None:
    for name in ("bfcl", "chat", "inspect_logs", "taubench", "toolsandbox"):
        folder = REPO / "adapters" / name
        assert (folder / "__init__.py").is_file(), name
        assert (folder / "reader.py").is_file() and (folder / "semantics.py").is_file(), name
