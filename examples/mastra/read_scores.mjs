// Reads the weather agent's scores back through Mastra's own storage API (the call Studio's agent
// page makes): localjudge's rows, scorer ids `localjudge:<scorer>`, beside any Mastra's scorers wrote.
//
//   node examples/mastra/read_scores.mjs [STORE_URL]      (default: mastra.db beside this file)
//
// Prints each score: scorer, score, the question asked (and the run's id), then the reason.
import { LibSQLStore } from "@mastra/libsql";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
const url = process.argv[2] ?? `file:${relative(process.cwd(), fileURLToPath(new URL("mastra.db", import.meta.url)))}`;
const storage = new LibSQLStore({ id: "weather-app", url });
await storage.init();
const scoresStore = await storage.getStore("scores");
const { scores } = await scoresStore.listScoresByEntityId({
  entityType: "AGENT", entityId: "weather-agent", pagination: { page: 0, perPage: false },
});
console.log(`${scores.length} scores of weather-agent (Mastra's listScoresByEntityId on ${url}):`);
const question = (score) => score.input?.inputMessages?.map((message) => message.content).join(" ") ?? "";
for (const score of scores.sort((a, b) => a.scorerId.localeCompare(b.scorerId) || question(a).localeCompare(question(b)))) {
  console.log(`${score.scorerId}  ${score.score}  "${question(score)}"  (run ${score.runId})`);
  console.log(`    ${String(score.reason ?? "").replace(/\s+/g, " ")}`);
}
await storage.close?.();
