"""How a score is made from a fraction, by the compat setting: localjudge's rule or Mastra's numbers.

``compat="localjudge"`` (the default) scores ``round_half_up(fraction x scale)``: half up on the
decimal the value prints as, on a scale that must be a finite positive number.
``compat="mastra"`` gives what ``@mastra/evals`` 1.10.2's code gives where localjudge deliberately
differs (docs/mastra-parity.md, "The differences"): Mastra's ``roundToTwoDecimals``
(`js_round`) on the binary value, no rounding at all where Mastra rounds none, a scale of 0
accepted, and a NaN score where Mastra's formula makes one. A `Compat` is the one place the
step runner reads the setting; what else differs per scorer (toxicity's plain count, an empty
output's score...) is decided in that scorer's factory from its ``compat`` argument.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

CompatName = Literal["localjudge", "mastra"]
COMPATS: tuple[CompatName, ...] = ("localjudge", "mastra")


def check_compat(value: object) -> CompatName:
    """`value` if it names a compat setting, else a one-line `ValueError`."""
    if value not in COMPATS:
        raise ValueError(f"compat must be one of {', '.join(COMPATS)}, got {value!r}")
    return value


def round_half_up(value: float, places: int = 2) -> float:
    """Round to `places` decimals, halves away from zero (0.125 -> 0.13, unlike `round`)."""
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def js_round(value: float) -> float:
    """Mastra's ``roundToTwoDecimals``: ``Math.round((x + Number.EPSILON) * 100) / 100`` on the
    binary value (0.22499999999999998 -> 0.23, 2.175 -> 2.17). JavaScript's ``Math.round`` takes
    halves up, towards +infinity; NaN stays NaN."""
    if not math.isfinite(value):
        return value
    scaled = (value + sys.float_info.epsilon) * 100
    whole = math.floor(scaled)
    if scaled - whole >= 0.5:  # exact: a float minus its floor loses nothing
        whole += 1
    return whole / 100


class Exact(float):
    """A score function's (or shortcut's) result that is the score itself, neither scaled nor
    rounded: Mastra's unscaled 1 for no verdicts, its unrounded ``1 x scale``. Only a scorer built
    with ``compat="mastra"`` returns one."""


@dataclass(frozen=True)
class Compat:
    """The compat setting as the step runner applies it.

    Attributes:
        name: ``"localjudge"`` or ``"mastra"``.
        rounded: Under ``"mastra"``: whether Mastra rounds this scorer's score (its multi-turn
            judge, rubric, code scorers and checks do not).
    """

    name: CompatName = "localjudge"
    rounded: bool = True

    def __post_init__(self) -> None:
        check_compat(self.name)

    @property
    def mastra(self) -> bool:
        return self.name == "mastra"

    def score(self, fraction: float, scale: float) -> float:
        """The score for `fraction` (in [0, 1], an `Exact` score, or NaN under Mastra's)."""
        if isinstance(fraction, Exact):
            return float(fraction)
        value = fraction * scale
        if not self.mastra:
            return round_half_up(value)
        return js_round(value) if self.rounded else value

    def accepts(self, fraction: object) -> bool:
        """Whether a score function's result is one this setting scores: a fraction in [0, 1];
        under Mastra's also NaN (its formula's) and an `Exact` score."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            return False
        if self.mastra and (isinstance(fraction, Exact) or math.isnan(fraction)):
            return True
        return 0 <= fraction <= 1

    def allows_scale(self, scale: float) -> bool:
        """Whether `scale` is allowed beyond a positive one: 0, under Mastra's (which reads it)."""
        return self.mastra and scale == 0

    @property
    def key(self) -> str:
        """The part of a scorer's key that says this setting: empty for the default, so keys made
        before the setting existed still resume."""
        return "" if not self.mastra else "/compat=mastra" + ("" if self.rounded else "-unrounded")


LOCALJUDGE = Compat()

__all__ = ["COMPATS", "LOCALJUDGE", "Compat", "CompatName", "Exact", "check_compat", "js_round", "round_half_up"]
