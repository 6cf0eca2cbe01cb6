"""The package's shape: imports point down only, and a scorer is one file plus one registry line.

Rings, lowest first: the core (every top-level module and `scorers/`), `bench/`, `cli/`. A module
may import its own ring or a lower one, never a higher one; nothing inside imports the package's
facade (`localjudge/__init__.py`); only the CLI and the facade import the transformers backend
(the engine knows nothing of torch). Runtime imports, module-level and inside functions, form no
cycle; an import inside a function is there only to defer a heavy module (the backend, the bench
run with numpy and matplotlib), never to dodge a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "localjudge"
RINGS = {"core": 0, "bench": 1, "cli": 2}
# the engines (torch; vLLM) and the module that chooses between them
BACKEND = {"localjudge.transformers_judge", "localjudge.processor", "localjudge.decode", "localjudge.vllm_judge",
           "localjudge.vllm_guard", "localjudge.engines"}
# heavy, so they may be imported in a function: the engines (torch, vLLM), the bench run and the
# CLI's commands (numpy, matplotlib)
DEFERRED = {"localjudge.transformers_judge", "localjudge.decode", "localjudge.vllm_judge", "localjudge.bench.run",
            "localjudge.cli.main"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def ring(module: str) -> int:
    parts = module.split(".")
    return RINGS.get(parts[1], 0) if len(parts) > 1 else 0


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(tree: ast.Module) -> Iterator[tuple[str, bool, bool]]:
    """(imported localjudge module, at module level?, only for type checking?) per import."""
    def walk(node: ast.AST, top: bool, typing_only: bool) -> Iterator[tuple[str, bool, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("localjudge"):
                known = {module_name(p) for p in PACKAGE.rglob("*.py")}
                for alias in child.names:  # `from localjudge.cli import shared` imports a module
                    sub = f"{child.module}.{alias.name}"
                    yield (sub if sub in known else child.module), top, typing_only
            elif isinstance(child, ast.Import):
                yield from ((a.name, top, typing_only) for a in child.names if a.name.startswith("localjudge"))
            elif isinstance(child, ast.If) and _type_checking(child):
                yield from walk(child, top, True)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from walk(child, False, typing_only)
            else:
                yield from walk(child, top, typing_only)
    return walk(tree, True, False)


def graph() -> dict[str, list[tuple[str, bool, bool]]]:
    return {module_name(p): list(imports(ast.parse(p.read_text(encoding="utf-8")))) for p in PACKAGE.rglob("*.py")}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle's path, found by depth-first search (enough for a package this size)."""
    found, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                found.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return found


def check(modules: dict[str, list[tuple[str, bool, bool]]]) -> list[str]:
    """Every breach of the rules above, as a sentence."""
    problems = []
    runtime: dict[str, set[str]] = {}
    for module, found in modules.items():
        for target, top, typing_only in found:
            if target == "localjudge" and module != "localjudge":
                problems.append(f"{module} imports the package facade")
            if ring(target) > ring(module) and module != "localjudge":
                problems.append(f"{module} imports {target}, a higher ring")
            if target in BACKEND and module.split(".")[1:2] not in (["cli"], []) and module not in BACKEND:
                problems.append(f"{module} imports the backend {target}")
            if not typing_only:
                runtime.setdefault(module, set()).add(target)
                if not top and target not in DEFERRED:
                    problems.append(f"{module} imports {target} inside a function (not a heavy module)")
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(runtime)]
    return problems


def test_imports_point_down_without_cycles() -> None:
    assert check(graph()) == []


@pytest.mark.parametrize(("module", "source", "breach"), [
    ("localjudge.bench.report", "from localjudge.bench.run import run_bench\n", "cycle"),
    ("localjudge.evaluate", "from localjudge.cli.shared import Bars\n", "higher ring"),
    ("localjudge.scorer", "def f():\n    from localjudge.bench.types import JUDGE\n", "higher ring"),
    ("localjudge.cli.shared", "def f():\n    from localjudge.cli.score import run_score\n", "cycle"),
    ("localjudge.evaluate", "def f():\n    import localjudge.transformers_judge\n", "backend"),
    ("localjudge.runs", "from localjudge import Sample\n", "facade"),
    ("localjudge.bench.data", "def f():\n    from localjudge.tables import read_table\n", "inside a function"),
])
def test_the_check_catches_each_kind_of_breach(module: str, source: str, breach: str) -> None:
    """The check itself can fail: each rule, broken once by one added import."""
    modules = graph()
    modules[module] = modules[module] + list(imports(ast.parse(source)))
    assert any(breach in p for p in check(modules)), check(modules)
