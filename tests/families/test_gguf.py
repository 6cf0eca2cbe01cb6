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
