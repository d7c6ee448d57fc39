import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { upstreamService } from "./data/upstream-service.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// orders fails from 8 minutes before the issue and alerts; a minute later checkout's errors climb, its
// logs saying orders answered 503; checkout's own alert pages last. See data/upstream-service.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(upstreamService);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a cause in another service", () => {
  it("names orders, the upstream that failed first, as the likely cause, not checkout's own error ratio", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "upstream", subject: "orders", confidence: "high" });
    expect(["Error ratio of orders", "p99 latency of orders"]).toContain(result.verdict?.cause?.action);
    const onset = Date.parse(result.verdict?.cause?.onset ?? "");
    const checkoutErrors = result.verdict?.symptoms.find(({ action }) => action === "Error ratio of checkout");
    expect(onset).toBeLessThan(Date.parse(checkoutErrors?.onset ?? ""));
  });

  it("backs it with checkout's symptoms that followed: its errors, the new log line naming orders, and orders' own alert", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    expect(symptoms).toContainEqual(expect.objectContaining({ kind: "rise", action: "Error ratio of checkout" }));
    const log = symptoms.find(({ action }) => action === "Error logs of checkout");
    expect(log).toMatchObject({ kind: "log-pattern" });
    expect(log?.detail).toContain("upstream=orders");
    expect(symptoms).toContainEqual(expect.objectContaining({ kind: "alert", detail: "OrdersHighErrorRate", action: "Alerts firing for orders" }));
  });

  it("keeps checkout's own alert, the page, apart: context, neither a symptom nor the cause", () => {
    expect(result.verdict?.symptoms.find(({ detail }) => detail === "CheckoutHighErrorRate")).toBeUndefined();
    const page = result.verdict?.paged?.find(({ detail }) => detail === "CheckoutHighErrorRate");
    expect(page).toMatchObject({ kind: "alert", action: "Alerts firing for checkout" });
    expect(result.verdict?.alternative).toBeUndefined();
  });

  it("blames no change and finds checkout's dependencies and rollouts normal", () => {
    expect(result.verdict?.ruledOut).toEqual([]);
    expect(result.verdict?.normal).toEqual(
      expect.arrayContaining([
        { action: "Rollouts of checkout", found: "none" },
        { action: "Probes of checkout's dependencies", found: "within-usual-range" },
      ]),
    );
  });

  it("names none of the noise and offers no roll back", () => {
    expect(result.highlights).not.toMatch(/cart|DiskSpaceLow|Watchdog|report-generator|inventory reservation/);
    expect(mitigationNames(result)).not.toContain("Roll back checkout");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
