"""Checking a model path before anything loads it: local only, safe weight formats only."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localjudge.engines.small_files import SmallFileError, read_small_file

log = logging.getLogger(__name__)

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # owner/name
SHARD_NAME = re.compile(r"[^/\\:\x00]+\.safetensors")  # a file name in the folder, no path
# What a loader may open in a model folder (weights, configs, tokenizers, templates)
LOADER_SUFFIXES = (".safetensors", ".gguf", ".json", ".jinja", ".model", ".txt", ".tiktoken", *PICKLE_SUFFIXES)
# vLLM load formats that open only the safetensors files `vllm_load_format` checks (or none: dummy)
VLLM_CHECKED_FORMATS = ("auto", "safetensors", "dummy")
HEADER_LIMIT = 100 * 1024 * 1024  # safetensors itself refuses headers over 100 MB


def looks_like_hub_id(path: str) -> bool:
    """True for `owner/name` strings whose first part is not a folder here."""
    return bool(_HUB_ID.fullmatch(path)) and not Path(path.split("/")[0]).exists()


class ModelPathError(ValueError):
    """The model path is missing, not a model, a hub id, or holds only unsafe weights."""


@dataclass(frozen=True)
class ModelFiles:
    """What a checked model path holds."""

    directory: Path
    gguf: Path | None
    weights: tuple[Path, ...]

    def fingerprint(self) -> str:
        """Short hash of the config and tokenizer files' bytes and the weight files' contents.

        New weights saved over the same folder (a fine-tune of the same shape) change it; each
        weight file's sha256 is computed once and then cached by path, size and mtime (see
        `file_sha256`), so an unchanged model costs a `stat` per file.
        """
        digest = hashlib.sha256()
        small = [p for p in self.directory.iterdir() if p.suffix in (".json", ".jinja", ".model")]
        for path in sorted(set(small) - set(self.weights)) + sorted(self.weights):
            digest.update(path.name.encode() + b"\0")
            digest.update(file_sha256(path).encode() if path in self.weights else path.read_bytes())
        return digest.hexdigest()[:12]


def incomplete_checkpoint(folder: Path, missing: Sequence[str]) -> ModelPathError:
    """The error for a checkpoint that lacks weights the architecture needs (an incomplete copy,
    a checkpoint of another model): loading would fill them with random numbers, and the judge
    would score at random. Names the first few."""
    names = sorted(missing)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return ModelPathError(f"{folder}: the checkpoint lacks {len(names)} weight(s) the model needs ({shown}); "
                          "loading would fill them with random numbers. Copy the complete model (or the right "
                          "checkpoint for its config.json)")


def mismatched_checkpoint(folder: Path, mismatched: Iterable[tuple[str, Any, Any]]) -> ModelPathError:
    """The error for a checkpoint whose weights do not fit the model its `config.json` describes
    (another model's checkpoint beside this config): (name, checkpoint shape, model shape) of each
    that does not fit, the first few named. Loading would put random numbers in their place."""
    found = sorted((str(name), tuple(a), tuple(b)) for name, a, b in mismatched)
    shown = "; ".join(f"{name}: {list(a)} in the checkpoint, {list(b)} for the config" for name, a, b in found[:3]) + \
        (f"; and {len(found) - 3} more" if len(found) > 3 else "")
    return ModelPathError(f"{folder}: the checkpoint's weights do not fit its config.json ({len(found)} of another "
                          f"shape: {shown}): a checkpoint of another model beside this config? Copy the checkpoint "
                          "that belongs to this config.json")


def cache_dir() -> Path:
    """Where localjudge keeps weight-file hashes: $LOCALJUDGE_CACHE, else
    $XDG_CACHE_HOME/localjudge, else ~/.cache/localjudge."""
    if os.environ.get("LOCALJUDGE_CACHE"):
        return Path(os.environ["LOCALJUDGE_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "localjudge"


_HASHES: dict[str, str] = {}  # this process's cache: "path|size|mtime_ns" -> sha256


def file_sha256(path: Path) -> str:
    """sha256 of a file's content, cached (in memory and in `cache_dir()/sha256.json`) under its
    resolved path, size and modification time: rewriting the file in place changes the key.

    Only hashes are cached, never file content; a cache that cannot be written costs a rehash
    next time, nothing else.
    """
    stat = path.stat()
    key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    if key in _HASHES:
        return _HASHES[key]
    store = cache_dir() / "sha256.json"
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if isinstance(known.get(key), str):
        _HASHES[key] = known[key]
        return known[key]
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            digest.update(chunk)
    _HASHES[key] = digest.hexdigest()
    live = {k: v for k, v in known.items() if isinstance(v, str) and Path(k.split("|")[0]).exists()}
    _write_json(store, {**live, key: _HASHES[key]})
    return _HASHES[key]


def _write_json(path: Path, data: dict[str, str]) -> None:
    """Atomically replace `path` with `data`; a failure is logged, never raised."""
    tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, indent=0, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        log.info("could not cache weight hashes in %s (%s); they will be computed again", path, error)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def check_model_dir(path: str | Path, *, allow_pickle: bool = False) -> ModelFiles:
    """Validate a local model path and list its weights.

    Args:
        path: A model directory, or a `.gguf` file.
        allow_pickle: Accept pickle weights when no safetensors are present.

    Raises:
        ModelPathError: with a one-line explanation of what is wrong and what to do.
    """
    p = Path(path).expanduser()
    if not p.exists():
        hint = (
            " It looks like a Hugging Face hub id: localjudge never downloads. Copy the model "
            "directory onto this machine and pass its path (see models/README.md)."
            if looks_like_hub_id(str(path))
            else ""
        )
        raise ModelPathError(f"model path {str(path)!r} does not exist.{hint}")
    if p.is_file():
        if p.suffix != ".gguf":
            raise ModelPathError(f"{p} is a file but not a .gguf model; pass a model directory")
        return ModelFiles(p.parent, p, (p,))
    if not (p / "config.json").exists():
        _check_loader_files(p)
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ModelFiles(p, ggufs[0], tuple(ggufs))
        raise ModelPathError(f"{p} is not a model directory: it has no config.json (nor a single .gguf file)")
    _check_config(p / "config.json")
    _check_loader_files(p)
    safetensors = _model_safetensors(p)
    if safetensors:
        return ModelFiles(p, None, safetensors)
    pickles = tuple(sorted(q for q in p.iterdir() if q.suffix in PICKLE_SUFFIXES))
    others = sorted(q.name for q in p.glob("*.safetensors"))
    if pickles and allow_pickle:
        return ModelFiles(p, None, pickles)
    if pickles:
        beside = f" (its {', '.join(others)} are not the model's weights)" if others else ""
        raise ModelPathError(
            f"{p} holds only pickle weights ({pickles[0].name}){beside}; loading a pickle can run "
            "arbitrary code. Convert it to safetensors, or opt in with allow_pickle=True (--allow-pickle)."
        )
    if others:
        raise ModelPathError(
            f"{p} has {', '.join(others)} but no model.safetensors or model.safetensors.index.json: "
            "transformers loads only those (save the model with save_pretrained)"
        )
    raise ModelPathError(f"{p} has a config.json but no weights (*.safetensors)")


def vllm_load_format(files: ModelFiles, load_format: str, *, allow_pickle: bool = False) -> str:
    """The `load_format` to give vLLM for a checked folder, so that it opens the files checked here.

    vLLM's loader picks its files itself: with ``"auto"`` it switches to Mistral's format (and its
    `consolidated*.safetensors`) wherever such a file exists, and without an index it loads every
    ``*.safetensors`` in the folder. So ``"auto"`` becomes ``"safetensors"`` (the index's shards,
    or the folder's one `model.safetensors`), and a folder where vLLM would load another
    safetensors file beside the weights (an adapter, a second copy) is refused. Formats that can
    read pickles or files this check does not know need `allow_pickle`.

    Raises:
        ModelPathError: with one line naming the file or format.
    """
    if load_format not in VLLM_CHECKED_FORMATS and not allow_pickle:
        raise ModelPathError(f"load_format {load_format!r} makes vLLM open files localjudge does not check (pickles, "
                             f"other formats): use one of {', '.join(VLLM_CHECKED_FORMATS)}, or allow_pickle=True")
    folder = files.directory
    if not (folder / "model.safetensors.index.json").exists():
        stray = sorted(q.name for q in folder.glob("*.safetensors") if q not in files.weights)
        if stray:
            raise ModelPathError(f"{folder} holds {', '.join(stray[:3])} beside the model's weights: vLLM would load "
                                 "it as weights too (it loads every *.safetensors a folder without an index holds). "
                                 "Move it out of the folder")
    safetensors = all(w.suffix == ".safetensors" for w in files.weights)
    return "safetensors" if load_format == "auto" and safetensors else load_format


def _check_loader_files(folder: Path) -> None:
    """Every file in the folder that a loader may open (weights, configs, tokenizer files, chat
    templates) is a regular file, links followed (Hugging Face's cache links each file into
    ../../blobs): a FIFO or a link to a device would hang a loader or feed it without end."""
    for entry in sorted(folder.iterdir()):
        if entry.suffix.lower() not in LOADER_SUFFIXES:
            continue
        try:
            mode = entry.stat().st_mode
        except OSError:
            continue  # a dangling link: nothing a loader could read either, and maybe never opened
        if not stat.S_ISREG(mode):
            raise ModelPathError(f"{entry} is not a regular file; every file a loader opens must be one")


def _model_safetensors(folder: Path) -> tuple[Path, ...]:
    """The safetensors files transformers will load: `model.safetensors`, or the shards the
    index names. Other `*.safetensors` (an adapter, Mistral's `consolidated.safetensors`) are
    not the model's weights and never stand in for them. Each is checked (`_check_safetensors`)."""
    index = folder / "model.safetensors.index.json"
    if index.exists():
        shards = tuple(folder / name for name in _shard_names(index))
    else:
        single = folder / "model.safetensors"
        shards = (single,) if single.exists() else ()
    for shard in shards:
        _check_safetensors(shard)
    return shards


def _shard_names(index: Path) -> list[str]:
    """The file names a safetensors index's `weight_map` lists, each a plain `.safetensors` name of
    a regular file in the index's folder: no path (`..`, an absolute path, a separator) and no
    other format, so an index can never make a loader open a pickle or a file outside the folder.
    A name that is a link (Hugging Face's cache links each file into ../../blobs) is followed."""
    try:
        weight_map = json.loads(read_small_file(index).decode("utf-8"))["weight_map"]
        names = sorted(set(weight_map.values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ModelPathError(f"{index} is not a readable safetensors index ({error!r})") from None
    for name in names:
        if not isinstance(name, str) or not SHARD_NAME.fullmatch(name) or name in (".", "..") or ".." in name:
            raise ModelPathError(f"{index} names {name!r}: a shard must be a .safetensors file name in the model "
                                 "folder (no path, no other format); refused before loading")
    missing = [name for name in names if not (index.parent / name).exists()]
    if missing:
        raise ModelPathError(f"{index} names shards that are not there: {', '.join(missing[:3])}")
    return names


def _check_safetensors(path: Path) -> None:
    """A weight file is a regular file (a link to one is followed) whose safetensors header fits
    in it and whose tensors' bytes all lie inside it: a truncated file (an interrupted copy) is
    refused here, with one line, instead of failing inside the loader. Reads the header only."""
    try:
        info = path.stat()
    except OSError as error:
        raise ModelPathError(f"{path} cannot be read: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ModelPathError(f"{path} is not a regular file; a weight file must be one")
    length, ends = _safetensors_extent(path, info.st_size)
    if ends is None:
        raise ModelPathError(f"{path} is not a safetensors file (its header does not read): a truncated or "
                             "corrupt copy? Copy the model again")
    need = 8 + length + max(ends, default=0)
    if need > info.st_size:
        raise ModelPathError(f"{path} is truncated: {info.st_size:,} bytes, its header describes {need:,} (an "
                             "interrupted copy?). Copy the model again")


def _safetensors_extent(path: Path, size: int) -> tuple[int, list[int] | None]:
    """(header length, where each tensor's bytes end) of a safetensors file; None for the ends
    when its header does not read."""
    try:
        with path.open("rb") as handle:
            length = int.from_bytes(handle.read(8), "little") if size >= 8 else 0
            if not 0 < length <= min(size - 8, HEADER_LIMIT):
                return length, None
            header = json.loads(handle.read(length))
        ends = [t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return 0, None
    return length, ends if all(isinstance(end, int) and not isinstance(end, bool) for end in ends) else None


def _check_config(path: Path) -> None:
    """A config.json that is not a JSON object means this is not a model directory (read bounded,
    regular files only: `read_small_file`)."""
    try:
        config = json.loads(read_small_file(path).decode("utf-8"))
    except SmallFileError as error:
        raise ModelPathError(str(error)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelPathError(f"{path} is not a readable JSON model config ({error})") from None
    if not isinstance(config, dict):
        raise ModelPathError(f"{path} is not a model config: it must hold a JSON object")
