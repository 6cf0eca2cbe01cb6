"""The server engine with a real tokenizer folder (transformers, no model): the prompt it sends as
token ids is the model family's own rendering. The rest of the engine: tests/unit/engines/test_server_judge.py."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from localjudge.engines import load_judge
from localjudge.engines.server import ServerJudge
from tests.conftest import ROOT
from tests.unit.engines.fake_server import serving

FIXTURE = ROOT / "models" / "fixtures" / "qwen2"  # a tokenizer; no model loaded
PROMPT = [{"role": "system", "content": "You judge."}, {"role": "user", "content": "judge this"}]


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


@pytest.mark.skipif(not FIXTURE.is_dir(), reason="needs the qwen2 fixture's tokenizer (models/fixtures)")
def test_a_tokenizer_folder_renders_the_prompt_as_the_model_family_does() -> None:
    from transformers import AutoTokenizer

    with serving() as server:
        judge = load_judge(FIXTURE, engine="server", base_url=server.url)
        judge.generate([PROMPT], [Verdict], max_new_tokens=8)
        [(_, body)] = server.posts()
        tokenizer = AutoTokenizer.from_pretrained(FIXTURE)
        text = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, tokenize=False)
        assert body["prompt"] == tokenizer(text, add_special_tokens=False).input_ids
        with pytest.raises(ValueError, match="tokenizer must be a local folder"):
            ServerJudge(server.url, tokenizer=FIXTURE / "missing")
