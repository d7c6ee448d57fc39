import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { freePort } from "@pes/local-services";
import { Redis } from "ioredis";
import { asyncBatch } from "./async-batch.js";
import { BENCH_CLIENT_ID, BENCH_ORG, ONE_ACTION_PLAYBOOK, PARALLEL_PLAYBOOK, writeBenchConfig } from "./bench-config.js";
import { stopAll, type ChildHandle } from "./child-processes.js";
import { createHttpCaller } from "./http-calls.js";
import { runHttpLoad } from "./http-load.js";
import { describeMachine, currentCommit } from "./machine.js";
import { memoryRecall } from "./memory-recall.js";
import { startRawFloor, type RawFloor } from "./raw-floor.js";
import { medianItem } from "./stats.js";
import { startBenchRedis } from "./redis-server.js";
import type { BenchResults } from "./results.js";
import {
  batch,
  executionLoad,
  parallelism,
  plumbingOverhead,
  smokeTest,
  STUB_SLOW_DELAY_MS,
  THROUGHPUT_IN_FLIGHT,
  type Durations,
  type ServiceTarget,
} from "./scenarios.js";
import { startApi, startWorker, type ServiceContext } from "./service-processes.js";
import { storm } from "./storm.js";
import { startStubProcess } from "./stub-process.js";
import { evaluateTargets } from "./target-evaluation.js";
import { measureThroughput } from "./throughput-run.js";
import { webhookIntake } from "./webhook-intake.js";

export const SCENARIOS = ["plumbing", "throughput", "parallelism", "batch", "storm", "webhook", "async-batch", "memory-recall"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  repoRoot: string;
  resultsDir: string;
  mode: "quick" | "full";
  durations: Durations;
  scenarios: ReadonlySet<ScenarioName>;
  log: (line: string) => void;
}

/** WORKER_CONCURRENCY of each worker process (and of the raw floor's), and its MAX_CONCURRENT_ACTIONS. */
const WORKER_CONCURRENCY = 64;
const MAX_CONCURRENT_ACTIONS = 64;

/**
 * Starts Redis, the stub data sources, the API and a worker, runs the selected scenarios (memory is
 * read after scenario 2), and stops every process it started, whatever happens.
 */
export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const startedAt = new Date();
  const workDir = mkdtempSync(join(tmpdir(), "pes-bench-"));
  const logDir = join(options.resultsDir, "logs");
  rmSync(logDir, { recursive: true, force: true });
  mkdirSync(logDir, { recursive: true });
  const children: ChildHandle[] = [];
  let rawFloor: RawFloor | undefined;
  const queuePrefix = `bench-${startedAt.getTime().toString(36)}`;
  let redisUrl: string | undefined;
  let redisIsExternal = false;

  const results: BenchResults = {
    mode: options.mode,
    startedAt: startedAt.toISOString(),
    durationSeconds: 0,
    machine: describeMachine(),
    commit: currentCommit(options.repoRoot),
    settings: {
      durations: options.durations,
      workerConcurrency: WORKER_CONCURRENCY,
      maxConcurrentActions: MAX_CONCURRENT_ACTIONS,
      throughputInFlight: THROUGHPUT_IN_FLIGHT,
      redis: "",
      stubDelaysMs: { instant: 0, slow: STUB_SLOW_DELAY_MS },
    },
    throughput: [],
    batch: [],
    targets: [],
    failures: [],
  };

  try {
    options.log("starting redis, stub data sources, API and worker …");
    const redis = await startBenchRedis(workDir, logDir);
    redisUrl = redis.url;
    redisIsExternal = redis.child === undefined;
    if (redis.child !== undefined) children.push(redis.child);
    results.settings.redis = redisIsExternal ? "REDIS_URL (external)" : `redis-server ${results.machine.redis} spawned on loopback, --save "" --appendonly no`;

    const [instantPort, slowPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const stub = await startStubProcess(logDir, [
      { port: instantPort, delayMs: 0 },
      { port: slowPort, delayMs: STUB_SLOW_DELAY_MS },
    ]);
    children.push(stub);

    const configDir = join(workDir, "config");
    writeBenchConfig(configDir, {
      instantUrl: `http://127.0.0.1:${instantPort}`,
      slowUrl: `http://127.0.0.1:${slowPort}`,
    });
    const devIssuerDir = join(workDir, "dev-issuer");
    const key = await loadOrCreateDevKey(devIssuerDir);
    const token = mintDevToken(key, { org: BENCH_ORG, clientId: BENCH_CLIENT_ID, expiresInSeconds: 3600 });

    const context: ServiceContext = {
      repoRoot: options.repoRoot,
      logDir,
      redisUrl: redis.url,
      queuePrefix,
      configDir,
      devIssuerDir,
    };
    const api = await startApi(context, { port: apiPort, executionTimeoutMs: 30_000, batchMaxItems: 100 });
    children.push(api);
    const workerOptions = { concurrency: WORKER_CONCURRENCY, maxConcurrentActions: MAX_CONCURRENT_ACTIONS };
    const workers = [await startWorker(context, { index: 1, ...workerOptions })];
    children.push(...workers);
    rawFloor = await startRawFloor({
      redisUrl: redis.url,
      prefix: `${queuePrefix}-raw`,
      workerConcurrency: WORKER_CONCURRENCY,
      logDir,
    });

    const target: ServiceTarget = { baseUrl: `http://127.0.0.1:${apiPort}`, token };
    await smokeTest(target, ONE_ACTION_PLAYBOOK);
    await smokeTest(target, PARALLEL_PLAYBOOK);
    const { durations } = options;
    const run = async (name: string, scenario: () => Promise<void>): Promise<void> => {
      const started = performance.now();
      options.log(`${name} …`);
      try {
        await scenario();
        options.log(`${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      } catch (error) {
        const message = `${name}: ${error instanceof Error ? error.message : String(error)}`;
        results.failures.push(message);
        options.log(`FAILED ${message}`);
      }
    };
    const floor = rawFloor;
    const throughputRun = async (): Promise<void> => {
      results.throughput.push(await measureThroughput(target, ONE_ACTION_PLAYBOOK, floor, { api, workers, redis: redis.child }, durations));
    };

    if (options.scenarios.has("plumbing")) {
      await run("1 plumbing overhead (1 in flight)", async () => {
        const rounds = [];
        for (let round = 0; round < durations.rounds; round += 1) {
          const warmupSeconds = round === 0 ? durations.warmupSeconds : 0;
          const measured = await plumbingOverhead(target, floor, ONE_ACTION_PLAYBOOK, { ...durations, warmupSeconds });
          rounds.push({ ...measured, p50Ratio: measured.service.latency.p50 / measured.raw.latency.p50 });
        }
        results.plumbing = {
          ...medianItem(rounds, (round) => round.p50Ratio),
          roundRatios: rounds.map(({ p50Ratio }) => p50Ratio),
        };
      });
    }
    if (options.scenarios.has("throughput")) {
      await run(`2 throughput (${THROUGHPUT_IN_FLIGHT} in flight, 1 worker process)`, throughputRun);
    }
    if (options.scenarios.has("parallelism")) {
      await run("3 parallelism (10 gadgets × 3 actions at 200 ms)", async () => {
        results.parallelism = await parallelism(target, PARALLEL_PLAYBOOK, durations);
      });
    }
    if (options.scenarios.has("batch")) {
      await run("4 batch of 100 (1 worker process)", async () => {
        results.batch.push({ workerProcesses: workers.length, result: await batch(target, ONE_ACTION_PLAYBOOK, durations) });
      });
    }
    const twoWorkerScenarios: readonly ScenarioName[] = ["throughput", "batch", "storm", "webhook", "async-batch"];
    if (twoWorkerScenarios.some((name) => options.scenarios.has(name))) {
      options.log("starting a second worker process (service and raw floor) …");
      const second = await startWorker(context, { index: 2, ...workerOptions });
      workers.push(second);
      children.push(second);
      await floor.addWorker();
    }
    if (options.scenarios.has("throughput")) {
      await run(`2 throughput (${THROUGHPUT_IN_FLIGHT} in flight, 2 worker processes)`, throughputRun);
    }
    if (options.scenarios.has("batch")) {
      await run("4 batch of 100 (2 worker processes)", async () => {
        results.batch.push({ workerProcesses: workers.length, result: await batch(target, ONE_ACTION_PLAYBOOK, durations) });
      });
    }
    const throughputOfTwo = () => results.throughput.find((run) => run.workerProcesses === workers.length)?.service.throughput ?? Number.NaN;
    const runId = queuePrefix;
    const workerMetricsUrls = workers.map((worker) => worker.metricsUrl);
    if (options.scenarios.has("storm") || options.scenarios.has("webhook")) {
      // Storms and re-notifications are about sharing: an API of their own with coalescing on (default bucket).
      const sharingPort = await freePort();
      options.log("starting an API with coalescing on …");
      const sharingApi = await startApi(context, {
        port: sharingPort,
        executionTimeoutMs: 30_000,
        batchMaxItems: 100,
        coalesceBucketSeconds: 60,
        name: "api-coalescing",
      });
      children.push(sharingApi);
      const sharingUrl = `http://127.0.0.1:${sharingPort}`;
      // A new process: warmed as scenario 1's paths are (its identical requests mostly join, which is its storm path).
      await runHttpLoad({
        ...executionLoad({ baseUrl: sharingUrl, token }, ONE_ACTION_PLAYBOOK),
        connections: THROUGHPUT_IN_FLIGHT,
        durationSeconds: durations.warmupSeconds,
      });
      const caller = createHttpCaller(sharingUrl, token);
      try {
        if (options.scenarios.has("storm")) {
          await run(`6 storm of ${durations.stormRequests} identical requests within ${durations.stormSpreadMs} ms (2 worker processes)`, async () => {
            const counting = { workerMetricsUrls, apiMetricsUrl: `${sharingUrl}/metrics`, stubStatsUrl: `http://127.0.0.1:${instantPort}/stats` };
            results.storm = await storm(
              caller,
              counting,
              { requests: durations.stormRequests, spreadMs: durations.stormSpreadMs, loneRequests: durations.stormLoneRequests },
              runId,
            );
          });
        }
        if (options.scenarios.has("webhook")) {
          await run(`7 webhook intake, ${durations.webhookNotifications} notifications of 10 alerts (2 worker processes)`, async () => {
            const intake = await webhookIntake(
              caller,
              workerMetricsUrls,
              { notifications: durations.webhookNotifications, alertsPerNotification: 10, connections: 16 },
              runId,
            );
            results.webhookIntake = { ...intake, workerProcesses: workers.length, ratioToThroughput: intake.fresh.alertsPerSecond / throughputOfTwo() };
          });
        }
      } finally {
        caller.close();
      }
    }
    if (options.scenarios.has("async-batch")) {
      await run(`8 async batch of ${durations.asyncBatchItems} items beside a synchronous caller (2 worker processes)`, async () => {
        const caller = createHttpCaller(target.baseUrl, token);
        try {
          const measured = await asyncBatch(caller, ONE_ACTION_PLAYBOOK, {
            items: durations.asyncBatchItems,
            idleSeconds: durations.asyncBatchIdleSeconds,
            pollIntervalMs: 1_000,
            eventLoopSecondsAfterAccept: durations.asyncBatchEventLoopSeconds,
          });
          results.asyncBatch = { ...measured, workerProcesses: workers.length, ratioToThroughput: measured.itemsPerSecond / throughputOfTwo() };
        } finally {
          caller.close();
        }
      });
    }
    if (options.scenarios.has("memory-recall")) {
      await run(`9 memory: ${durations.memoryRecalls} recalls over ${durations.memoryExecutions} past executions of one organization`, async () => {
        results.memoryRecall = await memoryRecall(redis.url, queuePrefix, { executions: durations.memoryExecutions, recalls: durations.memoryRecalls });
      });
    }
  } finally {
    options.log("stopping all processes …");
    await rawFloor?.close().catch(() => undefined);
    await stopAll(children);
    if (redisIsExternal && redisUrl !== undefined) await deleteKeys(redisUrl, queuePrefix).catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  }
  results.targets = evaluateTargets(results);
  results.durationSeconds = (Date.now() - startedAt.getTime()) / 1000;
  return results;
}

/** On an external Redis, removes this run's keys (its queue prefix is unique to the run). */
async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  client.on("error", () => undefined);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}
