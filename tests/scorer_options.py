"""Options for the built-in scorers that need some to be built (a factory's required keyword).

A test that builds every scorer in `SCORERS` by name passes each its entry:
``build_scorer(name, judge, options=OPTIONS.get(name))``. The prompt hashes in
`tests/test_prompt_hashes.py` were recorded with these values: changing one changes its hashes.
"""

from __future__ import annotations

from typing import Any

OPTIONS: dict[str, dict[str, Any]] = {
    "rubric": {"criteria": ["Names the shop.", {"criterion": "Under 20 words.", "required": False}]},
    "multi_turn_judge": {"criterion": "Stays polite in every turn."},
}
