// Runs Mastra's published scorers on scripted judge answers, for tests/differential.
//
// stdin: a JSON list of cases, all run in this one process (Mastra takes seconds to load):
//   {"id": "...", "factory": "createToxicityScorer", "args": {...}, "run": {...}, "answers": [...]}
//   - factory: a name exported by @mastra/evals/scorers/prebuilt; it is called with
//     {model, ...args}, or, when the case gives "positional" (a list: the code scorers and
//     checks, which take no model), with those arguments as they are. A value {"$returns": X}
//     anywhere becomes a function returning X (getContext, contextExtractor, sourceExtractor);
//     {"$regexp": [source, flags]} becomes new RegExp(source, flags) (checks.matches).
//   - trajectory: true: the run's output (messages) is replaced by Mastra's own
//     extractTrajectory of it, as runEvals does for a trajectory scorer.
//   - answers: the judge's answers to the JSON steps (preprocess, analyze, a prompt-object
//     generateScore), in order, each a JSON value (sent as its JSON text) or a string (sent as
//     is). A free-text step (generateReason) is answered "Scripted reason." and uses none.
//   or {"id": "...", "custom": "glutenCheckerScorer", "run": {...}, "answers": [...]}: a custom scorer
//     of custom_scorers.mjs (Mastra's docs' own, a function of the judge's model), run the same way.
//   or {"id": "...", "round": [numbers]}: Mastra's roundToTwoDecimals of each number.
//   or {"id": "...", "runEvals": {"replies": [...], "data": [...], "scorers": [...], "gates": [...]}}: Mastra's
//     runEvals on an Agent whose model gives `replies` in order, with custom_scorers.mjs's evalScorers named
//     for scorers and gates (a scorer entry is a name or {"scorer": name, "threshold": t}; an item's turns name
//     theirs the same way; or scorers is a config, {"agent": [names], "trajectory": [names]} or {"workflow": [names],
//     "steps": {id: [names]}}). A reply
//     {"tool": name, "args": {...}} is a tool call: the agent runs that tool (it returns {"done": name}) and
//     asks the model again. With "workflow": [[id, word], ...] the target is a Workflow of those steps
//     run in turn (each outputs its input and its word) and scorers may be {"workflow", "steps"}.
//     Its result is returned as it is: {"id", "result"}.
// stdout: a JSON list, one object per case, in order:
//   {"id", "score" (absent when none; "NaN", "Infinity" or "-Infinity" for those), "notScorable", "error" (a thrown error's message, with
//    "stage": "create" or "run"), "reason", "preprocessStepResult", "analyzeStepResult", "prompts" (the
//    prompt-object steps' user messages by step: analyze, generateScore, generateReason),
//    "calls": ["json" | "text", ...] (the judge calls made), "unused": answers left over}
//   or {"id", "rounded": [numbers]}.
// Mastra's telemetry is off; the judge is the AI SDK's MockLanguageModelV2 (doGenerate and
// doStream both answer), so nothing leaves the machine.
process.env.MASTRA_TELEMETRY_DISABLED = "1";
globalThis.AI_SDK_LOG_WARNINGS = false;
const print = process.stdout.write.bind(process.stdout);
for (const name of ["log", "info", "warn", "debug"]) console[name] = console.error; // stdout holds only results

const { MockLanguageModelV2 } = await import("ai/test");
const prebuilt = await import("@mastra/evals/scorers/prebuilt");
const { roundToTwoDecimals, extractTrajectory } = await import("@mastra/evals/scorers/utils");
const custom = await import("./custom_scorers.mjs");

const JSON_STEP = "Return only valid JSON"; // Mastra's schema injection ends every JSON step's prompt
const REASON = "Scripted reason.";
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

function scriptedModel(answers, calls) {
  const queue = [...answers];
  const answer = (options) => {
    const json = options.responseFormat?.type === "json" || JSON.stringify(options.prompt).includes(JSON_STEP);
    calls.push(json ? "json" : "text");
    if (!json) return REASON;
    if (queue.length === 0) throw new Error(`unscripted judge call ${calls.length} (JSON step): no answers left`);
    const next = queue.shift();
    return typeof next === "string" ? next : JSON.stringify(next);
  };
  const model = new MockLanguageModelV2({
    doGenerate: async (options) => ({
      content: [{ type: "text", text: answer(options) }], finishReason: "stop", usage, warnings: [],
    }),
    doStream: async (options) => {
      const text = answer(options);
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of [
              { type: "stream-start", warnings: [] },
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: text },
              { type: "text-end", id: "t" },
              { type: "finish", finishReason: "stop", usage },
            ]) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, left: () => queue.length };
}

function withFunctions(value) {
  if (Array.isArray(value)) return value.map(withFunctions);
  if (value && typeof value === "object") {
    if ("$returns" in value) return () => value.$returns;
    if ("$regexp" in value) return new RegExp(value.$regexp[0], value.$regexp[1]);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withFunctions(v)]));
  }
  return value;
}

function message(error) {
  return error?.message ?? String(error);
}

// A Workflow of steps run in turn: [[id, word], ...], each step's output its input and the word.
// Returned in a list: a Workflow has a `then` (it chains steps), so awaiting it would never settle.
async function workflowOf(steps) {
  const { createWorkflow, createStep } = await import("@mastra/core/workflows");
  const { z } = await import("zod");
  let workflow = createWorkflow({ id: "flow", inputSchema: z.any(), outputSchema: z.any() });
  for (const [id, word] of steps) {
    workflow = workflow.then(createStep({ id, inputSchema: z.any(), outputSchema: z.any(),
                                          execute: async ({ inputData }) => `${inputData} ${word}` }));
  }
  workflow.commit();
  return [workflow];
}

async function runEvalsCase(c) {
  const { Agent } = await import("@mastra/core/agent");
  const { createTool } = await import("@mastra/core/tools");
  const { runEvals } = await import("@mastra/core/evals");
  const { z } = await import("zod");
  const replies = [...c.runEvals.replies];
  let calls = 0;
  const next = () => {
    const reply = replies.shift() ?? "";
    if (typeof reply === "string") return { content: [{ type: "text", text: reply }], finishReason: "stop" };
    calls += 1; // a tool call: the agent runs the tool, then asks the model again
    return { content: [{ type: "tool-call", toolCallId: `call-${calls}`, toolName: reply.tool,
                         input: JSON.stringify(reply.args ?? {}) }], finishReason: "tool-calls" };
  };
  const model = new MockLanguageModelV2({
    doGenerate: async () => ({ ...next(), usage, warnings: [] }),
    doStream: async () => {
      const { content, finishReason } = next();
      const parts = content.map((part) => (part.type === "text"
        ? [{ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: part.text }, { type: "text-end", id: "t" }]
        : [part])).flat();
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of [{ type: "stream-start", warnings: [] }, ...parts, { type: "finish", finishReason, usage }]) {
              controller.enqueue(part);
            }
            controller.close();
          },
        }),
      };
    },
  });
  // Each tool named in the replies returns {"done": its name}.
  const toolNames = [...new Set(c.runEvals.replies.filter((r) => typeof r !== "string").map((r) => r.tool))];
  const tools = Object.fromEntries(toolNames.map((name) => [name, createTool({
    id: name, description: name, inputSchema: z.any(), execute: async () => ({ done: name }) })]));
  const agent = new Agent({ id: "target", name: "target", instructions: "Answer.", model, tools });
  const [target] = c.runEvals.workflow ? await workflowOf(c.runEvals.workflow) : [agent];
  const pick = (name) => custom.evalScorers[name];
  const entry = (e) => (typeof e === "string" ? pick(e) : { scorer: pick(e.scorer), threshold: e.threshold });
  const given = c.runEvals.scorers ?? [];
  const scorers = Array.isArray(given) ? given.map(entry)
    : Object.fromEntries(Object.entries(given).map(([group, names]) => [group, Array.isArray(names) ? names.map(pick)
      : Object.fromEntries(Object.entries(names).map(([stepId, ids]) => [stepId, ids.map(pick)]))]));
  const data = c.runEvals.data.map((item) => (item.turns ? {
    ...item, turns: item.turns.map((t) => ({ input: t.input, gates: t.gates?.map(pick), scorers: t.scorers?.map(entry) })),
  } : item));
  try {
    const result = await runEvals({ data, target, scorers, gates: c.runEvals.gates?.map(pick) });
    return { id: c.id, result, unused: replies.length };
  } catch (error) {
    return { id: c.id, error: message(error), stage: "run" };
  }
}

async function runCase(c) {
  if (c.round) return { id: c.id, rounded: c.round.map(roundToTwoDecimals) };
  if (c.runEvals) return runEvalsCase(c);
  const calls = [];
  const { model, left } = scriptedModel(c.answers ?? [], calls);
  const factory = c.custom ? custom[c.custom] : prebuilt[c.factory];
  if (typeof factory !== "function") return { id: c.id, error: `no factory ${c.factory}`, stage: "create", calls };
  let scorer;
  try {
    scorer = c.custom ? factory(model) : c.positional ? factory(...withFunctions(c.positional))
      : factory({ model, ...withFunctions(c.args ?? {}) });
  } catch (error) {
    return { id: c.id, error: message(error), stage: "create", calls, unused: left() };
  }
  try {
    const run = c.trajectory ? { ...c.run, output: extractTrajectory(c.run.output) } : c.run;
    const r = await scorer.run(run);
    return {
      id: c.id, score: typeof r.score === "number" && !Number.isFinite(r.score) ? String(r.score) : r.score,
      notScorable: r.notScorable, reason: r.reason,
      preprocessStepResult: r.preprocessStepResult, analyzeStepResult: r.analyzeStepResult, calls, unused: left(),
      prompts: { analyze: r.analyzePrompt, generateScore: r.generateScorePrompt, generateReason: r.generateReasonPrompt },
    };
  } catch (error) {
    const cause = error?.cause ? `: ${message(error.cause)}` : "";
    return { id: c.id, error: message(error) + cause, stage: "run", calls, unused: left() };
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const results = [];
for (const c of cases) results.push(await runCase(c));
print(JSON.stringify(results) + "\n");
