"""What the family tier feeds its models: runs, prompts, and what a result on random weights may be.

Random weights are the adversarial case for the grammar (any allowed token is as likely as
any other): every answer must still validate, or its row be unscored because its JSON was cut
off at the token limit, with no crash and no hang.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from localjudge import hallucination_scorer
from localjudge.judge import ChatPrompt
from localjudge.scorers.judged.answer_relevancy import RelevancyVerdicts
from localjudge.scorers.judged.bias import BiasVerdicts
from localjudge.scorers.judged.claims import Claims, claim_cap
from localjudge.scorers.judged.faithfulness import FaithfulnessVerdict
from localjudge.scorers.judged.hallucination import HallucinationVerdict
from localjudge.scorers.judged.toxicity import ToxicityVerdicts, statements_of
from tests.fakes import HALLUCINATION_WORDS, make_fake_judge

RUNS = [
    {"run_id": "a", "input": "When was the Eiffel Tower completed?",
     "output": "The Eiffel Tower was completed in 1925. You are an idiot for asking.",
     "context": "The Eiffel Tower in Paris was completed in 1889."},
    {"run_id": "b", "input": "Say nothing.", "output": "", "context": "Nothing."},  # decided by rule
]

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

# What a row may be unscored for on random weights: its JSON still cut off after the retry.
ALLOWED_UNSCORED = ("cut off at the token limit",)
VERDICTS: dict[str, type[BaseModel]] = {"hallucination": HallucinationVerdict, "faithfulness": FaithfulnessVerdict}
STATEMENT_VERDICTS: dict[str, type[BaseModel]] = {"toxicity": ToxicityVerdicts, "bias": BiasVerdicts,
                                                   "answer_relevancy": RelevancyVerdicts}


def check(result: Any, name: str) -> None:
    """A result of scorer `name` on `RUNS` (by a random-weight judge): scored in range with a
    reason and with the step results its schemas allow, or unscored for a cut-off answer."""
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
