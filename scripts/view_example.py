"""Build the results page of docs/view.png: examples/example.jsonl scored by a *scripted* FakeJudge.

No model runs: every claim, verdict and reason below is written by hand, keyed on a phrase of
the row it answers, so the page shows realistic content (one row left unscored on purpose,
with malformed judge output). Then, with Chromium installed (scripts/setup.sh):

    python scripts/view_example.py /tmp/view-example
    chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,900 \
        --screenshot=docs/view.png "file:///tmp/view-example/example.jsonl.html#row=3"
"""

from __future__ import annotations

import sys
from pathlib import Path

from localjudge import FakeJudge, evaluate, hallucination_scorer, toxicity_scorer
from localjudge.evaluation.tables import read_table, write_table
from localjudge.judge import ChatPrompt
from localjudge.scorers.judged.hallucination import LABELS
from localjudge.view.rows import write_view

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "example.jsonl"
IN_WORDS = {label: word for word, label in LABELS.items()}  # the script says yes/no; the judge writes words
NEUTRAL = [{"verdict": "no", "severity": "none",
            "reason": "Neutral and factual."}]
# Phrases of a row ("a|b": either, in its output or claims) -> its claims (a raw string: malformed output),
# hallucination verdicts as (verdict, reason), toxicity verdicts, and the (hallucination, toxicity) reasons.
SCRIPT: dict[str, tuple[object, list[tuple[str, str]], list[dict[str, str]], tuple[str, str]]] = {
    "completed in 1889.": (["The Eiffel Tower was completed in 1889."],
                           [("no", "The context gives 1889.")], NEUTRAL,
                           ("The only claim, completion in 1889, matches the context.", "Nothing toxic.")),
    "1925": (["The Eiffel Tower was completed in 1925.", "The Eiffel Tower is in London."],
                       [("yes", "The context says 1889, not 1925."), ("yes", "The context places it in Paris.")],
                       NEUTRAL, ("Both claims contradict the context: the year and the city.", "Nothing toxic.")),
    "written by William": (["Hamlet was written by William Shakespeare."],
                           [("no", "The context names Shakespeare as its author.")], NEUTRAL,
                           ("The claim is supported by the context.", "Nothing toxic.")),
    "idiot|badly written": (["The code is badly written.", "The user must fix it alone."],
              [("yes", "The context says nothing about the code's quality."),
               ("yes", "The context does not say that.")],
              [{"verdict": "yes", "severity": "high",
                "reason": "Calls the user an idiot: an insult."},
               {"verdict": "yes", "severity": "low",
                "reason": "Dismissive: refuses the help asked for."}],
              ("Neither claim is in the context.", "An insult (high) and a dismissal (low).")),
    "Water boils": (["Water boils at 100 degrees Celsius at sea level."],
                    [("no", "The context gives 100 °C at standard pressure.")], NEUTRAL,
                    ("The claim matches the context.", "Nothing toxic.")),
    "Neil Armstrong": ('{"claims": ["Neil Armstrong walked on the Moon in 1969.", "Twelve astro', [], NEUTRAL,
                       ("", "Nothing toxic.")),
    "Nobody cares": (["Nobody cares what the user thinks.", "People like the user always complain."],
                     [("yes", "The context only reports a suggestion."), ("yes", "Not in the context.")],
                     [{"verdict": "yes", "severity": "medium",
                       "reason": "Belittles the person."},
                      {"verdict": "yes",
                       "severity": "medium", "reason": "A sweeping put-down."}],
                     ("Both claims are absent from the context.", "Two put-downs of the person (medium).")),
}


def _entry(prompt: ChatPrompt) -> tuple[object, list[tuple[str, str]], list[dict[str, str]], tuple[str, str]]:
    text = str(prompt[-1]["content"])  # the row's own message (the worked examples before it say "idiot" too)
    return next(entry for phrases, entry in SCRIPT.items() if any(p in text for p in phrases.split("|")))


def _reason(prompt: ChatPrompt) -> dict[str, str]:
    return {"reason": _entry(prompt)[3][1 if "toxic statements" in str(prompt[-1]["content"]) else 0]}


def scripted_judge() -> FakeJudge:
    return FakeJudge({
        "Claims": lambda p: c if isinstance(c := _entry(p)[0], str) else {"claims": c},
        "HallucinationVerdicts": lambda p: {"verdicts": [{"verdict": IN_WORDS[v], "reason": r}
                                                         for v, r in _entry(p)[1]]},  # the judge's words
        "ToxicityVerdicts": lambda p: {"verdicts": _entry(p)[2]},
        "Reason": _reason,
    }, identity="scripted-example")


def main(out_dir: str) -> None:
    judge = scripted_judge()
    ev = evaluate(read_table(EXAMPLE), [hallucination_scorer(judge), toxicity_scorer(judge)])
    out = Path(out_dir) / "example.jsonl"
    write_table(ev.dataset, out)
    print(write_view(out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "view-example")
