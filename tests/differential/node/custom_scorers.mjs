// Two custom scorers from Mastra's own docs, as written there (TypeScript types dropped), for
// tests/differential/test_custom_parity.py; their Python ports are tests/unit/scoring/mastra_ports.py.
// The only change: the judge's `model` is the harness's scripted mock instead of 'openai/gpt-5-mini'.
//
// - glutenCheckerScorer: @mastra/core 1.71.0 dist/docs/references/docs-evals-custom-scorers.md,
//   "Example: Create a custom scorer".
// - refundJudge: @mastra/core 1.71.0 dist/docs/references/reference-evals-not-scorable.md,
//   "Usage example".
import { createScorer, notScorable } from "@mastra/core/evals";
import { matches } from "@mastra/evals/scorers/prebuilt";
import { extractToolCalls } from "@mastra/evals/scorers/utils";
import { z } from "zod";

export const GLUTEN_INSTRUCTIONS = `You are a Chef that identifies if recipes contain gluten.`;

export const generateGlutenPrompt = ({ output }) => `Check if this recipe is gluten-free.

Check for:
- Wheat
- Barley
- Rye
- Common sources like flour, pasta, bread

Example with gluten:
"Mix flour and water to make dough"
Response: {
  "isGlutenFree": false,
  "glutenSources": ["flour"]
}

Example gluten-free:
"Mix rice, beans, and vegetables"
Response: {
  "isGlutenFree": true,
  "glutenSources": []
}

Recipe to analyze:
${output}

Return your response in this format:
{
  "isGlutenFree": boolean,
  "glutenSources": ["list ingredients containing gluten"]
}`;

export const generateReasonPrompt = ({ isGlutenFree, glutenSources }) => `Explain why this recipe is${isGlutenFree ? '' : ' not'} gluten-free.

${glutenSources.length > 0 ? `Sources of gluten: ${glutenSources.join(', ')}` : 'No gluten-containing ingredients found'}

Return your response in this format:
"This recipe is [gluten-free/contains gluten] because [explanation]"`;

export const glutenCheckerScorer = (model) => createScorer({
  id: 'gluten-checker',
  description: 'Check if the output contains any gluten',
  judge: {
    model,
    instructions: GLUTEN_INSTRUCTIONS,
  },
})
  .analyze({
    description: 'Analyze the output for gluten',
    outputSchema: z.object({
      isGlutenFree: z.boolean(),
      glutenSources: z.array(z.string()),
    }),
    createPrompt: ({ run }) => {
      const { output } = run;
      return generateGlutenPrompt({ output: output.text });
    },
  })
  .generateScore(({ results }) => {
    return results.analyzeStepResult.isGlutenFree ? 1 : 0;
  })
  .generateReason({
    description: 'Generate a reason for the score',
    createPrompt: ({ results }) => {
      return generateReasonPrompt({
        glutenSources: results.analyzeStepResult.glutenSources,
        isGlutenFree: results.analyzeStepResult.isGlutenFree,
      });
    },
  });

export const refundJudge = (model) => createScorer({
  id: 'refund-judge',
  description: 'Judges how well refund requests were handled',
  type: 'agent',
  judge: {
    model,
    instructions: 'You are a strict QA reviewer for customer-support refund handling.',
  },
})
  .preprocess(({ run }) => {
    const { tools } = extractToolCalls(run.output);
    return tools.includes('refundCustomer')
      ? { tools }
      : notScorable('refundCustomer was not called');
  })
  .generateScore({
    description: 'Score the refund handling from 0 to 1',
    createPrompt: ({ run }) =>
      `Rate this refund handling from 0 to 1:\n${JSON.stringify(run.output)}`,
  });

// Custom scorers whose generateScore returns one number, for the raw-score cases
// (tests/differential/cases_custom.py): Mastra keeps the number as it is, 1/3 unrounded, 87.5 and
// -1 out of [0, 1], NaN and Infinity too. Their twins are create_scorer(..., score_returns="score").
const constant = (id, value) => () => createScorer({ id, description: `Always ${value}` })
  .generateScore(() => value);

export const oneThird = constant('one-third', 1 / 3);
export const eightySevenAndAHalf = constant('eighty-seven-and-a-half', 87.5);
export const minusOne = constant('minus-one', -1);
export const notANumber = constant('not-a-number', NaN);
export const infinity = constant('infinity', Infinity);
export const rating = constant('rating', 4); // a 1-5 rating, ported literally (no score_returns)

// Function scorers for the runEvals cases (tests/differential/test_run_evals_parity.py); their
// Python twins are in tests/differential/cases_run_evals.py. Each reads the reply as Mastra's
// scorers do: the last assistant message with text.
import { getAssistantMessageFromRunOutput } from "@mastra/evals/scorers/utils";
import { createTrajectoryAccuracyScorerCode } from "@mastra/evals/scorers/prebuilt";

const reply = (run) => getAssistantMessageFromRunOutput(run.output) ?? "";

export const evalScorers = {
  hasX: createScorer({ id: 'has-x-scorer', description: 'Does the reply hold an x?' })
    .generateScore(({ run }) => (reply(run).includes('x') ? 1 : 0)),
  polite: createScorer({ id: 'polite-scorer', description: 'Does the reply say please?' })
    .generateScore(({ run }) => (reply(run).includes('please') ? 1 : 0)),
  long: createScorer({ id: 'long-scorer', description: 'A long reply, or not scorable' })
    .preprocess(({ run }) => (reply(run).length < 6 ? notScorable('too short') : {}))
    .generateScore(({ run }) => Math.min(1, reply(run).length / 20)),
  broken: createScorer({ id: 'broken-scorer', description: 'Always throws' })
    .generateScore(() => { throw new Error('broken'); }),
  third: createScorer({ id: 'third-scorer', description: 'Always 1/3' }).generateScore(() => 1 / 3),
  big: createScorer({ id: 'big-scorer', description: 'Always 87.5' }).generateScore(() => 87.5),
  negative: createScorer({ id: 'negative-scorer', description: 'Always -1' }).generateScore(() => -1),
  // Trajectory scorers (a config's `trajectory`: runEvals hands them extractTrajectory's Trajectory).
  toolSteps: createScorer({ id: 'tool-steps-scorer', description: 'Tool calls that succeeded', type: 'trajectory' })
    .generateScore(({ run }) => run.output.steps.filter((step) => step.success).length),
  trajectoryAccuracy: createTrajectoryAccuracyScorerCode(),
  // For a Workflow's result and steps: their output is text, not messages.
  outLength: createScorer({ id: 'out-length-scorer', description: 'Characters in the output' })
    .generateScore(({ run }) => String(run.output).length),
  inLength: createScorer({ id: 'in-length-scorer', description: 'Characters in the input' })
    .generateScore(({ run }) => String(run.input).length),
  saysPlease: createScorer({ id: 'says-please-scorer', description: 'Does the output say please?' })
    .generateScore(({ run }) => (String(run.output).includes('please') ? 1 : 0)),
  // A /g RegExp, as a suite writes it: Mastra's check keeps its lastIndex from one output to the next.
  digits: matches(/\d+/g),
};
