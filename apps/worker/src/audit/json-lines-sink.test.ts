import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_RECORD_VERSION, AuditRecord } from "@pes/contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jsonLinesSink } from "./json-lines-sink.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pes-audit-sink-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function record(n: number): AuditRecord {
  return {
    v: AUDIT_RECORD_VERSION,
    executionId: `execution-${n}`,
    requestId: `request-${n}`,
    orgId: "acme",
    finishedAt: "2026-11-20T14:00:00.000Z",
    playbook: { name: "Checkout latency" },
    outcome: "success",
    // Long enough that lines written at once would interleave if they were not written one by one.
    queries: [{ action: "logs", query: { logql: "x".repeat(20_000 + n) }, window: { start: "2026-11-20T13:00:00.000Z", end: "2026-11-20T14:00:00.000Z" } }],
    sent: [],
  };
}

describe("jsonLinesSink", () => {
  it("appends one JSON line per record, after what the file held, none of them interleaved", async () => {
    const path = join(dir, "audit.jsonl");
    await writeFile(path, '{"earlier":"line"}\n');
    const sink = jsonLinesSink(path);

    await Promise.all(Array.from({ length: 20 }, (_, n) => sink.write(record(n))));

    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines.at(-1)).toBe("");
    expect(lines[0]).toBe('{"earlier":"line"}');
    const written = lines.slice(1, -1).map((line) => AuditRecord.parse(JSON.parse(line)));
    expect(written.map((entry) => entry.executionId).sort()).toEqual(Array.from({ length: 20 }, (_, n) => `execution-${n}`).sort());
  });

  it("creates the file when missing, and tells its caller when it cannot write", async () => {
    const path = join(dir, "new.jsonl");
    await jsonLinesSink(path).write(record(1));
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ executionId: "execution-1" });

    await expect(jsonLinesSink(join(dir, "missing-dir", "audit.jsonl")).write(record(2))).rejects.toThrow();
  });
});
