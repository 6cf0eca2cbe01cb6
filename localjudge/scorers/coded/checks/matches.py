"""Check `matches` (Mastra's `checks.matches`, id ``check-matches``, no model): 1 when the output
matches a regular expression, else 0. With ``exact=True`` the whole output must match (Mastra
wraps the source in ``^...$``, keeping the flags: with `m`, one whole line suffices).

The pattern is a JavaScript regular expression as Mastra takes it: `pattern` is its source and
`flags` its flags, as ``new RegExp(pattern, flags)`` gets them (``pattern="\\\\d{1,3}°[FC]"``
for ``/\\d{1,3}°[FC]/``). It is translated for the `regex` module so that it matches what it
matched in Mastra (``[\\s\\S]``, ``\\p{Lu}`` with `u`, a look-behind of any length included),
or refused at build in one line naming what has no translation
(`localjudge.scorers.coded.checks.js_regex`). A compiled Python `re.Pattern` is used as it is (no
flags then). A ``/g`` pattern is tested afresh on each output (Mastra's keeps its `lastIndex`
from one output to the next: a bug not copied, `matches-global-state`).

Each test has a time limit (`timeout_s`, 2 s by default): a pattern that backtracks
catastrophically on an output (``^(a|a)+$`` on 30 ``a``s and a ``!``) leaves that row unscored,
with the reason, instead of stalling the run for days. Patterns run in the `regex` module, which
reads Python's syntax and can be stopped."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

from localjudge.judge import Judge
from localjudge.samples import ASSISTANT_RUN_ON, Sample
from localjudge.scorers.coded.checks.js_regex import DEFAULT_TIMEOUT_S, JsRegex, bounded, search
from localjudge.scorers.coded.code_scorer import CodeScorer, code_build, code_scorer, passed
from localjudge.scoring import Results


def check_matches_scorer(judge: Judge | None = None, *, pattern: str | re.Pattern[str], flags: str = "",
                         exact: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S, scale: float = 1.0,
                         compat: str = "localjudge") -> CodeScorer:
    """Mastra's ``checks.matches(new RegExp(pattern, flags), {exact})`` (no model: `judge` is not used).

    Args:
        timeout_s: The most seconds one output's test may take (localjudge's: Mastra has no
            limit); past it the row is unscored, its error saying so in one line.
    """
    if not isinstance(exact, bool):
        raise TypeError(f"exact must be true or false, got {exact!r}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < math.inf:
        raise ValueError(f"timeout_s must be a positive number of seconds, got {timeout_s!r}")
    test: Callable[[str], object]
    if isinstance(pattern, re.Pattern):
        if flags:
            raise ValueError("flags go with a JavaScript pattern given as text, not with a compiled Python pattern")
        try:
            compiled = bounded(pattern)
        except ValueError as error:
            raise ValueError(f"check_matches: cannot take re.compile({pattern.pattern!r}): {error}") from None
        shown = f"re.compile({pattern.pattern!r})"
        test = functools.partial(search, compiled, timeout_s=timeout_s, full=exact, shown=shown)
        settings: dict[str, Any] = {"python": pattern.pattern, "python_flags": int(pattern.flags)}
    elif isinstance(pattern, str) and isinstance(flags, str):
        try:
            regex = JsRegex(f"^{pattern}$" if exact else pattern, flags, timeout_s=timeout_s)
        except ValueError as error:
            raise ValueError(f"check_matches: cannot take /{pattern}/{flags}: {error}") from None
        shown, test, settings = f"/{pattern}/{flags}", regex.test, {"pattern": pattern, "flags": flags}
    else:
        raise TypeError(f"pattern must be a JavaScript pattern's source (text) or a compiled re.Pattern, "
                        f"and flags text; got {pattern!r}, {flags!r}")

    def preprocess(run: Sample, results: Results) -> dict[str, Any]:
        return {"output": run.output, "pattern": shown, "passed": bool(test(run.output))}

    def reason(run: Sample, results: Results) -> str:
        ok = results["preprocess_step_result"]["passed"]
        return f"{'Passed' if ok else 'Failed'}: the output {'matches' if ok else 'does not match'} {shown}."

    return code_scorer("check_matches", code_build(scale, compat), id="check-matches", preprocess=preprocess,
                       score=passed, reason=reason,
                       positive="matches the pattern", description=f"Whether the output matches {shown}",
                       settings={**settings, "exact": exact,  # the limit is in the key only when not the default
                                 **({"timeout_s": timeout_s} if timeout_s != DEFAULT_TIMEOUT_S else {})},
                       mastra_reading={"output": ASSISTANT_RUN_ON})


__all__ = ["check_matches_scorer"]
