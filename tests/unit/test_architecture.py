"""The package's shape: which folder may import which, entry modules only, no cycle of any kind.

Each module belongs to a unit: the contract (`result`, `judge`, `repetition`, `text_safety`, `credentials`,
`user_files` at the top), a folder (`samples`, `scoring`, `scorers`, `engines`, `engines.transformers`, `engines.vllm`,
`engines.server`, `evaluation`, `live`, `view`, `bench`, `cli`) or the facade (`localjudge/__init__.py`). `RULES`
says which other units a unit may import; everything else is a breach. The rules leave room for
what comes next: a model-free scorer is a file in `scorers/coded/` (it imports what scorers do); an
engine that talks HTTP is a new `engines.*` unit that may not import torch's engines; a Ray runner
or a Mastra storage reader is a new unit above `evaluation`.

- **Entry modules**: from outside a folder, code imports the folder (its `__init__`, which lists
  the public names), never a module inside it.
- **Rooms**: inside `scorers`, the judged scorers (`scorers.judged`) and the code scorers
  (`scorers.coded`) each import only their own room: never each other's kit, nor the registry above them.
- **No cycle**, counting imports made only for type checking: a cycle held together by
  `TYPE_CHECKING` is still a call cycle through the objects.
- **Heavy units** (`engines.transformers`: torch, transformers; `engines.vllm`: vLLM; `bench`:
  numpy, matplotlib) are imported at module level only by the CLI, else inside a function, so
  `import localjudge` and every other folder stay light; nothing else is imported inside a
  function (never to dodge a cycle).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "localjudge"
CONTRACT = {"result", "judge", "repetition", "text_safety", "credentials", "user_files"}
LOW = {"contract"}
RULES: dict[str, set[str]] = {
    "contract": set(),
    "samples": LOW,
    "scoring": LOW | {"samples"},
    "scorers": LOW | {"samples", "scoring"},
    "engines": LOW | {"engines.transformers", "engines.vllm", "engines.server"},  # choosing one (heavy: deferred)
    "engines.transformers": LOW | {"engines"},
    "engines.vllm": LOW | {"engines"},
    "engines.server": LOW | {"engines"},  # HTTP only: never torch's engines or vLLM
    "evaluation": LOW | {"samples", "scoring"},
    "live": LOW | {"samples", "scoring", "evaluation", "mastra_store"},  # live scores through --mastra-store's writer
    "view": LOW | {"evaluation"},
    "mastra_store": LOW | {"samples", "scoring", "evaluation"},  # DB drivers only inside its connection's functions
    "bench": LOW | {"samples", "scoring", "scorers", "evaluation"},
    "cluster": LOW | {"samples", "scoring", "scorers", "engines", "evaluation"},  # ray: inside runner's functions
    "serve": LOW | {"samples", "scoring", "scorers", "evaluation"},  # OpenAI's API and /v1/score: FastAPI in create_app
    "cli": LOW | {"samples", "scoring", "scorers", "engines", "engines.transformers", "engines.vllm", "engines.server",
                  "evaluation", "live", "view", "bench", "mastra_store", "cluster", "serve"},
    "facade": LOW | {"samples", "scoring", "scorers", "engines.transformers", "evaluation", "live", "bench"},
}
# A unit's rooms: within its unit a room's module imports only its own room, never the room beside it nor the
# unit's modules outside every room (the scorers' registry and face, which import the rooms)
ROOMS = ("localjudge.scorers.judged", "localjudge.scorers.coded")
# torch and transformers; vLLM; numpy and matplotlib; every command: imported inside a function where needed
HEAVY = {"localjudge.engines.transformers", "localjudge.engines.vllm", "localjudge.bench", "localjudge.cli.main",
         "localjudge.serve.app"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "facade"
    if parts[0] in CONTRACT:
        return "contract"
    if parts[0] == "engines" and len(parts) > 1 and parts[1] in ("transformers", "vllm", "server"):
        return f"engines.{parts[1]}"
    return parts[0]


def room(module: str) -> str | None:
    return next((r for r in ROOMS if module == r or module.startswith(f"{r}.")), None)


def known() -> set[str]:
    return {module_name(p) for p in PACKAGE.rglob("*.py")}


def packages() -> set[str]:
    return {module_name(p) for p in PACKAGE.rglob("__init__.py")}


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(tree: ast.Module, modules: set[str]) -> Iterator[tuple[str, bool, bool]]:
    """(imported localjudge module, at module level?, only for type checking?) per import."""
    def walk(node: ast.AST, top: bool, typing_only: bool) -> Iterator[tuple[str, bool, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("localjudge"):
                for alias in child.names:  # `from localjudge.cli import shared` imports a module
                    sub = f"{child.module}.{alias.name}"
                    yield (sub if sub in modules else child.module), top, typing_only
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
    modules = known()
    return {module_name(p): list(imports(ast.parse(p.read_text(encoding="utf-8")), modules))
            for p in PACKAGE.rglob("*.py")}


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


def package_of(module: str, pkgs: set[str]) -> str:
    return module if module in pkgs else module.rpartition(".")[0]


def inside(package: str, other: str) -> bool:
    """Whether `package` is `other` or a folder within it (a sub-folder uses its parent's shared modules)."""
    return package == other or package.startswith(f"{other}.")


def check(modules: dict[str, list[tuple[str, bool, bool]]]) -> list[str]:
    """Every breach of the rules above, as a sentence."""
    problems, edges = [], {}
    pkgs = packages()
    for module, found in modules.items():
        here = unit(module)
        for target, top, typing_only in found:
            there = unit(target)
            if there == "facade" and here != "facade":
                problems.append(f"{module} imports the package facade")
            elif there != here and there not in RULES[here]:
                problems.append(f"{module} imports {target}: {here} may not import {there}")
            elif target not in pkgs and not inside(package_of(module, pkgs), package_of(target, pkgs)):
                problems.append(f"{module} imports {target}, inside another folder: import its entry module")
            if room(module) and there == here and room(target) != room(module):
                problems.append(f"{module} imports {target}: {room(module)} imports only its own room in {here}")
            heavy = any(target == h or target.startswith(f"{h}.") for h in HEAVY)
            if heavy and top and not typing_only and here not in (there, "cli"):
                problems.append(f"{module} imports the heavy {target} at module level")
            if not top and not heavy and not typing_only:
                problems.append(f"{module} imports {target} inside a function (not a heavy module)")
            edges.setdefault(module, set()).add(target)
    # a package's __init__ re-exports its modules: that edge is part of the package, not a cycle
    edges = {m: {t for t in ts if not (m in pkgs and t.startswith(f"{m}."))} for m, ts in edges.items()}
    problems += [f"import cycle: {' -> '.join(c)}" for c in cycles(edges)]
    return problems


def test_imports_follow_the_rules_without_cycles() -> None:
    assert check(graph()) == []


# Folders whose every module stays under this many lines (split by job when one grows): the scoring kit, and
# the scorers (a scorer that grows puts its schemas, prompts and examples, or its Mastra rules, in a sibling module)
SMALL = {"scoring": 300, "scorers": 300}


def long_modules(folder: Path, limit: int) -> list[str]:
    """The modules of `folder` over `limit` lines, with their length."""
    return [f"{p.relative_to(folder)}: {n} lines" for p in sorted(folder.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit]


def test_the_scoring_kit_and_the_scorers_keep_their_modules_small(tmp_path: Path) -> None:
    """The judge-call protocol, the step runner, its items and its asking each a module of its own (issue 58); each
    scorer, its kit and the registry too."""
    for folder, limit in SMALL.items():
        assert long_modules(PACKAGE / folder, limit) == []
    (tmp_path / "grown.py").write_text("x = 1\n" * 301, encoding="utf-8")  # the check itself can fail
    assert long_modules(tmp_path, 300) == ["grown.py: 301 lines"]


def test_every_module_belongs_to_a_unit_with_rules() -> None:
    assert {unit(m) for m in known()} <= set(RULES)


@pytest.mark.parametrize(("module", "source", "breach"), [
    ("localjudge.bench.report", "from localjudge.bench.run import run_bench\n", "cycle"),
    ("localjudge.evaluation.dataset_runs", "from localjudge.cli.shared import Bars\n", "may not import"),
    ("localjudge.scoring.scorer", "def f():\n    from localjudge.bench.types import JUDGE\n", "may not import"),
    ("localjudge.engines.grammar", "from localjudge.scoring import Scorer\n", "may not import"),
    ("localjudge.cli.shared", "def f():\n    from localjudge.cli.score import run_score\n", "cycle"),
    ("localjudge.evaluation.dataset_runs", "def f():\n    import localjudge.engines.transformers\n", "may not import"),
    ("localjudge", "import localjudge.engines.transformers\n", "heavy"),
    ("localjudge.samples.runs", "from localjudge import Sample\n", "facade"),
    ("localjudge.scorers.judged.bias", "from localjudge.scoring.schemas import Reason\n", "entry module"),
    ("localjudge.scorers.coded.tone", "from localjudge.scorers.judged.verdicts import verdict_lines\n", "own room"),
    ("localjudge.scorers.judged.claims", "from localjudge.scorers.coded.js_strings import add_up\n", "own room"),
    ("localjudge.scorers.coded.checks.text", "from localjudge.scorers.discovery import is_path\n", "own room"),
    ("localjudge.bench.data", "def f():\n    from localjudge.evaluation import read_table\n", "inside a function"),
    ("localjudge.cluster.plan", "from localjudge.cli.shared import Bars\n", "may not import"),
    ("localjudge.evaluation.store", "from localjudge.cluster import JudgeSpec\n", "may not import"),
    ("localjudge.scoring.step_runner", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                       "    from localjudge.scoring.scorer import Scorer\n", "cycle"),
    ("localjudge.scoring.calls", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                 "    from localjudge.scoring.step_runner import run_batch\n", "cycle"),
])
def test_the_check_catches_each_kind_of_breach(module: str, source: str, breach: str) -> None:
    """The check itself can fail: each rule, broken once by one added import."""
    modules = graph()
    modules[module] = modules[module] + list(imports(ast.parse(source), known()))
    assert any(breach in p for p in check(modules)), check(modules)


def unscored_built_by_hand(path: Path) -> list[int]:
    """Lines where `ScoreResult(...)` is called with an error: only `ScoreResult.unscored` may."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ScoreResult" \
                and any(k.arg in ("error", "error_kind") for k in node.keywords):
            lines.append(node.lineno)
    return lines


def test_unscored_results_have_one_builder(tmp_path: Path) -> None:
    by_hand = {str(p.relative_to(PACKAGE)): lines for p in PACKAGE.rglob("*.py")
               if p.name != "result.py" and (lines := unscored_built_by_hand(p))}
    assert by_hand == {}, "build unscored results with ScoreResult.unscored"
    breach = tmp_path / "breach.py"  # the check itself can fail
    breach.write_text('r = ScoreResult("1", "s", None, None, error="x", error_kind="step_error")\n')
    assert unscored_built_by_hand(breach) == [1]
