"""Every model family end to end on its fixture: real tokenizer and template, random weights.

Random weights are the adversarial case for the grammar (any allowed token is as likely as
any other): every answer must still validate, or its row be unscored with its reason, with no
crash and no hang. The shared-prefix KV cache is checked against plain full-prompt forwards on
each family's real architecture (logits, not tokens: random weights make near-ties common).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import torch

from localjudge import (
    answer_relevancy_scorer,
    bias_scorer,
    context_precision_scorer,
    faithfulness_scorer,
    hallucination_scorer,
    toxicity_scorer,
)
from localjudge.engines.chat_template import common_prefix, head_ids
from localjudge.judge import ChatPrompt
from localjudge.scorers.answer_relevancy import RelevancyVerdicts
from localjudge.scorers.bias import BiasVerdicts
from localjudge.scorers.claims import Claims, claim_cap
from localjudge.scorers.faithfulness import FaithfulnessVerdict
from localjudge.scorers.hallucination import HallucinationVerdict, HallucinationVerdicts
from localjudge.scorers.toxicity import ToxicityVerdicts, statements_of
from localjudge.scoring.schemas import Reason, token_budget
from tests.fakes import HALLUCINATION_WORDS, make_fake_judge
from tests.test_families import FAMILIES

pytestmark = pytest.mark.slow

RUNS = [
    {"run_id": "a", "input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925. You are an idiot for asking.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"run_id": "b", "input": "Say nothing.", "output": "", "context": "Nothing."},  # decided by rule
]
VERDICTS = {"hallucination": HallucinationVerdict, "faithfulness": FaithfulnessVerdict}
STATEMENT_VERDICTS = {"toxicity": ToxicityVerdicts, "bias": BiasVerdicts, "answer_relevancy": RelevancyVerdicts}
# What a row may be unscored for on random weights: its JSON still cut off after the retry.
ALLOWED_UNSCORED = ("cut off at the token limit",)


def check(result, name: str) -> None:
    if not result.scored:
        assert result.error and any(reason in result.error for reason in ALLOWED_UNSCORED), result.error
        assert result.raw_output is not None
        return
    assert result.score is not None and 0.0 <= result.score <= 1.0 and result.reason
    if result.run_id == "b":
        return
    if name in STATEMENT_VERDICTS:  # one verdict per sentence of the output, each with its sentence
        verdicts = result.analyze_step_result["verdicts"]
        assert [v["statement"] for v in verdicts] == statements_of(RUNS[0]["output"])
        STATEMENT_VERDICTS[name].model_validate({"verdicts": [{k: v for k, v in x.items() if k != "statement"}
                                                              for x in verdicts]})
        return
    claims = Claims.model_validate({"claims": result.preprocess_step_result["claims"]}).claims
    assert len(claims) <= claim_cap(RUNS[0]["output"])
    verdicts = result.analyze_step_result["verdicts"] if claims else []
    assert len(verdicts) == len(claims)
    for verdict in verdicts:
        label = HALLUCINATION_WORDS[verdict["verdict"]] if name == "hallucination" else verdict["verdict"]
        VERDICTS[name].model_validate({"verdict": label, "reason": verdict["reason"]})


@pytest.mark.parametrize("family", FAMILIES)
def test_all_scorers_end_to_end(family: str, family_judge) -> None:
    judge = family_judge(family)
    for factory in (hallucination_scorer, faithfulness_scorer, toxicity_scorer, bias_scorer, answer_relevancy_scorer):
        results = factory(judge).run_batch(RUNS)
        for result in results:
            check(result, factory(judge).name)
        assert results[1].scored, "a rule-decided row is scored whatever the judge does"


@pytest.mark.parametrize("family", FAMILIES)
def test_context_precision_end_to_end(family: str, family_judge) -> None:
    """One verdict per context piece, on every family (no rule decides a row: all judged)."""
    run = {**RUNS[0], "context": ["The Eiffel Tower in Paris was completed in 1889.", "Paris is in France."]}
    (result,) = context_precision_scorer(family_judge(family)).run_batch([run])
    if not result.scored:
        assert result.error and any(reason in result.error for reason in ALLOWED_UNSCORED), result.error
        return
    assert 0.0 <= result.score <= 1.0 and result.reason
    assert [v["piece"] for v in result.analyze_step_result["verdicts"]] == run["context"]


def recorded_prompts(outputs: list[str]) -> dict[str, list[ChatPrompt]]:
    """The claims-step and reason-step prompts the hallucination scorer sends for `outputs`."""
    judge = make_fake_judge(
        Claims={"claims": ["A claim."]},
        HallucinationVerdicts={"verdicts": [{"verdict": "unsupported", "reason": "r"}]},
        Reason={"reason": "r"},
    )
    hallucination_scorer(judge).run_batch(
        [{"input": "Tell me about the tower.", "output": out, "context": "The tower is 330 m tall."} for out in outputs]
    )
    return {call.schema_names[0]: [list(p) for p in call.prompts] for call in judge.calls}


SHARED_INSTRUCTIONS = ("You check short answers about a tower against what is known of it. Answer in JSON "
                       "with a verdict and a reason; keep the reason to one sentence.")
SHORT, MEDIUM = "It is 330 metres tall.", "The tower is 330 metres tall and was finished in 1889 in Paris."
LONG = " ".join(f"Fact {i}: the tower has {i} lights on floor {i}." for i in range(40))  # ~500 tokens


def cached_vs_full(judge, prompts: list[ChatPrompt], prefix: list[int], steps: int = 4) -> list[float]:
    """Per row: the largest |logit difference|, relative to the largest |logit|, between the
    batched call (cached prefix, padding between prefix and row) and a plain forward of that
    row's full prompt plus the tokens generated, at each of `steps` generation steps."""
    ids = [judge.prompt_ids(p) for p in prompts]
    with torch.inference_mode():
        inputs = judge.batch_inputs(prefix, [row[len(prefix):] for row in ids])
        out = judge.model.generate(
            **inputs, max_new_tokens=steps, min_new_tokens=steps, do_sample=False, output_logits=True,
            return_dict_in_generate=True, pad_token_id=judge.tokenizer.pad_token_id,
        )
        batched = torch.stack(out.logits, dim=1).float()  # rows x steps x vocab
        new = out.sequences[:, inputs["input_ids"].shape[1]:]
        errors = []
        for row, row_ids in enumerate(ids):
            full = torch.tensor([row_ids + new[row, : steps - 1].tolist()], device=judge.model.device)
            plain = judge.model(input_ids=full).logits[0, -steps:].float()
            errors.append(((batched[row] - plain).abs().max() / plain.abs().max()).item())
    return errors


@pytest.mark.parametrize("family", FAMILIES)
def test_prefix_cache_equals_full_prompt(family: str, family_judge) -> None:
    judge = family_judge(family)
    prompts = recorded_prompts([SHORT, MEDIUM])
    for schema, budget in (("Claims", token_budget(Claims)), ("Reason", token_budget(Reason))):
        rows = prompts[schema]
        ids = [judge.prompt_ids(p) for p in rows]
        prefix = judge._shared_prefix(rows, ids, budget)
        window = min((w for w in judge._windows or [] if w is not None), default=None)
        span = max(len(i) for i in ids) + budget
        assert bool(prefix) == (window is None or span <= window), f"{family}/{schema}: the window rule"
        assert max(cached_vs_full(judge, rows, prefix)) < 1e-5, (family, schema, len(prefix))
    if judge._windows and any(w is not None for w in judge._windows):  # the cached path under a window
        short = [[{"role": "system", "content": SHARED_INSTRUCTIONS}, {"role": "user", "content": q}]
                 for q in ("Is it tall?", "Where is the tower, and when was it finished?")]
        ids = [judge.prompt_ids(p) for p in short]
        prefix = judge._shared_prefix(short, ids, 16)
        assert prefix, f"{family}: short rows inside the window should use the cache"
        assert max(cached_vs_full(judge, short, prefix)) < 1e-5, (family, "short", len(prefix))


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.startswith("gemma")])
def test_sliding_window_turns_the_prefix_cache_off_and_must(family: str, family_judge) -> None:
    """Rows longer than Gemma's sliding window: the cache is off (plain left padding matches the
    full prompt), and forcing it on would be wrong — the padding between prefix and row would
    push the start of the prefix out of the window."""
    judge = family_judge(family)
    rows = recorded_prompts([SHORT, LONG])["Claims"]
    ids = [judge.prompt_ids(p) for p in rows]
    assert judge._shared_prefix(rows, ids, token_budget(Claims)) == []
    assert max(cached_vs_full(judge, rows, [])) < 1e-5
    head = head_ids(judge.tokenizer, rows[0], system_role=judge.system_role)
    forced = head[: common_prefix(head, ids)]
    assert max(cached_vs_full(judge, rows, forced)) > 1e-3, "the window rule guards a real difference"


GGUF_VOCABS = {"llama3": "llama-bpe", "qwen2": "qwen2", "qwen3": "qwen2", "phi3": "phi-3"}
TEXTS = [
    RUNS[0]["output"], '{"verdicts":[{"verdict":"yes","reason":"Not in the context."}]}',
    "naïve café — 東京 🚀\n\n  indented\ttab", "<|im_start|>user\nhi<|im_end|> [INST] <s>",
]


@cache
def gguf_tokenizer(path: str):  # type: ignore[no-untyped-def]
    from transformers import AutoTokenizer

    gguf = Path(path)  # converting a GGUF vocabulary takes ~20 s: once per file
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name, local_files_only=True)


@pytest.mark.parametrize("family", GGUF_VOCABS)
def test_tokenizer_equals_llama_cpp_vocab_gguf(family: str, family_dir, family_manifest) -> None:
    """transformers' tokenizer from llama.cpp's vocab-only GGUF of the family tokenizes as the
    family's tokenizer.json does (the GGUF path loads the same tokenizer)."""
    from transformers import AutoTokenizer

    from tests.conftest import FIXTURES

    from_gguf = gguf_tokenizer(str(FIXTURES / family_manifest["vocab_ggufs"][GGUF_VOCABS[family]]))
    own = AutoTokenizer.from_pretrained(str(family_dir(family)), local_files_only=True)
    for text in TEXTS:
        assert from_gguf(text, add_special_tokens=False).input_ids == own(text, add_special_tokens=False).input_ids


GGUF_FAMILIES = ["llama3", "qwen2", "qwen3", "mistral"]  # those llama.cpp's converter can write here


@pytest.mark.parametrize("family", GGUF_FAMILIES)
def test_gguf_file_loads_as_the_same_model(family: str, family_judge, family_manifest) -> None:
    """The family's fixture converted to GGUF by llama.cpp loads from the `.gguf` path with the
    same tokenizer, template and weights (identical logits), and scores."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.conftest import FIXTURES

    entry = next(f for f in family_manifest["families"] if f["name"] == family)
    assert entry["gguf"], f"{family} should have a GGUF fixture"
    gguf, own = TransformersJudge.load(FIXTURES / entry["gguf"], dtype="float32"), family_judge(family)
    prompt = recorded_prompts([SHORT])["Claims"][0]
    ids = own.prompt_ids(prompt)
    assert gguf.prompt_ids(prompt) == ids and gguf.system_role == own.system_role
    with torch.inference_mode():
        a = gguf.model(input_ids=torch.tensor([ids], device=gguf.model.device)).logits
        b = own.model(input_ids=torch.tensor([ids], device=own.model.device)).logits
    assert torch.equal(a, b)
    check(toxicity_scorer(gguf).run(RUNS[0]), "toxicity")


@pytest.mark.parametrize("family", FAMILIES)
def test_decode_loop_gives_generates_tokens(family: str, family_judge) -> None:
    """localjudge's own decode loop on each family's architecture: `generate`'s tokens for
    rows of three schemas in one call, cut off or finished, with the shared prefix cached."""
    from localjudge.engines.transformers.judge import TransformersJudge
    from tests.test_decode import both_decoders, same_tokens

    loop, fallback = both_decoders(family_judge(family))
    assert loop.decoder == "loop", f"{family} is plain attention: the loop is its decoder"
    prompts = [[{"role": "system", "content": SHARED_INSTRUCTIONS}, {"role": "user", "content": q}]
               for q in ("Is it tall?", "Where is the tower, and when was it finished?", MEDIUM)]
    schemas = [Claims, HallucinationVerdicts, Reason]
    two_at_a_time = TransformersJudge(loop.model, loop.tokenizer, identity="two", max_rows=2)
    for budget in (9, 48):
        want = fallback.generate(prompts, schemas, max_new_tokens=budget)
        same_tokens([loop.generate(prompts, schemas, max_new_tokens=budget)], [want])
        # The third row joins when one finishes (full attention) or runs in a second chunk.
        same_tokens([two_at_a_time.generate(prompts, schemas, max_new_tokens=budget)], [want])


# Every field a scorer may read, so that every registered scorer judges this run (none refuses it).
FULL_RUN = {
    "run_id": "full", "input": "When was the Eiffel Tower completed?",
    "output": "The Eiffel Tower was completed in 1925. It stands in Paris.",
    "context": ["The Eiffel Tower in Paris was completed in 1889.", "Paris is in France."],
    "ground_truth": "It was completed in 1889.", "system": "You are a travel assistant. Answer in one sentence.",
    "conversation": [{"role": "user", "content": "Hi, I am planning a trip to Paris."},
                     {"role": "assistant", "content": "Lovely! What would you like to know?"},
                     {"role": "user", "content": "When was the Eiffel Tower completed?"},
                     {"role": "assistant", "content": "The Eiffel Tower was completed in 1925. It stands in Paris."}],
    "tool_calls": [{"tool_name": "search", "args": {"query": "Eiffel Tower completed"}, "result": "1889"}],
    "expected_trajectory": ["search"], "baseline_response": "The Eiffel Tower was completed in 1889.",
}
LATER_SCORERS = ("context_recall", "context_relevance", "answer_similarity", "summarization", "prompt_alignment",
                 "multi_turn_judge", "tool_call_accuracy", "trajectory_accuracy", "noise_sensitivity", "rubric")


@pytest.mark.parametrize("family", FAMILIES)
def test_the_later_scorers_end_to_end(family: str, family_judge) -> None:
    """Each scorer added after the first five, in each of its modes, on every family: every answer
    validates (a score in range with a reason), or the row is unscored because its JSON was still
    cut off after the retry."""
    import inspect

    from localjudge.scorers import SCORERS, build_scorer
    from tests.scorer_options import OPTIONS

    judge = family_judge(family)
    for name in LATER_SCORERS:
        modes = ("pipeline", "direct") if "mode" in inspect.signature(SCORERS[name]).parameters else ("pipeline",)
        for mode in modes:
            (result,) = build_scorer(name, judge, mode=mode, options=OPTIONS.get(name)).run_batch([FULL_RUN])
            if not result.scored:
                assert result.error and any(r in result.error for r in ALLOWED_UNSCORED), (name, mode, result.error)
                continue
            assert result.score is not None and 0.0 <= result.score <= 1.0 and result.reason, (name, mode, result)


def test_every_built_in_scorer_is_checked_on_the_families() -> None:
    from localjudge.scorers import SCORERS

    first = {"hallucination", "faithfulness", "toxicity", "bias", "answer_relevancy", "context_precision"}
    assert first | set(LATER_SCORERS) == set(SCORERS)
