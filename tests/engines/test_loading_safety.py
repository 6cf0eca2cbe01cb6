"""Loading a model runs no code from it, with real transformers and no trained model: the
arguments `from_pretrained` really receives (local files only, no remote code, safetensors
unless pickles are allowed), `TransformersJudge.load`'s safe defaults, and a real folder with
both safetensors and a pickle loading the safetensors (the llama3 family fixture). The path
rules themselves: tests/unit/engines/test_model_files.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.unit.engines.test_model_files import make_dir


def test_transformers_judge_defaults_to_no_remote_code_and_no_pickle() -> None:
    import inspect

    from localjudge.engines.transformers.judge import TransformersJudge

    params = inspect.signature(TransformersJudge.load).parameters
    for name in ("trust_remote_code", "allow_pickle"):
        assert params[name].default is False, name


class Loaded(Exception):
    """Stops a judge's construction once both `from_pretrained` calls have been seen."""


@pytest.mark.parametrize("weights", ["model.safetensors", "model.gguf"])
@pytest.mark.parametrize("allow_pickle", [False, True])
def test_from_pretrained_receives_local_only_safe_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            weights: str, allow_pickle: bool) -> None:
    """The arguments the tokenizer's and the model's `from_pretrained` really receive, recorded at
    run time (however the code builds them): local files only, no remote code, and safetensors
    only unless pickles were allowed (a GGUF file is its own format)."""
    import transformers

    calls: dict[str, dict] = {}

    def recorder(name: str, stop: bool):  # type: ignore[no-untyped-def]
        def from_pretrained(path: str, *args: object, **kwargs: object) -> object:
            calls[name] = {"path": path, "args": args, **kwargs}
            if stop:
                raise Loaded
            return object()

        return from_pretrained

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", recorder("tokenizer", False))
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", recorder("model", True))
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = make_dir(tmp_path / "m", weights)
    with pytest.raises(Loaded):
        TransformersJudge.load(folder / weights if weights.endswith(".gguf") else folder, allow_pickle=allow_pickle)
    for name in ("tokenizer", "model"):
        assert calls[name]["path"] == str(folder) and calls[name]["args"] == ()
        assert calls[name]["local_files_only"] is True and calls[name]["trust_remote_code"] is False, name
    if weights.endswith(".gguf"):
        assert calls["tokenizer"]["gguf_file"] == calls["model"]["gguf_file"] == weights
    else:
        assert calls["model"]["use_safetensors"] is (None if allow_pickle else True)
        assert "gguf_file" not in calls["model"]


@pytest.mark.parametrize("allow_pickle", [False, True])
def test_real_folder_with_safetensors_and_a_pickle_loads_the_safetensors(family_dir, tmp_path: Path,
                                                                         allow_pickle: bool) -> None:
    """Real transformers, a real model folder plus a `pytorch_model.bin` of zeroed weights of the
    same shapes: the loaded model has the safetensors' weights, never the pickle's."""
    import torch
    from safetensors.torch import load_file

    from localjudge.engines.transformers.judge import TransformersJudge

    source, folder = family_dir("llama3"), tmp_path / "both"
    shutil.copytree(source, folder)
    weights = load_file(str(folder / "model.safetensors"))
    torch.save({name: torch.zeros_like(t) for name, t in weights.items()}, folder / "pytorch_model.bin")
    judge = TransformersJudge.load(folder, allow_pickle=allow_pickle)
    name = "model.embed_tokens.weight"
    assert torch.equal(judge.model.state_dict()[name], weights[name]) and weights[name].abs().sum() > 0


def partial_copy(source: Path, folder: Path, drop: set[str]) -> Path:
    """A copy of a fixture model whose checkpoint lacks the weights in `drop` (all: none left)."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(source, folder)
    weights = load_file(str(folder / "model.safetensors"))
    kept = {name: t for name, t in weights.items() if name not in drop} if drop else {}
    save_file(kept, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return folder


def test_a_checkpoint_lacking_weights_is_refused_naming_them(family_dir, tmp_path: Path) -> None:
    """Issue 34, item 2: a checkpoint that does not cover the architecture (an incomplete copy, an
    index naming too little) would load with random numbers in the gaps and judge at random. The
    transformers engine refuses it, naming what is missing; a tied `lm_head` (every fixture ties
    it, and none stores it) is not missing. (vLLM's own loader refuses such a checkpoint too:
    docs/robustness.md.)"""
    from localjudge.engines.model_files import ModelPathError
    from localjudge.engines.transformers.judge import TransformersJudge

    source = family_dir("mistral")
    drop = {"model.norm.weight", "model.layers.1.mlp.down_proj.weight"}
    partial = partial_copy(source, tmp_path / "partial", drop)
    with pytest.raises(ModelPathError, match=r"lacks 2 weight\(s\) the model needs \(model.layers.1.mlp.down_proj"
                                             r".weight, model.norm.weight\)") as refused:
        TransformersJudge.load(partial)
    assert "lm_head" not in str(refused.value) and "\n" not in str(refused.value)
    empty = partial_copy(source, tmp_path / "empty", set())
    with pytest.raises(ModelPathError, match=r"lacks \d+ weight\(s\) .* and \d+ more\); loading would fill them"):
        TransformersJudge.load(empty)
    TransformersJudge.load(source)  # the whole checkpoint, lm_head tied: loads


def test_a_checkpoint_that_does_not_fit_its_config_is_refused_in_one_line(family_dir, tmp_path: Path) -> None:
    """Issue 57 N13: another model's checkpoint beside this config.json (weights of other shapes)
    ended in transformers' `RuntimeError ... ignore_mismatched_sizes` traceback; it is refused in
    one line naming the weights that do not fit, before any row (a checkpoint lacking weights
    already was)."""
    import json

    from localjudge.engines.model_files import ModelPathError
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = tmp_path / "other"
    shutil.copytree(family_dir("mistral"), folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["intermediate_size"] = config["intermediate_size"] * 2  # the MLP weights no longer fit
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelPathError, match=r"the checkpoint's weights do not fit its config.json \(\d+ of another "
                                             r"shape: model.layers.0.mlp.down_proj.weight: \[") as refused:
        TransformersJudge.load(folder)
    assert "\n" not in str(refused.value) and "and " in str(refused.value)
