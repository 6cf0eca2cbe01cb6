// @localjudge/mastra (clients/mastra) as a Mastra app uses it, against `localjudge serve`: its
// scorers run by themselves and inside Mastra's runEvals on an Agent. Run with the harness's Node
// and packages (tests/differential/node), the package copied to its node_modules/@localjudge/mastra
// (tests/serve/test_package.py does):
//   tests/differential/node/node_modules/.bin/node tests/serve/node_scripts/package_scorers.mjs < spec.json
// stdin: {"url", "rows": [{"run_id", "input", "output", "context"}], "scorers": [names], "replies": [agent replies]}
// stdout: one JSON object: {"direct": [{run_id, scorer, score, reason, probScore, preprocess, analyze} | {.., error}],
//   "runEvals": {scores, summary} | {error}, "down": the error line of a scorer whose server is down}
import { createRequire } from "node:module";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
globalThis.AI_SDK_LOG_WARNINGS = false;
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error; // stdout holds only results

const harness = new URL("../../differential/node/", import.meta.url);
const require = createRequire(new URL("package.json", harness));
const localjudge = await import(new URL("node_modules/@localjudge/mastra/index.js", harness));
const { runEvals } = await import(new URL("node_modules/@mastra/core/dist/evals/index.js", harness));
const { Agent } = await import(new URL("node_modules/@mastra/core/dist/agent/index.js", harness));
const { MockLanguageModelV2 } = require("ai/test");

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const spec = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let ids = 0;
const message = (role, text) => {
  ids += 1;
  return { id: `m${ids}`, role, createdAt: new Date(0), content: { format: 2, parts: [{ type: "text", text }], content: text } };
};
const runOf = (row) => ({
  runId: row.run_id,
  input: { inputMessages: [message("user", row.input ?? "")], rememberedMessages: [], systemMessages: [], taggedSystemMessages: {} },
  output: [message("assistant", row.output)],
});
const contextOf = (row) => (Array.isArray(row.context) ? row.context : [row.context]);
const FACTORY = {
  hallucination: (row, url) => localjudge.createHallucinationScorer({ url, options: { context: contextOf(row) } }),
  faithfulness: (row, url) => localjudge.createFaithfulnessScorer({ url, options: { context: contextOf(row) } }),
  toxicity: (row, url) => localjudge.createToxicityScorer({ url }),
};

async function direct(row, scorer) {
  try {
    const r = await FACTORY[scorer](row, spec.url).run(runOf(row));
    return { run_id: row.run_id, scorer, score: r.score, reason: r.reason, probScore: r.analyzeStepResult?.probScore ?? null,
             preprocess: r.preprocessStepResult, analyze: r.analyzeStepResult };
  } catch (error) {
    return { run_id: row.run_id, scorer, error: String(error?.message ?? error) };
  }
}

const out = {};
out.direct = await Promise.all(spec.rows.flatMap((row) => spec.scorers.map((scorer) => direct(row, scorer))));

// runEvals: an Agent (the AI SDK's mock model answers each item in turn) scored by the package's toxicity scorer
const replies = [...spec.replies];
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const next = () => ({ content: [{ type: "text", text: replies.shift() ?? "" }], finishReason: "stop" });
const model = new MockLanguageModelV2({
  doGenerate: async () => ({ ...next(), usage, warnings: [] }),
  doStream: async () => {
    const text = next().content[0].text;
    const parts = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: text },
                   { type: "text-end", id: "t" }, { type: "finish", finishReason: "stop", usage }];
    return { stream: new ReadableStream({ start(c) { for (const p of parts) c.enqueue(p); c.close(); } }) };
  },
});
const agent = new Agent({ id: "target", name: "target", instructions: "Answer.", model });
try {
  const result = await runEvals({
    data: spec.rows.map((row) => ({ input: row.input })),
    target: agent,
    scorers: [localjudge.createToxicityScorer({ url: spec.url })],
  });
  out.runEvals = result;
} catch (error) {
  out.runEvals = { error: String(error?.message ?? error) };
}

// Mastra's Classifier on the package's evaluation model: a choice, a score and a boolean question,
// then createClassifierScorer on the configured classifier
const { Classifier } = await import(new URL("node_modules/@mastra/core/dist/classifier/index.js", harness));
const { createClassifierScorer } = await import(new URL("node_modules/@mastra/core/dist/evals/index.js", harness));
const questions = {
  tone: { type: "choice", instructions: "How does the answer sound?", criteria: { polite: "courteous", rude: null } },
  quality: { type: "score", instructions: "How good is the answer?", criteria: ["bad", "fair", "good"] },
  correct: { type: "boolean", instructions: "Is the answer correct?" },
};
try {
  const classifier = new Classifier({ id: "review", model: localjudge.localjudgeEvaluationModel({ url: spec.url }), questions });
  const state = { question: spec.rows[0].input, answer: spec.rows[0].output };
  out.classifier = (await classifier.evaluate({ state })).answers;
  const scorer = createClassifierScorer({ id: "polite", classifier, question: "tone", scores: { polite: 1, rude: 0 },
                                          state: ({ run }) => ({ answer: run.output?.[0]?.content?.content ?? "" }) });
  const scored = await scorer.run(runOf(spec.rows[0]));
  out.classifierScorer = { score: scored.score, answer: scored.analyzeStepResult?.answer ?? null };
} catch (error) {
  out.classifier = { error: String(error?.message ?? error) };
}

// a server that is down: the scorer fails in one line, as Mastra surfaces a failed scorer
try {
  await localjudge.createToxicityScorer({ url: "http://127.0.0.1:9/v1", timeoutMs: 5000 }).run(runOf(spec.rows[0]));
  out.down = null;
} catch (error) {
  out.down = String(error?.message ?? error);
}
print(JSON.stringify(out) + "\n");
