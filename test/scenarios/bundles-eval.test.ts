// `pes eval` over the scenarios' committed evidence bundles: the analysis, run offline from what the fourteen
// incidents' data sources answered, must still reach the verdicts they expect. No Redis, no network: a
// change to the analysis that moves a verdict fails here, in `npm test`. Re-record the bundles with
// PES_RECORD_BUNDLES=1 and the scenario files (evidence-bundles.ts), then review the diff.
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { replayReport } from "@pes/analysis";
import { ExitCode, runCli } from "@pes/client";
import { EvidenceBundle } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { BUNDLES_DIR } from "./evidence-bundles.js";

const SCENARIOS = [
  "bad-deploy",
  "brief-blip",
  "db-behind-service",
  "db-connections",
  "deploy-not-cause",
  "healthy",
  "memory-leak",
  "node-oom",
  "slow-node",
  "slow-storefront",
  "traffic-surge",
  "two-causes",
  "upstream-outage",
  "upstream-service",
];
/** The scenarios that find no cause: nothing abnormal, a deploy ruled out, nothing but a blip. */
const NO_CAUSE = new Set(["healthy", "deploy-not-cause", "brief-blip"]);

async function pes(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    // Whatever the environment says, eval never asks the API.
    env: { PES_URL: "http://127.0.0.1:9", PES_TOKEN: "unused" },
    stdin: Readable.from([]),
  });
  return { code, stdout, stderr };
}

describe("pes eval over the scenarios' bundles", () => {
  it("replays every scenario to the cause and mitigations it expects", async () => {
    const { code, stdout, stderr } = await pes("eval", BUNDLES_DIR, "--output", "json");
    expect(stderr).toBe("");
    const cases = JSON.parse(stdout) as Array<{ name: string; ok: boolean; cause: string; mitigationsFit?: boolean }>;
    expect(cases.map(({ name, ok, cause, mitigationsFit }) => ({ name, ok, cause, mitigationsFit }))).toEqual(
      SCENARIOS.map((name) => ({
        name,
        ok: true,
        cause: NO_CAUSE.has(name) ? "no cause expected" : "right cause",
        mitigationsFit: true,
      })),
    );
    expect(code).toBe(ExitCode.ok);
  });

  it("replays every scenario to exactly the verdict and the mitigations its execution recorded", async () => {
    for (const name of SCENARIOS) {
      const bundle = EvidenceBundle.parse(JSON.parse(await readFile(join(BUNDLES_DIR, `${name}.bundle.json`), "utf8")));
      const replay = replayReport(bundle);
      expect({ name, verdict: replay.verdict }).toEqual({ name, verdict: bundle.verdict });
      const offered = bundle.mitigations.filter((mitigation) => mitigation.offered).map(({ mitigation }) => mitigation);
      expect({ name, mitigations: replay.actionableMitigations }).toEqual({ name, mitigations: offered });
      expect(replay.sameAsRecorded).toBe(true);
    }
  });

  it("prints a table with the counts", async () => {
    const { code, stdout } = await pes("eval", BUNDLES_DIR);
    expect(code).toBe(ExitCode.ok);
    expect(stdout.split("\n").at(-2)).toBe("14 cases: 11 right cause, 0 wrong cause, 0 no cause, 14/14 mitigations fit; 0 wrong");
  });

  it("replays HolmesGPT's investigation cases to the causes they expect", async () => {
    const { code, stdout } = await pes("eval", join(BUNDLES_DIR, "holmesgpt"));
    expect(stdout.split("\n").at(-2)).toBe("7 cases: 7 right cause, 0 wrong cause, 0 no cause, 6/6 mitigations fit; 0 wrong");
    expect(code).toBe(ExitCode.ok);
  });

  it("replays the hand-written bundles of docs/bundles, one per observation kind, to what they expect", async () => {
    const docs = join(BUNDLES_DIR, "..", "..", "..", "docs", "bundles");
    const { code, stdout, stderr } = await pes("eval", docs, "--output", "json");
    // Without --lenient: a field the analysis cannot read would be refused.
    expect(stderr).toBe("");
    const cases = JSON.parse(stdout) as Array<{ name: string; ok: boolean }>;
    expect(cases.filter(({ ok }) => !ok)).toEqual([]);
    const kinds = await Promise.all(
      cases.map(async ({ name }) => (JSON.parse(await readFile(join(docs, `${name}.bundle.json`), "utf8")) as EvidenceBundle).actions[0]?.observation.kind),
    );
    expect(kinds.sort()).toEqual([
      "alertmanager",
      "datadog-metrics",
      "json",
      "kubernetes-events",
      "kubernetes-pods",
      "kubernetes-rollouts",
      "kubernetes-state",
      "logs",
      "prometheus",
      "service-graph",
    ]);
    expect(code).toBe(ExitCode.ok);
  });

  it("takes an ambiguous case's two candidates in either order, and no other", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pes-eval-"));
    try {
      const orders = { kind: "upstream", subject: "orders", action: "Error ratio of orders" };
      const provider = { kind: "outage", subject: "dependency=payments-provider", action: "Probes of checkout's dependencies" };
      for (const name of ["swapped", "straight", "wrong"]) await copyFile(join(BUNDLES_DIR, "two-causes.bundle.json"), join(dir, `${name}.bundle.json`));
      const expect_ = (cause: object, alternative: object) => JSON.stringify({ conclusion: "ambiguous", cause, alternative });
      await writeFile(join(dir, "straight.expected.json"), expect_(orders, provider));
      await writeFile(join(dir, "swapped.expected.json"), expect_(provider, orders));
      await writeFile(join(dir, "wrong.expected.json"), expect_(orders, { ...provider, subject: "dependency=search" }));
      const { code, stdout } = await pes("eval", dir, "--output", "json");
      const cases = JSON.parse(stdout) as Array<{ name: string; ok: boolean; cause: string }>;
      expect(cases.map(({ name, ok, cause }) => ({ name, ok, cause }))).toEqual([
        { name: "straight", ok: true, cause: "right cause" },
        { name: "swapped", ok: true, cause: "right cause" },
        { name: "wrong", ok: false, cause: "wrong cause" },
      ]);
      expect(code).toBe(ExitCode.resultError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
