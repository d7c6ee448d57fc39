import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, causeSentence, mitigationNames, sentences } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { deployNotCause } from "./data/deploy-not-cause.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// catalog v2.8 goes out 25 minutes before the issue and runs normally for 19 minutes; then a crawler
// triples catalog's traffic, latency and errors follow. See data/deploy-not-cause.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(deployNotCause);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a deploy that happened but is not the cause", () => {
  it("does not name the rollout as the cause, and says why: nothing abnormal followed it for a long time", () => {
    expect(result.verdict?.conclusion).toBe("no-cause");
    expect(result.verdict?.cause).toBeUndefined();
    const [rollout, ...others] = result.verdict?.ruledOut ?? [];
    expect(others).toEqual([]);
    expect(rollout).toMatchObject({ kind: "deploy", subject: "catalog", detail: "catalog:v2.8", action: "Rollouts of catalog", why: "long-before" });
    // Quiet for 19 minutes before the surge began.
    expect((rollout?.leadMs ?? 0) / 60_000).toBeGreaterThan(10);
    expect(causeSentence(result)).toBeUndefined();
    const changes = sentences(result.highlights).find((sentence) => /catalog:v2\.8/.test(sentence)) ?? "";
    expect(changes).toContain("(Rollouts of catalog)");
    expect(changes).toMatch(/not its cause|too long before|followed by nothing abnormal/);
  });

  it("names the traffic surge as the first symptom, the place to look, then the latency and errors it brought", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    const earliest = Math.min(...symptoms.map(({ onset }) => Date.parse(onset ?? "")));
    // The pods' CPU rose with the traffic: the surge is among the first, the latency and errors it brought are not.
    const firsts = symptoms.filter(({ onset }) => Date.parse(onset ?? "") === earliest);
    expect(firsts).toContainEqual(expect.objectContaining({ kind: "rise", action: "Request rate of catalog" }));
    expect(firsts.map(({ action }) => action).join("\n")).not.toMatch(/latency|Error/);
    expect(symptoms.map(({ action }) => action)).toContain("p99 latency of catalog");
    const first = sentences(result.highlights).find((sentence) => sentence.startsWith("First symptom")) ?? "";
    expect(first).toContain("Request rate of catalog");
    expect(first).not.toMatch(/latency|Error/);
    expect(actionResult(result, "Request rate of catalog").shortAnswer).toMatch(/rose|×/);
    expect(actionResult(result, "p99 latency of catalog").shortAnswer).toMatch(/×/);
    expect(result.highlights).toContain("p99 latency of catalog");
  });

  it("names none of the noise", () => {
    expect(result.highlights).not.toMatch(/cart|DiskSpaceLow|Watchdog|report-generator/);
  });

  it("does not offer to roll back catalog: the deploy is not the cause", () => {
    const names = mitigationNames(result);
    expect(names).not.toContain("Roll back catalog");
    expect(names).toContain("Service dashboard of catalog");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "catalog");
  });
});
