// A small Mastra app with observability on and a scripted (mock) model, writing its runs to
// Mastra's storage: what tests/storage scores. Run with the harness's Node and packages
// (tests/differential/node, set up by scripts/setup_node.sh):
//   tests/differential/node/node_modules/.bin/node tests/storage/node_scripts/mastra_app.mjs STORE_URL
// STORE_URL: `file:/path/mastra.db` (LibSQL) or `postgresql://...` (Postgres).
// stdout: one JSON object {agentRuns: [{agent, runId, traceId, threadId}], datasetId, experimentId,
// mastraScorerId}.
//
// What it writes: three agents (weather: a tool call with its result then an answer; math: a
// tool call whose tool fails, then an answer; chat: no tools, two turns in one thread with
// memory), a dataset of two items with ground truth, and one experiment over it (the chat agent)
// scored by Mastra's content-similarity code scorer.
// Telemetry is off and the model is the AI SDK's MockLanguageModelV2: nothing leaves the machine.
import { createRequire } from "node:module";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
globalThis.AI_SDK_LOG_WARNINGS = false;
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error; // stdout holds only results

// Packages come from the harness folder (one node_modules for both tiers), all as their CommonJS
// builds, so every package shares one copy of @mastra/core.
const require = createRequire(new URL("../../differential/node/package.json", import.meta.url));
const load = async (name) => require(name);
const { Mastra } = await load("@mastra/core/mastra");
const { Agent } = await load("@mastra/core/agent");
const { createTool } = await load("@mastra/core/tools");
const { MockMemory } = await load("@mastra/core/memory");
const { Observability, MastraStorageExporter } = await load("@mastra/observability");
const { MockLanguageModelV2 } = await load("ai/test");
const { z } = await load("zod");
const { createContentSimilarityScorer } = await load("@mastra/evals/scorers/prebuilt");

const url = process.argv[2];
if (!url) throw new Error("usage: mastra_app.mjs STORE_URL");
let storage;
if (url.startsWith("file:")) {
  const { LibSQLStore } = await load("@mastra/libsql");
  storage = new LibSQLStore({ id: "localjudge-test", url });
} else {
  const { PostgresStore } = await load("@mastra/pg");
  storage = new PostgresStore({ id: "localjudge-test", connectionString: url });
}

const usage = { inputTokens: 3, outputTokens: 5, totalTokens: 8 };

// A model that answers from a script: each turn is either a tool call or a text answer.
function scriptedModel(turns) {
  const queue = [...turns];
  const next = () => {
    if (queue.length === 0) throw new Error("the scripted model has no turns left");
    return queue.shift();
  };
  const parts = (turn) => turn.tool
    ? [{ type: "tool-call", toolCallId: turn.id, toolName: turn.tool, input: JSON.stringify(turn.args) }]
    : [{ type: "text", text: turn.text }];
  return new MockLanguageModelV2({
    doGenerate: async () => {
      const turn = next();
      return { content: parts(turn), finishReason: turn.tool ? "tool-calls" : "stop", usage, warnings: [] };
    },
    doStream: async () => {
      const turn = next();
      const chunks = [{ type: "stream-start", warnings: [] }];
      if (turn.tool) {
        chunks.push({ type: "tool-call", toolCallId: turn.id, toolName: turn.tool, input: JSON.stringify(turn.args) });
      } else {
        chunks.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: turn.text },
          { type: "text-end", id: "t" });
      }
      chunks.push({ type: "finish", finishReason: turn.tool ? "tool-calls" : "stop", usage });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const chunk of chunks) controller.enqueue(chunk);
            controller.close();
          },
        }),
      };
    },
  });
}

const weatherTool = createTool({
  id: "get-weather",
  description: "The current weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 18, conditions: "light rain" }),
});
const divideTool = createTool({
  id: "divide",
  description: "Divide a by b",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => {
    if (b === 0) throw new Error("division by zero");
    return { quotient: a / b };
  },
});

const weather = new Agent({
  id: "weather-agent", name: "Weather Agent",
  instructions: "You answer questions about the weather. Use the get-weather tool.",
  model: scriptedModel([
    { tool: "get-weather", id: "call-w1", args: { city: "Paris" } },
    { text: "It is 18 degrees with light rain in Paris." },
    { tool: "get-weather", id: "call-w2", args: { city: "Oslo" } },
    { text: "Oslo is sunny and 30 degrees." },
  ]),
  tools: { getWeather: weatherTool },
});
const math = new Agent({
  id: "math-agent", name: "Math Agent",
  instructions: "You do arithmetic with the divide tool.",
  model: scriptedModel([
    { tool: "divide", id: "call-m1", args: { a: 1, b: 0 } },
    { text: "Dividing by zero is undefined." },
  ]),
  tools: { divide: divideTool },
});
const chat = new Agent({
  id: "chat-agent", name: "Chat Agent",
  instructions: "You are a friendly assistant.",
  model: scriptedModel([
    { text: "Hello Ada! Nice to meet you." },
    { text: "Your name is Ada." },
    { text: "The capital of France is Paris." },
    { text: "Water boils at 90 degrees Celsius at sea level." },
  ]),
  memory: new MockMemory(),
});

const mastra = new Mastra({
  agents: { weather, math, chat },
  storage,
  observability: new Observability({
    configs: { default: { serviceName: "localjudge-test", exporters: [new MastraStorageExporter()] } },
  }),
  logger: false,
});

const agentRuns = [];
async function ask(agentId, message, options = {}) {
  const agent = mastra.getAgentById(agentId);
  const result = await agent.generate(message, options);
  agentRuns.push({ agent: agentId, runId: result.runId, traceId: result.traceId,
    threadId: options.memory?.thread ?? null, text: result.text });
}

await ask("weather-agent", "What is the weather in Paris?");
await ask("weather-agent", "And in Oslo?");
await ask("math-agent", "What is 1 divided by 0?");
const thread = { thread: "thread-ada", resource: "user-ada" };
await ask("chat-agent", "Hi, I am Ada.", { memory: thread });
await ask("chat-agent", "What is my name?", { memory: thread });

const dataset = await mastra.datasets.create({ name: "capitals-and-facts", description: "two questions" });
await dataset.addItems({ items: [
  { input: "What is the capital of France?", groundTruth: "Paris" },
  { input: "At what temperature does water boil at sea level?", groundTruth: "100 degrees Celsius" },
] });
// One of Mastra's own code scorers on the experiment: mastra_scorers then holds Mastra-written
// rows (runId = the experiment id, entityId = the dataset item) that localjudge must leave as they are.
const similarity = createContentSimilarityScorer();
const summary = await dataset.startExperiment({ targetType: "agent", targetId: "chat-agent", maxConcurrency: 1,
  scorers: [similarity] });

await mastra.observability?.getDefaultInstance?.()?.flush?.();
await new Promise((resolve) => setTimeout(resolve, 500));
await mastra.shutdown?.();
print(JSON.stringify({ agentRuns, datasetId: dataset.id, experimentId: summary.experimentId ?? summary.id,
  mastraScorerId: similarity.id }) + "\n",
  () => process.exit(0)); // exit once stdout is flushed (a pipe is async)
