import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { twoCauses } from "./data/two-causes.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// orders starts failing 8 minutes before the issue, the payments provider stops answering a minute later;
// checkout's errors follow and its logs name both. See data/two-causes.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(twoCauses);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: two candidates too close to tell apart", () => {
  it("is ambiguous, naming orders and the payments provider, neither with more than low confidence", () => {
    expect(result.verdict?.conclusion).toBe("ambiguous");
    const named = [result.verdict?.cause, result.verdict?.alternative];
    expect(named).toContainEqual(expect.objectContaining({ kind: "upstream", subject: "orders", confidence: "low" }));
    expect(named).toContainEqual(
      expect.objectContaining({ kind: "outage", subject: "dependency=payments-provider", action: "Probes of checkout's dependencies", confidence: "low" }),
    );
    const onsets = named.map((finding) => Date.parse(finding?.onset ?? ""));
    expect(Math.abs((onsets[0] ?? 0) - (onsets[1] ?? 0))).toBeLessThanOrEqual(2 * 60_000);
  });

  it("gives the evidence for each: orders' own alert and the log line naming it; the failed calls to the provider and the log line naming it", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    expect(symptoms).toContainEqual(expect.objectContaining({ kind: "alert", detail: "OrdersHighErrorRate", action: "Alerts firing for orders" }));
    expect(symptoms).toContainEqual(
      expect.objectContaining({ kind: "rise", subject: "upstream=payments-provider", action: "Failed calls from checkout to its dependencies" }),
    );
    const patterns = symptoms.filter(({ kind }) => kind === "log-pattern").map(({ detail }) => detail ?? "");
    expect(patterns.some((pattern) => pattern.includes("upstream=orders"))).toBe(true);
    expect(patterns.some((pattern) => pattern.includes("provider=payments-provider"))).toBe(true);
  });

  it("blames no change and offers no roll back", () => {
    expect(result.verdict?.ruledOut).toEqual([]);
    expect(mitigationNames(result)).not.toContain("Roll back checkout");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
