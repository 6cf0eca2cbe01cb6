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


def safetensors_bytes(data: bytes = b"weights") -> bytes:
    """A well-formed safetensors file holding `data` as one uint8 tensor (no torch needed)."""
    header = json.dumps({"w": {"dtype": "U8", "shape": [len(data)], "data_offsets": [0, len(data)]}}).encode()
    return len(header).to_bytes(8, "little") + header + data


def make_dir(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama"}')
    for name in names:
        (folder / name).write_bytes(safetensors_bytes() if name.endswith(".safetensors") else b"weights")
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


BAD_SHARDS = ["pytorch_model.bin", "/etc/passwd", "../../etc/hostname", "../outside.safetensors",
              "sub/model-00002.safetensors", "sub\\model-00002.safetensors", "/abs/model.safetensors",
              "model-00002.safetensors.bin", "C:model.safetensors", ".."]


@pytest.mark.parametrize("allow_pickle", [False, True])
@pytest.mark.parametrize("name", BAD_SHARDS)
def test_an_index_names_only_safetensors_files_in_the_folder(tmp_path: Path, name: str, allow_pickle: bool) -> None:
    """Issue 34, item 2: an index may name only a `.safetensors` file in its own folder, even
    where the file it names exists (created here) and even with --allow-pickle: transformers
    would open whatever it names (a pickle, a file outside the folder) without the pickle check."""
    folder = sharded(tmp_path / "root" / "m")
    target = folder / name if not name.startswith("/") else None
    if target is not None and name not in ("..",) and ":" not in name:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(safetensors_bytes())  # it exists: only the rule refuses it
    (tmp_path / "root" / "etc").mkdir(exist_ok=True)
    (tmp_path / "root" / "etc" / "hostname").write_text("host")
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": name}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    with pytest.raises(ModelPathError, match="a shard must be a .safetensors file name in the model folder"):
        check_model_dir(folder, allow_pickle=allow_pickle)


@pytest.mark.skipif(os.name != "posix", reason="links, FIFOs and devices are POSIX")
def test_a_weight_file_must_be_a_regular_file_reached_through_links_or_not(tmp_path: Path) -> None:
    """A shard (or model.safetensors) that is a FIFO or a link to a device is refused before any
    read; one that is a link into another folder (Hugging Face's cache: snapshots/REV/NAME ->
    ../../blobs/HASH) is followed, not judged by where it points."""
    blobs = tmp_path / "hub" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / "0123abcd").write_bytes(safetensors_bytes())
    snapshot = make_dir(tmp_path / "hub" / "snapshots" / "rev")
    (snapshot / "model.safetensors").symlink_to("../../blobs/0123abcd")
    assert check_model_dir(snapshot).weights == (snapshot / "model.safetensors",)
    sharded_folder = sharded(tmp_path / "m")
    (sharded_folder / "model-00002-of-00002.safetensors").unlink()
    os.mkfifo(sharded_folder / "model-00002-of-00002.safetensors")
    with pytest.raises(ModelPathError, match="model-00002-of-00002.safetensors is not a regular file"):
        check_model_dir(sharded_folder)
    single = make_dir(tmp_path / "dev")
    (single / "model.safetensors").symlink_to("/dev/zero")
    with pytest.raises(ModelPathError, match="model.safetensors is not a regular file"):
        check_model_dir(single)
    (single / "model.safetensors").unlink()
    (single / "model.safetensors").write_bytes(safetensors_bytes())
    (single / "tokenizer.json").symlink_to("/dev/zero")  # any file a loader opens, not only weights
    with pytest.raises(ModelPathError, match="tokenizer.json is not a regular file"):
        check_model_dir(single)


def test_a_truncated_or_garbled_weight_file_is_one_line(tmp_path: Path) -> None:
    """Issue 34, item 7: an interrupted copy fails the check (a header describing more bytes than
    the file holds), not the loader with a traceback; so does a file that is not safetensors."""
    whole = safetensors_bytes(b"w" * 1000)
    folder = model_folder(tmp_path / "m", b"")
    for data, message in [(whole[:-1], "is truncated: 1,0.. bytes, its header describes 1,0.. .an interrupted copy"),
                          (whole[:20], "is not a safetensors file"), (b"", "is not a safetensors file"),
                          (b"\xff" * 8 + whole[8:], "is not a safetensors file")]:
        (folder / "model.safetensors").write_bytes(data)
        with pytest.raises(ModelPathError, match=message):
            check_model_dir(folder)
    (folder / "model.safetensors").write_bytes(whole)
    assert check_model_dir(folder).weights == (folder / "model.safetensors",)


def test_the_cli_says_a_weight_file_is_truncated_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from localjudge.cli.main import main
    from tests.conftest import EXAMPLES
    from tests.fakes import path_check_only, stand_in_engine

    stand_in_engine(monkeypatch, path_check_only)
    folder = model_folder(tmp_path / "m", b"")
    (folder / "model.safetensors").write_bytes(safetensors_bytes(b"w" * 1000)[:-100])
    data = str(EXAMPLES / "example.jsonl")
    assert main(["score", "--model", str(folder), "--scorer", "toxicity", "--data", data]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"localjudge: error: {folder / 'model.safetensors'} is truncated") and err.count("\n") == 1


def test_vllm_is_given_only_the_files_checked(tmp_path: Path) -> None:
    """vLLM's loader picks files itself: without an index it loads every *.safetensors in the
    folder (so a stray adapter beside model.safetensors is refused for it, while transformers
    ignores it), and "auto" switches to Mistral's consolidated*.safetensors wherever one exists
    (so "auto" becomes "safetensors": the index's shards). Pickle-reading formats need allow_pickle."""
    from localjudge.engines.model_files import vllm_load_format

    single = check_model_dir(make_dir(tmp_path / "one", "model.safetensors"))
    assert vllm_load_format(single, "auto") == "safetensors" and vllm_load_format(single, "dummy") == "dummy"
    stray = check_model_dir(make_dir(tmp_path / "stray", "model.safetensors", "adapter_model.safetensors"))
    with pytest.raises(ModelPathError, match="holds adapter_model.safetensors beside the model's weights: vLLM"):
        vllm_load_format(stray, "auto")
    mistral = sharded(tmp_path / "mistral")
    (mistral / "consolidated.safetensors").write_bytes(safetensors_bytes())
    assert vllm_load_format(check_model_dir(mistral), "auto") == "safetensors"  # the index's shards only
    for pickled in ("pt", "npcache"):
        with pytest.raises(ModelPathError, match=f"load_format '{pickled}' makes vLLM open files localjudge does not"):
            vllm_load_format(single, pickled)
        assert vllm_load_format(single, pickled, allow_pickle=True) == pickled


def test_several_gguf_files_without_config_are_ambiguous(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    for name in ("a.gguf", "b.gguf"):
        (folder / name).write_bytes(b"GGUF")
    with pytest.raises(ModelPathError, match="no config.json"):
        check_model_dir(folder)
    assert check_model_dir(folder / "a.gguf").gguf == folder / "a.gguf"


def test_model_path_is_checked_before_transformers_is_imported(tmp_path: Path) -> None:
    """In a fresh interpreter where importing transformers fails, each bad path (a hub id, a
    missing folder, a folder of pickled weights) still gets its own clear error: the check runs
    before transformers is imported (and nothing is downloaded). One interpreter for the three
    (torch's import is most of its cost)."""
    import subprocess
    import sys

    (tmp_path / "pickle").mkdir()
    (tmp_path / "pickle" / "config.json").write_text("{}")
    (tmp_path / "pickle" / "pytorch_model.bin").write_bytes(b"x")
    bad = ["HuggingFaceTB/SmolLM2-135M-Instruct", str(tmp_path / "missing"), str(tmp_path / "pickle")]
    code = (
        "import sys; sys.modules['transformers'] = None\n"
        "from localjudge.engines.model_files import ModelPathError\n"
        "from localjudge.engines.transformers.judge import TransformersJudge\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n        TransformersJudge.load(path)\n"
        "    except ModelPathError as error:\n        print('refused:', error)\n"
        "    else:\n        print('loaded:', path)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *bad], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(bad) and all(line.startswith("refused:") for line in lines), done.stdout


def test_cli_defaults_are_safe() -> None:
    args = build_parser().parse_args(["score", "--model", "m", "--scorer", "toxicity", "--data", "d.jsonl"])
    assert args.trust_remote_code is False and args.allow_pickle is False


def model_folder(folder: Path, weights: bytes) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (folder / "model.safetensors").write_bytes(safetensors_bytes(weights))
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
    (tmp_path / "model.safetensors").write_bytes(safetensors_bytes())
    assert check_model_dir(tmp_path).weights[0].name == "model.safetensors"
