// Reads score rows back through Mastra's own storage API (@mastra/core's scores domain on
// @mastra/libsql or @mastra/pg), as Studio's server does: for each run id `listScoresByRunId`
// (an experiment's scores too: `compareExperiments` reads them by the experiment id), for each
// (traceId, spanId) `listScoresBySpan`, every score of a scorer id `listScoresByScorerId`, and
// for each entity `listScoresByEntityId` (an agent's scores: entityType AGENT and its id).
// Run with the harness's Node (see mastra_app.mjs):
//   node read_scores.mjs STORE_URL < query.json
// stdin: {"runIds": [...], "spans": [{"traceId", "spanId"}], "scorerIds": [...],
//         "entities": [{"entityType", "entityId"}]}
// stdout: {"byRun": {runId: [score]}, "bySpan": {"traceId/spanId": [score]}, "byScorer": {scorerId: [score]},
//          "byEntity": {"entityType/entityId": [score]}},
// each score as Mastra's API returns it (id, scorerId, runId, traceId, spanId, score, reason, entityId, ...).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

process.env.MASTRA_TELEMETRY_DISABLED = "1";
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error;

const require = createRequire(new URL("../../differential/node/package.json", import.meta.url));
const url = process.argv[2];
const query = JSON.parse(readFileSync(0, "utf8"));
const storage = url.startsWith("file:")
  ? new (require("@mastra/libsql").LibSQLStore)({ id: "localjudge-read", url })
  : new (require("@mastra/pg").PostgresStore)({ id: "localjudge-read", connectionString: url });
await storage.init();
const scores = await storage.getStore("scores");
const all = { page: 0, perPage: false };
const out = { byRun: {}, bySpan: {}, byScorer: {}, byEntity: {} };
for (const runId of query.runIds ?? []) {
  out.byRun[runId] = (await scores.listScoresByRunId({ runId, pagination: all })).scores;
}
for (const { traceId, spanId } of query.spans ?? []) {
  out.bySpan[`${traceId}/${spanId}`] = (await scores.listScoresBySpan({ traceId, spanId, pagination: all })).scores;
}
for (const scorerId of query.scorerIds ?? []) {
  out.byScorer[scorerId] = (await scores.listScoresByScorerId({ scorerId, pagination: all })).scores;
}
for (const { entityType, entityId } of query.entities ?? []) {
  out.byEntity[`${entityType}/${entityId}`] =
    (await scores.listScoresByEntityId({ entityType, entityId, pagination: all })).scores;
}
await storage.close?.();
print(JSON.stringify(out) + "\n", () => process.exit(0)); // exit once stdout is flushed (a pipe is async)
