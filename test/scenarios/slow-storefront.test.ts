import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayBundle } from "@pes/analysis";
import { EvidenceBundle, type PlaybookExecutionResult, ServiceGraphObservation } from "@pes/contracts";
import { mitigationNames } from "./answer-checks.js";
import { expectEveryActionRanAndLinks } from "./common-checks.js";
import { slowStorefront } from "./data/slow-storefront.js";
import { BUNDLES_DIR, checkEvidenceBundle } from "./evidence-bundles.js";
import { startScenario, type RunningScenario } from "./run-scenario.js";

// The storefront's pods delay every packet from 8 minutes before the issue: its p90 goes from 25 ms to
// about 9 s, every service it calls answers at about 2 s (catalog from half a millisecond), and it stops
// calling recommendations. Tempo's service graph says who calls whom. See data/slow-storefront.ts.
let run: RunningScenario;
let result: PlaybookExecutionResult;

beforeAll(async () => {
  run = await startScenario(slowStorefront);
  result = await run.investigate();
});

afterAll(async () => {
  await run?.stop();
});

/** The service graph's action, as the playbook titles it. */
const GRAPH = "Service graph of the shop";

describe("scenario: a slowdown that begins in the service calling the others", () => {
  it("names the storefront, whose slowdown explains the others' by who calls whom, as where it begins", () => {
    expect(result.verdict?.conclusion).toBe("cause");
    expect(result.verdict?.cause).toMatchObject({
      kind: "latency",
      subject: "service=storefront",
      action: "p90 latency of storefront",
      detail: "explains by who calls whom of 5 services slowed",
      confidence: "medium",
    });
    expect(result.verdict?.alternative).toBeUndefined();
  });

  it("lists catalog's rise, the largest against its own normal, among the symptoms the storefront explains", () => {
    const symptoms = result.verdict?.symptoms ?? [];
    for (const service of ["catalog", "cart", "search", "recommendations"]) {
      expect(symptoms).toContainEqual(expect.objectContaining({ kind: "rise", subject: `service=${service}`, action: `p90 latency of ${service}` }));
    }
    expect(JSON.stringify(result.verdict?.cause)).not.toContain("catalog");
    // checkout calls catalog too and kept its pace: catalog's slowdown would have reached it.
    expect(result.verdict?.normal).toContainEqual({ action: "p90 latency of checkout", found: "within-usual-range" });
  });

  it("reads recommendations' requests falling to zero as the stalled storefront calling less, not as an outage", () => {
    const fell = result.verdict?.symptoms.find(({ action }) => action === "Request rate of recommendations");
    expect(fell).toMatchObject({ subject: "service=recommendations" });
    expect(Date.parse(fell?.onset ?? "")).toBeGreaterThan(Date.parse(result.verdict?.cause?.onset ?? ""));
    expect(result.verdict?.cause?.kind).not.toBe("outage");
    expect(result.verdict?.alternative).toBeUndefined();
  });

  it("keeps the storefront's own alert, the page, apart", () => {
    expect(result.verdict?.paged).toContainEqual(
      expect.objectContaining({ kind: "alert", detail: "StorefrontSlowRequests", action: "Alerts firing for storefront" }),
    );
  });

  it("reads who calls whom from Tempo's service graph, the browsers' virtual node left out", async () => {
    const { calls } = ServiceGraphObservation.parse((await run.evidence()).actions.find(({ title }) => title === GRAPH)?.observation);
    expect(calls).toEqual(expect.arrayContaining(["catalog", "cart", "search", "recommendations"].map((callee) => ({ caller: "storefront", callee }))));
    expect(calls).toContainEqual({ caller: "checkout", callee: "catalog" });
    expect(calls.filter(({ caller }) => caller === "user")).toEqual([]);
  });

  it("blames no rollout and offers no roll back", () => {
    expect(result.verdict?.normal).toContainEqual({ action: "Rollouts of storefront", found: "none" });
    const names = mitigationNames(result);
    expect(names).toContain(GRAPH);
    expect(names).not.toContain("Roll back storefront");
  });

  it("keeps an evidence bundle that replays offline to the same verdict and mitigations", async () => {
    await checkEvidenceBundle(run, result);
  });

  it("would name catalog, whose rise is the largest, from the same committed evidence without the service graph", async () => {
    const bundle = EvidenceBundle.parse(JSON.parse(await readFile(join(BUNDLES_DIR, "slow-storefront.bundle.json"), "utf8")));
    expect(replayBundle(bundle).verdict.cause).toMatchObject({ kind: "latency", subject: "service=storefront" });
    const withoutGraph = { ...bundle, actions: bundle.actions.filter(({ title }) => title !== GRAPH) };
    expect(withoutGraph.actions).toHaveLength(bundle.actions.length - 1);
    const { verdict } = replayBundle(withoutGraph);
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toMatchObject({ kind: "latency", subject: "service=catalog", detail: "rose most of 5 services slowed" });
  });

  it("runs every action against its server and links each to the data behind it", async () => {
    await expectEveryActionRanAndLinks(run, result, "storefront");
  });
});
