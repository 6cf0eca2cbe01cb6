// An AI SDK evaluation model (Experimental_EvaluationModelV4, the contract @mastra/core 1.71.0's
// Classifier and createClassifierScorer take) answered by `localjudge serve`.
//
// Each question is one chat request whose answer is held by the grammar to the question's labels
// (the choice's option names; "true"/"false"; a score's level indices "0".."n-1"), asked with
// `logprobs`: the server reports the judge's probability of every allowed label at that choice,
// which is the answer's distribution. All questions of a call go at once (the server batches them).
// Greedy: the same state and questions give the same answers.

const DEFAULT_URL = "http://127.0.0.1:8321/v1";

const text = (value) => (typeof value === "string" ? value : JSON.stringify(value));

function labelsOf(question) {
  if (question.type === "choice") return Object.keys(question.criteria);
  if (question.type === "boolean") return ["true", "false"];
  return question.criteria.map((_, i) => String(i));
}

function promptOf(state, question, labels) {
  const lines = [`Instructions: ${text(question.instructions)}`];
  if (question.type === "choice") {
    lines.push("Options:", ...labels.map((l) => `- ${l}${question.criteria[l] == null ? "" : `: ${text(question.criteria[l])}`}`));
  } else if (question.type === "score") {
    lines.push("Levels:", ...question.criteria.map((c, i) => `- ${i}${c == null ? "" : `: ${text(c)}`}`));
  } else {
    const c = question.criteria ?? {};
    lines.push(`Answer true${c.true == null ? "" : ` (${text(c.true)})`} or false${c.false == null ? "" : ` (${text(c.false)})`}.`);
  }
  return `${lines.join("\n")}\n\nWhat to judge:\n${text(state)}\n\nAnswer with one of: ${labels.join(", ")}.`;
}

async function ask({ url, apiKey, model, signal }, state, question) {
  const labels = labelsOf(question);
  const schema = { type: "object", properties: { answer: { type: "string", enum: labels } }, required: ["answer"],
                   additionalProperties: false };
  let reply;
  try {
    reply = await fetch(`${url.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model, messages: [{ role: "user", content: promptOf(state, question, labels) }],
                             response_format: { type: "json_schema", json_schema: { name: "answer", schema } },
                             logprobs: true, top_logprobs: labels.length }),
      signal,
    });
  } catch (error) {
    throw new Error(`localjudge evaluation model: the server at ${url} did not answer (${error?.cause?.code ?? error?.name ?? error})`);
  }
  const data = await reply.json().catch(() => null);
  if (!reply.ok || !data) throw new Error(`localjudge evaluation model: ${reply.status} ${data?.error?.message ?? "no JSON"}`);
  const chosen = JSON.parse(data.choices[0].message.content).answer;
  const [reading] = data.localjudge?.label_probs ?? [];
  let probabilities = null;
  if (reading) {
    probabilities = Object.fromEntries(labels.map((l) => [l, reading[l] ?? 0]));
    const total = Object.values(probabilities).reduce((a, b) => a + b, 0);
    probabilities = Object.fromEntries(Object.entries(probabilities).map(([l, p]) => [l, p / total]));
  }
  return { chosen, probabilities, usage: data.usage };
}

function answerOf(question, { chosen, probabilities }) {
  if (question.type === "choice") {
    if (!probabilities) return { type: "choice", choice: chosen };
    const best = Object.entries(probabilities).sort((a, b) => b[1] - a[1])[0][0];
    return { type: "choice", choice: best, probabilities };
  }
  if (question.type === "boolean") {
    return { type: "boolean", probability: probabilities ? probabilities.true : chosen === "true" ? 1 : 0 };
  }
  if (!probabilities) return { type: "score", score: Number(chosen) };
  const score = Object.entries(probabilities).reduce((sum, [level, p]) => sum + Number(level) * p, 0);
  return { type: "score", score, probabilities };
}

/** An evaluation model on `localjudge serve` for Mastra's Classifier and createClassifierScorer. */
export function localjudgeEvaluationModel({ url = DEFAULT_URL, apiKey, model = "judge" } = {}) {
  return {
    specificationVersion: "v4",
    provider: "localjudge",
    modelId: model,
    supportedQuestionTypes: ["choice", "score", "boolean"],
    async doEvaluate({ state, questions, abortSignal }) {
      const ids = Object.keys(questions);
      const replies = await Promise.all(ids.map((id) => ask({ url, apiKey, model, signal: abortSignal }, state, questions[id])));
      const answers = Object.fromEntries(ids.map((id, i) => [id, answerOf(questions[id], replies[i])]));
      const usage = replies.reduce((u, r) => ({ inputTokens: u.inputTokens + (r.usage?.prompt_tokens ?? 0),
                                                outputTokens: u.outputTokens + (r.usage?.completion_tokens ?? 0) }),
                                   { inputTokens: 0, outputTokens: 0 });
      return { answers, usage, warnings: [] };
    },
  };
}
