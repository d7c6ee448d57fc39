import { keySpace } from "@pes/jobs";
import { createExecutionMemory, type Fingerprint } from "@pes/memory";
import { Redis } from "ioredis";
import { summarizeLatencies, type LatencySummary } from "./stats.js";

export interface MemoryRecallOptions {
  /** Past executions of one organization, remembered before the recalls. */
  executions: number;
  /** Recalls measured one at a time, each a new execution's. */
  recalls: number;
}

export interface MemoryRecallResult {
  executions: number;
  recalls: number;
  /** Remembering them, 64 at a time: fingerprints per second. */
  rememberedPerSecond: number;
  /** Σ MEMORY USAGE (SAMPLES 0) of every key of the organization's memory ÷ the executions. */
  bytesPerExecution: number;
  keys: number;
  /** One recall, as its caller waits for it: every round trip (4) on loopback, the client's work included. */
  recallWallMs: LatencySummary;
  /** The Redis time of one recall's commands (Σ of their SLOWLOG durations); absent on a Redis that refuses CONFIG SET. */
  recallRedisMs?: LatencySummary;
  /** Recalls that found at least one past execution. */
  recallsWithHistory: number;
}

const DAY_MS = 86_400_000;
const RETENTION_MS = 90 * DAY_MS;
const ORG = "bench-memory";
const TEAMS = ["payments", "search", "platform", "data"];
const SERVICES = Array.from({ length: 60 }, (_, index) => `service-${String.fromCharCode(97 + (index % 26))}${Math.floor(index / 26)}`);
const CAUSE_KINDS = [
  "deploy",
  "config",
  "saturation",
  "outage",
  "oom",
  "crash-loop",
  "eviction",
  "node",
  "upstream",
  "image-pull/not-found",
  "rise",
  "log-pattern",
];
const SYMPTOM_KINDS = ["rise", "drop", "saturation", "log-pattern", "oom", "crash-loop", "alert", "outage"];

/** A deterministic pseudo-random source (mulberry32). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A fingerprint as the worker keeps one (fingerprintOf's shape), of one of 60 services × 12 cause kinds,
 * with 1-4 symptoms' kinds, up to 3 of 600 log templates and 1-2 of 120 alerts, 2 attributes, and a team
 * scope of five (four teams, or the whole organization's): a varied history of one large organization.
 */
function fingerprint(random: () => number, id: string, at: number): Fingerprint {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const service = pick(SERVICES);
  const kind = pick(CAUSE_KINDS);
  const team = Math.floor(random() * (TEAMS.length + 1));
  const few = (count: number, make: () => string) => [...new Set(Array.from({ length: count }, make))].sort();
  return {
    v: 1,
    id,
    at,
    playbook: `playbook-${SERVICES.indexOf(service) % 12}`,
    conclusion: random() < 0.85 ? "cause" : "ambiguous",
    cause: { kind, subject: kind === "node" ? `node/node-${Math.floor(random() * 20)}` : service, detail: `${service}:v<num>` },
    symptoms: few(1 + Math.floor(random() * 4), () => pick(SYMPTOM_KINDS)),
    templates: few(Math.floor(random() * 4), () => `level=error msg=<str> template=${Math.floor(random() * 600)} id=<id>`),
    alerts: few(1 + Math.floor(random() * 2), () => `Alert${Math.floor(random() * 120)}`),
    attributes: { namespace: "shop", service },
    ...(team === TEAMS.length ? {} : { teams: [TEAMS[team] as string] }),
    pageUrl: `https://pes.example.com/executions/${id}/page?exp=1767225600&sig=${"a".repeat(43)}`,
  };
}

/**
 * Scenario 9: the memory of past executions at scale. Remembers `executions` fingerprints of one
 * organization spread over 90 days, then recalls for `recalls` new ones one at a time, measuring each
 * recall as its caller waits and in Redis time (SLOWLOG with a threshold of 0, reset before each), and
 * the bytes the memory holds per execution. Its keys are removed afterwards.
 */
export async function memoryRecall(redisUrl: string, prefix: string, options: MemoryRecallOptions): Promise<MemoryRecallResult> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const keys = keySpace(`${prefix}-memory`, redisUrl);
  const memory = createExecutionMemory({ redis: () => redis, keys });
  const random = seeded(9);
  const now = Date.now();
  try {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let index = next++; index < options.executions; index = next++) {
          await memory.remember(ORG, fingerprint(random, `past-${index}`, now - Math.floor(random() * 89 * DAY_MS)), RETENTION_MS, now);
        }
      }),
    );
    const rememberedPerSecond = options.executions / ((performance.now() - started) / 1000);

    let bytes = 0;
    let keyCount = 0;
    let cursor = "0";
    do {
      const [nextCursor, found] = await redis.scan(cursor, "MATCH", `${keys.prefix}:org:*`, "COUNT", 1000);
      cursor = nextCursor;
      for (const key of found) {
        bytes += Number((await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0")) ?? 0);
        keyCount += 1;
      }
    } while (cursor !== "0");

    const slowlog = await redis.config("SET", "slowlog-log-slower-than", "0").then(
      () => true,
      () => false,
    );
    if (slowlog) await redis.config("SET", "slowlog-max-len", "1024");
    const wall: number[] = [];
    const inRedis: number[] = [];
    let withHistory = 0;
    try {
      for (let index = 0; index < options.recalls; index += 1) {
        const print = fingerprint(random, `new-${index}`, now);
        if (slowlog) await redis.slowlog("RESET");
        const begun = performance.now();
        const history = await memory.recall({ orgId: ORG, fingerprint: print, callerTeams: print.teams, retentionMs: RETENTION_MS, now });
        wall.push(performance.now() - begun);
        if (history.length > 0) withHistory += 1;
        if (slowlog) {
          const entries = (await redis.slowlog("GET", 1024)) as Array<[number, number, number, string[]]>;
          const micros = entries
            .filter((entry) => !["slowlog", "config"].includes(String(entry[3]?.[0]).toLowerCase()))
            .reduce((total, entry) => total + Number(entry[2]), 0);
          inRedis.push(micros / 1000);
        }
      }
    } finally {
      if (slowlog) await redis.config("SET", "slowlog-log-slower-than", "10000");
    }
    return {
      executions: options.executions,
      recalls: options.recalls,
      rememberedPerSecond,
      bytesPerExecution: bytes / options.executions,
      keys: keyCount,
      recallWallMs: summarizeLatencies(wall),
      ...(slowlog ? { recallRedisMs: summarizeLatencies(inRedis) } : {}),
      recallsWithHistory: withHistory,
    };
  } finally {
    let cursor = "0";
    do {
      const [nextCursor, found] = await redis.scan(cursor, "MATCH", `${keys.prefix}:*`, "COUNT", 1000);
      cursor = nextCursor;
      if (found.length > 0) await redis.del(...found);
    } while (cursor !== "0");
    redis.disconnect();
  }
}
