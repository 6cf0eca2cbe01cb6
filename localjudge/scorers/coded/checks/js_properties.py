"""JavaScript's Unicode property escapes (`\\p{...}` with the `u` flag), checked as JavaScript
checks them and handed to the `regex` module, which reads the same names.

JavaScript knows a fixed set (ECMA-262, "Unicode property escapes"): a General_Category value
alone or as ``General_Category=``/``gc=``; a binary property alone; a script as ``Script=``/
``sc=`` or ``Script_Extensions=``/``scx=``. Names are case-sensitive there (``\\p{lu}`` and
``\\p{Greek}`` are syntax errors); the `regex` module is looser, so the check comes first.
"""

from __future__ import annotations

import re

import regex

GENERAL_CATEGORY = frozenset("""
C Other Cc Control cntrl Cf Format Cn Unassigned Co Private_Use Cs Surrogate L Letter LC Cased_Letter
Ll Lowercase_Letter Lm Modifier_Letter Lo Other_Letter Lt Titlecase_Letter Lu Uppercase_Letter M Mark
Combining_Mark Mc Spacing_Mark Me Enclosing_Mark Mn Nonspacing_Mark N Number Nd Decimal_Number digit Nl
Letter_Number No Other_Number P Punctuation punct Pc Connector_Punctuation Pd Dash_Punctuation Pe
Close_Punctuation Pf Final_Punctuation Pi Initial_Punctuation Po Other_Punctuation Ps Open_Punctuation S
Symbol Sc Currency_Symbol Sk Modifier_Symbol Sm Math_Symbol So Other_Symbol Z Separator Zl Line_Separator
Zp Paragraph_Separator Zs Space_Separator
""".split())
BINARY = frozenset("""
ASCII ASCII_Hex_Digit AHex Alphabetic Alpha Any Assigned Bidi_Control Bidi_C Bidi_Mirrored Bidi_M
Case_Ignorable CI Cased Changes_When_Casefolded CWCF Changes_When_Casemapped CWCM Changes_When_Lowercased
CWL Changes_When_NFKC_Casefolded CWKCF Changes_When_Titlecased CWT Changes_When_Uppercased CWU Dash
Default_Ignorable_Code_Point DI Deprecated Dep Diacritic Dia Emoji Emoji_Component EComp Emoji_Modifier
EMod Emoji_Modifier_Base EBase Emoji_Presentation EPres Extended_Pictographic ExtPict Extender Ext
Grapheme_Base Gr_Base Grapheme_Extend Gr_Ext Hex_Digit Hex IDS_Binary_Operator IDSB IDS_Trinary_Operator
IDST ID_Continue IDC ID_Start IDS Ideographic Ideo Join_Control Join_C Logical_Order_Exception LOE
Lowercase Lower Math Noncharacter_Code_Point NChar Pattern_Syntax Pat_Syn Pattern_White_Space Pat_WS
Quotation_Mark QMark Radical Regional_Indicator RI Sentence_Terminal STerm Soft_Dotted SD
Terminal_Punctuation Term Unified_Ideograph UIdeo Uppercase Upper Variation_Selector VS White_Space space
XID_Continue XIDC XID_Start XIDS
""".split())
CATEGORY_NAMES = frozenset({"General_Category", "gc"})
SCRIPT_NAMES = frozenset({"Script", "sc", "Script_Extensions", "scx"})
# regex's own words for some of JavaScript's names (its `\p{punct}` and `\p{digit}` are POSIX's)
REGEX_SPELLING = {"punct": "P", "digit": "Nd", "cntrl": "Cc", "space": "White_Space"}
NAME = re.compile(r"[A-Za-z0-9_]+")


def property_escape(source: str, i: int, negated: bool) -> tuple[str, int]:
    """The `regex` module's text for the escape whose ``{`` is at `source[i]` (after ``\\p`` or
    ``\\P``), and the index after its ``}``; a `ValueError` naming it if JavaScript or the
    `regex` module does not know it."""
    end = source.find("}", i)
    body = source[i + 1:end] if source.startswith("{", i) and end > 0 else None
    shown = f"\\{'P' if negated else 'p'}{{{body}}}" if body is not None else f"\\{'P' if negated else 'p'}"
    if body is None:
        raise ValueError(f"{shown} without its {{name}} is a syntax error with the u flag")
    name, _, value = body.partition("=")
    if not NAME.fullmatch(name) or (value and not NAME.fullmatch(value)):
        known = False
    elif value:
        known = (name in CATEGORY_NAMES and value in GENERAL_CATEGORY) or name in SCRIPT_NAMES
    else:
        known = name in GENERAL_CATEGORY or name in BINARY
    if not known:
        raise ValueError(f"{shown} is not a Unicode property JavaScript knows (names are case-sensitive; "
                         f"scripts are written Script=Name)")
    if value and name in CATEGORY_NAMES:
        name, value = REGEX_SPELLING.get(value, value), ""
    text = (f"\\{'P' if negated else 'p'}{{{name}={value}}}" if value
            else f"\\{'P' if negated else 'p'}{{{REGEX_SPELLING.get(name, name)}}}")
    try:
        regex.compile(text)
    except regex.error:
        raise ValueError(f"{shown} has no translation: the regex module does not know this property") from None
    return text, end + 1


__all__ = ["property_escape"]
