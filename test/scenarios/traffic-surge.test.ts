import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { trafficSurge } from "./data/traffic-surge.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// search gets 7× its usual requests from 7 minutes before the issue; its pods' CPU reaches the limit and
// is throttled, latency and then errors follow. No rollout, no failing dependency. See data/traffic-surge.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(trafficSurge);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: load as the cause", () => {
  it("names search's pods at their CPU limit as the likely cause, with the surge in requests that drove them there", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "saturation", action: "CPU of search pods" });
    // Every pod of search is at its limit: the cause is about them all, not about whichever pod reached it
    // by a little more (that changes with the scrape and the moment of the page).
    expect(result.verdict?.cause?.subject).toBeUndefined();
    expect(actionResult(result, "CPU of search pods").shortAnswer).toMatch(/\d of \d series at their limit/);
    const surge = result.verdict?.symptoms.find(({ action }) => action === "Request rate of search");
    expect(surge).toMatchObject({ kind: "rise" });
    // The requests began to climb with the CPU, the latency after them both.
    const onsetOf = (action: string) => Date.parse(result.verdict?.symptoms.find((symptom) => symptom.action === action)?.onset ?? "");
    expect(Math.abs(onsetOf("Request rate of search") - Date.parse(result.verdict?.cause?.onset ?? ""))).toBeLessThanOrEqual(60_000);
    expect(onsetOf("p99 latency of search")).toBeGreaterThan(onsetOf("Request rate of search"));
  });

  it("offers to scale search out, and no roll back: it is a capacity problem", () => {
    const names = mitigationNames(result);
    expect(names).toContain("Scale out search");
    expect(names).not.toContain("Roll back search");
  });

  it("blames no change, and keeps the page apart, as context", () => {
    expect(result.verdict?.ruledOut).toEqual([]);
    expect(result.verdict?.paged).toContainEqual(expect.objectContaining({ kind: "alert", detail: "SearchHighLatency" }));
    expect(result.verdict?.alternative).toBeUndefined();
  });

  it("names none of the noise", () => {
    expect(result.highlights).not.toMatch(/cart|DiskSpaceLow|Watchdog|report-generator/);
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "search");
  });
});
