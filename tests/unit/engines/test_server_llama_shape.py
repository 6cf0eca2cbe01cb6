"""llama-server's reply as the real server gives it (llama.cpp 0c1e570, llama-cpp-python 0.3.36's
copy, SmolLM2-135M Q4_1; the llama tier, tests/llama_server, checks it live).

Its JSON-schema grammar lets the judge write a space after ``:``: SmolLM2 answered
``{"verdict": "yes"}``, the label's opening quote in the token ``' "'``, where localjudge's own
grammar writes ``{"verdict":"yes"}``. Its ``n_probs`` top tokens are computed before the grammar
(``Paris`` and ``https`` among them at the first position). Before `dialects.compact`, no label
choice was found in such an answer: every row's ``prob_score`` was None.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel

from localjudge.engines.server.dialects import compact, reply
from tests.unit.engines.fake_server import CharTokenizer, FakeServer, judge_on

# The reply to a token-id prompt on /v1/completions with json_schema and n_probs: 20, its top
# tokens cut to 4 per position, logprobs rounded to 4 places
POSITIONS = [
    ('{"', -1.7403, [('{"', -1.7403), ("Paris", -2.3658), ("{", -2.7474), ("https", -3.2002)]),
    ("ver", -0.3634, [("ver", -0.3634), ("id", -4.0395), ("qu", -4.7088), ("verified", -4.7958)]),
    ("dict", -0.0052, [("dict", -0.0052), ("bid", -7.0226), ("dicts", -7.7489), ("biased", -7.7693)]),
    ('":', -0.1256, [('":', -0.1256), ('":"', -2.3264), ("1", -4.921), ('"', -5.4155)]),
    (' "', -0.0354, [(' "', -0.0354), ('{"', -4.4279), ('"', -4.8573), (" {", -6.5509)]),
    ("yes", -0.2124, [("yes", -0.2124), ("no", -2.0874), ("Yes", -4.1755), ("No", -4.3683)]),
    ('"}', -0.7171, [('"}', -0.7171), ('"', -0.9378), ("}", -3.1519), (',"', -3.3391)]),
    ("", -1.0356, [("\n", -0.827), ("", -1.0356), (":", -4.0473), (" ", -4.0789)]),
]
YES = math.exp(-0.2124) / (math.exp(-0.2124) + math.exp(-2.0874))  # renormalised over the two labels


def real_reply() -> dict[str, Any]:
    content = [{"id": k, "token": token, "bytes": list(token.encode()), "logprob": logprob,
                "top_logprobs": [{"id": 1000 + j, "token": t, "bytes": list(t.encode()), "logprob": lp}
                                 for j, (t, lp) in enumerate(tops)]}
               for k, (token, logprob, tops) in enumerate(POSITIONS)]
    return {"choices": [{"text": '{"verdict": "yes"}', "index": 0, "logprobs": {"content": content},
                         "finish_reason": "stop"}],
            "created": 1796443237, "model": "smollm2", "system_fingerprint": "b1-0c1e570",
            "object": "text_completion",
            "usage": {"completion_tokens": 8, "prompt_tokens": 57, "total_tokens": 65,
                      "prompt_tokens_details": {"cached_tokens": 0}},
            "id": "chatcmpl-cwY7i7M5CbISUtykAFw26q0V8eeHnktH",
            "timings": {"cache_n": 0, "prompt_n": 57, "predicted_n": 8}}


class Verdict(BaseModel):
    verdict: Literal["yes", "no"]


def test_the_real_reply_is_read_with_its_label_probability(server: FakeServer) -> None:
    server.kind = "llama-cpp"
    server.answer = lambda path, body: real_reply()
    [out] = judge_on(server, tokenizer=CharTokenizer()).generate([[{"role": "user", "content": "?"}]], [Verdict],
                                                                max_new_tokens=32)
    assert out.text == '{"verdict": "yes"}' and out.finished and out.new_tokens == 8 and out.error is None
    [(path, body)] = server.posts()
    assert path == "/v1/completions" and body["n_probs"] == 20 and "json_schema" in body
    assert out.label_probs == ({"no": round(1 - YES, 6), "yes": round(YES, 6)},)


def test_compact_sets_aside_whitespace_between_json_tokens_only() -> None:
    answer = reply(real_reply())
    assert [piece for piece, _ in compact(answer.positions)] == ['{"', "ver", "dict", '":', '"', "yes", '"}', ""]
    assert compact(answer.positions)[4][1][0] == ('"', math.exp(-0.0354))  # ' "' chose the quote
    # inside a string (an escaped quote in it) whitespace stays, in the pieces and the candidates
    positions = [('{"reason": "a \\" b', []), (" c", [(" c", 0.5)]), ('", ', [(" d", 0.5)]), ('\n "x', [(' "', 1.0)])]
    assert compact(positions) == (('{"reason":"a \\" b', []), (" c", [(" c", 0.5)]), ('",', [(" d", 0.5)]),
                                  ('"x', [('"', 1.0)]))
