"""`POST /v1/score`: localjudge's own scorers on runs a client sends, each run one result in
localjudge's result shape, requests that arrive together scored as one schedule."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from localjudge.bench import CalibrationMap, scorer_version, write_calibration
from localjudge.cli.serve import serve_calibration
from localjudge.cli.shared import CliError
from localjudge.judge import Generation
from localjudge.scorers import build_scorer
from localjudge.serve import Limits, create_app
from tests.fakes import make_fake_judge
from tests.unit.serve.test_app import app_lifespan, words

RUNS = [{"run_id": "a", "input": "Where is the Louvre?", "output": "In Paris.", "context": ["The Louvre is in Paris."]},
        {"run_id": "b", "input": "Where is the Louvre?", "output": "In Lyon.", "context": ["The Louvre is in Paris."]}]


def client_of(judge: Any, **options: Any) -> TestClient:
    return TestClient(create_app(judge, served_name="judge", count_tokens=words, context_window=4096, **options))


def test_each_run_gets_its_result_in_localjudges_shape() -> None:
    judge = make_fake_judge()
    with client_of(judge) as client:
        reply = client.post("/v1/score", json={"scorer": "hallucination", "runs": RUNS})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["scorer"] == "hallucination" and body["judge"] == "fake-judge"
    first, second = body["results"]
    assert (first["run_id"], second["run_id"]) == ("a", "b")
    assert first["score"] == 1.0 and first["reason"] == "ok"  # the fake judge's default verdicts: "yes"
    assert first["preprocess_step_result"] and first["analyze_step_result"] and first["analyze_prompt"]
    # a one-sentence output is its own claim: verdicts, then reasons, both runs in each call
    assert [c.schema_names for c in judge.calls] == [("HallucinationVerdicts",) * 2, ("Reason",) * 2]


def test_a_run_that_cannot_be_judged_is_unscored_with_its_reason_the_others_scored() -> None:
    with client_of(make_fake_judge()) as client:
        runs = [RUNS[0], {"run_id": "no-context", "output": "In Paris."}]
        results = client.post("/v1/score", json={"scorer": "hallucination", "runs": runs}).json()["results"]
    assert results[0]["score"] is not None
    assert results[1]["score"] is None and results[1]["error_kind"] and results[1]["error"]


def test_options_mode_and_compat_build_the_scorer_as_score_does() -> None:
    with client_of(make_fake_judge()) as client:
        runs = [{"run_id": "x", "output": "In Paris."}]
        direct = client.post("/v1/score", json={"scorer": "hallucination", "mode": "direct", "runs": runs,
                                                "options": {"context": ["The Louvre is in Paris."]}})
        assert direct.status_code == 200 and direct.json()["results"][0]["score"] is not None
        mastra = client.post("/v1/score", json={"scorer": "toxicity", "compat": "mastra", "scale": 5, "runs": runs})
        assert mastra.status_code == 200 and mastra.json()["results"][0]["score"] == 0


@pytest.mark.parametrize(("body", "param"), [
    ({"scorer": "no_such_scorer", "runs": RUNS}, "scorer"),
    ({"scorer": "hallucination", "options": {"colour": "red"}, "runs": RUNS}, "options"),
    ({"scorer": "hallucination", "mode": "sideways", "runs": RUNS}, "mode"),
    ({"scorer": "hallucination", "runs": []}, "runs"),
    ({"scorer": "hallucination", "runs": "a run"}, "runs"),
    ({"scorer": "hallucination", "scale": -1, "runs": RUNS}, "scale"),
    ({"scorer": "hallucination", "runs": RUNS, "extra": 1}, "extra"),
])
def test_bad_input_is_a_400_naming_the_field(body: dict[str, Any], param: str) -> None:
    with client_of(make_fake_judge()) as client:
        reply = client.post("/v1/score", json=body)
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["param"] == param
        assert client.post("/v1/score", json={"scorer": "toxicity", "runs": RUNS}).status_code == 200


def test_requests_from_many_clients_share_each_steps_judge_call() -> None:
    judge = make_fake_judge()
    app = create_app(judge, served_name="judge", count_tokens=words, context_window=4096, limits=Limits(window=0.2))

    async def together() -> list[int]:
        async with app_lifespan(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                bodies = [{"scorer": "hallucination", "runs": [run]} for run in RUNS * 2] + \
                         [{"scorer": "toxicity", "runs": RUNS}]
                replies = await asyncio.gather(*(c.post("/v1/score", json=b) for b in bodies))
        return [r.status_code for r in replies]

    assert asyncio.run(together()) == [200] * 5
    # one schedule: each round, every scorer's next step in one judge call (both scorers' verdicts,
    # then both scorers' reasons): two calls for the five requests, not ten
    assert [sorted(set(call.schema_names)) for call in judge.calls] == [
        ["HallucinationVerdicts", "ToxicityVerdicts"], ["Reason"]]
    assert sum(len(call.prompts) for call in judge.calls) == 4 * 2 + 2 * 2


VERDICTS = Generation(json.dumps({"verdicts": [{"verdict": "unsupported", "reason": "No."}]}),
                      label_probs=({"supported": 0.1, "unsupported": 0.9},))


def test_a_calibration_given_at_start_adds_calibrated_prob_where_its_map_fits(tmp_path: Path) -> None:
    judge = make_fake_judge(HallucinationVerdicts=VERDICTS)
    fitted = build_scorer("hallucination", judge)
    path = write_calibration(tmp_path / "cal.json", [CalibrationMap(
        "hallucination", "pipeline", scorer_version(fitted), 1.0, judge.identity, a=1.0, b=0.0)])
    calibrator = serve_calibration(str(path), judge.identity)
    with client_of(judge, calibrator=calibrator) as client:
        body = client.post("/v1/score", json={"scorer": "hallucination", "runs": RUNS[:1]}).json()
        (result,) = body["results"]
        assert result["prob_score"] == pytest.approx(0.9)
        assert result["calibrated_prob"] == pytest.approx(0.9, abs=1e-4)  # a=1, b=0: the identity map
        other = client.post("/v1/score", json={"scorer": "hallucination", "scale": 5, "runs": RUNS[:1]}).json()
        assert "calibrated_prob" not in other["results"][0] and "scorer version" in other["calibration"]


def test_a_calibration_for_another_judge_is_refused_at_start(tmp_path: Path) -> None:
    judge = make_fake_judge()
    path = write_calibration(tmp_path / "cal.json", [CalibrationMap(
        "hallucination", "pipeline", scorer_version(build_scorer("hallucination", judge)), 1.0, "another-judge",
        a=1.0, b=0.0)])
    with pytest.raises(CliError, match="no map in it was fitted for this judge"):
        serve_calibration(str(path), judge.identity)
