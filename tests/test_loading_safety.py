"""Loading a model runs no code from it: no pickles and no custom code unless the user opts in.

Fast tier: `check_model_dir` refuses pickle-only folders unless ``allow_pickle``, and prefers
safetensors when both are there; `TransformersJudge` and the CLI default to
``trust_remote_code=False`` and ``allow_pickle=False`` and check the path before importing
transformers (read from the source: nothing is loaded). Slow tier: a model folder whose config
points at custom code is refused, and the custom code never runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from localjudge.cli import build_parser
from localjudge.engines.model_files import PICKLE_SUFFIXES, ModelPathError, check_model_dir


def make_dir(folder: Path, *names: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama"}')
    for name in names:
        (folder / name).write_bytes(b"weights")
    return folder


@pytest.mark.parametrize("suffix", PICKLE_SUFFIXES)
def test_pickle_only_folder_is_refused_unless_allowed(tmp_path: Path, suffix: str) -> None:
    folder = make_dir(tmp_path / "m", f"weights{suffix}")
    with pytest.raises(ModelPathError, match="only pickle weights .* can run arbitrary code.*allow_pickle=True"):
        check_model_dir(folder)
    assert [p.name for p in check_model_dir(folder, allow_pickle=True).weights] == [f"weights{suffix}"]


def sharded(folder: Path) -> Path:
    make_dir(folder, "pytorch_model.bin", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return folder


@pytest.mark.parametrize("allow_pickle", [False, True])
def test_safetensors_win_over_pickles(tmp_path: Path, allow_pickle: bool) -> None:
    files = check_model_dir(sharded(tmp_path / "m"), allow_pickle=allow_pickle)
    assert [p.name for p in files.weights] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    single = make_dir(tmp_path / "one", "pytorch_model.bin", "model.safetensors", "adapter_model.safetensors")
    assert [p.name for p in check_model_dir(single, allow_pickle=allow_pickle).weights] == ["model.safetensors"]


@pytest.mark.parametrize("stray", ["adapter_model.safetensors", "consolidated.safetensors", "model-00001.safetensors"])
def test_a_stray_safetensors_file_does_not_let_a_pickle_through(tmp_path: Path, stray: str) -> None:
    """transformers loads only model.safetensors or an index's shards: any other safetensors
    file beside a pickle would have it load the pickle, so the folder counts as pickle-only."""
    folder = make_dir(tmp_path / "m", "pytorch_model.bin", stray)
    with pytest.raises(ModelPathError, match=f"only pickle weights .*its {stray} are not the model's weights"):
        check_model_dir(folder)
    assert [p.name for p in check_model_dir(folder, allow_pickle=True).weights] == ["pytorch_model.bin"]
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(ModelPathError, match="but no model.safetensors or model.safetensors.index.json"):
        check_model_dir(folder)


def test_a_safetensors_index_must_name_shards_that_exist(tmp_path: Path) -> None:
    folder = sharded(tmp_path / "m")
    (folder / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(ModelPathError, match="names shards that are not there: model-00002-of-00002"):
        check_model_dir(folder)
    (folder / "model.safetensors.index.json").write_text("[1, 2]")
    with pytest.raises(ModelPathError, match="not a readable safetensors index"):
        check_model_dir(folder)


def test_several_gguf_files_without_config_are_ambiguous(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (folder / name).write_bytes(b"GGUF")
    with pytest.raises(ModelPathError, match="no config.json"):
        check_model_dir(folder)
    assert check_model_dir(folder / "a.gguf").gguf == folder / "a.gguf"


def test_transformers_judge_defaults_to_no_remote_code_and_no_pickle() -> None:
    import inspect

    from localjudge.engines.transformers.judge import TransformersJudge

    params = inspect.signature(TransformersJudge.load).parameters
    for name in ("trust_remote_code", "allow_pickle"):
        assert params[name].default is False, name


@pytest.mark.parametrize("bad", ["HuggingFaceTB/SmolLM2-135M-Instruct", "{tmp}/missing", "{tmp}/pickle"])
def test_model_path_is_checked_before_transformers_is_imported(tmp_path: Path, bad: str) -> None:
    """In a fresh interpreter where importing transformers fails, a bad path still gets its own
    clear error: the check runs before transformers is imported (and nothing is downloaded)."""
    import subprocess
    import sys

    (tmp_path / "pickle").mkdir()
    (tmp_path / "pickle" / "config.json").write_text("{}")
    (tmp_path / "pickle" / "pytorch_model.bin").write_bytes(b"x")
    code = (
        "import sys; sys.modules['transformers'] = None\n"
        "from localjudge.engines.model_files import ModelPathError\n"
        "from localjudge.engines.transformers.judge import TransformersJudge\n"
        "try:\n    TransformersJudge.load(sys.argv[1])\n"
        "except ModelPathError as error:\n    print('refused:', error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, bad.format(tmp=tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("refused:"), done.stderr[-2000:]


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


def test_cli_defaults_are_safe() -> None:
    args = build_parser().parse_args(["score", "--model", "m", "--scorer", "toxicity", "--data", "d.jsonl"])
    assert args.trust_remote_code is False and args.allow_pickle is False


CUSTOM_CODE = """from pathlib import Path
Path({marker!r}).write_text("custom code ran")
raise RuntimeError("custom code ran")
"""


def custom_code_model(folder: Path, source: Path, model_type: str) -> Path:
    """The default model's config, tokenizer and (linked) weights, with a config that maps the
    auto classes to code shipped in the folder; that code leaves a marker file if it ever runs."""
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    (folder / "model.safetensors").symlink_to((source / "model.safetensors").resolve())
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config.update(model_type=model_type, auto_map={
        "AutoConfig": "configuration_custom.CustomConfig",
        "AutoModelForCausalLM": "modeling_custom.CustomModel",
    })
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    marker = folder / "CUSTOM_CODE_RAN"
    for name in ("configuration_custom.py", "modeling_custom.py"):
        (folder / name).write_text(CUSTOM_CODE.format(marker=str(marker)), encoding="utf-8")
    return marker


@pytest.mark.slow
def test_custom_code_model_is_refused(model_dir: Path, tmp_path: Path) -> None:
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="localjudge_custom")
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        TransformersJudge.load(folder)
    assert not marker.exists()


@pytest.mark.slow
def test_custom_code_beside_a_known_architecture_never_runs(model_dir: Path, tmp_path: Path) -> None:
    """With a model_type transformers knows, it uses its own class and ignores the auto_map."""
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="llama")
    judge = TransformersJudge.load(folder)
    assert type(judge.model).__module__.startswith("transformers.")
    assert not marker.exists()


@pytest.mark.slow
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
