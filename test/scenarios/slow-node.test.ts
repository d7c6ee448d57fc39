import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { slowNode } from "./data/slow-node.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// node-2's disk saturates 8 minutes before the issue; the pods on node-2 answer seven times slower, the
// pods on the other nodes as before; NodeDiskIOSaturation fires for node-2. See data/slow-node.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(slowNode);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: only the pods on one node are slow", () => {
  it("names node-2 as the likely cause", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "node", subject: "node/node-2", confidence: "high" });
  });

  it("splits the latency by node: node-2's series moved, and only it", () => {
    const latency = result.verdict?.symptoms.find(({ action }) => action === "p99 latency of catalog by node");
    expect(latency).toMatchObject({ kind: "rise", subject: "node=node-2, zone=eu-west-1b" });
    const iowait = result.verdict?.symptoms.find(({ action }) => action === "I/O wait per node");
    expect(iowait).toMatchObject({ kind: "rise", subject: "node=node-2" });
  });

  it("ties node-2's alert to the pods it hosts, and leaves node-3's old disk alert in the background", () => {
    expect(result.verdict?.symptoms).toContainEqual(
      expect.objectContaining({ kind: "alert", detail: "NodeDiskIOSaturation", action: "Alerts firing for the nodes" }),
    );
    expect(result.verdict?.background).toContainEqual(expect.objectContaining({ kind: "alert", detail: "DiskSpaceLow" }));
    expect(JSON.stringify(result.verdict?.cause)).not.toMatch(/node-1|node-3|DiskSpaceLow/);
  });

  it("blames no rollout, and calls catalog's errors normal", () => {
    expect(result.verdict?.normal).toContainEqual({ action: "Error ratio of catalog", found: "within-usual-range" });
    expect(result.verdict?.normal).toContainEqual({ action: "Rollouts of catalog", found: "none" });
  });

  it("offers to cordon the node, move the pods off it or limit the pod crowding it, and no roll back", () => {
    const names = mitigationNames(result);
    expect(names).toEqual(expect.arrayContaining(["Cordon the slow node", "Move the pods off the slow node", "Limit the pod crowding the slow node"]));
    expect(names).not.toContain("Roll back catalog");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "catalog");
  });
});
