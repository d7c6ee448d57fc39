import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, causeSentence, mitigationNames, sentences } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { nodeOom } from "./data/node-oom.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// node-2's memory fills over 17 minutes (recommendations leaks); the kernel OOM-kills recommendations
// twice. node-1 and node-3 are fine; report-generator crash-loops on node-1 all along. See data/node-oom.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(nodeOom);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a node under memory pressure OOM-killing pods", () => {
  it("names node-2's memory as the likely cause, by its node label, citing the action", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "saturation", subject: "node=node-2", action: "Memory used per node" });
    const cause = causeSentence(result) ?? "";
    expect(cause).toMatch(/likely cause: Memory used per node \(node=node-2\) at 9\d(\.\d)?%, at or above its threshold of 90% \(Memory of the nodes\)/);
    expect(cause).not.toMatch(/node-1|node-3/);
  });

  it("cites the OOM kills and the kernel's events as what followed, each with its action", () => {
    const ooms = (result.verdict?.symptoms ?? []).filter(({ kind }) => kind === "oom").map(({ subject, action }) => ({ subject, action }));
    expect(ooms.filter(({ action }) => action === "Restarted pods in shop").map(({ subject }) => subject)).toEqual([
      expect.stringMatching(/^pod\/recommendations-/),
      expect.stringMatching(/^pod\/recommendations-/),
    ]);
    expect(ooms).toContainEqual({ subject: "node/node-2", action: "Events of node-2" });
    const highlights = result.highlights ?? "";
    // Both recommendations pods, each named, each citing the action that found it.
    expect(highlights.match(/Restarted pods in shop: OOMKilled on pod\/recommendations-/g)).toHaveLength(2);
    expect(highlights).toMatch(/Events of node-2: SystemOOM on node\/node-2/);
    expect(actionResult(result, "Events of node-2").shortAnswer).toMatch(/System OOM encountered/);
  });

  it("does not blame the crash-looping report generator or another node's events", () => {
    const verdict = result.verdict;
    expect(JSON.stringify([verdict?.cause, verdict?.symptoms])).not.toMatch(/report-generator|ImageGCFailed|node-1|node-3/);
    // It has crash-looped for hours: background, not a symptom of this incident.
    expect(verdict?.background.some(({ subject }) => subject?.includes("report-generator"))).toBe(true);
    const also = sentences(result.highlights).find((sentence) => sentence.startsWith("Also abnormal")) ?? "";
    expect(also).not.toMatch(/report-generator/);
    expect(sentences(result.highlights).find((sentence) => /report-generator/.test(sentence))).toMatch(/^Abnormal since before the incident/);
    expect(result.highlights).not.toMatch(/ImageGCFailed|DiskSpaceLow|Watchdog/);
  });

  it("offers to cordon node-2, and no roll back", () => {
    const names = mitigationNames(result);
    expect(names).toContain("Cordon node-2");
    expect(names.some((name) => /roll back/i.test(name))).toBe(false);
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "node-2");
  });
});
