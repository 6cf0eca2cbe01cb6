"""The doc tests' runner: a page's unmarked shell blocks run in a scratch folder laid out as a
checkout, each `localjudge` command in-process on the scripted fake judge (`run_commands`), with
the names the pages use for "your model, your file" bound in one table (`PLACEHOLDERS`).

tests/unit/test_doc_commands.py runs every page through it; the model tier runs the commands on
the pages' file blocks again on the default model (tests/model/test_docs.py).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from localjudge.judge import ChatPrompt, Generation
from localjudge.scorers import SCORERS
from tests.conftest import ROOT
from tests.fakes import make_fake_judge
from tests.unit.doc_blocks import Command, commands, file_blocks, normal, shell_blocks, tier_set_ups
from tests.unit.test_docs import example_pages

LOCALJUDGE = (".venv/bin/localjudge", ".venv-vllm/bin/localjudge", "localjudge")  # how the pages spell it
BUILTINS = ("echo",)  # shell builtins a runnable block may use, run by bash as written


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
