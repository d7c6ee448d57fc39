import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { causeSentence, mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { briefBlip } from "./data/brief-blip.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// For a minute, 5 minutes before the issue, the payments provider's probe fails and checkout's errors
// spike; then all is as before. The page fired on the spike. See data/brief-blip.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(briefBlip);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: nothing but a brief blip", () => {
  it("finds no cause: the probe's failure and the error spike were over within minutes", () => {
    expect(result.verdict?.conclusion).toBe("no-cause");
    expect(result.verdict?.cause).toBeUndefined();
    expect(result.verdict?.alternative).toBeUndefined();
    expect(causeSentence(result)).toBeUndefined();
  });

  it("still reports what was seen, the page among it, and what was checked and found normal", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    expect(symptoms).toContainEqual(
      expect.objectContaining({ kind: "outage", subject: "dependency=payments-provider", action: "Probes of checkout's dependencies" }),
    );
    expect(symptoms).toContainEqual(expect.objectContaining({ kind: "rise", action: "Error ratio of checkout" }));
    expect(result.verdict?.paged).toContainEqual(expect.objectContaining({ kind: "alert", detail: "CheckoutHighErrorRate" }));
    expect(result.verdict?.normal).toEqual(
      expect.arrayContaining([
        { action: "Rollouts of checkout", found: "none" },
        { action: "p99 latency of checkout", found: "within-usual-range" },
        { action: "Error ratio of orders", found: "within-usual-range" },
      ]),
    );
    expect(result.verdict?.ruledOut).toEqual([]);
  });

  it("offers no roll back and no scale out", () => {
    const names = mitigationNames(result);
    expect(names).not.toContain("Roll back checkout");
    expect(names).not.toContain("Scale out checkout");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
