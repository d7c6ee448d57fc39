// `pes eval` over the scenarios' committed evidence bundles: the analysis, run offline from what the six
// incidents' data sources answered, must still reach the verdicts they expect. No Redis, no network: a
// change to the analysis that moves a verdict fails here, in `npm test`. Re-record the bundles with
// PES_RECORD_BUNDLES=1 and the scenario files (evidence-bundles.ts), then review the diff.
import { Readable } from "node:stream";
import { ExitCode, runCli } from "@pes/client";
import { describe, expect, it } from "vitest";
import { BUNDLES_DIR } from "./evidence-bundles.js";

const SCENARIOS = ["bad-deploy", "db-connections", "deploy-not-cause", "healthy", "node-oom", "upstream-outage"];

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
        cause: name === "healthy" || name === "deploy-not-cause" ? "no cause expected" : "right cause",
        mitigationsFit: true,
      })),
    );
    expect(code).toBe(ExitCode.ok);
  });

  it("prints a table with the counts", async () => {
    const { code, stdout } = await pes("eval", BUNDLES_DIR);
    expect(code).toBe(ExitCode.ok);
    expect(stdout.split("\n").at(-2)).toBe("6 cases: 4 right cause, 0 wrong cause, 0 no cause, 6/6 mitigations fit; 0 wrong");
  });
});
