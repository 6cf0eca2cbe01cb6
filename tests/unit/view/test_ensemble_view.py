"""The results page shows an ensemble row's two modes side by side (issue 48): each mode's
verdicts, the probability it put in the mean and its score, then the pipeline's claims with
their verdicts and the direct verdict, so a user sees where they disagree (in headless
Chromium, as test_results_page.py's browser tests)."""

from __future__ import annotations

import json
from pathlib import Path

from localjudge import evaluate
from localjudge.evaluation.tables import dataset_from_rows, write_table
from localjudge.judge import Generation
from localjudge.scorers import build_scorer
from localjudge.view.rows import write_view
from tests.fakes import make_fake_judge
from tests.unit.view.test_results_page import Dom, dump_dom


def test_an_ensemble_row_shows_both_modes_verdicts_and_probabilities(tmp_path: Path) -> None:
    """The pipeline calls the claim unsupported (P 0.8), the direct verdict says no (P(yes) 0.3)."""
    pipeline = Generation(json.dumps({"verdicts": [{"verdict": "unsupported", "reason": "Not in the context."}]}),
                          label_probs=({"supported": 0.2, "unsupported": 0.8},))
    direct = Generation(json.dumps({"verdict": "no", "reason": "The whole output is grounded."}),
                        label_probs=({"yes": 0.3, "no": 0.7},))
    judge = make_fake_judge(Claims={"claims": ["The tower is in Rome."]}, HallucinationVerdicts=pipeline,
                            DirectVerdict=direct)
    rows = [{"input": "Where is it?", "output": "The tower is in Rome.", "context": "The tower is in Paris."}]
    path = tmp_path / "ensemble.jsonl"
    write_table(evaluate(dataset_from_rows(rows), [build_scorer("hallucination", judge, mode="ensemble")]).dataset,
                path)
    detail = Dom(dump_dom(write_view(path), "#row=0", tmp_path / "profile")).text["detail"]
    assert "prob score (the modes' mean)0.55" in detail, detail
    assert "ensemble: each modemodeverdictsprobabilityscorepipelineyes 0.81directno 0.30" in detail, detail
    assert "pipeline: claims \u2192 verdicts#claimverdictreason1The tower is in Rome.yesNot in the context." in detail
    assert "direct: one verdict#claimverdictreason1(the whole output)noThe whole output is grounded." in detail
