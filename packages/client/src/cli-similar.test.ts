// `pes similar` in-process against a scripted API: what it asks, and how it prints the answer.
import { Readable } from "node:stream";
import type { SimilarExecutions } from "@pes/contracts";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode, runCli } from "./cli-program.js";
import { startScriptedApi, type ScriptedAnswer, type ScriptedApi } from "./testing/scripted-api.js";

const E1 = "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01";
const PAST = "1c7a3d8f-2d2b-4a3f-8b74-3a1e9f2fab02";

class Buffered {
  text = "";
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

let api: ScriptedApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function pes(argv: string[], answers: ScriptedAnswer[]) {
  api = await startScriptedApi(answers);
  const stdout = new Buffered();
  const stderr = new Buffered();
  const code = await runCli(argv, { stdout, stderr, env: { PES_URL: api.url, PES_TOKEN: "env-token" }, stdin: Readable.from([""]) });
  return { code, stdout: stdout.text, stderr: stderr.text, requests: api.requests };
}

const similar: SimilarExecutions = {
  executionId: E1,
  history: [
    {
      executionId: PAST,
      at: "2026-11-17T09:12:00.000Z",
      playbook: "memory-pressure",
      conclusion: "cause",
      cause: { kind: "oom", subject: "pod/ledger", detail: "OOMKilled" },
      similarity: 0.8,
      matched: [{ field: "cause.kind", value: "oom" }],
      differed: [{ field: "attribute.node", now: "node-2", past: "node-5" }],
      occurrences: { count: 3, first: "2026-11-02T10:00:00.000Z", last: "2026-11-17T09:12:00.000Z" },
      confirmed: { verdict: "right", resolution: "Raised the ledger's memory limit", by: "alice" },
    },
  ],
};

describe("pes similar", () => {
  it("reads the execution's similar past executions and prints each with its id, seen before — verify", async () => {
    const { code, stdout, requests } = await pes(["similar", E1, "-o", "text"], [{ status: 200, body: similar }]);
    expect(code).toBe(ExitCode.ok);
    expect(requests.map(({ method, url }) => `${method} ${url}`)).toEqual([`GET /playbook/execution/${E1}/similar`]);
    expect(stdout).toBe(
      `${E1}: Seen before — verify\n` +
        `  ${PAST}  Tue 2026-11-17 09:12 UTC: likely cause: oom of pod/ledger (OOMKilled); seen 3 times, first Mon 2026-11-02 10:00 UTC, ` +
        "last Tue 2026-11-17 09:12 UTC; 80 % alike; same cause.kind oom; different attribute.node node-2 (then node-5); " +
        "confirmed right by alice, resolved by: Raised the ledger's memory limit.\n",
    );
    const json = await pes(["similar", E1, "-o", "json"], [{ status: 200, body: { executionId: E1, history: [] } }]);
    expect(JSON.parse(json.stdout)).toEqual({ executionId: E1, history: [] });
  });

  it("says so when nothing is similar, and exits 3 with the API's words on a refusal", async () => {
    const none = await pes(["similar", E1, "-o", "text"], [{ status: 200, body: { executionId: E1, history: [] } }]);
    expect(none.stdout).toBe(`${E1}: no similar past execution.\n`);
    const off = await pes(["similar", E1], [{ status: 409, body: { error: "Memory is off for this organization" } }]);
    expect(off.code).toBe(ExitCode.api);
    expect(off.stderr).toContain("Memory is off for this organization");
  });
});
