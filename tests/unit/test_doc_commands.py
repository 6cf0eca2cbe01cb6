"""Every shell block of the README and `docs/` is run by the tests word for word, or names the test
that runs it, or says why nothing here can (issue 61).

A ```bash (`sh`, `shell`, `console`) block's class is the `<!-- ... -->` line right before it:

- none: run here, by `test_the_pages_commands_run`, in a scratch folder laid out as a checkout
  (`examples/` and `models/` linked), the page's unmarked blocks in order. Each command (a line;
  `\\` continues it, `&&` splits it, `#` ends it) is a `localjudge` command (`localjudge`,
  `.venv/bin/localjudge`, `.venv-vllm/bin/localjudge`), run in-process word for word on the
  scripted fake judge (`--quiet` added: no progress bars): exit 0, no traceback, no unscored row;
  an `echo` line (`echo '[...]' > rubric.json`), run by bash; or a set-up scripts/check.sh has run
  before the unit tier starts (`bash scripts/setup.sh`). A `localjudge` command the fake judge
  cannot stand behind (`--engine vllm`, `--ray`, `serve`) needs another class. A block after
  `<!-- file: NAME -->` is a file the page asks the reader to save: written under NAME first, and
  some command of the page names it. The names pages use for "your model, your file" (`M`,
  `rows.jsonl`, ...) are bound in one table, `PLACEHOLDERS`. `bench`'s bootstrap resamples are
  cut to 20 and its PNG plots left out (tests/unit/bench checks both): the rest as documented.
- `<!-- run-by: FILE[, FILE...] -->`: those tests (or CI's scripts) run it
  (tests/unit/test_doc_classes.py checks the claim). Each command of the block
  is in one of the files word for word (whitespace aside), or the file reads it from the page
  (it holds the page's name as a string, `"mastra-storage.md"`), or it is a set-up scripts/check.sh
  runs before that file's tier (`bash scripts/setup_node.sh` before tests/storage).
- `<!-- not-run: WHY -->`: nothing here can run it (a GPU, a cluster, an old commit's worktree, a
  benchmark of many minutes whose figures are on the page). docs/development.md lists each such
  block, with the same WHY, under "Documented commands the tests do not run".

Any other marker before a shell block is an error. A broken command fails the run (a test
misspells a flag), as does a broken file block (a test drops an import). The model tier runs the
commands on the file blocks again on the default model (tests/model/test_docs.py).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from localjudge.judge import ChatPrompt, Generation
from localjudge.scorers import SCORERS
from tests.conftest import ROOT
from tests.fakes import make_fake_judge
from tests.unit.test_docs import Block, example_pages, parse, rel

SHELLS = ("bash", "sh", "shell", "console")
LOCALJUDGE = (".venv/bin/localjudge", ".venv-vllm/bin/localjudge", "localjudge")  # how the pages spell it
BUILTINS = ("echo",)  # shell builtins a runnable block may use, run by bash as written
RUN_BY = re.compile(r"^<!--\s*run-by:\s*(.+?)\s*-->$")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.+?)\s*-->$")
FILE_MARKER = re.compile(r"^<!--\s*file:\s*[\w.-]+\s*-->$")


def direct_verdict(prompt: ChatPrompt) -> Generation:
    """A direct verdict with its probability, the same for the same prompt (`bench --fit-calibration`
    fits a map on them)."""
    p = 0.05 + 0.9 * (zlib.crc32(str(prompt[-1]["content"]).encode()) % 1000) / 1000
    return Generation(json.dumps({"verdict": "yes" if p >= 0.5 else "no", "reason": "r"}),
                      label_probs=({"yes": p, "no": 1 - p},))


# The fake judge's answers beside `make_fake_judge`'s: for the schemas the docs' file blocks declare,
# and direct verdicts with a probability.
DOC_ANSWERS = {"Conciseness": {"verdict": "concise", "reason": "Short and to the point."},
               "DirectVerdict": direct_verdict}

# The names the pages use for "your model, your file", each bound here once for every page (where
# a page does not make it itself: its file blocks, an `echo ... > NAME`):
#   link:PATH      a link to that repository path       copy:PATH    a copy of that repository file
#   text:TEXT      a file holding TEXT                    block:PAGE   the file block of that name on PAGE
#   labeled:PATHS  the rows of these JSONL files (comma-separated), with a `human` column: no and yes by turns
#   run:COMMAND    what the `localjudge` COMMAND writes there, run on the fake judge first
PLACEHOLDERS = {
    "M": "link:models/smollm2-135m-instruct",  # your model folder
    "rows.jsonl": "copy:examples/example.jsonl",  # your data file
    "my-runs.jsonl": "copy:examples/example.jsonl",
    "new.jsonl": "copy:examples/example.jsonl",
    "runs.jsonl": "copy:examples/agent_runs.jsonl",  # your agent's runs (code scorers: tool calls, ground truth)
    # your labeled file (--label-col human --positive yes): 8 rows of each label, as a fitted calibration needs 5
    "mine.jsonl": "labeled:examples/example.jsonl,examples/agent_runs.jsonl",
    "rubric.json": 'text:["Names the shop.", "Under 20 words."]',  # your rubric's criteria
    "my_scorers.py": "block:docs/writing-scorers.md",  # your scorer module
    "OUT.jsonl": "run:score --model models/smollm2-135m-instruct --scorer toxicity --data examples/example.jsonl"
                 " --out OUT.jsonl",  # a results file
    "runs/my-sweep": "run:score --model models/smollm2-135m-instruct --scorer toxicity --data examples/example.jsonl"
                     " --out runs/my-sweep/smollm2/example/toxicity.jsonl",  # a sweep's folder
    "bench-out": "run:bench --model models/smollm2-135m-instruct --benchmark toxigen --limit 4"
                 " --out-dir bench-out",  # a bench --out-dir
}


@dataclass(frozen=True)
class Command:
    block: Block
    text: str  # as written: its comment dropped, a continued line joined

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text)

    @property
    def where(self) -> str:
        return f"{rel(self.block.page)}:{self.block.line}"


def split_line(line: str) -> list[str]:
    """A shell line's commands as written: the comment (`#` starting a word, unquoted) dropped,
    split at an unquoted `&&`."""
    parts: list[str] = []
    start, quote, i = 0, "", 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                i += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            i += 1
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            break
        elif line.startswith("&&", i):
            parts.append(line[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(line[start:i])
    return [part.strip() for part in parts if part.strip()]


def commands(block: Block) -> list[Command]:
    joined = re.sub(r"\s*\\\n\s*", " ", block.code)
    return [Command(block, text) for line in joined.split("\n") for text in split_line(line)]


def shell_blocks(page: Path, text: str | None = None) -> list[Block]:
    """The page's shell blocks, file blocks aside (a file is saved, not run)."""
    _, blocks = parse(page.read_text(encoding="utf-8") if text is None else text, page)
    return [b for b in blocks if b.lang in SHELLS and not FILE_MARKER.match(b.marker)]


def file_blocks(page: Path, text: str | None = None) -> dict[str, str]:
    """The page's file blocks: name -> text."""
    _, blocks = parse(page.read_text(encoding="utf-8") if text is None else text, page)
    return {b.file_name: b.code + "\n" for b in blocks if b.file_name}


def normal(text: str) -> str:
    return " ".join(text.split())


def tier_set_ups() -> dict[str, set[str]]:
    """Each tier -> the set-ups scripts/check.sh runs before it (its NEEDS table), as commands."""
    script = (ROOT / "scripts" / "check.sh").read_text(encoding="utf-8")
    table = script.split("declare -A NEEDS=(", 1)[1].split("\n)", 1)[0]
    return {tier: {f"bash scripts/{name}.sh" for name in names.split()}
            for tier, names in re.findall(r"\[(\w+)\]=\"([^\"]*)\"", table)}


# --- running the unmarked blocks -------------------------------------------------------------

def runnable(page: Path, text: str) -> list[Command]:
    return [c for b in shell_blocks(page, text) if not b.marker for c in commands(b)]


def made_by_page(page: Path, text: str) -> set[str]:
    """The files a page makes itself: its file blocks, and what its `echo` lines write."""
    made = set(file_blocks(page, text))
    for command in runnable(page, text):
        words = command.words
        if words[0] in BUILTINS and ">" in words:
            made.add(words[words.index(">") + 1])
    return made


def used(name: str, words: list[str]) -> bool:
    return any(word == name or word.endswith("@" + name) for word in words)


def cannot_run_here(words: list[str]) -> str | None:
    """Why a `localjudge` command cannot run on the fake judge, or None."""
    if len(words) > 1 and words[1] == "serve":
        return "`serve` starts a server"
    if "--ray" in words:
        return "`--ray` needs a Ray cluster"
    if "--engine" in words and words[words.index("--engine") + 1:][:1] != ["transformers"]:
        return "another engine than transformers"
    return None


def bind(name: str, spec: str, folder: Path, run: Callable[[list[str], str], None]) -> None:
    """Make placeholder `name` in `folder` as `PLACEHOLDERS` says."""
    kind, _, value = spec.partition(":")
    target = folder / name
    if kind == "link":
        target.symlink_to(ROOT / value)
    elif kind == "copy":
        target.write_bytes((ROOT / value).read_bytes())
    elif kind == "text":
        target.write_text(value + "\n", encoding="utf-8")
    elif kind == "block":
        target.write_text(file_blocks(ROOT / value)[name], encoding="utf-8")
    elif kind == "labeled":
        rows = [json.loads(line) for path in value.split(",") for line in
                (ROOT / path).read_text(encoding="utf-8").splitlines()]
        target.write_text("".join(json.dumps({**row, "human": "yes" if i % 2 else "no"}) + "\n"
                                  for i, row in enumerate(rows)), encoding="utf-8")
    elif kind == "run":
        run(["localjudge", *shlex.split(value)], f"PLACEHOLDERS[{name!r}]")
    else:
        raise AssertionError(f"PLACEHOLDERS[{name!r}]: no kind {kind!r}")


def run_commands(page: Path, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str], *, real_model: bool = False) -> list[str]:
    """Run the page's unmarked shell blocks in a scratch folder (its file blocks written, its
    placeholders bound) and return what went wrong: a command that cannot run here, its exit
    code, a traceback, an unscored row (on the fake judge). `real_model`: only the commands on
    the page's file blocks, on the model they name (tests/model/test_docs.py)."""
    from localjudge.cli.main import main
    from tests.fakes import cli_judge

    files = file_blocks(page, text)
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    for folder in ("examples", "models"):
        (tmp_path / folder).symlink_to(ROOT / folder, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("localjudge.scorers.registry.SCORERS", dict(SCORERS))  # a file's register_scorer stays here
    if not real_model:
        cli_judge(monkeypatch, make_fake_judge(DOC_ANSWERS))
        fewer_resamples(monkeypatch)
    problems: list[str] = []

    def localjudge(words: list[str], where: str) -> None:
        try:
            status = main(["--quiet", *words[1:]])
        except SystemExit as exit_:  # argparse's usage errors: the shell's exit status
            status = exit_.code if isinstance(exit_.code, int) else 1
        out, err = capsys.readouterr()
        shown = " ".join(words)
        if status != 0 or "Traceback" in err:
            said = [line for line in err.splitlines() if line.startswith("localjudge: error:")]  # the CLI's one line
            problems.append(f"{where}: `{shown}` exited {status}: {said[-1] if said else err.strip()[-600:]}")
        if not real_model:  # the default model judges near chance: its rows may be unscored, with the reason
            problems.extend(f"{where}: `{shown}`: {line}" for line in out.splitlines() if ": unscored (" in line)

    todo = runnable(page, text)
    if real_model:
        todo = [c for c in todo if any(name in c.words for name in files)]
    else:
        made = made_by_page(page, text)
        for name, spec in PLACEHOLDERS.items():
            if name not in made and any(used(name, c.words) for c in todo):
                bind(name, spec, tmp_path, localjudge)
    set_up = tier_set_ups()["unit"]
    for command in todo:
        words = command.words
        if words[0] in LOCALJUDGE:
            why = cannot_run_here(words)
            if why:
                problems.append(f"{command.where}: `{command.text}`: {why}: not on the fake judge here; "
                                "mark the block <!-- run-by: TEST --> or <!-- not-run: WHY -->")
            else:
                localjudge(words, command.where)
        elif words[0] in BUILTINS:
            done = subprocess.run(["bash", "-c", command.text], cwd=tmp_path, capture_output=True, text=True)
            if done.returncode != 0:
                problems.append(f"{command.where}: `{command.text}` exited {done.returncode}: {done.stderr.strip()}")
        elif normal(command.text) not in set_up:
            problems.append(f"{command.where}: `{command.text}` is not a localjudge command: mark the block "
                            "<!-- run-by: TEST --> or <!-- not-run: WHY -->")
    return problems


def fewer_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench` with 20 bootstrap resamples and no PNG plots (a documented bench, as written, is
    seconds of resampling and drawing on the fake judge: tests/unit/bench checks both)."""
    from localjudge.bench import metrics, report, run

    def bootstrap_ci(*args: object, n: int = 1000, **kwargs: object) -> tuple[float, float] | None:
        return metrics.bootstrap_ci(*args, n=min(n, 20), **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run, "bootstrap_ci", bootstrap_ci)
    monkeypatch.setattr(report, "draw_plots", lambda result, out_dir: {})


PAGES_WITH_COMMANDS = [p for p in example_pages() if runnable(p, p.read_text(encoding="utf-8"))]
PAGES_WITH_FILES = [p for p in example_pages() if file_blocks(p)]


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS, ids=rel)
def test_the_pages_commands_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    text = page.read_text(encoding="utf-8")
    problems = run_commands(page, text, tmp_path, monkeypatch, capsys)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES_WITH_FILES, ids=rel)
def test_a_command_of_the_page_runs_on_each_file_block(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for name in file_blocks(page, text):
        assert any(used(name, c.words) for c in runnable(page, text)), \
            f"{rel(page)}: the file block {name}, and no command of the page runs on it"


def test_every_placeholder_is_used() -> None:
    """`PLACEHOLDERS` holds no name that no page uses."""
    words = [c.words for p in PAGES_WITH_COMMANDS for c in runnable(p, p.read_text(encoding="utf-8"))]
    assert [name for name in PLACEHOLDERS if not any(used(name, w) for w in words)] == []


def test_a_broken_command_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """docs/scorers/rubric.md's command with a misspelt flag fails the check, in the CLI's one line."""
    page = ROOT / "docs" / "scorers" / "rubric.md"
    text = page.read_text(encoding="utf-8")
    broken = text.replace("--scorer-option rubric.criteria=@rubric.json", "--scorer-opton rubric.criteria=@rubric.json")
    assert broken != text
    problems = run_commands(page, broken, tmp_path, monkeypatch, capsys)
    assert len(problems) == 1 and "--scorer-opton rubric.criteria=@rubric.json` exited 2" in problems[0]
    assert "unrecognized arguments: --scorer-opton" in problems[0] and "Traceback" not in problems[0]


def test_a_broken_file_block_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The scorer file of docs/writing-scorers.md without its `create_scorer` import (as the page
    once had it) fails the check, in the one line the CLI gives for it."""
    page = ROOT / "docs" / "writing-scorers.md"
    assert page in PAGES_WITH_FILES
    text = page.read_text(encoding="utf-8")
    broken = text.replace("from localjudge import JudgeStep, create_scorer\n", "from localjudge import JudgeStep\n", 1)
    assert broken != text
    problems = run_commands(page, broken, tmp_path, monkeypatch, capsys)
    assert problems and "NameError: name 'create_scorer' is not defined" in problems[0]
    assert "Traceback" not in problems[0]


def test_a_command_the_fake_judge_cannot_stand_behind_needs_a_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """docs/serve.md's start command, unmarked, is refused before it starts a server."""
    page = ROOT / "docs" / "serve.md"
    text = page.read_text(encoding="utf-8")
    (block,) = [b for b in shell_blocks(page) if "localjudge serve --model" in b.code]
    unmarked = text.replace(block.marker + "\n", "", 1)
    assert unmarked != text
    problems = run_commands(page, unmarked, tmp_path, monkeypatch, capsys)
    assert problems == [f"docs/serve.md:{block.line - 1}: `.venv/bin/localjudge serve --model "
                        "models/smollm2-135m-instruct --served-model-name judge`: `serve` starts a server: not on "
                        "the fake judge here; mark the block <!-- run-by: TEST --> or <!-- not-run: WHY -->"]
