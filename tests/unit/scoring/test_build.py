"""`Build`: a factory's scale, mode and compat worked out once, with the scorer's Mastra numbers."""

from __future__ import annotations

import pytest

from localjudge.scoring import Build, MastraNumbers, create_scorer

ZERO_IS_ONE = MastraNumbers(rounded=True, scale="zero_is_one")
ZERO_STAYS = MastraNumbers(rounded=True, scale="zero_stays")
NO_SCALE = MastraNumbers(scale="none")


@pytest.mark.parametrize(("numbers", "scale", "compat", "built", "kept"), [
    (ZERO_IS_ONE, 5, "localjudge", 5.0, 5.0),
    (ZERO_IS_ONE, 0, "mastra", 1.0, 1.0),  # Mastra's `options?.scale || 1`
    (ZERO_STAYS, 0, "mastra", 1.0, 0.0),  # `options.scale ?? 1`: built as 1, every score 0
    (ZERO_STAYS, 3, "mastra", 3.0, 3.0),
    (NO_SCALE, 7, "mastra", 1.0, 1.0),  # no scale option: one asked for is ignored
    (NO_SCALE, 7, "localjudge", 7.0, 7.0),
])
def test_the_scales_are_worked_out_once(numbers: MastraNumbers, scale: float, compat: str, built: float,
                                        kept: float) -> None:
    build = Build.of(numbers, scale=scale, compat=compat)
    assert (build.scale, build.kept) == (built, kept)
    assert build.mastra == (compat == "mastra") and build.compat.numbers == numbers


def test_create_scorer_gets_the_kept_scale_and_the_setting() -> None:
    build = Build.of(ZERO_STAYS, scale=0, compat="mastra")
    scorer = create_scorer("x", **build.create_keywords()).generate_score(lambda run, results: 1.0)
    assert scorer.scale == 0.0 and scorer.compat == build.compat
    assert scorer.key == create_scorer("x", scale=0, compat="mastra", mastra_numbers=ZERO_STAYS).generate_score(
        lambda run, results: 1.0).key


def test_the_mode_is_read_once() -> None:
    assert Build.of(mode="direct").direct and not Build.of().direct


@pytest.mark.parametrize(("keywords", "message"), [
    ({"mode": "both"}, "unknown mode 'both'"),
    ({"compat": "deepeval"}, "compat must be one of"),
    ({"scale": 0}, "scale must be a finite positive number"),  # 0 is only Mastra's, under its numbers
    ({"scale": float("nan")}, "scale must be a finite positive number"),
])
def test_a_bad_setting_is_one_clear_error(keywords: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Build.of(ZERO_IS_ONE, **keywords)  # type: ignore[arg-type]
