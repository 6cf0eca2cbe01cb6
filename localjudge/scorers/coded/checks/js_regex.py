"""JavaScript regular expressions, translated for `check_matches` and run by the `regex` module.

Mastra's `checks.matches(/.../flags)` takes a JavaScript `RegExp`. localjudge takes its source and
flags as text (``pattern``, ``flags``: what ``new RegExp(pattern, flags)`` is given) and
translates them, so a pattern means what it meant in Mastra, or is refused with the reason:

- `\\d`, `\\w`, `\\b` are ASCII in JavaScript (Python's are Unicode): written out as ASCII
  classes; `\\s` is JavaScript's whitespace set, `.` excludes its four line terminators (all
  characters with the `s` flag), `$` matches only at the end (Python's also before a final
  newline), and with the `m` flag `^`/`$` match at any of the four line terminators.
- A class holding `\\D`, `\\W` or `\\S` (the "any character" idioms `[\\s\\S]`, `[\\w\\W]`,
  `[\\d\\D]`, or `[^\\S\\n]`) becomes the union (or, negated, the intersection) it means.
- With the `u` flag, `\\p{...}` and `\\P{...}` are Unicode property escapes, spelled as JavaScript
  spells them (a General_Category value, a binary property, ``Script=``/``sc=``,
  ``Script_Extensions=``/``scx=``); without it `\\p` is the letter p, as in JavaScript.
- `(?<name>...)` and `\\k<name>` become `(?P<name>...)` and `(?P=name)`; `[]` matches nothing
  and `[^]` anything; `{` that does not start a quantifier is a literal, as in JavaScript;
  `\\cX`, `\\0`, `\\xhh`, `\\uhhhh` and, with `u`, `\\u{h...}` become the characters they
  name; a look-behind of any length (``(?<=\\$\\s*)\\d+``) is kept: the `regex` module runs it.
- Flags: `i` (case-insensitive), `m`, `s`, `u`; `g` and `d` change nothing for one test (a `/g`
  pattern is tested afresh on each output: Mastra's keeps `lastIndex` between outputs, a bug
  not copied), and `y` (sticky) anchors the match at the start, as a fresh sticky `RegExp.test`.

Refused (a `ValueError` naming the construct): the `v` flag, a property escape JavaScript does not
know (or one the `regex` module does not), a `$` in a group name, unknown or repeated flags, and
a pattern the `regex` module cannot compile. Not reproduced: without the `u` flag JavaScript
matches UTF-16 code units, so `.` matches half an emoji there and a whole one here; JavaScript's
case-insensitive matching does not fold `ſ` or the Kelvin sign `K` into ASCII letters, Python's
does; and a property's characters are those of the `regex` module's Unicode version, which may be
newer than the Node.js that ran Mastra.
"""

from __future__ import annotations

import re

import regex

from localjudge.scorers.coded.checks.js_properties import property_escape
from localjudge.scorers.coded.js_strings import JS_SPACE, JS_SPACE_CHARS
from localjudge.scoring import UnscorableError

FLAGS = "dgimsuyv"
DIGIT, WORD = "0-9", "A-Za-z0-9_"
LINE_END = "\\n\\r\\u2028\\u2029"
BOUNDARY = f"(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))"
NOT_BOUNDARY = f"(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))"
QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")
CLASS_ESCAPES = {"d": DIGIT, "w": WORD, "s": JS_SPACE_CHARS}
SIMPLE = {"t": "\\t", "n": "\\n", "r": "\\r", "v": "\\x0b", "f": "\\x0c"}
# re's flags as the regex module numbers them (ASCII differs); re.UNICODE is both's default for text
FLAG_BITS = ((re.IGNORECASE, regex.IGNORECASE), (re.MULTILINE, regex.MULTILINE), (re.DOTALL, regex.DOTALL),
             (re.VERBOSE, regex.VERBOSE), (re.ASCII, regex.ASCII))
DEFAULT_TIMEOUT_S = 2.0  # a test on a text; past it the row is unscored (RegexTimeoutError)


class JsRegex:
    """A translated JavaScript regular expression: `test(text)` is `RegExp.prototype.test` on a
    fresh `RegExp` (see the module docstring), given at most `timeout_s` seconds.

    The pattern is compiled and run by the `regex` module, which reads Python's syntax and more
    (property escapes, look-behinds of any length), avoids some catastrophic backtracking
    (``^(a+)+$``) and can stop a search that runs too long: `re` can be stopped by nothing, and
    ``^(a|a)+$`` on 40 characters would take days."""

    def __init__(self, source: str, flags: str = "", *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.source, self.flags, self.timeout_s = source, flags, timeout_s
        self.pattern = self.bounded = translate(source, flags)
        self.sticky = "y" in flags

    def test(self, text: str) -> bool:
        """Whether `text` matches; raises `RegexTimeoutError` past `timeout_s`."""
        return search(self.bounded, text, self.timeout_s, sticky=self.sticky, shown=str(self)) is not None

    def __str__(self) -> str:
        return f"/{self.source}/{self.flags}"


class RegexTimeoutError(UnscorableError):
    """A regular expression ran past its time limit on a text (catastrophic backtracking)."""


def bounded(pattern: re.Pattern[str]) -> regex.Pattern[str]:
    """`pattern` (Python's `re`) compiled by the `regex` module, to run with a time limit."""
    try:
        flags = sum(theirs for ours, theirs in FLAG_BITS if pattern.flags & ours)
        return regex.compile(pattern.pattern, flags)
    except regex.error as error:
        raise ValueError(f"the regex module cannot take {pattern.pattern!r}: {error}") from None


def search(pattern: regex.Pattern[str], text: str, timeout_s: float, *, sticky: bool = False, full: bool = False,
           shown: str = "") -> regex.Match[str] | None:
    """`pattern`'s search (at the start only when `sticky`; the whole text when `full`) in `text`,
    stopped after `timeout_s` seconds with a `RegexTimeoutError` that says so in one line."""
    try:
        if full:
            return pattern.fullmatch(text, timeout=timeout_s)
        return pattern.match(text, timeout=timeout_s) if sticky else pattern.search(text, timeout=timeout_s)
    except TimeoutError:
        raise RegexTimeoutError(f"{shown or pattern.pattern} ran past its {timeout_s:g} s limit on this text "
                                f"({len(text)} characters; catastrophic backtracking?): not scored") from None


def check_flags(flags: str) -> None:
    unknown = sorted(set(flags) - set(FLAGS))
    if unknown or len(set(flags)) != len(flags):
        raise ValueError(f"invalid regular expression flags {flags!r} (JavaScript's: {FLAGS}, each once)")
    if "v" in flags:
        raise ValueError("the v flag (set notation) has no Python translation")


def translate(source: str, flags: str = "") -> regex.Pattern[str]:
    """The `regex` module's pattern that matches what ``new RegExp(source, flags)`` matches."""
    check_flags(flags)
    unicode, multiline, dot_all = "u" in flags, "m" in flags, "s" in flags
    out: list[str] = []
    i = 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            text, i = _escape(source, i + 1, unicode, in_class=False)
            out.append(text)
            continue
        if c == "[":
            text, i = _class(source, i + 1, unicode)
            out.append(text)
            continue
        if c == "(" and source.startswith("(?<", i) and not source.startswith(("(?<=", "(?<!"), i):
            name = source[i + 3:source.find(">", i)] if ">" in source[i:] else ""
            if "$" in name:
                raise ValueError(f"the group name {name!r} (a $ in a group name) has no Python translation")
            out.append("(?P<")
            i += 3
            continue
        if c == ".":
            out.append("[\\s\\S]" if dot_all else f"[^{LINE_END}]")
        elif c == "^":
            out.append(f"(?:\\A|(?<=[{LINE_END}]))" if multiline else "\\A")
        elif c == "$":
            out.append(f"(?=[{LINE_END}]|\\Z)" if multiline else "\\Z")
        elif c == "{" and not QUANTIFIER.match(source, i):
            if unicode:
                raise ValueError(f"a lone '{{' at {i} is a syntax error with the u flag")
            out.append("\\{")
        else:
            out.append(c)
        i += 1
    try:
        return regex.compile("".join(out), regex.IGNORECASE if "i" in flags else 0)
    except regex.error as error:
        raise ValueError(f"the regex module cannot take it: {error}") from None


def _escape(source: str, i: int, unicode: bool, in_class: bool) -> tuple[str, int]:
    """The escape at `source[i]` (after its backslash): its Python text and the next index."""
    if i >= len(source):
        raise ValueError("the pattern ends with a lone backslash")
    c = source[i]
    if c in CLASS_ESCAPES:
        body = CLASS_ESCAPES[c]
        return (body if in_class else (JS_SPACE if c == "s" else f"[{body}]")), i + 1
    if c in "DWS":  # inside a class, _class makes the union it means
        return f"[^{CLASS_ESCAPES[c.lower()]}]", i + 1
    if c == "b":
        return ("\\x08" if in_class else BOUNDARY), i + 1
    if c == "B" and not in_class:
        return NOT_BOUNDARY, i + 1
    if c in SIMPLE:
        return SIMPLE[c], i + 1
    if c == "0" and not source[i + 1:i + 2].isdigit():
        return "\\x00", i + 1
    if c.isdigit() and not in_class:
        end = i
        while end < len(source) and source[end].isdigit():
            end += 1
        return f"\\{source[i:end]}", end  # a backreference (Python refuses one to no group)
    if c == "k" and not in_class and source.startswith("<", i + 1):
        end = source.index(">", i) if ">" in source[i:] else -1
        if end < 0:
            raise ValueError("\\k< without its closing >")
        return f"(?P={source[i + 2:end]})", end + 1
    if c == "c" and i + 1 < len(source) and source[i + 1].isascii() and source[i + 1].isalpha():
        return f"\\x{ord(source[i + 1]) % 32:02x}", i + 2
    if c == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", source[i + 1:i + 3]):
        return f"\\x{source[i + 1:i + 3]}", i + 3
    if c == "u":
        if unicode and source.startswith("{", i + 1):
            end = source.find("}", i)
            digits = source[i + 2:end] if end > 0 else ""
            if not re.fullmatch(r"[0-9A-Fa-f]{1,6}", digits) or int(digits, 16) > 0x10FFFF:
                raise ValueError(f"invalid \\u{{...}} escape at {i - 1}")
            return f"\\U{int(digits, 16):08x}", end + 1
        if re.fullmatch(r"[0-9A-Fa-f]{4}", source[i + 1:i + 5]):
            return f"\\u{source[i + 1:i + 5]}", i + 5
    if c in "pP" and unicode:
        return property_escape(source, i + 1, negated=c == "P")
    if c.isascii() and c.isalnum():
        if unicode:
            raise ValueError(f"\\{c} is not a valid escape with the u flag")
        return re.escape(c), i + 1  # JavaScript without u: an identity escape, the letter itself
    return re.escape(c), i + 1


def _class(source: str, i: int, unicode: bool) -> tuple[str, int]:
    """The character class starting after its `[` at `source[i]`: its Python text, next index.

    `\\D`, `\\W` and `\\S` in a class are each another class beside it: ``[a\\S]`` is
    ``(?:[a]|[^<space>])``, and negated, ``[^a\\S]`` is a character in none of them:
    ``(?![a]|[^<space>])[\\s\\S]``."""
    negated = source.startswith("^", i)
    i += negated
    if source.startswith("]", i):  # JavaScript: [] matches nothing, [^] any character
        return ("[\\s\\S]" if negated else "(?!)"), i + 1
    out: list[str] = []
    others: list[str] = []  # the classes \\D, \\W, \\S stand for
    while i < len(source) and source[i] != "]":
        c = source[i]
        if c == "\\":
            if source[i + 1:i + 2] in ("D", "W", "S"):
                others.append(_escape(source, i + 1, unicode, in_class=False)[0])
                i += 2
                continue
            text, i = _escape(source, i + 1, unicode, in_class=True)
            out.append(text)
            continue
        out.append(f"\\{c}" if c in "[&~|" else c)  # literal in JavaScript, set operators to Python
        i += 1
    if i >= len(source):
        raise ValueError("a character class without its closing ]")
    if not others:
        return ("[^" if negated else "[") + "".join(out) + "]", i + 1
    members = "|".join(([f"[{''.join(out)}]"] if out else []) + others)
    return (f"(?!{members})[\\s\\S]" if negated else f"(?:{members})"), i + 1


__all__ = ["DEFAULT_TIMEOUT_S", "FLAGS", "JsRegex", "RegexTimeoutError", "bounded", "check_flags", "search",
           "translate"]
