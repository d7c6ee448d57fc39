import { Writable } from "node:stream";
import { bottomLineOf, judgeExecution, type Evidence, type Finding } from "@pes/analysis";
import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { afterEach, describe, expect, it } from "vitest";
import { checkSummary, summarizeWithLanguageModel, type LanguageModelOptions } from "./language-model-summary.js";

const time = new Date("2026-11-20T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-20T${clock}:00Z`);
const KEY = "sk-test-0123456789abcdef";

function findingsOf(evidence: readonly Evidence[]): Finding[] {
  return evidence.map((item) => ({ gadget: "Checkout", evidence: item }));
}

const incident = findingsOf([
  { kind: "change", action: "Rollouts of checkout", change: "deploy", subject: "checkout", detail: "checkout:v1.42", at: at("14:02") },
  {
    kind: "metric",
    action: "Error ratio of checkout",
    unit: "ratio",
    labels: {},
    seriesCount: 1,
    value: 0.07,
    baseline: 0.01,
    low: 0.008,
    high: 0.012,
    ratio: 7,
    severity: 7,
    abnormal: true,
    onset: at("14:03"),
    baselineMs: 3_600_000,
  },
  { kind: "none", action: "Related alerts", what: "alerts firing" },
]);
const GOOD = {
  summary:
    "The deploy of checkout:v1.42 at 14:02 UTC [Rollouts of checkout] was followed a minute later by 7x the usual error ratio [Error ratio of checkout].",
  citations: ["Rollouts of checkout", "Error ratio of checkout"],
};

/** A chat-completions answer, as OpenAI's API writes one. */
function completion(content: string, usage = { prompt_tokens: 812, completion_tokens: 64 }) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "small",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage,
  };
}

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { logger: createLogger({ name: "llm-test", level: "debug", destination }), lines };
}

describe("summarizeWithLanguageModel against a local chat-completions server", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function run(findings: readonly Finding[], options: Partial<LanguageModelOptions> = {}) {
    const { logger, lines } = capturedLogger();
    const judgement = judgeExecution(findings, { time });
    const deterministic = bottomLineOf(judgement, { service: "checkout" });
    const result = await summarizeWithLanguageModel(
      { baseUrl: `${server?.url ?? "http://127.0.0.1:9"}/v1/`, model: "small", apiKey: KEY, timeoutMs: 5_000, ...options },
      { attributes: { service: "checkout" }, findings, judgement, deterministic },
      logger,
    );
    return { result, deterministic, logs: lines.join("") };
  }

  it("uses an answer that cites only actions that ran, with its token counts and latency", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion(JSON.stringify(GOOD))));
    const { result, logs } = await run(incident);
    expect(result.highlights).toBe(GOOD.summary);
    expect(result.analysis).toMatchObject({ by: "language-model", model: "small", promptTokens: 812, completionTokens: 64 });
    expect(result.analysis.latencyMs).toBeGreaterThanOrEqual(0);
    expect(result.analysis.fallback).toBeUndefined();

    const seen = server.requests[0];
    expect(seen?.method).toBe("POST");
    expect(seen?.url).toBe("/v1/chat/completions");
    expect(seen?.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = JSON.parse(seen?.body ?? "{}");
    expect(body.model).toBe("small");
    const prompt: string = body.messages[1].content;
    expect(prompt).toContain("[Rollouts of checkout]");
    expect(prompt).toContain("Draft bottom line: Around 2026-11-20 14:08 UTC for service=checkout: likely cause: deploy of checkout to checkout:v1.42");
    // The rules' decision, as data: the model words it, it does not make it.
    const verdict = JSON.parse(/^Verdict: (.*)$/m.exec(prompt)?.[1] ?? "{}");
    expect(verdict).toMatchObject({ conclusion: "cause", cause: { kind: "deploy", subject: "checkout", action: "Rollouts of checkout" } });

    const line = JSON.parse(logs.trim().split("\n").at(-1) ?? "{}");
    expect(line).toMatchObject({ msg: "language-model pass", model: "small", by: "language-model", promptTokens: 812, completionTokens: 64 });
    expect(logs).not.toContain(KEY);
  });

  it("takes the answer inside a ```json fence", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion(`\`\`\`json\n${JSON.stringify(GOOD)}\n\`\`\``)));
    expect((await run(incident)).result.analysis.by).toBe("language-model");
  });

  it.each([
    [
      "cites an action that did not run",
      { ...GOOD, summary: `${GOOD.summary} The database [Database connections] was full.` },
      'the model cited an action that did not run: "Database connections"',
    ],
    ["lists an unknown citation", { ...GOOD, citations: [...GOOD.citations, "Made up"] }, 'the model cited an action that did not run: "Made up"'],
    ["cites nothing", { summary: "Checkout broke after a deploy.", citations: [] }, "the model's summary cites no action"],
    ["does not list what it cites", { ...GOOD, citations: ["Rollouts of checkout"] }, "the model's citations do not list what its summary cites"],
    ["has no summary", { citations: GOOD.citations }, "the model's answer has no summary"],
  ])("keeps the deterministic text when the answer %s", async (_case, answer, reason) => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion(JSON.stringify(answer))));
    const { result, deterministic } = await run(incident);
    expect(result.highlights).toBe(deterministic);
    expect(result.analysis).toMatchObject({ by: "deterministic", model: "small", promptTokens: 812, fallback: reason });
  });

  it("keeps the deterministic text when the answer cites an action that was not run", async () => {
    const notRun = `${GOOD.summary} No pod restarted [Restarted pods].`;
    server = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, completion(JSON.stringify({ summary: notRun, citations: [...GOOD.citations, "Restarted pods"] }))),
    );
    const { result, deterministic } = await run([...incident, ...findingsOf([{ kind: "skipped", action: "Restarted pods", missing: ["pod"] }])]);
    expect(result.highlights).toBe(deterministic);
    expect(result.analysis.fallback).toBe('the model cited an action that did not run: "Restarted pods"');
  });

  it("keeps the deterministic text when the answer is prose, or the model is slow, fails or cannot be reached", async () => {
    server = await startTestHttpServer((request, response) => {
      if (request.url.startsWith("/prose")) sendJson(response, 200, completion("Checkout broke after a deploy [Rollouts of checkout]."));
      // The model's error echoes the request's headers: none of it may reach a result or a log.
      else if (request.url.startsWith("/fails")) sendJson(response, 500, { error: { message: `bad key ${String(request.headers.authorization)}` } });
      else if (request.url.startsWith("/odd")) sendJson(response, 200, { choices: [] });
      // /slow: held until the client gives up.
    });
    const url = server.url;
    const cases = [
      [`${url}/prose`, "the model's summary is not the JSON asked for"],
      [`${url}/fails`, "the model answered HTTP 500"],
      [`${url}/odd`, "the model's answer has no choices[0].message.content"],
      [`${url}/slow`, "no answer within 200 ms"],
      ["http://127.0.0.1:9", "could not reach the model"],
    ] as const;
    for (const [baseUrl, reason] of cases) {
      const { result, deterministic, logs } = await run(incident, { baseUrl, timeoutMs: 200 });
      expect(result.highlights).toBe(deterministic);
      expect(result.analysis).toMatchObject({ by: "deterministic", fallback: reason });
      expect(JSON.stringify(result)).not.toContain(KEY);
      expect(logs).toContain(reason);
      expect(logs).not.toContain(KEY);
    }
  });

  it("does not ask when nothing abnormal was found: a model could only add a cause that is not there", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion(JSON.stringify(GOOD))));
    const healthy = incident.filter(({ evidence }) => evidence.kind !== "metric");
    const { result, deterministic } = await run(healthy);
    expect(result.highlights).toBe(deterministic);
    expect(result.analysis).toEqual({ by: "deterministic", model: "small", fallback: "nothing abnormal found: the model was not asked" });
    expect(server.requests).toHaveLength(0);
  });

  it("keeps the prompt bounded however many findings there are, symptoms first", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion(JSON.stringify(GOOD))));
    const many = [
      ...findingsOf(Array.from({ length: 400 }, (_, index): Evidence => ({ kind: "answer", action: `Answer ${index}`, text: "x".repeat(500) }))),
      ...incident,
    ];
    await run(many);
    const prompt: string = JSON.parse(server.requests[0]?.body ?? "{}").messages[1].content;
    expect(prompt.length).toBeLessThan(30_000);
    expect(prompt.indexOf("[Error ratio of checkout]")).toBeLessThan(prompt.indexOf("[Answer 0]"));
    expect(prompt).toContain("Findings (60 of 403)");
  });
});

describe("checkSummary", () => {
  const titles = new Set(["A", "B"]);
  it("accepts citations of known titles only", () => {
    expect(checkSummary(JSON.stringify({ summary: "x [A].", citations: ["A"] }), titles)).toEqual({ kind: "summary", summary: "x [A]." });
    expect(checkSummary(JSON.stringify({ summary: "x [C].", citations: ["C"] }), titles)).toMatchObject({ kind: "failed" });
    expect(checkSummary(JSON.stringify({ summary: "x".repeat(3_001), citations: [] }), titles)).toEqual({
      kind: "failed",
      reason: "the model's summary is too long",
    });
    expect(checkSummary(JSON.stringify({ summary: "x [A].", citations: "A" }), titles)).toMatchObject({ kind: "failed" });
  });
});
