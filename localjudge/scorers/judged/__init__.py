"""The judged scorers: each asks the judge (claims and verdicts, statements, one question...),
one file per scorer, and the kit they share.

The kit: `claims` (the claim-verdict pipeline), `claim_parts` (a long output's claims asked part
by part), `statements` (sentences by rule), `verdicts` (verdict lines, label probabilities, the
reason step), `direct` (each scorer's one-question mode), `ensemble` (both modes together) and
`conversation_history` (earlier messages as Mastra shows them). This module lists what the
registry (`localjudge.scorers.registry`) reads: the factories and the modes.
"""

from __future__ import annotations

from localjudge.scorers.judged.answer_relevancy import answer_relevancy_scorer
from localjudge.scorers.judged.answer_similarity import answer_similarity_scorer
from localjudge.scorers.judged.bias import bias_scorer
from localjudge.scorers.judged.claim_parts import WORDS_PER_CLAIM
from localjudge.scorers.judged.context_precision import context_precision_scorer
from localjudge.scorers.judged.context_recall import context_recall_scorer
from localjudge.scorers.judged.context_relevance import context_relevance_scorer
from localjudge.scorers.judged.direct import MODES, check_mode
from localjudge.scorers.judged.ensemble import ENSEMBLE, EnsembleScorer, ensemble_scorer
from localjudge.scorers.judged.faithfulness import faithfulness_scorer
from localjudge.scorers.judged.hallucination import hallucination_scorer
from localjudge.scorers.judged.multi_turn_judge import multi_turn_judge_scorer
from localjudge.scorers.judged.noise_sensitivity import noise_sensitivity_scorer
from localjudge.scorers.judged.prompt_alignment import prompt_alignment_scorer
from localjudge.scorers.judged.rubric import rubric_scorer
from localjudge.scorers.judged.summarization import summarization_scorer
from localjudge.scorers.judged.tool_call_accuracy import tool_call_accuracy_scorer
from localjudge.scorers.judged.toxicity import toxicity_scorer
from localjudge.scorers.judged.trajectory_accuracy import trajectory_accuracy_scorer

__all__ = ["ENSEMBLE", "MODES", "WORDS_PER_CLAIM", "EnsembleScorer", "answer_relevancy_scorer",
           "answer_similarity_scorer", "bias_scorer", "check_mode", "context_precision_scorer",
           "context_recall_scorer", "context_relevance_scorer", "ensemble_scorer", "faithfulness_scorer",
           "hallucination_scorer", "multi_turn_judge_scorer", "noise_sensitivity_scorer", "prompt_alignment_scorer",
           "rubric_scorer", "summarization_scorer", "tool_call_accuracy_scorer", "toxicity_scorer",
           "trajectory_accuracy_scorer"]
