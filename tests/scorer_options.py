"""What a test needs to build every built-in scorer by name: the options of those that need some
(a factory's required keyword), each scorer's modes, and which scorers are model-free.

A test that builds every scorer in `SCORERS` by name passes each its entry:
``build_scorer(name, judge, mode=mode, options=OPTIONS.get(name))`` for each of `SCORER_MODES`.
The prompt hashes in tests/unit/scorers/test_prompt_hashes.py were recorded with these values:
changing one changes its hashes.
"""

from __future__ import annotations

import inspect
from typing import Any

from localjudge.scorers import CODE_SCORERS, SCORERS

OPTIONS: dict[str, dict[str, Any]] = {
    "rubric": {"criteria": ["Names the shop.", {"criterion": "Under 20 words.", "required": False}]},
    "multi_turn_judge": {"criterion": "Stays polite in every turn."},
    # Mastra's code scorers and checks that need an option
    "code_tool_call_accuracy": {"expected_tool": "lookup_order"},
    "check_includes": {"expected": "refund"},
    "check_excludes": {"unwanted": "sorry"},
    "check_equals": {"expected": "Refund started."},
    "check_matches": {"pattern": "order \\d+", "flags": "i"},
    "check_similarity": {"expected": "The refund is started."},
    "check_called_tool": {"tool_name": "start_refund"},
    "check_did_not_call": {"tool_name": "delete_account"},
    "check_tool_order": {"expected_order": ["lookup_order", "start_refund"]},
    "check_max_tool_calls": {"max_calls": 3},
}

# The scorers the package registers (not those a test registers), in the registry's order.
BUILT_IN = [name for name, factory in SCORERS.items() if factory.__module__.startswith("localjudge.scorers.")]
# Each built-in scorer in each of its modes: "direct" where its factory takes `mode`.
SCORER_MODES = [(name, mode) for name in BUILT_IN
                for mode in (("pipeline", "direct") if "mode" in inspect.signature(SCORERS[name]).parameters
                             else ("pipeline",))]
# Mastra's code scorers and checks: no judge step, so nothing a model tier or a family could check.
MODEL_FREE = [name for name in BUILT_IN if name in CODE_SCORERS]
# The built-in scorers that ask a judge, in each of their modes: what the real-model tiers run.
JUDGED_MODES = [(name, mode) for name, mode in SCORER_MODES if name not in MODEL_FREE]
