"""What a server sends back is untrusted: the rules every value from it passes before use.

- `read_json`: every number finite. NaN and Infinity (not JSON, though Python's reader takes
  them), a float out of range (``1e400``) and an integer beyond 64 bits refuse the reply.
- `probability`: a logprob (or a probability) becomes a probability in [0, 1], or NaN when it
  is none (positive, not a number), which `grammar.label_mass` refuses to read.
- `count`: a count (tokens generated) is an integer in [0, `MAX_COUNT`].
- `context_length`: a context length is an integer in [1, `MAX_CONTEXT`], else not listed.
- `printable`: a name (a model id, a version) is shown on one line, escaped.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_CONTEXT = 100_000_000  # tokens: no model's context window comes near it
MAX_COUNT = 1 << 40
LOGPROB_SLACK = 1e-4  # a logprob a float's rounding put just above 0 is still probability 1


def read_json(raw: bytes | str) -> Any:
    """JSON as a server sent it, every number finite (else a ValueError naming the number)."""
    return json.loads(raw, parse_constant=_constant, parse_float=_finite, parse_int=_int64)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _int64(text: str) -> int:
    if len(text) > 20 or not -(2**63) <= (value := int(text)) < 2**63:
        raise ValueError(f"the integer {text[:40]} is out of range")
    return value


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def probability(value: Any, *, log: bool) -> float:
    """A candidate token's probability from its logprob (`log`) or its probability; NaN when
    the value is no such thing (a positive logprob: ``+5`` would be p = 148)."""
    if not _real(value):
        return math.nan
    if log:
        return min(1.0, math.exp(value)) if value <= LOGPROB_SLACK else math.nan
    return float(value) if 0.0 <= value <= 1.0 else math.nan


def count(value: Any, what: str) -> int:
    """A count the server reports, or a ValueError naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{what} is {printable(repr(value), 40)}, not a count")
    return value


def context_length(value: Any) -> int | None:
    """`value` as a context length in tokens, or None when it is none."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONTEXT:
        return None
    return value


def printable(text: str, limit: int = 200) -> str:
    """`text` fit for one line of a log or an identity: control characters, line breaks and lone
    surrogates escaped (``\\n``, ``\\ud800``), cut to `limit` characters. A name a server sends
    cannot forge a line or break an encoder; an ordinary name is unchanged."""
    shown = "".join(c if c.isprintable() or c == " " else _escaped(c) for c in text[: limit + 1])
    return shown if len(shown) <= limit else shown[:limit] + "..."


def _escaped(char: str) -> str:
    code = ord(char)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    return named or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
