"""The differential tier: Mastra's published scorers (tests/differential/node, set up by
scripts/setup_node.sh) run beside localjudge's on the same judge answers.

Every case of the tier goes through Mastra in one Node process, once a session (Mastra takes
seconds to load): the LLM scorers' cases, the code scorers' and checks' cases, and the
agreement runs on real texts. Without the Node folder set up, the tier is skipped with a note;
asked for explicitly (``-m differential``, as `scripts/check.sh differential` does), it fails
instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.differential.agreement import agreement_cases
from tests.differential.cases import ALL_CASES, ROUNDING
from tests.differential.cases_code import CODE_CASES
from tests.differential.cases_custom import CUSTOM_CASES
from tests.differential.cases_run_evals import RUN_EVALS_CASES
from tests.differential.parity import node_ready, run_harness


@pytest.fixture(scope="session")
def mastra(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    """Mastra's result for every case, by case id (one Node process for all of them)."""
    if not node_ready():
        why = "tests/differential/node is not set up: run scripts/setup_node.sh"
        markexpr = request.config.getoption("markexpr", "") or ""
        if "differential" in markexpr and "not differential" not in markexpr:
            pytest.fail(why)
        pytest.skip(why)
    return run_harness([*(case.for_mastra() for case in ALL_CASES), *(case.for_mastra() for case in CODE_CASES),
                        *(case.for_mastra() for case in CUSTOM_CASES), *(case.for_mastra() for case in RUN_EVALS_CASES),
                        *agreement_cases(), {"id": "rounding", "round": list(ROUNDING)}])
