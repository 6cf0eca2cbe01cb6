// A tiny Mastra app whose agent runs are traced into a LibSQL file (an SQLite file), for
// `localjudge score --mastra-store` to score. The model is the AI SDK's mock model, scripted
// below, so the app runs offline and gives the same answers every time; put a real model
// (`model: "openai/gpt-4o-mini"`, ...) in its place in your own app.
//
//   node examples/mastra/app.mjs [STORE_URL]      (default: mastra.db beside this file)
//
// It asks the weather agent three questions and prints each answer.
import { Mastra } from "@mastra/core/mastra";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { LibSQLStore } from "@mastra/libsql";
import { Observability, MastraStorageExporter } from "@mastra/observability";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV2 } from "ai/test";
import { z } from "zod";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

process.env.MASTRA_TELEMETRY_DISABLED = "1"; // nothing leaves the machine
globalThis.AI_SDK_LOG_WARNINGS = false;
const url = process.argv[2] ?? `file:${relative(process.cwd(), fileURLToPath(new URL("mastra.db", import.meta.url)))}`;

const WEATHER = { Paris: { temperature: 18, conditions: "light rain" }, Oslo: { temperature: 4, conditions: "snow" } };
const weatherTool = createTool({
  id: "get-weather",
  description: "The current weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, ...(WEATHER[city] ?? { conditions: "unknown" }) }),
});

// The stand-in model: asked about a city it knows, it calls the weather tool, then answers from
// the tool's result (about Oslo it answers wrongly, for the judge to catch); anything else it
// answers without a tool.
function reply(prompt) {
  const last = prompt.at(-1);
  if (last.role === "tool") {
    const { city, temperature, conditions } = last.content[0].output.value;
    return city === "Oslo" ? { text: "Oslo is sunny and 30 degrees today." }
      : { text: `It is ${temperature} degrees with ${conditions} in ${city}.` };
  }
  const question = last.content.map((part) => part.text ?? "").join(" ");
  const city = Object.keys(WEATHER).find((name) => question.includes(name));
  return city ? { tool: "getWeather", args: { city } }
    : { text: "I can only tell you the weather: ask me about a city." };
}
const usage = { inputTokens: 10, outputTokens: 10, totalTokens: 20 };
const model = new MockLanguageModelV2({
  doGenerate: async ({ prompt }) => {
    const turn = reply(prompt);
    const content = turn.tool
      ? [{ type: "tool-call", toolCallId: "call-1", toolName: turn.tool, input: JSON.stringify(turn.args) }]
      : [{ type: "text", text: turn.text }];
    return { content, finishReason: turn.tool ? "tool-calls" : "stop", usage, warnings: [] };
  },
  doStream: async ({ prompt }) => {
    const turn = reply(prompt);
    const parts = turn.tool
      ? [{ type: "tool-call", toolCallId: "call-1", toolName: turn.tool, input: JSON.stringify(turn.args) }]
      : [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: turn.text }, { type: "text-end", id: "t" }];
    const chunks = [{ type: "stream-start", warnings: [] }, ...parts,
      { type: "finish", finishReason: turn.tool ? "tool-calls" : "stop", usage }];
    return { stream: simulateReadableStream({ chunks }) };
  },
});

const weatherAgent = new Agent({
  id: "weather-agent",
  name: "Weather Agent",
  instructions: "You answer questions about the weather. Use the get-weather tool.",
  model,
  tools: { getWeather: weatherTool },
});

// Observability with the storage exporter: each agent run is kept as a trace in the store.
const mastra = new Mastra({
  agents: { weatherAgent },
  storage: new LibSQLStore({ id: "weather-app", url }),
  observability: new Observability({
    configs: { default: { serviceName: "weather-app", exporters: [new MastraStorageExporter()] } },
  }),
  logger: false,
});

for (const question of ["What is the weather in Paris?", "What is the weather in Oslo?", "Tell me a joke."]) {
  const result = await mastra.getAgent("weatherAgent").generate(question);
  console.log(`${question} -> ${result.text}`);
}
await mastra.observability.getDefaultInstance()?.flush(); // the traces are written before the app exits
await mastra.shutdown();
console.log(`3 agent runs traced into ${url}`);
