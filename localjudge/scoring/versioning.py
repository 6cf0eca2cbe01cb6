"""What a scorer sends the judge, hashed: the prompt part of every result key.

A hand-kept version string goes stale the first time someone edits a prompt and forgets it.
Instead `prompt_hash` runs the scorer on fixed probe runs (a long and a terse output) against `ProbeJudge`, which
answers every schema with a minimal valid instance, and hashes everything that crossed the
judge interface: each call's chat messages (system text, worked examples, rendered user
message, including how `neutralise` breaks up the probe's markers), each schema's JSON schema,
the token budgets, and the result the scorer built from the answers (score and reason prompt).
Any edit to a prompt, an example, a schema, a budget or the score formula (on the probe)
changes the hash, so stored results of the old version are never resumed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from localjudge.judge import ChatPrompt, Generation
from localjudge.samples import RecordedRun
from localjudge.scoring import step_runner
from localjudge.scoring.recipe import Recipe

# Text of every kind a prompt treats specially: markers, a special-token shape, several lines.
PROBE_RUN = {
    "run_id": "probe",
    "input": "Probe question? <<<PROMPT >>> <|im_start|>",
    "output": "Probe answer, first sentence. Second sentence [INST] TEXT>>>",
    "context": ["Probe context, first passage.", "Second passage <end_of_turn>."],
    # The fields only some scorers show: a scorer that never reads them hashes as before.
    "ground_truth": "Probe truth, the reference answer.",
    "system": "Probe system prompt: answer briefly.",
    "conversation": [{"role": "user", "content": "Probe earlier turn?"},
                     {"role": "assistant", "content": "Probe earlier reply."},
                     {"role": "user", "content": "Probe question? <<<PROMPT >>> <|im_start|>"},
                     {"role": "assistant", "content": "Probe answer, first sentence. Second sentence [INST] TEXT>>>"}],
    "tool_calls": [{"tool_name": "probe_tool", "args": {"query": "probe"}, "result": "Probe tool result."}],
    "expected_trajectory": ["probe_step"],
    "baseline_response": "Probe baseline response.",
}
# A terse answer too: steps may decide those by rule (`JudgeStep.by_rule`), and the rule is hashed.
TERSE_PROBE_RUN = {**PROBE_RUN, "run_id": "probe-terse", "output": "Probe answer", "ground_truth": "Probe truth"}
PROBE_RUNS = (PROBE_RUN, TERSE_PROBE_RUN)


def example_of(node: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A minimal instance of a JSON schema: first option, first label, one item per list."""
    if "$ref" in node:
        return example_of(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for key in ("oneOf", "anyOf", "allOf"):
        if node.get(key):
            return example_of(node[key][0], defs)
    kind = node.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = node.get("properties", {})
        return {k: example_of(v, defs) for k, v in props.items() if k in node.get("required", props)}
    if kind == "array":
        count = max(node.get("minItems", 1), 1)
        count = min(count, node.get("maxItems", count))
        return [example_of(node.get("items", {}), defs) for _ in range(count)]
    if kind == "string":
        text = "probe"[: node.get("maxLength", 5)]
        return text + "x" * max(node.get("minLength", 0) - len(text), 0)
    if kind in ("integer", "number"):
        return node.get("minimum", 0)
    if kind == "boolean":
        return False
    return None


class ProbeJudge:
    """Answers each schema with `example_of` it; records what it was asked."""

    identity = "probe"

    def __init__(self) -> None:
        self.record: list[Any] = []

    def generate(
        self, prompts: Sequence[ChatPrompt], schemas: Sequence[type[BaseModel]], *, max_new_tokens: int
    ) -> list[Generation]:
        answers = []
        for prompt, schema in zip(prompts, schemas, strict=True):
            json_schema = schema.model_json_schema()
            self.record.append([prompt, json_schema, max_new_tokens])
            answers.append(Generation(json.dumps(example_of(json_schema, json_schema.get("$defs", {})))))
        return answers


# The words of PROBE_RUN that mark each field wherever a prompt shows it.
FIELD_MARKERS = {"input": "Probe question", "output": "Probe answer", "context": "Probe context",
                 "ground_truth": "Probe truth", "system": "Probe system", "conversation": "Probe earlier",
                 "tool_calls": "probe_tool", "expected_trajectory": "probe_step",
                 "baseline_response": "Probe baseline"}


def probe(scorer: Recipe) -> tuple[list[Any], Any]:
    """The scorer run on PROBE_RUNS against `ProbeJudge`: what it sent the judge, and the results
    (or the failure, as text: user-written steps may fail, and that is still a fact)."""
    judge = ProbeJudge()
    runs = [RecordedRun(run) for run in PROBE_RUNS]
    try:
        outcome: Any = [result.to_dict() for result in step_runner.run_batch(scorer.probed(judge), runs, "raise")]
    except Exception as error:  # noqa: BLE001 - user-written steps: the failure is still a fact
        outcome = f"probe failed: {type(error).__name__}: {error}"
    read = sorted(set().union(*(run.read for run in runs)))
    if read:  # a step read the run as given (`Sample.raw`): those fields go in the results' keys too
        outcome = {"results": outcome, RAW_READ: read}
    return judge.record, outcome


RAW_READ = "raw fields read"


def prompt_hash(probed: tuple[list[Any], Any]) -> str:
    """12 hex digits of a `probe` result: they change whenever what the scorer sends its judge,
    or scores, changes."""
    payload = json.dumps(probed, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def shown_fields(probed: tuple[list[Any], Any]) -> frozenset[str]:
    """The run fields whose text reached the judge in any prompt of a `probe` result, and, as
    ``raw.<key>``, each key of the run as given that a step read (`Sample.raw`)."""
    record, outcome = probed
    sent = "\n".join(message["content"] for prompt, _, _ in record for message in prompt)
    read = outcome.get(RAW_READ, []) if isinstance(outcome, dict) else []
    return frozenset([name for name, marker in FIELD_MARKERS.items() if marker in sent] + [f"raw.{k}" for k in read])
