// Mastra's published scorers against a running OpenAI-compatible server, for benchmarks/peers/bench_mastra.py.
//
// As a Mastra user sets it up: @mastra/evals 1.10.2's createHallucinationScorer,
// createFaithfulnessScorer and createToxicityScorer, their judge the AI SDK's OpenAI-compatible
// provider (@ai-sdk/openai-compatible, structured outputs on: Mastra's structured-output call
// sends the step's JSON schema as `response_format`, which the server enforces). Each
// (row, scorer) pair is one job; `concurrency` workers take jobs in turn, so at most
// `concurrency` requests are in flight (a scorer's steps run one after another).
//
// stdin: {"baseURL", "model", "concurrency", "scorers": [names], "rows": [{"run_id", "input", "output", "context"}]}
// stdout: one JSON line per finished job, as it finishes:
//   {"run_id", "scorer", "score" (absent when none), "kind" ("scored", or the failure's kind), "error", "seconds"}
// Nothing is sent anywhere but `baseURL`; Mastra's telemetry is off.
process.env.MASTRA_TELEMETRY_DISABLED = "1";
globalThis.AI_SDK_LOG_WARNINGS = false;
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error; // stdout holds only results

const began = performance.now();
const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
const prebuilt = await import("@mastra/evals/scorers/prebuilt");

const FACTORIES = {
  hallucination: prebuilt.createHallucinationScorer,
  faithfulness: prebuilt.createFaithfulnessScorer,
  toxicity: prebuilt.createToxicityScorer,
};

function contextOf(row) {
  if (row.context === undefined || row.context === null) return [];
  return Array.isArray(row.context) ? row.context.map(String) : [String(row.context)];
}

function scorerFor(name, model, row) {
  // hallucination and faithfulness take the row's context as the factory's option, as Mastra's docs show
  return name === "toxicity" ? FACTORIES[name]({ model }) : FACTORIES[name]({ model, options: { context: contextOf(row) } });
}

function chain(error) {
  const parts = [];
  for (let e = error, depth = 0; e && depth < 6; e = e.cause, depth += 1) {
    parts.push(`${e.name ?? "Error"}${e.code ? ` (${e.code})` : ""}: ${e.message ?? String(e)}`);
  }
  return parts.join(" <- ");
}

// The failure's kind, from the error and its causes (the AI SDK wraps the server's or the socket's).
function kindOf(text) {
  if (/TimeoutError|AbortError|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT|timed? ?out/i.test(text)) return "timeout";
  if (/ECONNREFUSED/.test(text)) return "connection refused";
  if (/ECONNRESET|socket hang up|other side closed|UND_ERR_SOCKET|fetch failed|terminated/i.test(text)) {
    return "connection dropped";
  }
  if (/truncated|reason "length"|finishReason.{0,4}length/i.test(text)) return "cut off at the token limit";
  if (/TypeValidationError|NoObjectGeneratedError|ZodError|did not match schema|validation/i.test(text)) return "schema validation";
  if (/JSONParseError|JSON parse|Unexpected token|Unexpected end of JSON/i.test(text)) return "not JSON";
  if (/APICallError|status code|Bad Request|\b4\d\d\b|\b5\d\d\b/.test(text)) return "server error";
  return "other";
}

async function judge(job, model) {
  const start = performance.now();
  const out = { run_id: job.row.run_id, scorer: job.scorer };
  try {
    const result = await scorerFor(job.scorer, model, job.row).run({ input: job.row.input, output: job.row.output });
    if (typeof result.score === "number" && Number.isFinite(result.score)) Object.assign(out, { score: result.score, kind: "scored" });
    else Object.assign(out, { kind: "not scored", error: `score ${String(result.score)}` });
  } catch (error) {
    const text = chain(error);
    Object.assign(out, { kind: kindOf(text), error: text.slice(0, 600) });
  }
  out.seconds = (performance.now() - start) / 1000;
  print(JSON.stringify(out) + "\n");
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const spec = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const provider = createOpenAICompatible({ name: "local", baseURL: spec.baseURL, supportsStructuredOutputs: true });
const model = provider.chatModel(spec.model);
console.error(`mastra peer: loaded in ${((performance.now() - began) / 1000).toFixed(1)} s`);
const jobs = spec.rows.flatMap((row) => spec.scorers.map((scorer) => ({ row, scorer })));
let next = 0;
async function worker() {
  while (next < jobs.length) await judge(jobs[next++], model);
}
await Promise.all(Array.from({ length: Math.max(1, spec.concurrency) }, worker));
