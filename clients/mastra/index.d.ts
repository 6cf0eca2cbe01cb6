// Types of @localjudge/mastra: Mastra scorers judged by `localjudge serve`.
import type { MastraScorer } from "@mastra/core/evals";

export interface LocaljudgeScorerConfig {
  /** `localjudge serve`'s base URL (default http://127.0.0.1:8321/v1). */
  url?: string;
  /** The key the server asks for (its --api-key-env). */
  apiKey?: string;
  /** localjudge's mode: "pipeline" (Mastra's steps, default), "direct" or "ensemble". */
  mode?: "pipeline" | "direct" | "ensemble";
  /** "mastra": Mastra's formulas where localjudge deliberately differs (`localjudge score --compat mastra`). */
  compat?: "localjudge" | "mastra";
  /** The scorer's options, as Mastra's factory takes them (`scale`, `context`, ...: camelCase or snake_case). */
  options?: Record<string, unknown>;
  /** Milliseconds to wait for the server (default 600000). */
  timeoutMs?: number;
  /** The scorer's id (default localjudge-<name>-scorer). */
  id?: string;
  /** Other factory arguments Mastra's factory takes (`criterion`, `rubric`...) go to the options. */
  [option: string]: unknown;
}

/** localjudge's result for one run (`ScoreResult.to_dict`). */
export interface LocaljudgeResult {
  run_id: string | null;
  scorer: string;
  score: number | null;
  prob_score: number | null;
  reason: string | null;
  preprocess_step_result: unknown;
  analyze_step_result: unknown;
  error: string | null;
  error_kind: string | null;
  [field: string]: unknown;
}

export type LocaljudgeScorer = MastraScorer<any, any, any, any>;

export const SCORERS: Record<string, string>;
export function localjudgeOptions(config?: LocaljudgeScorerConfig): { scale: number; options: Record<string, unknown> };
export function scoreRun(call: LocaljudgeScorerConfig & { scorer: string; scale?: number }, run: unknown): Promise<LocaljudgeResult>;
export function createLocaljudgeScorer(name: string, config?: LocaljudgeScorerConfig): LocaljudgeScorer;

export function createHallucinationScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createFaithfulnessScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createToxicityScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createBiasScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createAnswerRelevancyScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createRubricScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createContextPrecisionScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createContextRecallScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createContextRelevanceScorerLLM(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createAnswerSimilarityScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createSummarizationScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createPromptAlignmentScorerLLM(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createMultiTurnJudgeScorer(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createToolCallAccuracyScorerLLM(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createTrajectoryAccuracyScorerLLM(config?: LocaljudgeScorerConfig): LocaljudgeScorer;
export function createNoiseSensitivityScorerLLM(config?: LocaljudgeScorerConfig): LocaljudgeScorer;

/** An AI SDK evaluation model (Experimental_EvaluationModelV4) on `localjudge serve`, for Mastra's
 * Classifier and createClassifierScorer: choice, score and boolean questions, each answered under
 * the grammar with the judge's label probabilities. */
export function localjudgeEvaluationModel(config?: { url?: string; apiKey?: string; model?: string }): {
  readonly specificationVersion: "v4";
  readonly provider: "localjudge";
  readonly modelId: string;
  readonly supportedQuestionTypes: readonly ("choice" | "score" | "boolean")[];
  doEvaluate(options: { state: unknown; questions: Record<string, unknown>; abortSignal?: AbortSignal }): Promise<{
    answers: Record<string, unknown>;
    usage: { inputTokens: number; outputTokens: number };
    warnings: unknown[];
  }>;
};
