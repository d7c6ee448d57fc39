import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { actionResult, causeSentence, mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { badDeploy } from "./data/bad-deploy.js";
import { checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// checkout v1.42 is rolled out 8 minutes before the issue; its pods fail 14 % of requests with a new
// NullPointerException; CheckoutHighErrorRate fires. See data/bad-deploy.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(badDeploy);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

describe("scenario: a bad deploy followed by an error spike", () => {
  it("names checkout's rollout to v1.42 as the likely cause, citing the action that found it", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({
      kind: "deploy",
      subject: "checkout",
      detail: "checkout:v1.42",
      action: "Rollouts of checkout",
      confidence: "high",
    });
    expect(result.verdict?.ruledOut).toEqual([]);
    // The words of the same claim, once: it cites the action, and says how long before the first symptom.
    const cause = causeSentence(result);
    expect(cause).toMatch(/likely cause: deploy of checkout to checkout:v1\.42 at \d\d:\d\d UTC \(Rollouts of checkout\)/);
    expect(cause).toMatch(/, \d+ min before the first symptom/);
  });

  it("states what followed, each claim citing its action: the error spike, the new exception; the alert that paged apart", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    expect(symptoms.find(({ action }) => action === "Error ratio of checkout")?.kind).toBe("rise");
    expect(symptoms.find(({ action }) => action === "Error logs of checkout")).toMatchObject({
      kind: "log-pattern",
      detail: expect.stringContaining("NullPointerException"),
    });
    expect(result.verdict?.paged).toEqual([expect.objectContaining({ kind: "alert", detail: "CheckoutHighErrorRate", action: "Alerts firing for checkout" })]);
    expect(actionResult(result, "Error ratio of checkout").shortAnswer).toMatch(/×/);
    const logs = actionResult(result, "Error logs of checkout").shortAnswer ?? "";
    expect(logs).toMatch(/NullPointerException/);
    // New with the deploy, though its first lines came before the incident phase: not a multiple of a rate.
    expect(logs).toMatch(/ \d+ lines, not seen in the hour before, since \d\d:\d\d UTC/);
    expect(result.highlights).not.toMatch(/NullPointerException[^;]*× its rate/);
    // The usual error, logged at its usual rate all along, is not what grew.
    expect(logs).not.toMatch(/inventory reservation/);
    expect(result.highlights).toMatch(/Error logs of checkout: [^;]*NullPointerException/);
  });

  it("says what was checked and found normal: latency, traffic, dependencies, restarts; a replaced pod's CPU is not a drop", () => {
    const normal = (result.verdict?.normal ?? []).filter(({ found }) => found === "within-usual-range").map(({ action }) => action);
    for (const title of ["p99 latency of checkout", "Request rate of checkout", "Probes of checkout's dependencies", "CPU of checkout pods"]) {
      expect(normal).toContain(title);
    }
    expect(result.verdict?.normal).toContainEqual({ action: "Restarted pods of checkout", found: "none" });
    expect(actionResult(result, "CPU of checkout pods").shortAnswer).not.toMatch(/down to|fell/i);
    expect(actionResult(result, "Restarted pods of checkout").shortAnswer).toMatch(/no pod restarts/i);
  });

  it("names none of the noise: another service's rollout, the shop's standing alerts, the crash-looping report generator", () => {
    const named = [...(result.verdict?.symptoms ?? []), ...(result.verdict?.background ?? [])].map(({ subject, detail }) => `${subject} ${detail}`);
    expect(named.join("\n")).not.toMatch(/cart|DiskSpaceLow|Watchdog|KubePodCrashLooping|report-generator/);
    expect(result.highlights).not.toMatch(/cart|DiskSpaceLow|Watchdog|KubePodCrashLooping|report-generator/);
  });

  it("offers to roll back checkout, and the dashboard", () => {
    const names = mitigationNames(result);
    expect(names).toContain("Roll back checkout");
    expect(names).toContain("Service dashboard of checkout");
    expect(result.actionableMitigations?.find((mitigation) => mitigation.customName === "Roll back checkout")?.action).toEqual({
      kind: "kubernetes.rollout-undo",
      deployment: "checkout",
      namespace: "shop",
    });
  });

  it("offers a silence of checkout's alerts, ready to POST: exact matchers, two hours from the issue, and its form in Alertmanager", () => {
    const silence = result.actionableMitigations?.find((mitigation) => mitigation.customName === "Silence alerts of checkout for 2h");
    const issueAt = run.scenario.issueAt.getTime();
    expect(silence?.action).toEqual({
      matchers: [
        { name: "service", value: "checkout", isRegex: false, isEqual: true },
        { name: "namespace", value: "shop", isRegex: false, isEqual: true },
      ],
      startsAt: new Date(issueAt).toISOString(),
      endsAt: new Date(issueAt + 2 * 3_600_000).toISOString(),
      createdBy: "playbook-execution-service",
      comment: "Under investigation: checkout",
    });
    const form = new URL(silence?.url ?? "");
    expect(form.origin).toBe(new URL(run.urls.alerts).origin);
    expect(decodeURIComponent(form.hash)).toBe('#/silences/new?filter={service="checkout", namespace="shop"}');
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "checkout");
  });
});
