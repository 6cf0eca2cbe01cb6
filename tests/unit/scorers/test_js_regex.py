"""`check_matches` takes JavaScript regular expressions: the translation to Python's `re` matches
what JavaScript matches (the differential tier runs the same patterns through Mastra), and what it
cannot translate is refused with the reason."""

from __future__ import annotations

import re

import pytest

from localjudge.scorers.checks.js_regex import JsRegex


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
])
def test_matches_as_javascript(source: str, flags: str, text: str, expected: bool) -> None:
    assert JsRegex(source, flags).test(text) is expected


@pytest.mark.parametrize(("source", "flags", "message"), [
    ("a", "v", "the v flag"), ("a", "x", "invalid regular expression flags"),
    ("\\p{Lu}", "u", "Unicode property escapes"), ("[\\S]", "", "inside a character class"),
    ("(?<=a+)b", "", "Python's re cannot take it"), ("(?<n$>a)", "", "Python's re cannot take it"),
    ("a\\", "", "lone backslash"), ("[abc", "", "closing ]"), ("\\q", "u", "not a valid escape"),
])
def test_refused_with_the_reason(source: str, flags: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        JsRegex(source, flags)
