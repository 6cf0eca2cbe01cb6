"""Every case of the differential tier, from each scorer group's table."""

from __future__ import annotations

from tests.differential import cases_agents, cases_claims, cases_context, cases_statements
from tests.differential.parity import Case

ALL_CASES: list[Case] = [*cases_claims.CASES, *cases_statements.CASES, *cases_context.CASES, *cases_agents.CASES]

# Values on rounding boundaries -> (Mastra's roundToTwoDecimals, localjudge's round_half_up)
# where the two differ (the `rounding` difference), None where they agree.
ROUNDING: dict[float, tuple[float, float] | None] = {
    0.125: None, 0.285: None, 0.5: None, 1.005: None, 2.675: None, 0.335: None, 0.1 + 0.2: None,
    2 / 3: None, 0.995: None, 4.445: None,
    3 * 0.3 / 4: (0.23, 0.22),  # 0.22499999999999998: 3 unsure of 4 statements (answer relevancy)
    0.9249999999999999: (0.93, 0.92),  # intent, completeness, appropriateness fully; 3 of 4 requirements
    0.6749999999999999: (0.68, 0.67),  # context relevance: high, high, high, low; one missing note
    2.175: (2.17, 2.18),  # 29 / 40 x 3
    1.4249999999999998: (1.43, 1.42),  # 19 / 40 x 3
}
