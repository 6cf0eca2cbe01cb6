"""How a score is made from a scorer's number, by the compat setting: localjudge's rule or Mastra's numbers.

``compat="localjudge"`` (the default) scores ``round_half_up(fraction x scale)`` (or, under
``score_returns="score"``, the number itself rounded so): half up on the decimal the value
prints as, on a scale that must be a finite positive number.
``compat="mastra"`` gives what ``@mastra/evals`` 1.10.2's code gives where localjudge deliberately
differs (docs/mastra-parity.md, "The differences"). How Mastra makes a scorer's score is a fact
of that scorer, which it declares to `create_scorer` as `MastraNumbers`: whether Mastra rounds it
(its ``roundToTwoDecimals``, `js_round`, on the binary value), how Mastra's factory reads
``scale`` (0 read as 1, 0 kept, or no scale at all), and whether Mastra's formula can give NaN.
A `Compat` is the setting with those numbers, the one thing the step runner reads; what else a
scorer does differently under Mastra's numbers (toxicity's plain count, an empty output's
score...) is its factory's own rule, switched by the same ``compat`` argument.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

CompatName = Literal["localjudge", "mastra"]
COMPATS: tuple[CompatName, ...] = ("localjudge", "mastra")
ScoreReturns = Literal["fraction", "score"]
ScaleRule = Literal["positive", "zero_is_one", "zero_stays", "none"]
SCALE_RULES: tuple[ScaleRule, ...] = ("positive", "zero_is_one", "zero_stays", "none")

# Scores keep two decimals (prob scores four): far above this a float cannot hold them, and the
# exact decimal rounding of `round_half_up` overflows.
MAX_SCALE = 1_000_000
WHOLE = 2.0 ** 52  # from here on every float is a whole number: rounding to decimals leaves it as it is


def check_compat(value: object) -> CompatName:
    """`value` if it names a compat setting, else a one-line `ValueError`."""
    if value not in COMPATS:
        raise ValueError(f"compat must be one of {', '.join(COMPATS)}, got {value!r}")
    return value


def check_scale(scale: float) -> float:
    """Return `scale` as a float, or raise if it is not a finite positive number up to `MAX_SCALE`."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a finite positive number, got {scale!r}")
    if scale > MAX_SCALE:
        raise ValueError(f"scale must be at most {MAX_SCALE:,} (scores keep two decimals), got {scale:g}")
    return float(scale)


def round_half_up(value: float, places: int = 2) -> float:
    """Round to `places` decimals, halves away from zero (0.125 -> 0.13, unlike `round`)."""
    if not math.isfinite(value) or abs(value) >= WHOLE:
        return float(value)
    quantum = Decimal(1).scaleb(-places)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def js_round(value: float) -> float:
    """Mastra's ``roundToTwoDecimals``: ``Math.round((x + Number.EPSILON) * 100) / 100`` on the
    binary value (0.22499999999999998 -> 0.23, 2.175 -> 2.17). JavaScript's ``Math.round`` takes
    halves up, towards +infinity; NaN stays NaN."""
    if not math.isfinite(value) or abs(value) >= WHOLE:
        return value
    scaled = (value + sys.float_info.epsilon) * 100
    whole = math.floor(scaled)
    if scaled - whole >= 0.5:  # exact: a float minus its floor loses nothing
        whole += 1
    return whole / 100


def js_number(value: float) -> str:
    """A number as JavaScript's ``String(value)`` writes it (1, 0.5, 0.00001, 1e-7, NaN)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(float(value))
    if "e" not in text:
        return text
    if 1e-6 <= abs(value) < 1e21:
        return format(Decimal(text), "f")
    mantissa, exponent = text.split("e")
    return f"{mantissa}e{'-' if exponent.startswith('-') else '+'}{exponent.lstrip('+-').lstrip('0')}"


class Exact(float):
    """A score function's (or shortcut's) result that is the score itself, neither scaled nor
    rounded: Mastra's unscaled 1 for no verdicts, its unrounded ``1 x scale``. Only a scorer built
    with ``compat="mastra"`` returns one."""


@dataclass(frozen=True)
class MastraNumbers:
    """How Mastra 1.10.2 makes one scorer's score: a fact of the scorer, declared to
    `create_scorer` and applied only under ``compat="mastra"``. The default is Mastra's
    ``createScorer``'s own rule: the number ``generateScore`` returns is the score, as it is.

    Attributes:
        rounded: Mastra rounds the score with its ``roundToTwoDecimals`` (`js_round`), as its
            prebuilt LLM scorers do but for the multi-turn judge and rubric; False: the number
            as it is (a custom scorer, the code scorers and checks).
        scale: How Mastra's factory reads ``scale``: ``"positive"`` (as localjudge does: a finite
            positive number; Mastra's ``createScorer`` has none, so a custom scorer keeps its
            own), ``"zero_is_one"`` (``options?.scale || 1``: 0 becomes 1), ``"zero_stays"``
            (``options.scale ?? 1``: 0 is kept, and every score is then 0) or ``"none"`` (no
            scale option: one asked for is ignored, and scores run from 0 to 1).
        nan: Mastra's formula can give NaN, kept as the score (answer relevancy's options
            without ``uncertaintyWeight``); otherwise a NaN leaves the run unscored.
    """

    rounded: bool = False
    scale: ScaleRule = "positive"
    nan: bool = False

    def __post_init__(self) -> None:
        if self.scale not in SCALE_RULES:
            raise ValueError(f"a Mastra scale rule is one of {', '.join(SCALE_RULES)}, got {self.scale!r}")

    def scales(self, scale: float, compat: str) -> tuple[float, float]:
        """(the scale a factory builds with, the scale its scorer keeps) for `scale` asked under
        `compat`: the same checked positive scale, except under Mastra's numbers where Mastra reads
        a 0 (built as 1; kept as 1, or as 0 under ``"zero_stays"``) or has no scale (1 and 1)."""
        if check_compat(compat) == "mastra":
            if self.scale == "none":
                return 1.0, 1.0
            if self.scale != "positive" and scale == 0 and not isinstance(scale, bool):
                return 1.0, 0.0 if self.scale == "zero_stays" else 1.0
        checked = check_scale(scale)
        return checked, checked


AS_RETURNED = MastraNumbers()  # Mastra's `createScorer`: generateScore's number is the score, as it is


@dataclass(frozen=True)
class Compat:
    """The compat setting with the scorer's `MastraNumbers`: how the step runner makes a score.

    Attributes:
        name: ``"localjudge"`` or ``"mastra"``.
        numbers: The scorer's Mastra numbers, read only under ``"mastra"``.
    """

    name: CompatName = "localjudge"
    numbers: MastraNumbers = AS_RETURNED

    def __post_init__(self) -> None:
        check_compat(self.name)

    @property
    def mastra(self) -> bool:
        return self.name == "mastra"

    def kept_scale(self, scale: float) -> float:
        """The scale a scorer asked for `scale` keeps (see `MastraNumbers.scales`)."""
        return self.numbers.scales(scale, self.name)[1]

    def accepts(self, value: object, returns: ScoreReturns = "fraction") -> bool:
        """Whether a score function's result is one this setting scores: a fraction in [0, 1], or
        under ``returns="score"`` any finite number (Mastra's contract: the number is the score);
        under Mastra's numbers also an `Exact` score, and NaN where the scorer's formula makes one."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.mastra and (isinstance(value, Exact) or (self.numbers.nan and math.isnan(value))):
            return True
        if returns == "score":
            return math.isfinite(value)
        return 0 <= value <= 1

    def score(self, value: float, scale: float, returns: ScoreReturns = "fraction") -> float:
        """The score for `value` (one `accepts`): the fraction times `scale`, or the number itself
        under ``returns="score"``; rounded half up to two decimals, or under Mastra's numbers as
        Mastra does (`js_round`, or not at all). An `Exact` value is the score as it is."""
        if isinstance(value, Exact):
            return float(value)
        made = value * scale if returns == "fraction" else float(value)
        if not self.mastra:
            return round_half_up(made)
        return js_round(made) if self.numbers.rounded else made

    @property
    def key(self) -> str:
        """The part of a scorer's key that says this setting: empty for the default, so keys made
        before the setting existed still resume."""
        return "" if not self.mastra else "/compat=mastra" + ("" if self.numbers.rounded else "-unrounded")


LOCALJUDGE = Compat()

__all__ = ["AS_RETURNED", "COMPATS", "LOCALJUDGE", "MAX_SCALE", "SCALE_RULES", "Compat", "CompatName", "Exact",
           "MastraNumbers", "ScaleRule", "ScoreReturns", "check_compat", "check_scale", "js_round", "round_half_up"]
