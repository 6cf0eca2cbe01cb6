"""The engine options' flags, generated from the one table for both command lines
(`localjudge.cli.engine_flags`): every flag of `localjudge score` (``--max-rows``) is an option of
the pytest plugin (``--localjudge-max-rows``), and the same words give the judge spec the same
option on either; a flag not given gives none; each help names its own command line's flags; a
model path and a tokenizer that differ fail the plugin's `judge` fixture in one line.
"""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.cli import build_parser, model_flags
from localjudge.cli.pytest_plugin import judge_spec_of
from localjudge.engines import FLAGS

pytest_plugins = ["pytester"]

# One value for each engine option's flag (none: a switch; two: the flag given twice), and what
# the judge spec gets from it. A new option is a row of ENGINE_OPTIONS and a line here.
CASES: dict[str, tuple[str, list[str], Any]] = {
    "dtype": ("transformers", ["bfloat16"], "bfloat16"),
    "max_context": ("transformers", ["512"], 512),
    "max_rows": ("vllm", ["8"], 8),
    "allow_pickle": ("transformers", [], True),
    "trust_remote_code": ("vllm", [], True),
    "device_map": ("transformers", ["cpu"], "cpu"),
    "decoder": ("transformers", ["generate"], "generate"),
    "tensor_parallel_size": ("vllm", ["2"], 2),
    "pipeline_parallel_size": ("vllm", ["3"], 3),
    "gpu_memory_utilization": ("vllm", ["0.5"], 0.5),
    "distributed_executor_backend": ("vllm", ["ray"], "ray"),
    "enforce_eager": ("vllm", [], True),
    "base_url": ("server", ["http://a:1/v1", "http://b:2/v1,http://c:3/v1"],
                 ["http://a:1/v1", "http://b:2/v1,http://c:3/v1"]),
    "served_model": ("server", ["judge"], "judge"),
    "api_key_env": ("server", ["JUDGE_KEY"], "JUDGE_KEY"),
    "concurrency": ("server", ["4"], 4),
    "request_timeout": ("server", ["30"], 30.0),
    "tokenizer": ("server", ["tok"], "tok"),
    "server_kind": ("server", ["sglang"], "sglang"),
}
SERVER = "http://s:1/v1"  # the server engine needs one


def words(prefix: str, option: str) -> list[str]:
    """The case's flag on a command line: ``--<prefix>max-rows 8``; a switch alone; repeated per value."""
    flag = f"--{prefix}{option.replace('_', '-')}"
    engine, values, _ = CASES[option]
    given = [word for value in values for word in (flag, value)] if values else [flag]
    if engine == "server" and option != "base_url":
        given += [f"--{prefix}base-url", SERVER]
    return [f"--{prefix}engine", engine, *given]


def expected(option: str) -> dict[str, Any]:
    engine, _, value = CASES[option]
    return {option: value, **({"base_url": [SERVER]} if engine == "server" and option != "base_url" else {})}


def cli_options(*flags: str) -> dict[str, Any]:
    """The options `localjudge score`'s judge spec gets from `flags` (checked: `model_flags.judge_spec`)."""
    model = [] if "server" in flags else ["--model", "m"]
    args = build_parser().parse_args(["score", *model, "--scorer", "toxicity", "--data", "d.jsonl", *flags])
    return dict(model_flags.judge_spec(args).options)


def test_every_flagged_option_has_a_case() -> None:
    assert sorted(CASES) == sorted(FLAGS)


@pytest.mark.parametrize("option", sorted(CASES))
def test_the_cli_flag_gives_the_option(option: str) -> None:
    assert cli_options(*words("", option)) == expected(option)


@pytest.mark.parametrize("option", sorted(CASES))
def test_the_plugin_option_gives_the_same_option(option: str, pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(*words("localjudge-", option))
    spec = judge_spec_of(config)
    assert (spec.engine, dict(spec.options)) == (CASES[option][0], expected(option))


def test_a_flag_not_given_gives_no_option(pytester: pytest.Pytester) -> None:
    """Switches too: their False is "not given", so an engine is never handed an option it does not take."""
    assert cli_options() == {}
    assert dict(judge_spec_of(pytester.parseconfig()).options) == {}


def test_each_help_names_its_own_command_lines_flags(pytester: pytest.Pytester) -> None:
    score = build_parser()._subparsers._group_actions[0].choices["score"]  # type: ignore[union-attr]
    cli = {action.dest: str(action.help) for action in score._actions}
    plugin = " ".join(pytester.runpytest("--help").stdout.str().split())
    assert "(required with --engine server)" in cli["base_url"]
    assert "with --batch-size above it" in cli["max_rows"]
    assert "(required with --localjudge-engine server)" in plugin
    assert "with a batch (one `scored` call) above it" in plugin
    assert not any(word in text for word in ("{engine}", "{batch}") for text in [*cli.values(), plugin])


def test_the_plugin_refuses_a_model_and_a_tokenizer_that_differ_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one(judge):\n    pass\n")
    result = pytester.runpytest("--localjudge-engine", "server", "--localjudge-base-url", SERVER,
                                "--localjudge-model", "m", "--localjudge-tokenizer", "t")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the `judge` fixture: the model path * and tokenizer 't' differ: give one*"])
    assert "Traceback" not in result.stdout.str()
