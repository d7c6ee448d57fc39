// What the engine makes of an observed action: the analysis reads it, then the data source's secrets are
// redacted from every text of the evidence, whatever its kind (a source may echo them anywhere).
import { shortAnswer } from "@pes/analysis";
import { createHttpClient, NO_SECRETS, resolveSecrets, runConnectorAction, type ConnectorDefinition, type DataSourceSecrets } from "@pes/connectors";
import type { Observation } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { evidenceOf } from "./evidence-bundle.js";

describe("what an action observed, as the engine reads it", () => {
  // Every connector's observation goes through its run's `redact` once read: nothing to list, nothing to remember.
  const dataSource = { type: "toy", url: "http://127.0.0.1:9", headers: { "x-key": { env: "PES_TEST_EVIDENCE_KEY" } } };
  const { secrets } = resolveSecrets(dataSource, { env: { PES_TEST_EVIDENCE_KEY: "key-123456" } });
  const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };
  const time = window.time;

  /** A connector that answers `observation` whatever it is asked, run as the worker runs one. */
  async function observedWith(observation: Observation, withSecrets: DataSourceSecrets = secrets) {
    const definition: ConnectorDefinition<typeof dataSource, Record<string, never>> = {
      type: "toy",
      noun: "a toy data source",
      builds: "request",
      dataSource: z.object({ type: z.literal("toy"), url: z.string(), headers: z.object({ "x-key": z.object({ env: z.string() }) }) }),
      query: z.object({}),
      templates: [],
      link: () => "http://link",
      runtime: async () => ({ fetch: async () => observation }),
    };
    const request = {
      title: "Check",
      attributes: {},
      window,
      signal: AbortSignal.timeout(5_000),
      secrets: withSecrets,
      http: createHttpClient(),
      dataSource,
      spec: {},
    };
    const observed = await runConnectorAction(definition, await definition.runtime(), request);
    await request.http.close();
    return evidenceOf(observed, request.title, window);
  }

  it("redacts the data source's secrets from every text of every kind, keeping the link", async () => {
    const observations: Observation[] = [
      { kind: "failed", reason: "the API said key-123456 is wrong" },
      { kind: "text", text: "key-123456" },
      {
        kind: "prometheus",
        data: { resultType: "vector", result: [{ metric: { header: "Bearer key-123456" }, value: [Date.parse("2026-11-20T14:08:00Z") / 1000, "1"] }] },
      },
      {
        kind: "json",
        answer: { version: "v1 key-123456", at: "2026-11-20T14:08:00Z" },
        answerField: "version",
        change: { kind: "deploy", timeField: "at", subject: "key-123456" },
      },
    ];
    const redacted = (await Promise.all(observations.map((observation) => observedWith(observation)))).flat();
    expect(JSON.stringify(redacted)).not.toContain("key-123456");
    expect(redacted.map((item) => shortAnswer(item, time))).toEqual([
      "Check: the API said [redacted] is wrong",
      "Check: [redacted]",
      "Check 1",
      "Check: deploy of [redacted] to v1 [redacted] at 14:08 UTC",
    ]);
    expect(redacted[0]?.link).toBe("http://link");
    expect(redacted[2]).toMatchObject({ values: [{ labels: { header: "Bearer [redacted]" } }] });
  });

  it("redacts before the short answer is cut to 300 characters", async () => {
    const [failed] = await observedWith({ kind: "failed", reason: `${"x".repeat(285)} key-123456` });
    if (failed === undefined) throw new Error("no evidence");
    expect(shortAnswer(failed, time)).toHaveLength(300);
    expect(shortAnswer(failed, time)).not.toContain("key-1");
  });

  it("keeps the texts as they are for a data source without secrets", async () => {
    expect(await observedWith({ kind: "text", text: "key-123456" }, NO_SECRETS)).toMatchObject([{ kind: "answer", text: "key-123456" }]);
  });
});
