"""`check_matches` takes JavaScript regular expressions: the translation to Python's `re` matches
what JavaScript matches (the differential tier runs the same patterns through Mastra), and what it
cannot translate is refused with the reason."""

from __future__ import annotations

import re

import pytest

from localjudge.scorers import checks
from localjudge.scorers.coded.checks.js_regex import JsRegex


@pytest.mark.parametrize(("source", "flags", "text", "expected"), [
    ("\\d+", "", "٣", False),  # JavaScript's \d is ASCII; Python's would match an Arabic-Indic digit
    ("\\w+", "", "é", False), ("\\bcat\\b", "", "écat", True),  # é is no word character in JavaScript
    ("a\\sb", "", "a\u00a0b", True), ("a\\sb", "", "a\ufeffb", True), ("a\\sb", "", "a\x1cb", False),
    ("a.b", "", "a\rb", False), ("a.b", "", "a\u2028b", False), ("a.b", "s", "a\nb", True),
    ("end$", "", "the end\n", False),  # Python's $ would match before a final newline
    ("^b$", "m", "a\rb\u2028c", True), ("^b$", "", "a\nb\nc", False),
    ("(?<year>\\d{4})-\\k<year>", "", "2024-2024", True), ("[]", "", "anything", False), ("[^]", "", "x", True),
    ("a{,2}", "", "a{,2}", True),  # JavaScript: a literal brace; Python 3.11 would read {0,2}
    ("[\\d\\s]+x", "", "1 2x", True), ("[\\b]", "", "\x08", True), ("\\cJ", "", "\n", True),
    ("\\u{1F600}", "u", "😀", True), ("\\u00e9", "", "é", True), ("\\x41", "", "A", True), ("\\/", "", "/", True),
    ("SUNNY", "i", "sunny", True), ("sunny", "y", "a sunny day", False), ("sunny", "g", "a sunny day", True),
    ("[a&&b]", "", "&", True), ("\\q", "", "q", True),  # an identity escape without the u flag
    # The "any character" idioms and other classes holding \D, \W or \S: the union they mean
    ("^\\s*\\{[\\s\\S]*\\}\\s*$", "", '{"answer": 42}\n', True), ("^[\\s\\S]$", "", "\u2028", True),
    ("^[\\w\\W]$", "", "é", True), ("^[\\d\\D]+$", "", "a\n1", True), ("[\\d\\D]", "", "", False),
    ("[a\\D]", "", "5", False), ("[5\\D]", "", "5", True), ("[^\\S\\n]", "", "\n", False),
    ("[^\\S\\n]", "", "\u00a0", True), ("[^\\S]", "", "x", False), ("[^\\W\\d]", "", "7", False),
    ("[^\\W\\d]", "", "é", False), ("[^\\W\\d]+", "", "ab_", True), ("[\\S]", "", " ", False),
    # Unicode property escapes with u, as JavaScript spells them; without u, \p is the letter p
    ("^\\p{Lu}", "u", "Émile", True), ("^\\p{Lu}", "u", "émile", False), ("^\\p{Lu}", "ui", "émile", True),
    ("\\p{Lu}", "", "p{Lu}", True), ("\\p{Lu}", "", "A", False), ("\\P{L}", "u", "abc", False),
    ("\\p{Script=Greek}", "u", "αβ", True), ("\\p{sc=Grek}", "u", "ab", False), ("[\\p{N}x]", "u", "٣", True),
    ("\\p{punct}", "u", "$", False), ("\\p{gc=punct}", "u", "!", True), ("\\p{digit}", "u", "٣", True),
    ("\\p{Emoji_Presentation}", "u", "😀", True), ("\\p{ASCII}", "u", "é", False),
    # A look-behind of any length, as JavaScript (and the regex module) allow
    ("(?<=\\$\\s*)\\d+", "", "cost: $  42", True), ("(?<=\\$\\s*)\\d+", "", "cost: 42", False),
    ("(?<!\\w+-)end", "", "front-end", False), ("(?<!\\w+-)end", "", "the end", True),
])
def test_matches_as_javascript(source: str, flags: str, text: str, expected: bool) -> None:
    assert JsRegex(source, flags).test(text) is expected


@pytest.mark.parametrize(("source", "flags", "message"), [
    ("a", "v", "the v flag"), ("a", "x", "invalid regular expression flags"),
    ("\\p{lu}", "u", "\\p{lu} is not a Unicode property JavaScript knows"),
    ("\\p{Greek}", "u", "\\p{Greek} is not a Unicode property"), ("\\p{gc=Greek}", "u", "\\p{gc=Greek} is not"),
    ("\\p{Lu", "u", "\\p without its {name}"), ("\\p{RGI_Emoji}", "u", "\\p{RGI_Emoji} is not"),
    ("\\p{Script=Klingon}", "u", "\\p{Script=Klingon} has no translation: the regex module does not know"),
    ("(?<n$>a)", "", "the group name 'n$' (a $ in a group name)"), ("(a", "", "the regex module cannot take it"),
    ("a\\", "", "lone backslash"), ("[abc", "", "closing ]"), ("\\q", "u", "not a valid escape"),
])
def test_refused_with_the_reason(source: str, flags: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        JsRegex(source, flags)


def test_catastrophic_backtracking_leaves_the_row_unscored() -> None:
    """A pattern that backtracks without end on an output stops at its time limit: that row is
    unscored with a one-line reason (Python's re would take days on ``^(a|a)+$`` and 40 a's)."""
    scorer = checks.matches("^(a|a)+$", timeout_s=0.2)
    result = scorer.run({"input": "", "output": "a" * 30 + "!"})
    assert result.score is None and result.error_kind == "unscorable"
    assert result.error == ("preprocess step: /^(a|a)+$/ ran past its 0.2 s limit on this text (31 characters; "
                            "catastrophic backtracking?): not scored")
    assert scorer.run({"input": "", "output": "aaa"}).score == 1.0  # the same check on a short output
    python = checks.matches(re.compile("(a|a)+\\Z"), timeout_s=0.2).run({"input": "", "output": "a" * 30 + "!"})
    assert python.score is None and "ran past its 0.2 s limit" in str(python.error)


def test_nested_quantifiers_answer() -> None:
    """``^(a+)+$`` on 30 a's and a ``!``: 43 s in Python's re; the regex module answers at once (no match)."""
    assert checks.matches("^(a+)+$", timeout_s=0.5).run({"input": "", "output": "a" * 30 + "!"}).score == 0.0
    assert checks.matches("^(a+)+$").run({"input": "", "output": "a" * 30}).score == 1.0


@pytest.mark.parametrize("timeout_s", [0, -1, float("inf"), True, "2"])
def test_time_limit_is_checked(timeout_s: object) -> None:
    with pytest.raises(ValueError, match="timeout_s must be a positive number of seconds"):
        checks.matches("a", timeout_s=timeout_s)  # type: ignore[arg-type]


def test_default_limit_keeps_the_key() -> None:
    """Results stored before the limit existed still resume: the default is not in the settings."""
    assert "timeout_s" not in checks.matches("a").settings
    assert checks.matches("a", timeout_s=5).prompt_hash != checks.matches("a").prompt_hash
