"""The run and the scripted answers the claim scorers' tests share (hallucination, faithfulness,
and the claims machinery of `localjudge.scorers.judged.claims`)."""

from __future__ import annotations

from tests.fakes import HALLUCINATION_WORDS, Answer

CONTEXT = "The Eiffel Tower in Paris was completed in 1889."


def verdicts(*labels: str) -> dict:
    return {"verdicts": [{"verdict": label, "reason": f"because {i}"} for i, label in enumerate(labels)]}


def in_words(*labels: str) -> dict:
    """Hallucination verdicts as its judge writes them: Mastra's yes/no as unsupported/supported."""
    return verdicts(*(HALLUCINATION_WORDS.get(label, label) for label in labels))


def claim_answers(labels: list[str], reason: str = "Explained.") -> dict[str, Answer]:
    claims = [f"Claim number {i}." for i in range(len(labels))]
    return {
        "Claims": [{"claims": claims}],
        "HallucinationVerdicts": [in_words(*labels)],
        "FaithfulnessVerdicts": [verdicts(*labels)],
        "Reason": [{"reason": reason}],
    }


OUTPUT = ("It was built in 1889 in Paris. It is made of iron and stands on the Champ de Mars. Gustave Eiffel's "
          "company designed and built it for the World's Fair, and it was the tallest structure in the world.")
RUN = {"input": "When was it built?", "output": OUTPUT, "context": CONTEXT}  # 37 words: up to 10 claims
