"""Loading a model runs no code from it, on the default model's files: a folder whose config
points at custom code is refused, and with a model type transformers knows the custom code is
ignored; the code never runs either way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

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


def test_custom_code_model_is_refused(model_dir: Path, tmp_path: Path) -> None:
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="localjudge_custom")
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        TransformersJudge.load(folder)
    assert not marker.exists()


def test_custom_code_beside_a_known_architecture_never_runs(model_dir: Path, tmp_path: Path) -> None:
    """With a model_type transformers knows, it uses its own class and ignores the auto_map."""
    from localjudge.engines.transformers.judge import TransformersJudge

    folder = tmp_path / "custom"
    marker = custom_code_model(folder, model_dir, model_type="llama")
    judge = TransformersJudge.load(folder)
    assert type(judge.model).__module__.startswith("transformers.")
    assert not marker.exists()
