"""What a test needs to build every built-in scorer by name: the options of those that need some
(a factory's required keyword), and each scorer's modes.

A test that builds every scorer in `SCORERS` by name passes each its entry:
``build_scorer(name, judge, mode=mode, options=OPTIONS.get(name))`` for each of `SCORER_MODES`.
The prompt hashes in tests/unit/scorers/test_prompt_hashes.py were recorded with these values:
changing one changes its hashes.
"""

from __future__ import annotations

import inspect
from typing import Any

from localjudge.scorers import SCORERS

OPTIONS: dict[str, dict[str, Any]] = {
    "rubric": {"criteria": ["Names the shop.", {"criterion": "Under 20 words.", "required": False}]},
    "multi_turn_judge": {"criterion": "Stays polite in every turn."},
}

# The scorers the package registers (not those a test registers), in the registry's order.
BUILT_IN = [name for name, factory in SCORERS.items() if factory.__module__.startswith("localjudge.scorers.")]
# Each built-in scorer in each of its modes: "direct" where its factory takes `mode`.
SCORER_MODES = [(name, mode) for name in BUILT_IN
                for mode in (("pipeline", "direct") if "mode" in inspect.signature(SCORERS[name]).parameters
                             else ("pipeline",))]
