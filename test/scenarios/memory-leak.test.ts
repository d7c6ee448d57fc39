import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { LEAKING_REVISION, memoryLeak } from "./data/memory-leak.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// search v3.1 goes out 190 minutes before the issue and leaks: its pods' memory climbs for three hours
// until the kernel OOM-kills them, 10 and 6 minutes before the issue. See data/memory-leak.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;
const MINUTE = 60_000;

beforeAll(async () => {
  run = await startScenario(memoryLeak);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a release that leaks memory for hours before the OOM kills", () => {
  it("names search's release as the likely cause, though it went out three hours before the first kill", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "deploy", subject: "search", detail: "search:v3.1", action: "Rollouts of search", confidence: "high" });
    const releasedAt = run.scenario.issueAt.getTime() + LEAKING_REVISION.atMinutes * MINUTE;
    expect(Date.parse(result.verdict?.cause?.onset ?? "")).toBe(releasedAt);
  });

  it("dates the memory finding when the climb began, not when it reached the limit", () => {
    const memory = result.verdict?.symptoms.find(({ action }) => action === "Memory of search's pods");
    expect(memory?.kind).toBe("saturation");
    const releasedAt = run.scenario.issueAt.getTime() + LEAKING_REVISION.atMinutes * MINUTE;
    const onset = Date.parse(memory?.onset ?? "");
    expect(onset).toBeGreaterThanOrEqual(releasedAt);
    expect(onset - releasedAt).toBeLessThan(10 * MINUTE);
    // Never background, though it began hours before the issue: it climbed into the incident.
    expect(result.verdict?.background.map(({ action }) => action)).not.toContain("Memory of search's pods");
  });

  it("cites the OOM kills as what followed, and rules out cart's later rollout", () => {
    const kills = (result.verdict?.symptoms ?? []).filter(({ kind, action }) => kind === "oom" && action === "Restarted pods of search");
    expect(kills.map(({ subject }) => subject)).toEqual([
      expect.stringMatching(/^pod\/search-/),
      expect.stringMatching(/^pod\/search-/),
      expect.stringMatching(/^pod\/search-/),
    ]);
    expect(result.verdict?.ruledOut.filter(({ subject }) => subject === "search")).toEqual([]);
    expect(JSON.stringify(result.verdict?.cause)).not.toMatch(/cart|report-generator/);
  });

  it("offers to roll back search, not to raise its memory limit", () => {
    const names = mitigationNames(result);
    expect(names).toContain("Roll back search");
    expect(names).not.toContain("Raise the memory limit of search");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "search");
  });
});
