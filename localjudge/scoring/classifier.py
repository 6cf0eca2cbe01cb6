"""`create_classifier_scorer`: Mastra's `createClassifierScorer`, one classifier question as a score.

Mastra's (``@mastra/core/evals``, `packages/core/src/evals/classifier-scorer.ts`) asks a configured
`Classifier` (an evaluation model and its questions) one question about a state the scorer picks
from the run, and turns the answer into a score: a choice question's choice through an
exhaustive ``scores`` mapping (each in [0, 1]), a score question's level ``i`` of ``n`` as
``i / (n - 1)``, a boolean question's P(true). The reason is a fixed sentence naming the answer.

Here the classifier's model is the local judge: the analyze step asks the question under a
grammar whose only answers are the question's options (``{"answer": <choice>}``, a level
``"0"``...``"n-1"``, or ``"true"`` / ``"false"``), one judge call per batch. A greedy judge picks
one answer, so a boolean question scores 1 or 0 (Mastra's classifier model gives a probability)
and a score question a whole level; `prob_score` is what a probability would give: P(true), or
the expected score over the options' probabilities, where the engine measures them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import create_model

from localjudge.judge import Judge
from localjudge.samples import Sample
from localjudge.scoring.compat import js_number
from localjudge.scoring.create import create_scorer
from localjudge.scoring.prompting import DATA_NOTE, block
from localjudge.scoring.schemas import Strict
from localjudge.scoring.scorer import Scorer
from localjudge.scoring.steps import JudgeStep, Results

Question = Mapping[str, Any]  # Mastra's {type: "choice" | "score" | "boolean", instructions?, criteria?}

CLASSIFIER_SYSTEM = f"""You are a classifier. Read the state given and answer the one question asked,
choosing exactly one of the options listed, as its criteria describe them.
{DATA_NOTE}"""


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _check_question(question_id: str, question: Any) -> None:
    """Mastra's `validateQuestions` for one question, in its words."""
    if not question_id:
        raise ValueError("Question ids must be non-empty strings.")
    kind = question.get("type") if isinstance(question, Mapping) else None
    if kind not in ("choice", "score", "boolean"):
        raise ValueError(f"Question '{question_id}' has an invalid type.")
    criteria = question.get("criteria")
    if kind == "choice":
        if not isinstance(criteria, Mapping) or not criteria:
            raise ValueError(f"Choice question '{question_id}' criteria must be a non-empty object.")
        if not all(isinstance(choice, str) and choice for choice in criteria):
            raise ValueError(f"Choice question '{question_id}' option names must be non-empty.")
    elif kind == "score":
        if isinstance(criteria, (str, Mapping)) or not isinstance(criteria, Sequence) or len(criteria) < 2:
            raise ValueError(f"Score question '{question_id}' criteria must contain at least two levels.")
    elif criteria is not None:
        if not isinstance(criteria, Mapping):
            raise ValueError(f"Boolean question '{question_id}' criteria must be an object.")
        if set(criteria) - {"true", "false"}:
            raise ValueError(f"Boolean question '{question_id}' criteria may only contain true and false.")


@dataclass(frozen=True)
class Classifier:
    """Mastra's configured `Classifier`: an id, its questions, and the judge answering them.

    Attributes:
        id: The classifier's id (non-empty).
        questions: Question id -> Mastra's question: ``{"type": "choice", "criteria": {option:
            description or None}}``, ``{"type": "score", "criteria": [level 0, level 1, ...]}``
            (two levels or more) or ``{"type": "boolean", "criteria": {"true": ..., "false": ...}}``
            (optional); each may carry ``"instructions"`` (default: the question id).
        judge: The model answering (Mastra's evaluation model); None: the scorer's judge.
    """

    id: str
    questions: Mapping[str, Question]
    judge: Judge | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError("Classifier id must be a non-empty string.")
        if not isinstance(self.questions, Mapping) or not self.questions:
            raise ValueError("Questions must be a non-empty object.")
        for question_id, question in self.questions.items():
            _check_question(question_id, question)


def _check_scores(classifier: Classifier, scorer_id: str, question_id: str, scores: Mapping[str, Any] | None) -> None:
    """Mastra's `validateQuestionAndScores`, in its words."""
    question = classifier.questions.get(question_id)
    if question is None:
        raise ValueError(f"Question '{question_id}' is not configured on classifier '{classifier.id}' "
                         f"for scorer '{scorer_id}'.")
    if question["type"] != "choice":
        if scores is not None:
            raise ValueError(f"Scorer '{scorer_id}' cannot provide scores for {question['type']} question "
                             f"'{question_id}'.")
        return
    if not isinstance(scores, Mapping):
        raise ValueError(f"Scorer '{scorer_id}' must provide an exhaustive numeric scores mapping for choice "
                         f"question '{question_id}'.")
    choices = list(question["criteria"])
    missing = [c for c in choices if c not in scores]
    extra = [c for c in scores if c not in question["criteria"]]
    non_numeric = [c for c in choices if c in scores and (isinstance(scores[c], bool) or not isinstance(
        scores[c], (int, float)) or scores[c] != scores[c] or abs(scores[c]) == float("inf"))]
    out_of_range = [c for c in choices if c in scores and c not in non_numeric and not 0 <= scores[c] <= 1]
    problems = [f" {label}: {', '.join(map(str, found))}." for label, found in (
        ("Missing", missing), ("Unknown", extra), ("Non-numeric", non_numeric), ("Outside 0-1", out_of_range)) if found]
    if problems:
        raise ValueError(f"Invalid scores mapping for choice question '{question_id}' on scorer "
                         f"'{scorer_id}'.{''.join(problems)}")


def options_of(question: Question) -> list[str]:
    """The answers the grammar allows: the choices, the levels ``"0"``..., or ``"true"``/``"false"``."""
    if question["type"] == "choice":
        return list(question["criteria"])
    if question["type"] == "score":
        return [str(level) for level in range(len(question["criteria"]))]
    return ["true", "false"]


def _criteria_lines(question: Question) -> str:
    criteria = question.get("criteria") or {}
    pairs = enumerate(criteria) if question["type"] == "score" else criteria.items()
    lines = [f"- {key}" + ("" if text is None else f": {_json_text(text)}") for key, text in pairs]
    return "\n".join(lines) if lines else "- true\n- false"


def _reason(question_id: str, answer: Mapping[str, Any], score: float) -> str:
    """Mastra's `classifierReason`, word for word."""
    if answer["type"] == "choice":
        return f"Classifier question '{question_id}' selected '{answer['choice']}' (score: {js_number(score)})."
    if answer["type"] == "score":
        return f"Classifier question '{question_id}' returned score {js_number(answer['score'])}."
    return f"Classifier question '{question_id}' returned P(true)={js_number(answer['probability'])}."


def create_classifier_scorer(
    name: str,
    *,
    classifier: Classifier,
    question: str,
    state: Callable[[Sample, Results], Any],
    scores: Mapping[str, float] | None = None,
    judge: Judge | None = None,
    id: str = "",
    description: str = "",
    prepare_run: Callable[[Mapping[str, Any]], Any] | None = None,
    compat: str = "localjudge",
) -> Scorer:
    """Mastra's ``createClassifierScorer``: `classifier`'s `question`, asked about ``state(run,
    results)``, scored as Mastra's (module docstring).

    Args:
        name: Registry name and column prefix.
        classifier: The `Classifier` (Mastra's registered-by-id form has no equivalent here).
        question: The question id to ask.
        state: ``(run, results) -> state``: what the judge classifies (text or JSON data), as
            Mastra's ``state({run, results})``; `run` is the `Sample`, ``run.raw`` the run as given.
        scores: For a choice question, every option's score in [0, 1] (required, exhaustive);
            none for score and boolean questions.
        judge: The model answering, unless the classifier names its own.
        id: Mastra's scorer id (default ``"<name>-scorer"``).
        description: Default: Mastra's ``"Scores question '<question>' with a configured classifier"``.
        prepare_run, compat: As `create_scorer`'s.

    Raises:
        ValueError: Mastra's configuration errors, in its words (an unknown question, a scores
            mapping missing an option or outside [0, 1], scores for a non-choice question...).
    """
    if not isinstance(classifier, Classifier):
        raise ValueError(f"create_classifier_scorer: classifier must be a Classifier, got {type(classifier).__name__} "
                         "(Mastra's classifier id, resolved through a Mastra instance, has no equivalent here)")
    scorer_id = id or f"{name.replace('_', '-')}-scorer"
    _check_scores(classifier, scorer_id, question, scores)
    asked = classifier.questions[question]
    kind, options = asked["type"], options_of(asked)
    allowed: Any = Literal[tuple(options)]  # the question's options, and nothing else
    schema = create_model("ClassifierAnswer", __base__=Strict, answer=(allowed, ...))
    wording = _json_text(asked.get("instructions") if asked.get("instructions") is not None else question)

    def prompt(run: Sample, results: Results) -> str:
        return (f"Question: {wording}\nAnswer with exactly one of these options:\n{_criteria_lines(asked)}\n"
                f"{block('STATE', _json_text(state(run, results)))}")

    def finish(run: Sample, results: Results, parsed: dict[str, Any]) -> dict[str, Any]:
        chosen = parsed["answer"]
        answer: dict[str, Any] = ({"type": "choice", "choice": chosen} if kind == "choice" else
                                  {"type": "score", "score": int(chosen)} if kind == "score" else
                                  {"type": "boolean", "probability": 1.0 if chosen == "true" else 0.0})
        return {"question": question, "answer": answer}

    def score(run: Sample, results: Results) -> float:
        answer = results["analyze_step_result"]["answer"]
        if kind == "choice":
            return float(scores[answer["choice"]])  # type: ignore[index]
        if kind == "score":
            return answer["score"] / (len(options) - 1)
        return float(answer["probability"])

    def prob_score(results: Results, label_probs: Mapping[str, Any]) -> float | None:
        offered = next((c for c in label_probs["analyze"] if set(options) <= set(c)), None)
        if offered is None:
            return None
        total = sum(offered[o] for o in options)
        value = {o: (float(scores[o]) if kind == "choice" else  # type: ignore[index]
                     int(o) / (len(options) - 1) if kind == "score" else float(o == "true")) for o in options}
        return sum(offered[o] * value[o] for o in options) / total if total > 0 else None

    return (create_scorer(name, judge=judge, id=scorer_id, prepare_run=prepare_run, compat=compat,
                          description=description or f"Scores question '{question}' with a configured classifier",
                          prob_score=prob_score, higher_is_better=True)
            .analyze(JudgeStep(instructions=CLASSIFIER_SYSTEM, prompt=prompt, schema=schema, finish=finish,
                               judge=classifier.judge))
            .generate_score(score)
            .generate_reason(lambda run, results: _reason(question, results["analyze_step_result"]["answer"],
                                                          results["score"])))


__all__ = ["CLASSIFIER_SYSTEM", "Classifier", "create_classifier_scorer", "options_of"]
