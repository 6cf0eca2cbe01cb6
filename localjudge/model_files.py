"""Checking a model path before anything loads it: local only, safe weight formats only."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

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
        """Short hash of the config and tokenizer files and the weight files' names and sizes."""
        digest = hashlib.sha256()
        small = [p for p in self.directory.iterdir() if p.suffix in (".json", ".jinja", ".model")]
        for path in sorted(small) + sorted(self.weights):
            digest.update(path.name.encode())
            digest.update(str(path.stat().st_size).encode() if path in self.weights else path.read_bytes())
        return digest.hexdigest()[:12]


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
    safetensors = tuple(sorted(p.glob("*.safetensors")))
    if safetensors:
        return ModelFiles(p, None, safetensors)
    pickles = tuple(sorted(q for q in p.iterdir() if q.suffix in PICKLE_SUFFIXES))
    if pickles and allow_pickle:
        return ModelFiles(p, None, pickles)
    if pickles:
        raise ModelPathError(
            f"{p} holds only pickle weights ({pickles[0].name}); loading a pickle can run arbitrary "
            "code. Convert it to safetensors, or opt in with allow_pickle=True (--allow-pickle)."
        )
    raise ModelPathError(f"{p} has a config.json but no weights (*.safetensors)")


def _check_config(path: Path) -> None:
    """A config.json that is not a JSON object means this is not a model directory."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelPathError(f"{path} is not a readable JSON model config ({error})") from None
    if not isinstance(config, dict):
        raise ModelPathError(f"{path} is not a model config: it must hold a JSON object")
