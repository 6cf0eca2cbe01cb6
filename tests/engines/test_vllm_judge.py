"""What the vLLM engine does without vLLM running, on real tokenizers (the qwen2 fixture's): label
probabilities read off vLLM's logprobs at each label choice, once; and without vLLM installed,
the engine says how to install it (its `load` imports torch first)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from localjudge.cli.main import main
from localjudge.engines.vllm.judge import VLLMJudge


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


def test_vllm_gets_the_checked_files_and_a_failed_start_is_one_line(family_dir: Any, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34, item 2, on a stand-in vLLM: `load_format="auto"` reaches vLLM as "safetensors"
    (the files localjudge checked, never Mistral's consolidated*.safetensors beside them), and an
    engine that fails to start (vLLM refuses a checkpoint lacking weights in its own processes,
    which log why) ends the command with one line, not vLLM's traceback."""
    import sys
    import types

    seen: dict[str, Any] = {}

    def refuse(**kwargs: Any) -> None:
        seen.update(kwargs)
        raise RuntimeError("Engine core initialization failed. See root cause above.")

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(LLM=refuse, __version__="0.0"))
    for name, value in {"HF_HUB_OFFLINE": "1", "VLLM_LOGGING_STREAM": "ext://sys.stderr",
                        "VLLM_LOGGING_LEVEL": "WARNING"}.items():  # what the load sets, restored after the test
        monkeypatch.setenv(name, value)
    data = tmp_path / "rows.jsonl"
    data.write_text('{"input": "q", "output": "A reply of five words here."}\n', encoding="utf-8")
    folder = family_dir("llama3")
    code = main(["--quiet", "score", "--engine", "vllm", "--model", str(folder), "--scorer", "toxicity",
                 "--data", str(data)])
    err = capsys.readouterr().err
    assert code == 2 and err == (f"localjudge: error: vLLM could not start its engine on {folder}: Engine core "
                                 "initialization failed. See root cause above.\n")
    assert seen["load_format"] == "safetensors" and seen["model"] == str(folder)
