"""Choosing an engine, and what the vLLM engine does without vLLM running: options checked per
engine, bad model paths refused before vLLM is imported, GPUs shared out to data-parallel
ranks, label probabilities read off vLLM's logprobs. Fast: no model runs (the tokenizer of a
family fixture at most). The vLLM engine end to end is `test_vllm_engine.py`."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge.cli import main
from localjudge.cli.sweep import load_config
from localjudge.engines.choice import EngineOptionError, check_engine, rank_gpus
from localjudge.engines.grammar import label_mass
from localjudge.engines.vllm.judge import VLLMJudge


@pytest.mark.parametrize(("engine", "option", "owner"), [
    ("vllm", "device_map", "transformers"),
    ("vllm", "decoder", "transformers"),
    ("transformers", "tensor_parallel_size", "vllm"),
    ("transformers", "gpu_memory_utilization", "vllm"),
])
def test_an_engine_refuses_the_other_engines_options(engine: str, option: str, owner: str) -> None:
    with pytest.raises(EngineOptionError, match=f"{option} is an option of the {owner} engine, not of the {engine}"):
        check_engine(engine, {option: 1})
    assert check_engine(engine, {option: None, "dtype": "auto"}) == {"dtype": "auto"}  # None: not given


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine must be one of transformers, vllm"):
        check_engine("llamacpp", {})


def test_the_cli_names_the_flag_of_the_other_engine_before_any_model_loads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "A reply of five words here.", "context": "c"}\n', encoding="utf-8")
    code = main(["--quiet", "score", "--engine", "vllm", "--device-map", "cpu", "--model", str(tmp_path),
                 "--scorer", "toxicity", "--data", str(data)])
    assert code == 2
    assert "--device-map is a flag of the transformers engine, not of --engine vllm" in capsys.readouterr().err


def test_sweep_model_entries_take_an_engine_and_refuse_the_others_options(tmp_path: Path) -> None:
    base = "scorers: [toxicity]\ndatasets: [{path: d.jsonl}]\n"
    good = tmp_path / "good.yaml"
    good.write_text(base + "models: [{path: m, engine: vllm, tensor_parallel_size: 2, max_rows: 64}]\n")
    assert load_config(good)["models"][0]["engine"] == "vllm"
    bad = tmp_path / "bad.yaml"
    bad.write_text(base + "models: [{path: m, tensor_parallel_size: 2}]\n")
    with pytest.raises(ValueError, match="tensor_parallel_size is an option of the vllm engine"):
        load_config(bad)


REFUSE = """
import sys
from localjudge.engines.model_files import ModelPathError
from localjudge.engines.vllm.judge import VLLMJudge
try:
    VLLMJudge.load(sys.argv[1])
except ModelPathError as error:
    print("refused:", error)
print("vllm imported:", "vllm" in sys.modules)
"""


@pytest.mark.vllm  # also in the vLLM tier, where vllm is installed and could be imported too early
@pytest.mark.parametrize(("path", "says"), [
    ("Qwen/Qwen2.5-7B-Instruct", "hub"),
    ("no/such/folder/here", "does not exist"),
    ("{gguf}", "not a .gguf file"),
])
def test_bad_model_paths_are_refused_before_vllm_is_imported(tmp_path: Path, path: str, says: str) -> None:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    done = subprocess.run([sys.executable, "-c", REFUSE, path.format(gguf=gguf)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert "refused:" in done.stdout and says in done.stdout.lower(), done.stdout + done.stderr[-2000:]
    assert "vllm imported: False" in done.stdout


@pytest.mark.parametrize(("rank", "per_rank", "visible", "gpus"), [
    (0, 1, None, "0"),
    (3, 1, None, "3"),
    (1, 2, None, "2,3"),
    (1, 2, "4,5,6,7", "6,7"),
    (0, 4, "2, 3,4,5", "2,3,4,5"),
])
def test_each_data_parallel_rank_gets_its_own_gpus(rank: int, per_rank: int, visible: str | None, gpus: str) -> None:
    assert rank_gpus(rank, per_rank, visible) == gpus


def test_a_rank_without_enough_gpus_is_refused() -> None:
    with pytest.raises(ValueError, match="rank 1 needs GPUs 2..3 but only 3 are visible"):
        rank_gpus(1, 2, "0,1,2")


@pytest.mark.parametrize(("candidates", "quote", "expected"), [
    ([("un", 0.6), ("s", 0.2), ("supp", 0.1)], "", {"supported": 0.3 / 0.9, "unsupported": 0.6 / 0.9}),
    ([('"un', 0.5), ('"supported', 0.5)], '"', {"supported": 0.5, "unsupported": 0.5}),
    ([('"', 0.9), ("un", 0.1)], '"', None),  # no allowed token starts a label after the quote
])
def test_label_mass_renormalises_over_the_labels(candidates: list[tuple[str, float]], quote: str,
                                                 expected: dict[str, float] | None) -> None:
    got = label_mass(candidates, ("supported", "unsupported"), quote)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-6)


def _judge_on(tokenizer: Any) -> VLLMJudge:
    """A VLLMJudge with only a tokenizer: enough to read answers, no engine behind it."""
    judge = VLLMJudge.__new__(VLLMJudge)
    judge.tokenizer, judge._token_text = tokenizer, {}
    return judge


def test_vllm_label_probabilities_are_read_at_each_label_choice(family_dir: Any) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(family_dir("qwen2"), local_files_only=True)

    def enc(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False).input_ids)

    parts = [enc('{"verdicts":[{"verdict":"'), enc("unsupported"), enc('"},{"verdict":"'), enc("supported"),
             enc('"}]}')]
    ids = [t for part in parts for t in part]
    choices = {len(parts[0]): (0.7, 0.3), len(parts[0]) + len(parts[1]) + len(parts[2]): (0.2, 0.8)}
    un, sup = enc("unsupported")[0], enc("supported")[0]
    logprobs = []
    for k, token in enumerate(ids):
        if k in choices:
            p_un, p_sup = choices[k]
            logprobs.append({un: SimpleNamespace(logprob=math.log(p_un)), sup: SimpleNamespace(logprob=math.log(p_sup)),
                             999: SimpleNamespace(logprob=-math.inf)})
        else:  # a forced position: one allowed token
            logprobs.append({token: SimpleNamespace(logprob=0.0)})
    probs = _judge_on(tokenizer)._label_probs(ids, logprobs, {"verdict": ("supported", "unsupported")})
    assert probs == ({"supported": 0.3, "unsupported": 0.7}, {"supported": 0.8, "unsupported": 0.2})


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here: it would start")
def test_the_vllm_engine_without_vllm_says_how_to_install_it(model_dir: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "A reply of five words here.", "context": "c"}\n', encoding="utf-8")
    code = main(["--quiet", "score", "--engine", "vllm", "--model", str(model_dir), "--scorer", "toxicity",
                 "--data", str(data)])
    assert code == 2
    err = capsys.readouterr().err
    assert "the vLLM engine needs vllm" in err and "scripts/setup_vllm.sh" in err


def test_vllm_reads_a_label_once_when_the_quote_comes_alone(family_dir: Any) -> None:
    """Qwen has tokens that carry the quote and a label's start (`"s`): where the grammar has
    not written the quote yet, they are candidates at the quote's position. When the judge writes
    the quote alone, the label is chosen at the next position: read there, once."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(family_dir("qwen2"), local_files_only=True)

    def enc(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False).input_ids)

    head, quote, label, tail = enc('{"verdicts":[{"verdict":'), enc('"'), enc("unsupported"), enc('"}]}')
    assert len(quote) == 1 and head[-1] == tokenizer.convert_tokens_to_ids('":')
    ids = head + quote + label + tail
    quoted_s = tokenizer.convert_tokens_to_ids('"s')
    un, sup = enc("unsupported")[0], enc("supported")[0]
    logprobs: list[dict[int, Any]] = [{token: SimpleNamespace(logprob=0.0)} for token in ids]
    logprobs[len(head)] = {quote[0]: SimpleNamespace(logprob=math.log(0.9)),
                           quoted_s: SimpleNamespace(logprob=math.log(0.1))}
    logprobs[len(head) + 1] = {un: SimpleNamespace(logprob=math.log(0.6)), sup: SimpleNamespace(logprob=math.log(0.4))}
    probs = _judge_on(tokenizer)._label_probs(ids, logprobs, {"verdict": ("supported", "unsupported")})
    assert probs == ({"supported": 0.4, "unsupported": 0.6},)
