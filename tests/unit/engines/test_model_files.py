"""Model files (`localjudge.engines.model_files`): what a model path may be, checked before any
heavy import, and the fingerprint that keys results to the weights.

Loading a model runs no code from it: `check_model_dir` refuses pickle-only folders unless
``allow_pickle``, and prefers safetensors when both are there; `TransformersJudge.load` checks
the path before transformers is imported (in a fresh process) and the CLI defaults to
``trust_remote_code=False`` and ``allow_pickle=False``. (What `from_pretrained` receives is
tests/engines/test_loading_safety.py's; custom code in a real model folder, tests/model/'s.)
New weights of the same size saved over the same folder change `ModelFiles.fingerprint`
(content hashes, cached by path, size, mtime).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from localjudge.cli import build_parser
from localjudge.engines import model_files
from localjudge.engines.model_files import PICKLE_SUFFIXES, ModelPathError, check_model_dir, file_sha256


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


def test_cli_defaults_are_safe() -> None:
    args = build_parser().parse_args(["score", "--model", "m", "--scorer", "toxicity", "--data", "d.jsonl"])
    assert args.trust_remote_code is False and args.allow_pickle is False


def model_folder(folder: Path, weights: bytes) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_new_weights_of_the_same_size_change_the_fingerprint(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m", b"a" * 4096)
    before = check_model_dir(folder).fingerprint()
    assert check_model_dir(folder).fingerprint() == before  # stable
    stat = (folder / "model.safetensors").stat()
    model_folder(folder, b"b" * 4096)  # a fine-tune of the same shape, saved over the old one
    os.utime(folder / "model.safetensors", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later save
    assert check_model_dir(folder).fingerprint() != before


def test_a_config_edit_changes_the_fingerprint(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m", b"a" * 64)
    before = check_model_dir(folder).fingerprint()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "rope_theta": 1.0}))
    assert check_model_dir(folder).fingerprint() != before


def test_weight_hashes_are_cached_on_disk_by_path_size_and_mtime(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process (the in-memory cache cleared) reads the hash instead of the file; the
    cache key is what makes that safe, so a file changed behind an unchanged key is not seen."""
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(model_files, "_HASHES", {})
    path = tmp_path / "w.safetensors"
    path.write_bytes(b"x" * 1000)
    first = file_sha256(path)
    assert json.loads((tmp_path / "cache" / "sha256.json").read_text()) == {
        f"{path.resolve()}|1000|{path.stat().st_mtime_ns}": first}
    stat = path.stat()
    path.write_bytes(b"y" * 1000)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same path, size and mtime
    monkeypatch.setattr(model_files, "_HASHES", {})
    assert file_sha256(path) == first  # from the disk cache, not the file
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert file_sha256(path) != first


def test_an_unwritable_cache_only_costs_a_rehash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LOCALJUDGE_CACHE", str(blocker / "cache"))
    monkeypatch.setattr(model_files, "_HASHES", {})
    path = tmp_path / "w.safetensors"
    path.write_bytes(b"x")
    assert file_sha256(path) == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"


def test_model_files_refuse_pickle(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "pytorch_model.bin").write_bytes(b"pickle")
    with pytest.raises(ModelPathError, match="pickle"):
        check_model_dir(tmp_path)
    assert check_model_dir(tmp_path, allow_pickle=True).weights[0].name == "pytorch_model.bin"
    (tmp_path / "model.safetensors").write_bytes(b"x")
    assert check_model_dir(tmp_path).weights[0].name == "model.safetensors"
