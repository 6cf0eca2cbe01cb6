"""Cases for Mastra's code scorers and checks (no judge): the same run through Mastra's published
scorer and localjudge's.

Mastra's code scorers return the raw fraction (0.5161290322580645); localjudge rounds every score
to two decimals (the `unrounded` difference). So a case holds when Mastra's score is `expect`
(or anything, for `SAME`) and localjudge's is that score rounded half up; `same` names step
result fields that must be equal to the bit (localjudge's snake_case name: Mastra's camelCase).
Mastra's factories are called with the case's `positional` arguments (these take no model);
`trajectory`: Mastra's run output is its own `extractTrajectory` of the messages, as `runEvals`
hands a trajectory scorer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.differential.cases_agents import agent_input, message
from tests.differential.cases_messages import MESSAGE_CASES
from tests.differential.code_case import CODE_FACTORIES, SAME, CodeCase, call, case, texts, tools
from tests.differential.parity import REFUSED, Differs

__all__ = ["CODE_CASES", "CODE_FACTORIES", "SAME", "CodeCase", "texts"]


TEXT_MEASURES = {"textual_difference": {"ratio": "ratio", "changes": "changes", "confidence": "confidence",
                                        "length_diff": "lengthDiff"}}
TOOL_ORDER = [call("search", {"q": 1}, call_id="a"), call("summarize", {"q": 2}, call_id="b"),
              call("respond", {"q": 3}, call_id="c")]

TEXT_CASES = [
    case("completeness", "identical", texts("The cat sat on the mat.", "The cat sat on the mat."), 1),
    case("completeness", "partial", texts("Name the capital of France and its river.", "Paris is the capital.")),
    case("completeness", "short-words-exact", texts("cat dog", "cats dogs"), 0),
    case("completeness", "empty-both", texts("", ""), 1),
    case("completeness", "empty-input", texts("", "Something."), 0),
    case("completeness", "contraction", texts("It doesn't work.", "It does not work."), 1),
    case("completeness", "verb-forms", texts("He went home and ate.", "He goes home to eat."),
         Differs("completeness-elements", mastra=0.8, local=0.6)),  # lemminflect: "goes" is also a noun
    case("content_similarity", "defaults", texts("What is the capital of France?", "The capital of France is Paris.")),
    case("content_similarity", "identical", texts("Same text.", "Same text."), 1),
    case("content_similarity", "case-folded", texts("HELLO there", "hello THERE"), 1),
    case("content_similarity", "case-kept", texts("HELLO there", "hello THERE"), 2 / 9,
         {"ignoreCase": False, "ignoreWhitespace": True}, options={"ignore_case": False}),
    case("content_similarity", "whitespace", texts("a  b\n c", "abc"), 1),
    case("content_similarity", "emoji", texts("😀 yes", "😀 no"), SAME),
    case("content_similarity", "one-character", texts("a", "ab"), 0),
    case("keyword_coverage", "half", texts("What is the capital of France?", "Paris is the capital."), 0.5),
    case("keyword_coverage", "no-keywords", texts("What is it?", "Anything."), 1),
    case("keyword_coverage", "digits-and-quotes", texts('Refund order 1234 "today"', "The refund is today.")),
    case("keyword_coverage", "address", texts("Open https://Example.com/A. now", "see https://Example.com/A.")),
    case("keyword_coverage", "html", texts("<b>Bold</b> claims here", "claims")),
    case("keyword_coverage", "empty-both", texts("", ""), 1),
    case("textual_difference", "identical", texts("Paris.", "Paris."), 1, same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "one-letter", texts("abcd", "abed"), 0.75, same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "sentences", texts("The quick brown fox jumps.", "A quick brown dog jumped."),
         same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "whitespace-only", texts("a b", "a  b"), same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "empty-output", texts("Paris.", ""), 0, same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "emoji", texts("😀 ok", "😀 okay"), same=TEXT_MEASURES["textual_difference"]),
    case("textual_difference", "joined-messages", {"input": agent_input("Paris."), "output": [
        message("assistant", "", parts=[call("search")]), message("assistant", "Paris.")]},
         Differs("joined-messages", mastra=6 / 7, local=1.0)),
    case("tone", "stable", texts("", "Fine. Fine."), 1, same={"score": "score"}),
    case("tone", "swings", texts("", "I love it. I hate it."), 0, same={"avg_sentiment": "avgSentiment",
                                                                         "sentiment_variance": "sentimentVariance"}),
    case("tone", "negated", texts("", "This is not good. It is fine, really great!"),
         same={"sentiment_variance": "sentimentVariance"}),
    case("tone", "emoji", texts("", "I love this 😂 . Sad 😭 day."), same={"sentiment_variance": "sentimentVariance"}),
    case("tone", "unpunctuated-end", texts("", "Good. Bad. trailing words"), 0),
    case("tone", "empty-output", texts("", ""), 1),
    case("tone", "reference", texts("", "This is awful."), 0, {"referenceTone": "I am happy"},
         options={"reference_tone": "I am happy"}, same={"difference": "difference"}),
    case("tone", "reference-close", texts("", "A good day, mostly."), SAME, {"referenceTone": "What a lovely day"},
         options={"reference_tone": "What a lovely day"}, same={"response_sentiment": "responseSentiment"}),
    case("tone", "reference-empty", texts("", "I love it. I hate it."), 0, {"referenceTone": ""},
         options={"reference_tone": ""}),
]

TOOL_CASES = [
    case("code_tool_call_accuracy", "called", tools(call("search"), call("format")), 1, {"expectedTool": "search"},
         options={"expected_tool": "search"}),
    case("code_tool_call_accuracy", "strict-one-call", tools(call("search"), call("format")), 0,
         {"expectedTool": "search", "strictMode": True}, options={"expected_tool": "search", "strict_mode": True}),
    case("code_tool_call_accuracy", "not-called", tools(call("format")), 0, {"expectedTool": "search"},
         options={"expected_tool": "search"}),
    case("code_tool_call_accuracy", "order", tools(*TOOL_ORDER), 1, {"expectedToolOrder": ["search", "respond"]},
         options={"expected_tool_order": ["search", "respond"]}),
    case("code_tool_call_accuracy", "order-strict", tools(*TOOL_ORDER), 0,
         {"expectedToolOrder": ["search", "respond"], "strictMode": True},
         options={"expected_tool_order": ["search", "respond"], "strict_mode": True}),
    case("code_tool_call_accuracy", "failed-call-counts", tools(call("search", state="output-error")), 1,
         {"expectedTool": "search"}, options={"expected_tool": "search"}),
    case("code_tool_call_accuracy", "no-calls", tools(), 0, {"expectedTool": "search"},
         options={"expected_tool": "search"}),
    case("code_tool_call_accuracy", "no-input", tools(call("search"), request=""), REFUSED,
         {"expectedTool": "search"}, options={"expected_tool": "search"}),
]

STEPS = [{"stepType": "tool_call", "name": n} for n in ("search", "summarize", "respond")]
TRAJECTORY_CASES = [
    case("code_trajectory_accuracy", "relaxed", tools(*TOOL_ORDER), 1,
         {"expectedTrajectory": {"steps": [STEPS[0], STEPS[2]]}},
         options={"expected_trajectory": {"steps": [STEPS[0], STEPS[2]]}}, trajectory=True),
    case("code_trajectory_accuracy", "strict", tools(*TOOL_ORDER), 0.25,
         {"expectedTrajectory": {"steps": [STEPS[0], STEPS[2]]}, "comparisonOptions": {"ordering": "strict"}},
         options={"expected_trajectory": [STEPS[0], STEPS[2]], "ordering": "strict"}, trajectory=True),
    case("code_trajectory_accuracy", "unordered", tools(*reversed(TOOL_ORDER)), 1,
         {"expectedTrajectory": STEPS, "comparisonOptions": {"ordering": "unordered"}},
         options={"expected_trajectory": STEPS, "ordering": "unordered"}, trajectory=True),
    case("code_trajectory_accuracy", "from-the-run", tools(*TOOL_ORDER[:2], expectedTrajectory={
        "steps": STEPS, "ordering": "relaxed"}), 0.67, {}, trajectory=True),
    case("code_trajectory_accuracy", "repeats-penalised", tools(call("search", {"q": 1}, call_id="x"),
                                                                call("search", {"q": 2}, call_id="y")), 0.9,
         {"expectedTrajectory": [STEPS[0]], "comparisonOptions": {"allowRepeatedSteps": False}},
         options={"expected_trajectory": [STEPS[0]], "allow_repeated_steps": False}, trajectory=True),
    case("code_trajectory_accuracy", "pinned-args", tools(call("search", {"q": "paris"})), 0,
         {"expectedTrajectory": [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": "rome"}}]},
         options={"expected_trajectory": [{"stepType": "tool_call", "name": "search", "toolArgs": {"q": "rome"}}]},
         trajectory=True),
    case("code_trajectory_accuracy", "no-expectation", tools(call("search")),
         Differs("no-expected-trajectory", mastra=0.0, local=REFUSED), {}, trajectory=True),
    case("code_trajectory", "nothing-configured", tools(call("search")), 1, {}, trajectory=True, reason=True),
    case("code_trajectory", "accuracy-and-budget", tools(*TOOL_ORDER[:1]), 0.71,
         {"defaults": {"steps": [STEPS[0], STEPS[1]], "maxSteps": 3}},
         options={"defaults": {"steps": [STEPS[0], STEPS[1]], "maxSteps": 3}}, trajectory=True, reason=True),
    case("code_trajectory", "over-budget-redundant", tools(call("search", call_id="p"), call("search", call_id="q"),
                                                           call("search", call_id="r")), SAME,
         {"defaults": {"maxSteps": 2}}, options={"defaults": {"maxSteps": 2}}, trajectory=True, reason=True),
    case("code_trajectory", "blacklisted", tools(*TOOL_ORDER), 0,
         {"defaults": {"steps": STEPS, "blacklistedTools": ["respond"]}},
         options={"defaults": {"steps": STEPS, "blacklistedTools": ["respond"]}}, trajectory=True, reason=True),
    case("code_trajectory", "forbidden-sequence", tools(*TOOL_ORDER), 0,
         {"defaults": {"blacklistedSequences": [["summarize", "respond"]]}},
         options={"defaults": {"blacklistedSequences": [["summarize", "respond"]]}}, trajectory=True, reason=True),
    case("code_trajectory", "is-error-retried", tools(call("search", call_id="e", result={"ok": False}, isError=True),
                                                      call("search", call_id="f")), 0.8,
         {"defaults": {"maxRetriesPerTool": 0}}, options={"defaults": {"maxRetriesPerTool": 0}}, trajectory=True,
         reason=True),
    case("code_trajectory_accuracy", "is-error-pinned-success", tools(call("search", isError=True)), 0,
         {"expectedTrajectory": [{"stepType": "tool_call", "name": "search", "success": True}]},
         options={"expected_trajectory": [{"stepType": "tool_call", "name": "search", "success": True}]},
         trajectory=True),
    case("code_trajectory", "retries", tools(*(call("search", call_id=f"s{i}", state="output-error") for i in range(4)),
                                             call("lookup", call_id="l")), SAME,
         {"defaults": {"maxRetriesPerTool": 1}}, options={"defaults": {"maxRetriesPerTool": 1}}, trajectory=True,
         reason=True),
    case("code_trajectory", "weights-and-run-override", tools(*TOOL_ORDER[:2], expectedTrajectory={"steps": STEPS}),
         SAME, {"defaults": {"steps": [STEPS[0]], "noRedundantCalls": True}, "weights": {"accuracy": 0.9}},
         options={"defaults": {"steps": [STEPS[0]], "noRedundantCalls": True}, "weights": {"accuracy": 0.9}},
         trajectory=True, reason=True),
    case("code_trajectory", "nested-missing-children", tools(*TOOL_ORDER), 0.7,
         {"defaults": {"steps": [{"name": "search", "children": {"steps": [{"name": "inner"}]}}]}},
         options={"defaults": {"steps": [{"name": "search", "children": {"steps": [{"name": "inner"}]}}]}},
         trajectory=True, reason=True),
    case("code_trajectory", "token-budget", tools(call("search")), REFUSED, {"defaults": {"maxTotalTokens": 10}},
         options={"defaults": {"maxTotalTokens": 10}}, trajectory=True),
]

SUNNY = "It is Sunny and 72°F in Paris.\nHave a nice day"
CHECK_TOOLS = tools(call("search", call_id="a"), call("format", result={"error": "bad unit"}, call_id="b"),
                    call("search", call_id="c", state="call"), text=SUNNY)


def check(name: str, label: str, expect: float | str | Differs, *args: Any, run: Mapping[str, Any] = CHECK_TOOLS,
          **options: Any) -> CodeCase:
    return CodeCase(name, label, run, expect, options, args)


def regexp(source: str, flags: str = "") -> dict[str, Any]:
    return {"$regexp": [source, flags]}


CHECK_CASES = [
    check("check_includes", "found", 1, "sunny", expected="sunny"),
    check("check_includes", "case-kept", 0, "sunny", {"ignoreCase": False}, expected="sunny", ignore_case=False),
    check("check_excludes", "present", 0, "SUNNY", unwanted="SUNNY"),
    check("check_excludes", "absent", 1, "rain", unwanted="rain"),
    check("check_equals", "equal", 1, SUNNY.upper(), expected=SUNNY.upper()),
    check("check_equals", "not-equal", 0, "It is sunny", expected="It is sunny"),
    check("check_matches", "degrees", 1, regexp("\\d{1,3}°[FC]"), pattern="\\d{1,3}°[FC]"),
    check("check_matches", "case", 0, regexp("sunny"), pattern="sunny"),
    check("check_matches", "case-insensitive", 1, regexp("sunny", "i"), pattern="sunny", flags="i"),
    check("check_matches", "dollar-not-before-newline", 0, regexp("Paris\\.$"), pattern="Paris\\.$",
          run=texts("", "It is sunny in Paris.\n")),  # Python's $ would match before the final newline
    check("check_matches", "multiline", 1, regexp("Paris\\.$", "m"), pattern="Paris\\.$", flags="m"),
    check("check_matches", "dot-and-newline", 0, regexp("Paris.*day"), pattern="Paris.*day"),
    check("check_matches", "dot-all", 1, regexp("Paris.*day", "s"), pattern="Paris.*day", flags="s"),
    check("check_matches", "exact", 1, regexp("It.*day", "s"), {"exact": True}, pattern="It.*day", flags="s",
          exact=True),
    check("check_matches", "exact-multiline", 1, regexp("Have a nice day", "m"), {"exact": True},
          pattern="Have a nice day", flags="m", exact=True),
    check("check_matches", "named-group", 1, regexp("(?<n>\\d)\\k<n>"), pattern="(?<n>\\d)\\k<n>",
          run=texts("", "It costs 112 euros.")),
    check("check_matches", "ascii-word-boundary", 1, regexp("\\bcafe"), pattern="\\bcafe", run=texts("", "écafe")),
    # What real suites write: the "any character" idiom, a property escape with u, a look-behind of any length
    check("check_matches", "any-character-idiom", 1, regexp("^\\s*\\{[\\s\\S]*\\}\\s*$"),
          pattern="^\\s*\\{[\\s\\S]*\\}\\s*$", run=texts("", '{"answer": 42}\n')),
    check("check_matches", "any-character-idiom-missed", 0, regexp("^\\s*\\{[\\s\\S]*\\}\\s*$"),
          pattern="^\\s*\\{[\\s\\S]*\\}\\s*$", run=texts("", 'Answer: {"answer": 42}')),
    check("check_matches", "word-or-not-idiom", 1, regexp("^Total:[\\w\\W]+\\d$"), pattern="^Total:[\\w\\W]+\\d$",
          run=texts("", "Total:\n  é 42")),
    check("check_matches", "digit-or-not-idiom", 0, regexp("^[\\d\\D]{5}$"), pattern="^[\\d\\D]{5}$",
          run=texts("", "1\n2\n")),
    check("check_matches", "unicode-property", 1, regexp("^\\p{Lu}", "u"), pattern="^\\p{Lu}", flags="u",
          run=texts("", "Émile called back.")),
    check("check_matches", "unicode-property-lowercase", 0, regexp("^\\p{Lu}", "u"), pattern="^\\p{Lu}", flags="u",
          run=texts("", "émile called back.")),
    check("check_matches", "unicode-property-without-u", 1, regexp("\\p{Lu}"), pattern="\\p{Lu}",
          run=texts("", "the p{Lu} text")),  # without u, \p is the letter p
    check("check_matches", "variable-lookbehind", 1, regexp("(?<=\\$\\s*)\\d+"), pattern="(?<=\\$\\s*)\\d+",
          run=texts("", "It costs $  42.")),
    check("check_matches", "variable-lookbehind-missed", 0, regexp("(?<=\\$\\s*)\\d+"), pattern="(?<=\\$\\s*)\\d+",
          run=texts("", "It costs 42 dollars.")),
    check("check_similarity", "raw", SAME, "It is sunny", expected="It is sunny"),
    check("check_similarity", "threshold-met", 1, "It is Sunny and 72°F in Paris.", {"threshold": 0.7},
          expected="It is Sunny and 72°F in Paris.", threshold=0.7),
    # At a threshold, just below and just above it: "abc" to "abd" is exactly 0.5 (1 shared bigram of 2 + 2)
    check("check_similarity", "at-threshold", 1, "abc", {"threshold": 0.5}, expected="abc", threshold=0.5,
          run=texts("", "abd")),
    check("check_similarity", "just-below-threshold", 0, "abc", {"threshold": 0.5000001}, expected="abc",
          threshold=0.5000001, run=texts("", "abd")),
    check("check_similarity", "just-above-threshold", 1, "abc", {"threshold": 0.4999999}, expected="abc",
          threshold=0.4999999, run=texts("", "abd")),
    check("check_similarity", "threshold-missed", 0, "Rain in Rome", {"threshold": 0.7}, expected="Rain in Rome",
          threshold=0.7),
    check("check_called_tool", "once", 1, "search", tool_name="search"),
    check("check_called_tool", "twice", 1, "search", {"times": 2}, tool_name="search", times=2),
    check("check_called_tool", "three-times", 0, "search", {"times": 3}, tool_name="search", times=3),
    check("check_did_not_call", "called", 0, "format", tool_name="format"),
    check("check_did_not_call", "not-called", 1, "delete", tool_name="delete"),
    check("check_tool_order", "in-order", 1, ["search", "format"], expected_order=["search", "format"]),
    check("check_tool_order", "search-again", 1, ["format", "search"], expected_order=["format", "search"]),
    check("check_tool_order", "not-in-order", 0, ["format", "format"], expected_order=["format", "format"]),
    check("check_max_tool_calls", "within", 1, 3, max_calls=3),
    check("check_max_tool_calls", "over", 0, 2, max_calls=2),
    check("check_max_tool_calls", "one-under", 1, 4, max_calls=4),  # 3 calls: at 3, over 2, under 4
    check("check_used_no_tools", "used", 0),
    check("check_used_no_tools", "none", 1, run=texts("Hi", "Hello.")),
    check("check_no_tool_errors", "errors", 0),
    check("check_no_tool_errors", "clean", 1, run=tools(call("search"))),
    check("check_no_tool_errors", "error-field-empty-object", 0, run=tools(call("search", result={"error": {}}))),
    check("check_no_tool_errors", "is-error-flag", 0, run=tools(call("search", result={"ok": False}, isError=True))),
    check("check_no_tool_errors", "is-error-false", 1, run=tools(call("search", isError=False))),
]

CODE_CASES: list[CodeCase] = TEXT_CASES + TOOL_CASES + TRAJECTORY_CASES + CHECK_CASES + MESSAGE_CASES
