import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { causeSentence, mitigationNames, sentences } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { healthy } from "./data/healthy.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// Nothing is wrong with checkout: its usual errors at their usual rate, a rollout 50 minutes ago that
// has run fine since, the shop's standing alerts about other things. See data/healthy.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(healthy);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a healthy service", () => {
  it("says nothing abnormal was found and names no cause", () => {
    expect(result.verdict).toMatchObject({ conclusion: "no-cause", symptoms: [], background: [] });
    expect(result.verdict?.cause).toBeUndefined();
    expect(result.verdict?.normal.length).toBeGreaterThan(0);
    expect(sentences(result.highlights)[0]).toMatch(/nothing abnormal found/);
    expect(causeSentence(result)).toBeUndefined();
    expect(result.highlights).not.toMatch(/Abnormal|rose|fell|×/);
  });

  it("lists the rollout as a change followed by nothing abnormal, citing its action", () => {
    expect(result.verdict?.ruledOut).toEqual([
      expect.objectContaining({ kind: "deploy", subject: "checkout", detail: "checkout:v1.42", action: "Rollouts of checkout", why: "no-symptom" }),
    ]);
    const change = sentences(result.highlights).find((sentence) => /checkout:v1\.42/.test(sentence)) ?? "";
    expect(change).toContain("(Rollouts of checkout)");
    expect(change).toMatch(/followed by nothing abnormal/);
  });

  it("offers neither a roll back nor a silence: nothing is wrong, only the dashboard", () => {
    expect(mitigationNames(result)).toEqual(["Service dashboard of checkout"]);
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
