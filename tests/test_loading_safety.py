"""Loading a model runs no code from it: no pickles and no custom code unless the user opts in.

Fast tier: `check_model_dir` refuses pickle-only folders unless ``allow_pickle``, and prefers
safetensors when both are there; `TransformersJudge` and the CLI default to
``trust_remote_code=False`` and ``allow_pickle=False`` and check the path before importing
transformers (read from the source: nothing is loaded). Slow tier: a model folder whose config
points at custom code is refused, and the custom code never runs.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from localjudge.cli import build_parser
from localjudge.model_files import PICKLE_SUFFIXES, ModelPathError, check_model_dir

SOURCE = Path(__file__).resolve().parent.parent / "localjudge" / "transformers_judge.py"


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


@pytest.mark.parametrize("allow_pickle", [False, True])
def test_safetensors_win_over_pickles(tmp_path: Path, allow_pickle: bool) -> None:
    folder = make_dir(tmp_path / "m", "pytorch_model.bin", "model-00001.safetensors", "model-00002.safetensors")
    files = check_model_dir(folder, allow_pickle=allow_pickle)
    assert [p.name for p in files.weights] == ["model-00001.safetensors", "model-00002.safetensors"]


def test_several_gguf_files_without_config_are_ambiguous(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (folder / name).write_bytes(b"GGUF")
    with pytest.raises(ModelPathError, match="no config.json"):
        check_model_dir(folder)
    assert check_model_dir(folder / "a.gguf").gguf == folder / "a.gguf"


def judge_init() -> ast.FunctionDef:
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TransformersJudge"]
    (init,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
    return init


def test_transformers_judge_defaults_to_no_remote_code_and_no_pickle() -> None:
    """The signature, read from the source (importing it would import torch)."""
    args = judge_init().args
    defaults = {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    for name in ("trust_remote_code", "allow_pickle"):
        assert isinstance(defaults[name], ast.Constant) and defaults[name].value is False, name


def test_model_path_is_checked_before_transformers_is_imported() -> None:
    body = [n for n in judge_init().body if not isinstance(n, ast.Expr) or not isinstance(n.value, ast.Constant)]
    first = body[0]
    assert isinstance(first, ast.Assign) and "check_model_dir(model_path, allow_pickle=allow_pickle)" in ast.unparse(first)
    assert isinstance(body[1], (ast.Import, ast.ImportFrom))  # outlines and transformers come after


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
    from localjudge.transformers_judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="localjudge_custom")
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        TransformersJudge(folder)
    assert not marker.exists()


@pytest.mark.slow
def test_custom_code_beside_a_known_architecture_never_runs(model_dir: Path, tmp_path: Path) -> None:
    """With a model_type transformers knows, it uses its own class and ignores the auto_map."""
    from localjudge.transformers_judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="llama")
    judge = TransformersJudge(folder)
    assert type(judge.model).__module__.startswith("transformers.")
    assert not marker.exists()
