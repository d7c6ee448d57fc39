import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Catalog } from "@pes/config";
import type { PlaybookExecutionResult, Verdict } from "@pes/contracts";
import { keySpace, memoryRecordKey, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createExecutionMemory } from "@pes/memory";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recallAndRemember, type MemoryDeps } from "./execution-memory.js";

const logger = createLogger({ name: "execution-memory-test", level: "silent" });
let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let catalog: Catalog;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("worker-memory"), redisHandle.url);
  const dir = await mkdtemp(join(tmpdir(), "pes-execution-memory-"));
  try {
    await mkdir(join(dir, "organizations"));
    await mkdir(join(dir, "playbooks"));
    await writeFile(join(dir, "organizations", "acme.yaml"), JSON.stringify({ id: "acme", clientIds: ["c"], memory: { recall: true, retentionDays: 30 } }));
    await writeFile(join(dir, "organizations", "quiet.yaml"), JSON.stringify({ id: "quiet", clientIds: ["c"], memory: { recall: false } }));
    await writeFile(join(dir, "organizations", "plain.yaml"), JSON.stringify({ id: "plain", clientIds: ["c"] }));
    catalog = await loadConfig(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

const verdict = (pod: string): Verdict => ({
  conclusion: "cause",
  cause: { kind: "oom", subject: `pod/${pod}`, detail: "OOMKilled", action: "Warnings", confidence: "high" },
  symptoms: [{ kind: "oom", subject: `pod/${pod}`, action: "Warnings" }],
  background: [],
  ruledOut: [],
  normal: [],
  unchecked: [],
});
const resultOf = (pod: string, executionId: string): PlaybookExecutionResult => ({
  highlights: `Likely cause: OOM kill of ${pod}.`,
  verdict: verdict(pod),
  pageUrl: `https://pes.example.com/executions/${executionId}/page`,
});
const job = (orgId: string, executionId: string) => ({
  orgId,
  executionId,
  requestId: `r-${executionId}`,
  bookName: "memory-pressure",
  time: new Date().toISOString(),
  attributes: { node: "node-2" },
});

describe("recallAndRemember", () => {
  it("gives a result the past executions like it, after which it is remembered for the next, never recalling itself or changing the verdict", async () => {
    const deps: MemoryDeps = { memory: createExecutionMemory({ redis: () => redis, keys }), catalog, logger };
    const first = resultOf("recommendations-7d9f8b6c5d-x2x7q", "e-1");
    expect(await recallAndRemember(deps, job("acme", "e-1"), first)).toEqual(first);

    const second = resultOf("recommendations-5c4b9d7f68-q8zkp", "e-2");
    const recalled = await recallAndRemember(deps, job("acme", "e-2"), second);
    expect(recalled.verdict).toEqual(second.verdict);
    expect(recalled.highlights).toBe(second.highlights);
    expect(recalled.history?.map((entry) => ({ id: entry.executionId, page: entry.pageUrl, cause: entry.cause, count: entry.occurrences.count }))).toEqual([
      { id: "e-1", page: "https://pes.example.com/executions/e-1/page", cause: { kind: "oom", subject: "pod/recommendations", detail: "OOMKilled" }, count: 1 },
    ]);

    // The job run again (a retry): it recalls the first execution, and not itself.
    const again = await recallAndRemember(deps, job("acme", "e-2"), second);
    expect(again.history?.map((entry) => entry.executionId)).toEqual(["e-1"]);
    expect(again.history?.[0]?.occurrences.count).toBe(2);
    // Remembered for the organization's retention (30 days).
    const ttl = await redis.pttl(memoryRecordKey(keys, "acme", "e-2"));
    expect(ttl).toBeGreaterThan(29 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(30 * 86_400_000);
  });

  it("recalls and remembers for an organization that says nothing of memory: on by default, for 90 days", async () => {
    const deps: MemoryDeps = { memory: createExecutionMemory({ redis: () => redis, keys }), catalog, logger };
    await recallAndRemember(deps, job("plain", "p-1"), resultOf("orders-7d9f8b6c5d-x2x7q", "p-1"));
    const recalled = await recallAndRemember(deps, job("plain", "p-2"), resultOf("orders-5c4b9d7f68-q8zkp", "p-2"));
    expect(recalled.history?.map((entry) => entry.executionId)).toEqual(["p-1"]);
    const ttl = await redis.pttl(memoryRecordKey(keys, "plain", "p-2"));
    expect(ttl).toBeGreaterThan(89 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(90 * 86_400_000);
  });

  it("does nothing for an organization that turned recall off, nor for a result without a verdict", async () => {
    const deps: MemoryDeps = { memory: createExecutionMemory({ redis: () => redis, keys }), catalog, logger };
    const result = resultOf("cart-7d9f8b6c5d-x2x7q", "q-1");
    expect(await recallAndRemember(deps, job("quiet", "q-1"), result)).toEqual(result);
    expect(await recallAndRemember(deps, job("quiet", "q-2"), result)).toEqual(result);
    expect(await redis.get(memoryRecordKey(keys, "quiet", "q-1"))).toBeNull();

    const failed: PlaybookExecutionResult = { error: "Unknown playbook" };
    expect(await recallAndRemember(deps, job("acme", "f-1"), failed)).toEqual(failed);
    expect(await redis.get(memoryRecordKey(keys, "acme", "f-1"))).toBeNull();
  });

  it("leaves the result as it was when Redis cannot be reached", async () => {
    const closed = new Redis(redisHandle.url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const deps: MemoryDeps = { memory: createExecutionMemory({ redis: () => closed, keys }), catalog, logger };
    const result = resultOf("search-7d9f8b6c5d-x2x7q", "x-1");
    expect(await recallAndRemember(deps, job("acme", "x-1"), result)).toEqual(result);
    closed.disconnect();
  });
});
