"""Data-parallel ranks in the library (issue 58): `evaluate_ranked` scores a rank's share, marks it
done, and rank 0 merges every rank's rows into what one `evaluate` gives, with nothing judged twice."""

from __future__ import annotations

import threading
from pathlib import Path

from localjudge import evaluate, toxicity_scorer
from localjudge.evaluation import ResultStore, evaluate_ranked, start_ranks
from tests.fakes import FakeJudgeFactory

ROWS = [{"run_id": str(i), "input": "q", "output": f"answer {i}"} for i in range(5)]


def test_rank_zero_merges_every_rank_into_one_evaluation(fake_judge: FakeJudgeFactory, tmp_path: Path) -> None:
    single = evaluate(ROWS, [toxicity_scorer(fake_judge())])
    judges = [fake_judge(), fake_judge()]
    folder = tmp_path / "out.progress"
    folder.mkdir()
    (folder / "rank-1.done").touch()  # an earlier run's mark
    start_ranks(folder, 1, lambda: None)
    assert not (folder / "rank-1.done").exists()
    got: dict[int, object] = {}

    def rank(r: int) -> None:
        got[r] = evaluate_ranked(ROWS, [toxicity_scorer(judges[r])], rank=r, world=2,
                                 store=ResultStore(folder, writer=f"rank-{r}"), poll=0.05)

    other = threading.Thread(target=rank, args=(1,))
    other.start()
    rank(0)
    other.join()
    assert got[1] is None
    merged = got[0]
    assert merged.results == single.results  # type: ignore[attr-defined]
    asked = [sum(len(c.prompts) for c in j.calls if c.schema_names[0] == "ToxicityVerdicts") for j in judges]
    assert asked == [3, 2]  # rank 0 rows 0, 2, 4; rank 1 rows 1, 3; the merge judges none
    assert not list(folder.glob("*.done"))
