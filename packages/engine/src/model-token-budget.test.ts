import { bottomLineOf, judgeExecution, type Finding } from "@pes/analysis";
import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { afterEach, describe, expect, it } from "vitest";
import { createBudgetMeter } from "./execution-budget.js";
import { summarizeWithLanguageModel } from "./language-model-summary.js";

const time = new Date("2026-11-20T14:08:00Z");
const logger = createLogger({ name: "model-budget-test", level: "silent" });

const findings: Finding[] = [
  {
    gadget: "Checkout",
    evidence: { kind: "change", action: "Rollouts of checkout", change: "deploy", subject: "checkout", detail: "v1.42", at: new Date("2026-11-20T14:02:00Z") },
  },
  {
    gadget: "Checkout",
    evidence: {
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
      onset: new Date("2026-11-20T14:03:00Z"),
      baselineMs: 3_600_000,
    },
  },
];
const SUMMARY = {
  summary: "The deploy [Rollouts of checkout] was followed by 7x the usual error ratio [Error ratio of checkout].",
  citations: ["Rollouts of checkout", "Error ratio of checkout"],
};

function completion(finishReason: string, usage: { prompt_tokens: number; completion_tokens: number }) {
  return { choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(SUMMARY) }, finish_reason: finishReason }], usage };
}

describe("the model pass within an execution's budget of model tokens", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function summarize(modelTokens: number | undefined) {
    const judgement = judgeExecution(findings, { time });
    const deterministic = bottomLineOf(judgement, {});
    const meter = createBudgetMeter(modelTokens === undefined ? {} : { modelTokens }, undefined);
    const summary = await summarizeWithLanguageModel(
      { baseUrl: server?.url ?? "http://127.0.0.1:9", model: "small", timeoutMs: 5_000 },
      { attributes: {}, findings, judgement, deterministic },
      logger,
      undefined,
      meter,
    );
    return { summary, deterministic, budget: meter.settle() };
  }

  it("does not ask the model when the prompt alone would take what is left, and says so", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion("stop", { prompt_tokens: 500, completion_tokens: 40 })));
    const { summary, deterministic, budget } = await summarize(50);
    expect(server.requests).toHaveLength(0);
    expect(summary.highlights).toBe(deterministic);
    expect(summary.analysis).toEqual({ by: "deterministic", model: "small", fallback: "budget exhausted: model-tokens" });
    expect(budget).toMatchObject({ exhausted: "model-tokens", spent: { modelTokens: 0 }, limit: { modelTokens: 50 } });
  });

  it("caps the answer at what the prompt leaves of the budget, and spends what the model says it used", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion("stop", { prompt_tokens: 700, completion_tokens: 40 })));
    const { summary, budget } = await summarize(4_000);
    const body = JSON.parse(server.requests[0]?.body ?? "{}");
    expect(body.max_tokens).toBeGreaterThan(0);
    expect(body.max_tokens).toBeLessThan(4_000);
    expect(summary.analysis.by).toBe("language-model");
    expect(budget).toMatchObject({ spent: { modelTokens: 740 }, limit: { modelTokens: 4_000 } });
    expect(budget.exhausted).toBeUndefined();
  });

  it("keeps the deterministic text when the model's answer was cut at the budget's cap", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion("length", { prompt_tokens: 700, completion_tokens: 300 })));
    const { summary, deterministic, budget } = await summarize(1_000);
    expect(summary.highlights).toBe(deterministic);
    expect(summary.analysis).toMatchObject({ by: "deterministic", fallback: "budget exhausted: model-tokens", promptTokens: 700, completionTokens: 300 });
    expect(budget).toMatchObject({ exhausted: "model-tokens", spent: { modelTokens: 1_000 } });
  });

  it("sends no cap without a budget of model tokens, and still counts what was used", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, completion("stop", { prompt_tokens: 700, completion_tokens: 40 })));
    const { budget } = await summarize(undefined);
    expect(JSON.parse(server.requests[0]?.body ?? "{}")).not.toHaveProperty("max_tokens");
    expect(budget).toEqual(expect.objectContaining({ spent: expect.objectContaining({ modelTokens: 740 }), limit: {} }));
  });
});
