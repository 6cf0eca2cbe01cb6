"""Checking a model path before anything loads it: local only, safe weight formats only."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")  # owner/name


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
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ModelFiles(p, ggufs[0], tuple(ggufs))
        raise ModelPathError(f"{p} is not a model directory: it has no config.json (nor a single .gguf file)")
    _check_config(p / "config.json")
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


def _model_safetensors(folder: Path) -> tuple[Path, ...]:
    """The safetensors files transformers will load: `model.safetensors`, or the shards the
    index names. Other `*.safetensors` (an adapter, Mistral's `consolidated.safetensors`) are
    not the model's weights and never stand in for them."""
    index = folder / "model.safetensors.index.json"
    if index.exists():
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise ModelPathError(f"{index} is not a readable safetensors index ({error!r})") from None
        missing = [name for name in shards if not (folder / name).is_file()]
        if missing:
            raise ModelPathError(f"{index} names shards that are not there: {', '.join(missing[:3])}")
        return tuple(folder / name for name in shards)
    single = folder / "model.safetensors"
    return (single,) if single.is_file() else ()


def _check_config(path: Path) -> None:
    """A config.json that is not a JSON object means this is not a model directory."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelPathError(f"{path} is not a readable JSON model config ({error})") from None
    if not isinstance(config, dict):
        raise ModelPathError(f"{path} is not a model config: it must hold a JSON object")
