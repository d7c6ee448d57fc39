import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, causeSentence, mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { upstreamOutage } from "./data/upstream-outage.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// The payments provider refuses connections from 5 minutes before the issue: its probe fails, checkout's
// calls to it and then checkout's own requests fail. No rollout of checkout. See data/upstream-outage.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(upstreamOutage);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: an upstream dependency outage", () => {
  it("names the payments provider as the likely cause, by its dependency label, citing the probe", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({ kind: "outage", subject: "dependency=payments-provider", action: "Probes of checkout's dependencies" });
    const cause = causeSentence(result) ?? "";
    expect(cause).toMatch(/likely cause: Probes of checkout's dependencies \(dependency=payments-provider\) down to zero/);
    expect(cause).not.toContain("fraud-check");
  });

  it("backs it with checkout's failed calls, the sidecar's connection failures and the new log line, each citing its action", () => {
    expect(actionResult(result, "Failed calls from checkout to its dependencies").shortAnswer).toContain("payments-provider");
    expect(actionResult(result, "Upstream connection failures of checkout").shortAnswer).toMatch(/upstream connect error/);
    expect(actionResult(result, "Error logs of checkout").shortAnswer).toMatch(/payment authorization failed[^—]*not seen in the hour before/);
    const symptoms = (result.verdict?.symptoms ?? []).map(({ action }) => action);
    for (const title of ["Error ratio of checkout", "Upstream connection failures of checkout", "Error logs of checkout"]) {
      expect(symptoms).toContain(title);
    }
  });

  it("blames no deploy: checkout's last rollout was three days ago", () => {
    expect(result.verdict?.ruledOut).toEqual([]);
    expect(result.verdict?.normal).toContainEqual({ action: "Rollouts of checkout", found: "none" });
    expect(actionResult(result, "Rollouts of checkout").shortAnswer).toMatch(/no rollouts/i);
  });

  it("names none of the noise", () => {
    expect(result.highlights).not.toMatch(/cart|DiskSpaceLow|Watchdog|report-generator|inventory reservation/);
  });

  it("does not offer to roll back checkout", () => {
    expect(mitigationNames(result)).not.toContain("Roll back checkout");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
