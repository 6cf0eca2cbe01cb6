// Mastra's own scorers judging through `localjudge serve`, as a Mastra user points them at an
// OpenAI-compatible endpoint: the model given as Mastra's `{ id: "provider/model", url, apiKey }`
// config (@mastra/core 1.71.0 OpenAICompatibleConfig). For a model Mastra does not know, it sends
// no response_format: it writes the step's JSON schema into the last user message
// (`buildJsonInstruction`) and streams the answer. Run with the harness's Node and packages
// (tests/differential/node, set up by scripts/setup_node.sh):
//   tests/differential/node/node_modules/.bin/node tests/serve/node_scripts/mastra_judge.mjs < spec.json
// stdin: {"url": "http://127.0.0.1:PORT/v1", "model": NAME, "scorers": [names],
//         "rows": [{"run_id", "input", "output", "context"}]}
// Scorers: hallucination, faithfulness, toxicity (@mastra/evals 1.10.2's prebuilt ones) and
// gluten (a createScorer with a judge step: Mastra's docs example, tests/differential/node/custom_scorers.mjs).
// Every (row, scorer) job runs at once (the server batches them).
// stdout: one JSON array, a job each: {"run_id", "scorer", "score" | "error", "reason", "analyze"}.
import { createRequire } from "node:module";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
globalThis.AI_SDK_LOG_WARNINGS = false;
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error; // stdout holds only results

const require = createRequire(new URL("../../differential/node/package.json", import.meta.url));
const prebuilt = require("@mastra/evals/scorers/prebuilt");
const { glutenCheckerScorer } = await import(new URL("../../differential/node/custom_scorers.mjs", import.meta.url));

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const spec = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const model = { id: `localjudge/${spec.model}`, url: spec.url, apiKey: spec.apiKey ?? "not-needed" };

let ids = 0;
function message(role, text) {
  ids += 1;
  return { id: `m${ids}`, role, createdAt: new Date(0), content: { format: 2, parts: [{ type: "text", text }], content: text } };
}
function run(row) {
  return {
    input: { inputMessages: [message("user", row.input ?? "")], rememberedMessages: [], systemMessages: [], taggedSystemMessages: {} },
    output: [message("assistant", row.output)],
  };
}
const contextOf = (row) => (row.context == null ? [] : Array.isArray(row.context) ? row.context.map(String) : [String(row.context)]);
const FACTORIES = {
  hallucination: (row) => prebuilt.createHallucinationScorer({ model, options: { context: contextOf(row) } }),
  faithfulness: (row) => prebuilt.createFaithfulnessScorer({ model, options: { context: contextOf(row) } }),
  toxicity: () => prebuilt.createToxicityScorer({ model }),
  gluten: () => glutenCheckerScorer(model),
};

async function judge(row, scorer) {
  const out = { run_id: row.run_id, scorer };
  try {
    const result = await FACTORIES[scorer](row).run(run(row));
    if (typeof result.score === "number" && Number.isFinite(result.score)) out.score = result.score;
    else out.error = `no score: ${String(result.score)}`;
    out.reason = result.reason ?? null;
    out.analyze = result.analyzeStepResult ?? null;
  } catch (error) {
    const parts = [];
    for (let e = error, depth = 0; e && depth < 5; e = e.cause, depth += 1) parts.push(`${e.name ?? "Error"}: ${e.message ?? String(e)}`);
    out.error = parts.join(" <- ").slice(0, 800);
  }
  return out;
}

const jobs = spec.rows.flatMap((row) => spec.scorers.map((scorer) => judge(row, scorer)));
print(JSON.stringify(await Promise.all(jobs)) + "\n");
