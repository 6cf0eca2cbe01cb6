// Mastra scorers judged by `localjudge serve` (docs/mastra-from-typescript.md).
//
// Each factory has the name of @mastra/evals' prebuilt scorer it stands in for and returns a real
// Mastra scorer built with `createScorer`, so runEvals, live scoring on an Agent, the scores table
// and Studio take it as they take Mastra's own. Its preprocess step sends the run to the server's
// POST /v1/score (localjudge's scorer of that name, batched with every other client's requests);
// the result's step fields are Mastra's: preprocessStepResult, analyzeStepResult (plus
// `probScore`, the score from the judge's label probabilities, and `calibratedProb` when the server
// was started with --calibration), score, reason. A run localjudge
// declares not scorable is Mastra's `notScorable(reason)`; a run it could not judge, a server
// that is down or refuses the request, fails the scorer with one line saying why.
import { createScorer, notScorable } from "@mastra/core/evals";

// localjudge's scorer name -> the @mastra/evals factory it stands in for
export const SCORERS = {
  hallucination: "createHallucinationScorer",
  faithfulness: "createFaithfulnessScorer",
  toxicity: "createToxicityScorer",
  bias: "createBiasScorer",
  answer_relevancy: "createAnswerRelevancyScorer",
  rubric: "createRubricScorer",
  context_precision: "createContextPrecisionScorer",
  context_recall: "createContextRecallScorer",
  context_relevance: "createContextRelevanceScorerLLM",
  answer_similarity: "createAnswerSimilarityScorer",
  summarization: "createSummarizationScorer",
  prompt_alignment: "createPromptAlignmentScorerLLM",
  multi_turn_judge: "createMultiTurnJudgeScorer",
  tool_call_accuracy: "createToolCallAccuracyScorerLLM",
  trajectory_accuracy: "createTrajectoryAccuracyScorerLLM",
  noise_sensitivity: "createNoiseSensitivityScorerLLM",
};

const DEFAULT_URL = "http://127.0.0.1:8321/v1";
const OWN = new Set(["url", "apiKey", "mode", "compat", "options", "model", "timeoutMs", "id"]);

const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Mastra's option names (camelCase) as localjudge's (snake_case); `scale` goes apart. */
export function localjudgeOptions(config = {}) {
  const merged = { ...(config.options ?? {}) };
  for (const [key, value] of Object.entries(config)) if (!OWN.has(key)) merged[key] = value; // criterion, rubric...
  const { scale, ...rest } = merged;
  const options = Object.fromEntries(Object.entries(rest).map(([k, v]) => [snake(k), v]));
  return { scale: scale ?? 1, options };
}

/** The run as localjudge reads it: Mastra's own fields, nothing else (a RequestContext is not data). */
function runOf(run) {
  const out = {};
  for (const key of ["runId", "input", "output", "groundTruth", "expectedTrajectory"]) {
    if (run?.[key] !== undefined) out[key] = run[key];
  }
  return out;
}

/** POST /v1/score for one run; localjudge's result for it. Throws one line on any failure. */
export async function scoreRun({ url = DEFAULT_URL, apiKey, scorer, options, scale, mode, compat, timeoutMs }, run) {
  const body = { scorer, options, scale, mode: mode ?? "pipeline", compat: compat ?? "localjudge", runs: [runOf(run)] };
  let reply;
  try {
    reply = await fetch(`${url.replace(/\/+$/, "")}/score`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs ?? 600_000),
    });
  } catch (error) {
    throw new Error(`localjudge ${scorer}: the server at ${url} did not answer (${error?.cause?.code ?? error?.name ?? error})`);
  }
  const text = await reply.text();
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(`localjudge ${scorer}: the server at ${url} answered ${reply.status} with no JSON (is it localjudge serve?)`);
  }
  if (!reply.ok) throw new Error(`localjudge ${scorer}: ${reply.status} ${data?.error?.message ?? text.slice(0, 200)}`);
  return data.results[0];
}

/** A Mastra scorer on `localjudge serve`: localjudge's scorer `name`. */
export function createLocaljudgeScorer(name, config = {}) {
  const { scale, options } = localjudgeOptions(config);
  const call = { ...config, scorer: name, options, scale };
  const mastraName = SCORERS[name] ?? name;
  return createScorer({
    id: config.id ?? `localjudge-${name.replaceAll("_", "-")}-scorer`,
    name: `localjudge ${name}`,
    description: `localjudge's ${name} scorer (standing in for @mastra/evals' ${mastraName}), judged by localjudge serve`,
    type: "agent",
  })
    .preprocess(async ({ run }) => {
      const result = await scoreRun(call, run);
      if (result.error_kind === "not_scorable") return notScorable(result.error ?? "not scorable");
      if (result.score === null || result.score === undefined) {
        throw new Error(`localjudge ${name}: unscored (${result.error_kind}): ${result.error}`);
      }
      const step = result.preprocess_step_result;
      const own = step && typeof step === "object" && !Array.isArray(step) ? step : { result: step ?? null };
      return { ...own, localjudge: result }; // Mastra's step fields, and localjudge's whole result
    })
    .analyze(({ results }) => {
      const judged = results.preprocessStepResult.localjudge;
      const analyzed = judged.analyze_step_result;
      const extra = { probScore: judged.prob_score ?? null, calibratedProb: judged.calibrated_prob ?? null };
      return analyzed && typeof analyzed === "object" && !Array.isArray(analyzed) ? { ...analyzed, ...extra } : { result: analyzed, ...extra };
    })
    .generateScore(({ results }) => results.preprocessStepResult.localjudge.score)
    .generateReason(({ results }) => results.preprocessStepResult.localjudge.reason ?? "");
}

const factory = (name) => (config = {}) => createLocaljudgeScorer(name, config);

export const createHallucinationScorer = factory("hallucination");
export const createFaithfulnessScorer = factory("faithfulness");
export const createToxicityScorer = factory("toxicity");
export const createBiasScorer = factory("bias");
export const createAnswerRelevancyScorer = factory("answer_relevancy");
export const createRubricScorer = factory("rubric");
export const createContextPrecisionScorer = factory("context_precision");
export const createContextRecallScorer = factory("context_recall");
export const createContextRelevanceScorerLLM = factory("context_relevance");
export const createAnswerSimilarityScorer = factory("answer_similarity");
export const createSummarizationScorer = factory("summarization");
export const createPromptAlignmentScorerLLM = factory("prompt_alignment");
export const createMultiTurnJudgeScorer = factory("multi_turn_judge");
export const createToolCallAccuracyScorerLLM = factory("tool_call_accuracy");
export const createTrajectoryAccuracyScorerLLM = factory("trajectory_accuracy");
export const createNoiseSensitivityScorerLLM = factory("noise_sensitivity");

export { localjudgeEvaluationModel } from "./evaluation.js";
