"""What is judged: runs (plain strings, chat messages, Mastra's run shapes) read into `Sample`s.

`runs` builds the `Sample` (the texts judged and the other run fields), `messages` turns chat
shapes into clean text, `tool_calls` reads tool calls and their results from a run's output,
`mastra_reading` reads a field as Mastra's code scorers and checks do (several messages joined),
`run_hash` is Mastra's hash of a run's id that sampling ratios compare with.
"""

from localjudge.samples.mastra_reading import (
                                            ASSISTANT_RUN_ON,
                                            ASSISTANT_SPACED,
                                            BOTH_JOINED,
                                            EVERY_MESSAGE,
                                            Joined,
                                            mastra_text,
)
from localjudge.samples.mastra_reading import message_text as mastra_message_text
from localjudge.samples.messages import InvalidRunError, clean_text, is_missing, message_role
from localjudge.samples.run_hash import hash_to_unit_interval
from localjudge.samples.runs import RecordedRun, Sample, Turn, context_of, run_id_of, to_sample, trajectory_of
from localjudge.samples.tool_calls import ToolCall, extract_tool_calls, extract_tool_results, tool_result_context

__all__ = [
    "ASSISTANT_RUN_ON",
    "ASSISTANT_SPACED",
    "BOTH_JOINED",
    "EVERY_MESSAGE",
    "InvalidRunError",
    "Joined",
    "RecordedRun",
    "Sample",
    "ToolCall",
    "Turn",
    "clean_text",
    "context_of",
    "extract_tool_calls",
    "message_role",
    "extract_tool_results",
    "hash_to_unit_interval",
    "is_missing",
    "mastra_message_text",
    "mastra_text",
    "run_id_of",
    "to_sample",
    "tool_result_context",
    "trajectory_of",
]
