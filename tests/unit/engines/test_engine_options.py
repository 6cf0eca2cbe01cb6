"""Engine options are named once (`localjudge.engines.options.ENGINE_OPTIONS`): the engine choice,
the CLI's flags and a sweep's model keys all follow that table (the flags themselves, on both
command lines: tests/unit/cli/test_engine_flags.py)."""

from __future__ import annotations

import pytest

from localjudge.cli.main import build_parser
from localjudge.cli.sweep_config import MODEL_KEYS
from localjudge.engines import ENGINE_OPTIONS, ENGINES, FLAGS, OPTIONS, EngineOptionError, check_engine
from localjudge.engines.options import check_max_rows, judge_identity
from localjudge.engines.server import KINDS


def score_flags() -> set[str]:
    parser = build_parser()
    score = parser._subparsers._group_actions[0].choices["score"]  # type: ignore[union-attr]
    return {a.dest for a in score._actions}


def test_every_flagged_option_is_a_flag_of_score_and_no_engine_flag_is_unlisted() -> None:
    flags = score_flags()
    assert set(FLAGS) <= flags
    assert flags & set(ENGINE_OPTIONS) == set(FLAGS), "an engine flag of score missing from ENGINE_OPTIONS"


def test_each_engine_takes_exactly_its_options_and_sweeps_accept_them() -> None:
    for engine in ENGINES:
        for name, option in ENGINE_OPTIONS.items():
            if engine in option.engines:
                assert check_engine(engine, {name: 1}) == {name: 1}
            else:
                with pytest.raises(EngineOptionError, match=name):
                    check_engine(engine, {name: 1})
    assert set().union(*OPTIONS.values()) == set(ENGINE_OPTIONS) <= MODEL_KEYS


def test_the_server_kind_flag_offers_exactly_the_server_dialects() -> None:
    """Written out in the table (the server package imports it, so it cannot import KINDS)."""
    assert ENGINE_OPTIONS["server_kind"].choices == KINDS


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "4"])
def test_max_rows_is_checked_once_for_both_engines(bad: object) -> None:
    with pytest.raises(ValueError, match="max_rows must be a positive number of rows"):
        check_max_rows(bad)
    assert check_max_rows(None) is None and check_max_rows(3) == 3


def test_the_identity_names_weights_dtype_guard_and_suffix() -> None:
    assert judge_identity("m@abc", "torch.float32", repeat_guard=True, suffix="+generate") == \
        "m@abc:torch.float32:greedy+repeat-guard-40+generate"
    assert judge_identity("m@abc", "bfloat16", repeat_guard=False) == "m@abc:bfloat16:greedy"
