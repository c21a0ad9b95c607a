"""No two modules of the helper package import each other, directly or round a longer loop (issue 34):
the dependencies run one way, so any module can be read, and imported, after the ones it uses. Every
import statement counts, also those inside functions (imported on first call)."""

import ast

from helpers import ROOT

PACKAGE = ROOT / "book" / "attention_to_bert"


def module_name(path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports() -> dict[str, set[str]]:
    """Each package module -> the package modules its import statements name."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:  # a submodule if there is one, else a name of the module
                    submodule = f"{node.module}.{alias.name}"
                    targets.add(submodule if submodule in modules else node.module)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A loop of imports ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target, [*path, target])):
                return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def test_the_graph_is_read_from_the_package():
    graph = package_imports()
    assert "attention_to_bert.pretraining" in graph["attention_to_bert.mlm"]  # module level
    assert "attention_to_bert.data.sentiment" in graph["attention_to_bert.data.wordnet"]
    assert "attention_to_bert.seq2seq" in graph["attention_to_bert.long_range"]  # from pkg import
    assert "attention_to_bert.multihead" in graph["attention_to_bert.checks.ch05"]  # in a function


def test_find_cycle_finds_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_two_package_modules_import_each_other():
    cycle = find_cycle(package_imports())
    assert cycle is None, "import loop: " + " -> ".join(cycle or [])
