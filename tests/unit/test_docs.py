"""Docs that cannot rot: links resolve, named paths exist, examples run, the CLI page lists the CLI's flags.

- Every relative link and `#anchor` in the README, `docs/`, `models/README.md`,
  `scripts/README.md` and `benchmarks/README.md` resolves (anchors as GitHub slugs headings).
- Every repository path those pages name in code (`benchmarks/bench_speed.py`, ...) exists;
  `docs/decisions/` is exempt: its records name the scripts of old commits.
- Every ```python block of the README and `docs/` runs, the blocks of one page in order in one
  namespace, on the scripted fake judge (`judge` is given). A block right after a
  `<!-- needs-model -->` line loads a real model: here `TransformersJudge.load` answers the fake
  judge (a stand-in engine: nothing heavy is imported); tests/model/test_docs.py runs those
  blocks on the default model. A block after `<!-- needs-gpu -->` (vLLM on GPUs) or
  `<!-- needs-ray -->` (a Ray cluster; tests/ray runs `evaluate_on_ray` itself) is only compiled.
- A block right after `<!-- file: NAME -->` is a file the page asks the reader to save, not run in
  the page's namespace: tests/unit/test_doc_commands.py writes it under NAME and runs the page's
  shell commands on it, as it runs (or checks the class of) every shell block.
- `docs/cli.md` documents exactly the flags of `localjudge <command> --help`: a `## ` heading
  names its commands in backticks (`localjudge` alone for the global flags), and each flag is
  the first cell of a table row under it.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from localjudge.scorers import SCORERS
from tests.conftest import ROOT
from tests.fakes import make_fake_judge, stand_in_engine

NEEDS_MODEL = "<!-- needs-model -->"
NEEDS_GPU = "<!-- needs-gpu -->"  # vLLM on GPUs: compiled (syntax) only, run by no tier
NEEDS_RAY = "<!-- needs-ray -->"  # a Ray cluster: compiled (syntax) only here
FILE_MARKER = re.compile(r"^<!--\s*file:\s*([\w.-]+)\s*-->$")  # `<!-- file: my_scorers.py -->`: a file to save
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
LINK = re.compile(r"!?\[(?:[^\]]|\[[^\]]*\])*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
# Repository paths named in the docs; the text before a path must not be a word, a path or a
# commit (`git show 1a4c03f:scripts/x.py`).
PLACEHOLDER = re.compile(r"/(?!README\b)[A-Z][A-Z_]+\b")  # benchmarks/NAME.py
# (an npm scope is no path: `@localjudge/mastra`)
REPO_PATH = re.compile(r"(?<![\w./:@-])((?:\.ci|benchmarks|docs|examples|localjudge|scripts|tests)/[\w./-]*[\w/])")


def doc_pages() -> list[Path]:
    """Every page whose links are checked."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    pages += [p for p in (ROOT / "models" / "README.md", ROOT / "scripts" / "README.md",
                          ROOT / "benchmarks" / "README.md") if p.exists()]
    return pages


def example_pages() -> list[Path]:
    """Every page whose Python examples run."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str  # the `<!-- ... -->` line right before the block, or ""

    @property
    def needs_model(self) -> bool:
        return self.marker == NEEDS_MODEL

    @property
    def file_name(self) -> str | None:
        """The name the page saves this block under (`<!-- file: NAME -->`), or None."""
        match = FILE_MARKER.match(self.marker)
        return match.group(1) if match else None


def parse(text: str, page: Path) -> tuple[list[tuple[int, str]], list[Block]]:
    """The page's prose lines (number, text) and its fenced code blocks."""
    prose: list[tuple[int, str]] = []
    blocks: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            prose.append((i + 1, lines[i]))
            i += 1
            continue
        fence, lang, start = match.group(1), match.group(2), i
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            i += 1
        if i == len(lines):
            raise AssertionError(f"{rel(page)}:{start + 1}: code block never closed")
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = before if before.startswith("<!--") else ""
        blocks.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:i]), marker))
        i += 1
    return prose, blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text, lowercased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor a link into the page may name."""
    prose, _ = parse(page.read_text(encoding="utf-8"), page)
    seen: dict[str, int] = defaultdict(int)
    found: set[str] = set()
    for _, line in prose:
        found.update(HTML_ANCHOR.findall(line))
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def broken_links(page: Path) -> list[str]:
    prose, _ = parse(page.read_text(encoding="utf-8"), page)
    problems = []
    for number, line in prose:
        for target in LINK.findall(INLINE_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part).resolve() if path_part else page
            where = f"{rel(page)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: no heading with anchor #{anchor} in {rel(dest)}")
            elif anchor and dest.suffix != ".md":
                problems.append(f"{where}: an anchor into a file that is not Markdown")
    return problems


def missing_paths(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    problems = []
    for number, line in enumerate(text.split("\n"), 1):
        line = LINK.sub("", line)  # a link's text and target are relative to the page: checked above
        for path in REPO_PATH.findall(line):
            if PLACEHOLDER.search(path) or "*" in path:
                continue
            if not (ROOT / path.rstrip("/")).exists():
                problems.append(f"{rel(page)}:{number}: {path} does not exist")
    return problems


@pytest.mark.parametrize("page", doc_pages(), ids=rel)
def test_links_and_anchors_resolve(page: Path) -> None:
    problems = broken_links(page)
    assert not problems, "broken links:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", [p for p in doc_pages() if "decisions" not in p.parts], ids=rel)
def test_named_repository_paths_exist(page: Path) -> None:
    problems = missing_paths(page)
    assert not problems, "paths named in the docs that do not exist:\n" + "\n".join(problems)


def test_the_index_pages_exist() -> None:
    for page in ("README.md", "docs/README.md", "docs/cli.md"):
        assert (ROOT / page).is_file(), page


# --- Python examples -------------------------------------------------------------------------

def python_blocks(page: Path) -> list[Block]:
    _, blocks = parse(page.read_text(encoding="utf-8"), page)
    return [b for b in blocks if b.lang == "python"]


def run_page(page: Path, judge: object, *, model_blocks: bool, other_blocks: bool) -> None:
    """Run a page's Python blocks in order in one namespace; a failure names the block's line."""
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}", "judge": judge}
    for block in python_blocks(page):
        code = compile(block.code, f"{rel(page)}:{block.line}", "exec", dont_inherit=True)
        if block.marker in (NEEDS_GPU, NEEDS_RAY) or block.file_name \
                or not (model_blocks if block.needs_model else other_blocks):
            continue  # a file block runs as the file it is (`run_file_blocks`), never beside the page's names
        try:
            exec(code, namespace)  # noqa: S102
        except Exception as error:
            raise AssertionError(f"the python block at {rel(page)}:{block.line} failed: {error!r}") from error


PAGES_WITH_EXAMPLES = [p for p in example_pages() if python_blocks(p)]
PAGES_WITH_MODEL_EXAMPLES = [p for p in PAGES_WITH_EXAMPLES if any(b.needs_model for b in python_blocks(p))]


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=rel)
def test_python_examples_run_on_the_fake_judge(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every block; a needs-model block's `TransformersJudge.load` answers the fake judge here."""
    judge = make_fake_judge()
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))  # a page registers in its test only
    if any(b.needs_model for b in python_blocks(page)):
        stand_in_engine(monkeypatch, lambda *args, **kwargs: judge)
    monkeypatch.chdir(tmp_path)  # examples write runs/..., never into the repository
    run_page(page, judge, model_blocks=True, other_blocks=True)


COMMENTED_CODE = re.compile(r"^\s*#\s?((?:from\s+[\w.]+\s+)?import\s+\S.*|[A-Za-z_]\w*\s*=\s*\S.*)$")


def bound_names(tree: ast.AST) -> set[str]:
    """Every name an assignment, import, def or class binds anywhere in `tree`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def commented_code_problems(page: Path) -> list[str]:
    """The commented-out alternatives of a page's Python blocks (``# judge = TransformersJudge.load(...)``),
    uncommented, must name only what the page, or those lines themselves, define: a reader who
    uncomments them must not get a NameError."""
    import builtins

    defined = {"judge", *dir(builtins)}
    problems = []
    for block in python_blocks(page):
        defined |= bound_names(ast.parse(block.code))
        alternatives: list[tuple[int, ast.Module]] = []
        for offset, line in enumerate(block.code.split("\n"), 1):
            match = COMMENTED_CODE.match(line)
            if match:
                try:
                    alternatives.append((block.line + offset, ast.parse(match.group(1))))
                except SyntaxError:
                    continue  # prose that looks like code
        own = set().union(*(bound_names(tree) for _, tree in alternatives)) if alternatives else set()
        for number, tree in alternatives:
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in defined | own:
                    problems.append(f"{rel(page)}:{number}: uncommented, this line names {node.id!r}, "
                                    "which the page never defines or imports")
    return problems


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=rel)
def test_commented_out_alternatives_run_when_uncommented(page: Path) -> None:
    problems = commented_code_problems(page)
    assert not problems, "\n".join(problems)


def test_pages_have_examples() -> None:
    """The example checks run on something: the README's own example loads a model."""
    assert ROOT / "README.md" in PAGES_WITH_MODEL_EXAMPLES
    assert len(PAGES_WITH_EXAMPLES) >= 5


# --- CLI flags -------------------------------------------------------------------------------

def parser_flags() -> dict[str, set[str]]:
    """Command ("" for the global flags) -> its long flags, from the parsers `localjudge` builds."""
    from localjudge.cli.main import build_parser

    def long_flags(parser: argparse.ArgumentParser) -> set[str]:
        return {o for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
                for o in a.option_strings if o.startswith("--")}

    parser = build_parser()
    flags = {"": long_flags(parser)}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                flags[name] = long_flags(sub)
    return flags


def documented_flags(text: str) -> dict[str, set[str]]:
    """Command -> the flags in the first cell of the table rows under the `## ` headings naming it."""
    prose, _ = parse(text, ROOT / "docs" / "cli.md")
    documented: dict[str, set[str]] = defaultdict(set)
    commands: list[str] = []
    for _, line in prose:
        if line.startswith("## "):
            commands = []
            for name in re.findall(r"`([^`]+)`", line):
                words = name.split()
                if words and words[0] == "localjudge":
                    words = words[1:]
                commands.append(words[0] if words else "")
            for command in commands:
                documented.setdefault(command, set())
        elif line.startswith("|") and commands:
            cells = line.split("|")
            for flag in re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", cells[1] if len(cells) > 1 else ""):
                for command in commands:
                    documented[command].add(flag)
    return documented


def flag_differences(text: str) -> list[str]:
    actual, documented = parser_flags(), documented_flags(text)
    problems = []
    for command in sorted(set(actual) | set(documented)):
        label = f"localjudge {command}".strip()
        if command not in documented:
            problems.append(f"{label}: no `## ` section names it in docs/cli.md")
            continue
        if command not in actual:
            problems.append(f"{label}: documented, but there is no such command")
            continue
        for flag in sorted(actual[command] - documented[command]):
            problems.append(f"{label}: {flag} is in --help but not in docs/cli.md")
        for flag in sorted(documented[command] - actual[command]):
            problems.append(f"{label}: {flag} is in docs/cli.md but not in --help")
    return problems


def test_cli_page_lists_exactly_the_flags_of_every_command() -> None:
    problems = flag_differences((ROOT / "docs" / "cli.md").read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_flag_check_sees_both_directions() -> None:
    """A flag dropped from the page, and a flag the CLI does not have, are each caught."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    dropped = "\n".join(line for line in text.split("\n") if not line.startswith("| `--no-html`"))
    assert "localjudge bench: --no-html is in --help but not in docs/cli.md" in flag_differences(dropped)
    invented = text.replace("| `--out OUT` |", "| `--out OUT` | x |\n| `--no-such-flag` |", 1)
    assert any("--no-such-flag is in docs/cli.md but not in --help" in p for p in flag_differences(invented))


def test_the_slug_rule_matches_github() -> None:
    assert slug("Continuous batching (`--max-rows`) against the loop alone and `model.generate`") == (
        "continuous-batching---max-rows-against-the-loop-alone-and-modelgenerate")
    assert slug("`localjudge score`") == "localjudge-score"
    assert slug("Where localjudge differs from Mastra's scorers, and why") == (
        "where-localjudge-differs-from-mastras-scorers-and-why")


# --- the vLLM server command -----------------------------------------------------------------

def documented_vllm_command() -> tuple[dict[str, str], list[str]]:
    """The variables and the words of docs/servers.md's vLLM start command (the bash block that
    runs ``vllm.entrypoints.openai.api_server``), placeholders as written (DIR, NAME)."""
    import shlex

    page = ROOT / "docs" / "servers.md"
    _, blocks = parse(page.read_text(encoding="utf-8"), page)
    (block,) = [b for b in blocks if b.lang == "bash" and "vllm.entrypoints.openai.api_server" in b.code]
    words = shlex.split(block.code.replace("\\\n", " "), comments=True)
    env = {}
    while "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def flag_values(words: list[str]) -> dict[str, str | None]:
    """``--flag value`` pairs (None for a flag without a value), in any order."""
    found: dict[str, str | None] = {}
    for i, word in enumerate(words):
        if word.startswith("--"):
            following = words[i + 1] if i + 1 < len(words) else None
            found[word] = None if following is None or following.startswith("--") else following
    return found


def test_the_documented_vllm_command_is_the_tiers() -> None:
    """docs/servers.md's vLLM command and `tests.server.vllm_server.command` (the server tier's,
    scripts/server_smoke.sh's) start the same server: the same flags and values (the model folder,
    served name and port as placeholders), the memory bound among them, and the same variables."""
    from tests.server import vllm_server

    env, words = documented_vllm_command()
    line = vllm_server.command(Path("DIR"), 8000)
    assert words[1:3] == line[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    documented = flag_values(words)
    assert documented.pop("--served-model-name") == "NAME"
    tiers = flag_values(line)
    tiers.pop("--served-model-name")
    assert documented == tiers
    assert {"--kv-cache-memory-bytes", "--max-model-len"} <= set(documented)  # bounded: not ~92% of the RAM
    assert env == vllm_server.ENV
    assert "tests.server.vllm_server" in (ROOT / "scripts" / "server_smoke.sh").read_text(encoding="utf-8")


def test_the_smoke_script_runs_the_tiers_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m tests.server.vllm_server MODEL PORT`` (scripts/server_smoke.sh) becomes the
    server by `command`'s line, with `environment()`'s variables."""
    import os
    import runpy
    import sys

    from tests.server import vllm_server

    started: list[tuple[str, list[str], dict[str, str]]] = []

    def execve(path: str, args: list[str], env: dict[str, str]) -> None:
        started.append((path, args, env))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", execve)
    monkeypatch.setattr(sys, "argv", ["vllm_server", "models/smollm2-135m-instruct", "8011"])
    monkeypatch.delitem(sys.modules, "tests.server.vllm_server")  # run afresh, as `python -m` does
    with pytest.raises(SystemExit):
        runpy.run_module("tests.server.vllm_server", run_name="__main__")
    ((path, args, env),) = started
    assert args == vllm_server.command(Path("models/smollm2-135m-instruct"), 8011) and path == args[0]
    assert {key: env[key] for key in vllm_server.ENV} == vllm_server.ENV
