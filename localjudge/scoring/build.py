"""`Build`: what a scorer's factory works out once from the keywords every factory shares.

Every built-in factory takes ``scale``, ``mode`` and ``compat`` (the registry passes them as
they are) and declares its `MastraNumbers`. It reads them once, ``Build.of(MASTRA_NUMBERS,
scale=scale, mode=mode, compat=compat)``, and hands that one value to its kit (the claim-verdict
pipeline, the direct mode, a code scorer's builder) and, through `create_keywords`, to
`create_scorer`, instead of threading three or four keywords through each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from localjudge.scoring.compat import AS_RETURNED, LOCALJUDGE, Compat, MastraNumbers, check_compat

Mode = Literal["pipeline", "direct"]
MODES: tuple[Mode, ...] = ("pipeline", "direct")


def check_mode(mode: str) -> Mode:
    """`mode` if it is a known mode, else a clear error."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class Build:
    """One scorer's shared build settings, worked out once (`Build.of`).

    Attributes:
        scale: The scale its prompts, worked examples and reasons are built with: the checked
            scale asked for, or 1 where Mastra's numbers read a 0 as 1 or take no scale.
        kept: The scale the scorer keeps (scores lie in [0, kept]): `scale`, but 0 where Mastra's
            numbers keep a scale of 0 (`MastraNumbers.scales`).
        mode: ``"pipeline"`` or ``"direct"`` (one question on the whole output).
        compat: The setting with the scorer's Mastra numbers (`Compat`).
    """

    scale: float = 1.0
    kept: float = 1.0
    mode: Mode = "pipeline"
    compat: Compat = LOCALJUDGE

    @classmethod
    def of(cls, numbers: MastraNumbers = AS_RETURNED, *, scale: float = 1.0, mode: str = "pipeline",
           compat: str = "localjudge") -> Build:
        """The build for a factory's `scale`, `mode` and `compat`, with the scorer's Mastra `numbers`:
        each checked (a one-line `ValueError`), the scales worked out as `MastraNumbers.scales` says."""
        checked = check_mode(mode)
        name = check_compat(compat)
        built, kept = numbers.scales(scale, name)
        return cls(built, kept, checked, Compat(name, numbers))

    @property
    def mastra(self) -> bool:
        """Whether the scorer is built under Mastra's numbers (``compat="mastra"``)."""
        return self.compat.mastra

    @property
    def direct(self) -> bool:
        """Whether the scorer is built in its direct mode."""
        return self.mode == "direct"

    def create_keywords(self) -> dict[str, Any]:
        """`create_scorer`'s keywords for this build: the kept scale, the setting, the Mastra numbers."""
        return {"scale": self.kept, "compat": self.compat.name, "mastra_numbers": self.compat.numbers}


__all__ = ["MODES", "Build", "Mode", "check_mode"]
