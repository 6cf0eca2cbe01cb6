"""GGUF: a family's fixture converted by llama.cpp loads from its `.gguf` file as the same model.

(That transformers reads llama.cpp's vocab-only GGUFs as the families' own tokenizers is in
`test_tokenizers.py`.)
"""

from __future__ import annotations

import pytest
import torch

from localjudge import toxicity_scorer
from tests.families.catalog import GGUF_FAMILIES
from tests.families.runs import RUNS, SHORT, check, recorded_prompts

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("family", GGUF_FAMILIES)
def test_gguf_file_loads_as_the_same_model(family: str, family_judge, gguf_judge) -> None:
    """The family's fixture converted to GGUF by llama.cpp loads from the `.gguf` path with the
    same tokenizer, template and weights (identical logits), and scores."""
    gguf, own = gguf_judge(family), family_judge(family)
    prompt = recorded_prompts([SHORT])["Claims"][0]
    ids = own.prompt_ids(prompt)
    assert gguf.prompt_ids(prompt) == ids and gguf.system_role == own.system_role
    with torch.inference_mode():
        a = gguf.model(input_ids=torch.tensor([ids], device=gguf.model.device)).logits
        b = own.model(input_ids=torch.tensor([ids], device=own.model.device)).logits
    assert torch.equal(a, b)
    check(toxicity_scorer(gguf).run(RUNS[0]), "toxicity")


def test_a_gguf_load_reads_the_file_once(family_manifest: dict, monkeypatch) -> None:
    """transformers would build a `GGUFReader` (every metadata field, the vocabulary included) for
    the tokenizer's config, the model's config and the weights; localjudge's load builds one, and
    leaves `gguf.GGUFReader` as it found it."""
    import gguf

    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.conftest import FIXTURES

    built: list[str] = []
    original = gguf.GGUFReader

    class Counting(original):  # type: ignore[misc, valid-type]
        def __init__(self, path, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            built.append(str(path))
            super().__init__(path, *args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", Counting)
    entry = next(f for f in family_manifest["families"] if f["name"] == "mistral")
    TransformersJudge.load(FIXTURES / entry["gguf"], dtype="float32")
    assert len(built) == 1, built
    assert gguf.GGUFReader is Counting
