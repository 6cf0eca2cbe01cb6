"""The offline guarantee: scoring never opens a network connection, and no code path can download.

With every socket connection and DNS lookup made to fail (and recorded) inside the test process
(the `block_network` fixture, tests/conftest.py), a whole `evaluate` run and a whole `localjudge
score` run on the fake judge complete; the package source never names a download function; a
hub id given as a model path gets a hint instead of a download. (The arguments every
`from_pretrained` call really receives, ``local_files_only=True`` among them, are checked at run
time in tests/engines/test_loading_safety.py; the real model loads and scores with the network
blocked in tests/model/test_offline.py.)
"""

from __future__ import annotations

import ast
import json
import os
import socket
from pathlib import Path

import pytest

from localjudge import faithfulness_scorer, hallucination_scorer, toxicity_scorer
from localjudge.cli import model_flags as cli_model_flags
from localjudge.cli.main import main as cli_main
from localjudge.engines.model_files import ModelPathError, check_model_dir
from localjudge.evaluation.dataset_runs import evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.tables import read_table, write_table
from tests.conftest import ROOT, NetworkUsed
from tests.fakes import FakeJudgeFactory

PACKAGE = ROOT / "localjudge"
DOWNLOADERS = {"hf_hub_download", "snapshot_download", "load_dataset", "urlopen", "urlretrieve"}
NETWORK_MODULES = {"requests", "urllib", "http", "socket", "httpx", "aiohttp", "huggingface_hub"}
TEXT_ONLY = {"urllib.parse"}  # string functions only (the secret rule's URL-encoded forms): nothing to download with
ROWS = [
    {"input": "Where is Paris?", "output": "Paris is in France.", "context": "Paris is the capital of France."},
    {"input": "Help?", "output": "Only an idiot asks that.", "context": ["A user asked for help."]},
]


def test_network_is_really_blocked(block_network: list[str]) -> None:
    with pytest.raises(NetworkUsed):
        socket.create_connection(("huggingface.co", 443), timeout=1)
    with pytest.raises(NetworkUsed):
        socket.socket().connect(("127.0.0.1", 9))
    block_network.clear()  # those two were ours


def test_evaluate_end_to_end_offline(block_network: list[str], tmp_path: Path, fake_judge: FakeJudgeFactory) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    judge = fake_judge()
    scorers = [hallucination_scorer(judge), faithfulness_scorer(judge), toxicity_scorer(judge)]
    result = evaluate(read_table(data), scorers, store=ResultStore(tmp_path / "log"))
    write_table(result.dataset, tmp_path / "out.jsonl")
    write_table(result.dataset, tmp_path / "out.parquet")
    assert all(s.scored == 2 for s in result.summary.values())
    assert read_table(tmp_path / "out.parquet").num_rows == 2


def test_cli_end_to_end_offline(block_network: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                fake_judge: FakeJudgeFactory) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    monkeypatch.setattr(cli_model_flags, "build_judge", lambda args, device=None: fake_judge())
    out = tmp_path / "out.jsonl"
    code = cli_main(["--quiet", "score", "--model", "unused", "--scorer", "hallucination,toxicity",
                     "--data", str(data), "--out", str(out)])
    assert code == 0 and len(out.read_text(encoding="utf-8").splitlines()) == 2


def package_trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


# The server engine speaks HTTP, to the one server the user names (`--base-url`): the only module
# that may import a network library. It fetches answers from that server, never files or weights.
SERVER_CLIENT = PACKAGE / "engines" / "server" / "client.py"
# `--ray HOST:PORT` is tried with a plain TCP connection first (nothing sent, nothing read), so that
# a cluster that is not there is one line at once, not Ray's minutes of retries.
RAY_PROBE = PACKAGE / "cluster" / "address.py"


def test_no_module_can_download() -> None:
    found = []
    for path, tree in package_trees():
        if path in (SERVER_CLIENT, RAY_PROBE):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                modules = []
            found += [f"{path.name}:{node.lineno}: import {m}" for m in modules
                      if m.split(".")[0] in NETWORK_MODULES and m not in TEXT_ONLY]
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if isinstance(node, ast.alias):
                name = node.name
            if name in DOWNLOADERS:
                found.append(f"{path.name}: {name}")
    assert found == []


@pytest.mark.parametrize("hub_id", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct"])
def test_hub_id_gets_a_hint_not_a_download(block_network: list[str], hub_id: str) -> None:
    with pytest.raises(ModelPathError, match="hub id: localjudge never downloads"):
        check_model_dir(hub_id)


def test_relative_path_is_not_called_a_hub_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelPathError) as error:
        check_model_dir("models/missing")
    assert "does not exist" in str(error.value) and "hub id" not in str(error.value)


NO_COPIES_SCRIPT = """
import sys
from pathlib import Path
from localjudge import hallucination_scorer, toxicity_scorer
from localjudge.cli import main, model_flags
from localjudge.evaluation.dataset_runs import evaluate
from localjudge.evaluation.store import ResultStore
from localjudge.evaluation.tables import read_table, write_table
from tests.fakes import make_fake_judge

data, out = Path(sys.argv[1]), Path(sys.argv[2])
model_flags.build_judge = lambda args, device=None: make_fake_judge()
for source in sorted(data.iterdir()):
    judge = make_fake_judge()
    result = evaluate(read_table(source), [hallucination_scorer(judge), toxicity_scorer(judge)],
                      store=ResultStore(out / f"{source.name}.progress"), batch_size=1)
    write_table(result.dataset, out / f"{source.name}.jsonl")
    assert main(["--quiet", "score", "--model", "m", "--scorer", "toxicity", "--data", str(source),
                     "--out", str(out / f"{source.name}.cli.parquet")]) == 0
"""


def tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in sorted(folder.rglob("*"))}


def test_reading_tables_writes_no_copy_anywhere(tmp_path: Path) -> None:
    """Every input format, through `evaluate` and the CLI, in a fresh process whose Hugging Face
    cache is an empty folder: the cache stays empty and the data folder is untouched (a
    `datasets` builder would keep an Arrow copy of the user's rows in the cache)."""
    import subprocess
    import sys

    from localjudge.evaluation.tables import dataset_from_rows

    data, out, hf_home = tmp_path / "data", tmp_path / "out", tmp_path / "hf"
    for folder in (data, out, hf_home):
        folder.mkdir()
    (data / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    (data / "rows.json").write_text(json.dumps(ROWS), encoding="utf-8")
    flat = [{**r, "context": r["context"] if isinstance(r["context"], str) else r["context"][0]} for r in ROWS]
    (data / "rows.csv").write_text("input,output,context\n" + "".join(
        f'"{r["input"]}","{r["output"]}","{r["context"]}"\n' for r in flat), encoding="utf-8")
    write_table(dataset_from_rows(flat), data / "rows.parquet")
    dataset_from_rows(flat).save_to_disk(str(data / "saved"))
    before = tree(data)
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_DATASETS_CACHE": str(hf_home / "datasets"),
           "XDG_CACHE_HOME": str(hf_home / "xdg")}
    done = subprocess.run([sys.executable, "-c", NO_COPIES_SCRIPT, str(data), str(out)], env=env,
                          cwd=PACKAGE.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(hf_home.rglob("*")) == [], "written under HF_HOME"
    assert tree(data) == before, "the data folder changed"
    written = {p.name for p in out.iterdir()}
    assert {f"{s}.jsonl" for s in ("rows.jsonl", "rows.json", "rows.csv", "rows.parquet", "saved")} <= written
