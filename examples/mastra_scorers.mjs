// Mastra's runEvals with localjudge's scorers (docs/serve.md, "From TypeScript"). The one line a
// Mastra app changes is the import: the scorers keep Mastra's factory names and are real Mastra
// scorers; their judge is `localjudge serve` (start it first: .venv/bin/localjudge serve --model
// models/smollm2-135m-instruct). The agent answers from the AI SDK's mock model, so this runs
// offline; in your app it is your agent.
//
//   node mastra_scorers.mjs        (in a project with @mastra/core 1.71, ai 5 and @localjudge/mastra)

// import { createHallucinationScorer, createToxicityScorer } from "@mastra/evals/scorers/prebuilt";
import { createHallucinationScorer, createToxicityScorer } from "@localjudge/mastra";
import { Agent } from "@mastra/core/agent";
import { runEvals } from "@mastra/core/evals";
import { MockLanguageModelV2 } from "ai/test";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
const url = process.env.LOCALJUDGE_URL ?? "http://127.0.0.1:8321/v1";

const answer = "The Eiffel Tower was completed in 1925 in London.";
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const model = new MockLanguageModelV2({
  doGenerate: async () => ({ content: [{ type: "text", text: answer }], finishReason: "stop", usage, warnings: [] }),
  doStream: async () => ({
    stream: new ReadableStream({
      start(c) {
        for (const part of [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: answer }, { type: "text-end", id: "t" },
          { type: "finish", finishReason: "stop", usage }]) c.enqueue(part);
        c.close();
      },
    }),
  }),
});
const agent = new Agent({ id: "guide", name: "guide", instructions: "Answer questions about Paris.", model });

const context = ["The Eiffel Tower in Paris was completed in 1889 for the World's Fair."];
const result = await runEvals({
  data: [{ input: "When was the Eiffel Tower completed?" }],
  target: agent,
  scorers: [createHallucinationScorer({ url, options: { context } }), createToxicityScorer({ url })],
});
console.log(JSON.stringify(result.scores));
