/**
 * `npm run bench:compare -- --baseline=<dir> [--rounds=6] [--seconds=5] [--workers=2] [--node-args="…"] [--playbook=one-action|rising]`
 *
 * Same-run A/B of two builds of the service: <dir> (the baseline, e.g. a `git worktree` of main, built)
 * against this checkout, whose processes also get `--node-args` (so `--baseline=. --node-args=…` weighs
 * node or V8 flags on one build). Both run side by side on one Redis (own queue prefixes) and one stub data
 * source; the load alternates between them (A B B A …), so that drift of this shared machine falls on
 * both alike. Per round it measures the p50 at 1 in flight (scenario 1) and executions/s at 64 in flight
 * (scenario 2), with the CPU time the API and workers spent per execution at 64 in flight; it prints every
 * round's ratio (this build / baseline) and their median, and each side's peak RSS at the end. A change worth a few percent cannot be timed any
 * other way on this host: see BENCHMARKS.md, "Method".
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { freePort } from "@pes/local-services";
import { BENCH_CLIENT_ID, BENCH_ORG, ONE_ACTION_PLAYBOOK, RISING_PLAYBOOK, writeBenchConfig } from "./bench-config.js";
import { stopAll, type ChildHandle } from "./child-processes.js";
import { cpuWindow, type ProcessRoles } from "./cpu-time.js";
import { runHttpLoad, type HttpLoadResult } from "./http-load.js";
import { peakRssMB } from "./peak-rss.js";
import { startBenchRedis } from "./redis-server.js";
import { isExecutionSuccess, smokeTest, THROUGHPUT_IN_FLIGHT, type ServiceTarget } from "./scenarios.js";
import { serviceIsBuilt, splitNodeArgs, startApi, startWorker, type ServiceContext } from "./service-processes.js";
import { startStubProcess } from "./stub-process.js";

interface Side {
  name: string;
  target: ServiceTarget;
  /** The side's own processes, whose CPU time is read around its loaded run (Redis is shared: not counted). */
  pids: ProcessRoles & { api: readonly number[]; workers: readonly number[] };
}

interface Measurement {
  latencyP50: number;
  throughput: number;
  /** CPU of the API and workers per execution at 64 in flight, µs: steadier than wall figures on a busy host. */
  cpuUs: number;
  /** The same by role, with Redis's in the side's window besides (shown, not in the ratio: Redis is shared). */
  byRoleUs: Record<string, number>;
}

const { values } = parseArgs({
  options: {
    baseline: { type: "string" },
    rounds: { type: "string", default: "6" },
    seconds: { type: "string", default: "5" },
    workers: { type: "string", default: "2" },
    "node-args": { type: "string", default: "" },
    // `rising`: every execution's verdict names a symptom (the memory recalls and counts a storm of one incident).
    playbook: { type: "string", default: ONE_ACTION_PLAYBOOK },
  },
});
const playbooks = [ONE_ACTION_PLAYBOOK, RISING_PLAYBOOK];
if (values.baseline === undefined || !playbooks.includes(values.playbook)) {
  process.stderr.write(
    "usage: npm run bench:compare -- --baseline=<built checkout> [--rounds=6] [--seconds=5] [--workers=2] [--node-args=<flags>] [--playbook=one-action|rising]\n",
  );
  process.exit(2);
}
const playbook = values.playbook;
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const workerCount = Number(values.workers);
const candidateRoot = fileURLToPath(new URL("../../", import.meta.url));
const baselineRoot = resolve(values.baseline);
for (const root of [baselineRoot, candidateRoot]) {
  if (!serviceIsBuilt(root)) throw new Error(`${root} is not built (npm run build there first)`);
}

/** The median of the rounds' ratios; of an even number of rounds, the mean of the two middle ones. */
function medianRatio(ratios: readonly number[]): number {
  const sorted = [...ratios].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  const upper = sorted[half] ?? Number.NaN;
  return sorted.length % 2 === 1 ? upper : ((sorted[half - 1] ?? Number.NaN) + upper) / 2;
}

const log = (line: string): void => void process.stderr.write(`[compare] ${line}\n`);
const workDir = mkdtempSync(join(tmpdir(), "pes-compare-"));
const children: ChildHandle[] = [];
let completed = false;
try {
  const redis = await startBenchRedis(workDir, workDir);
  if (redis.child !== undefined) children.push(redis.child);
  // An external Redis (REDIS_URL) is not read: it may serve others.
  const redisPids: ProcessRoles = redis.child === undefined ? {} : { redis: [redis.child.pid] };
  const stubPort = await freePort();
  const stubUrl = `http://127.0.0.1:${stubPort}`;
  const stub = await startStubProcess(workDir, [{ port: stubPort, delayMs: 0 }]);
  children.push(stub);
  const configDir = join(workDir, "config");
  // Only the one-action playbook runs here; the slow data source is never queried.
  writeBenchConfig(configDir, { instantUrl: stubUrl, slowUrl: stubUrl });
  const devIssuerDir = join(workDir, "dev-issuer");
  const token = mintDevToken(await loadOrCreateDevKey(devIssuerDir), { org: BENCH_ORG, clientId: BENCH_CLIENT_ID, expiresInSeconds: 3600 });

  const startSide = async (name: string, repoRoot: string, nodeArgs: readonly string[]): Promise<Side> => {
    const context: ServiceContext = {
      repoRoot,
      logDir: join(workDir, name),
      redisUrl: redis.url,
      queuePrefix: `compare-${name}`,
      configDir,
      devIssuerDir,
      nodeArgs,
    };
    mkdirSync(context.logDir, { recursive: true });
    const port = await freePort();
    const api = await startApi(context, { port, executionTimeoutMs: 30_000, batchMaxItems: 100 });
    children.push(api);
    const workers: ChildHandle[] = [];
    for (let index = 1; index <= workerCount; index += 1) {
      workers.push(await startWorker(context, { index, concurrency: 64, maxConcurrentActions: 64 }));
    }
    children.push(...workers);
    const target = { baseUrl: `http://127.0.0.1:${port}`, token };
    await smokeTest(target, playbook);
    return { name, target, pids: { api: [api.pid], workers: workers.map((worker) => worker.pid) } };
  };
  const sides = [await startSide("baseline", baselineRoot, []), await startSide("candidate", candidateRoot, splitNodeArgs(values["node-args"]))] as const;
  const load = (side: Side, connections: number, durationSeconds: number): Promise<HttpLoadResult> =>
    runHttpLoad({
      url: `${side.target.baseUrl}/playbook/execution`,
      token,
      body: JSON.stringify({ bookName: playbook }),
      isSuccess: isExecutionSuccess,
      connections,
      durationSeconds,
    });
  const measure = async (side: Side): Promise<Measurement> => {
    const latency = await load(side, 1, seconds);
    await load(side, THROUGHPUT_IN_FLIGHT, 1);
    const cpu = cpuWindow(side.pids);
    const shared = cpuWindow(redisPids);
    const loaded = await cpu.around(() => shared.around(() => load(side, THROUGHPUT_IN_FLIGHT, seconds)));
    const failures = latency.responses - latency.successes + loaded.responses - loaded.successes;
    if (failures > 0) throw new Error(`${side.name}: ${failures} failed responses: ${latency.firstErrorBody ?? loaded.firstErrorBody}`);
    const { totalUs, byRoleUs } = cpu.per(loaded.successes);
    return {
      latencyP50: latency.latency.p50,
      throughput: loaded.throughput,
      cpuUs: totalUs,
      byRoleUs: { ...byRoleUs, ...shared.per(loaded.successes).byRoleUs },
    };
  };

  log("warming both up …");
  for (const side of sides) await measure(side);
  const results: { baseline: Measurement; candidate: Measurement }[] = [];
  for (let round = 0; round < rounds; round += 1) {
    // A B, then B A: a steady drift weighs on both sides equally over two rounds.
    const order = round % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
    const measured = new Map<string, Measurement>();
    for (const side of order) measured.set(side.name, await measure(side));
    const baseline = measured.get("baseline");
    const candidate = measured.get("candidate");
    if (baseline === undefined || candidate === undefined) throw new Error("a side was not measured");
    results.push({ baseline, candidate });
    const roles = (m: Measurement) =>
      Object.entries(m.byRoleUs)
        .map(([role, us]) => `${role} ${us.toFixed(0)}`)
        .join(", ");
    log(
      `round ${round + 1}: p50 ${baseline.latencyP50.toFixed(3)} → ${candidate.latencyP50.toFixed(3)} ms, ` +
        `${baseline.throughput.toFixed(0)} → ${candidate.throughput.toFixed(0)} /s, ` +
        `${baseline.cpuUs.toFixed(0)} → ${candidate.cpuUs.toFixed(0)} µs CPU per execution (${roles(baseline)} → ${roles(candidate)})`,
    );
  }

  const ratio = (pick: (m: Measurement) => number) => results.map(({ baseline, candidate }) => pick(candidate) / pick(baseline));
  const row = (label: string, ratios: number[]) => `| ${label} | ${medianRatio(ratios).toFixed(3)} | ${ratios.map((r) => r.toFixed(3)).join(", ")} |`;
  const lines = [
    `Same-run comparison, ${rounds} rounds of ${seconds} s, ${workerCount} worker process(es) each, playbook ${playbook}; ratio = this build` +
      `${values["node-args"] === "" ? "" : ` with node ${values["node-args"]}`} / baseline (${baselineRoot}).`,
    "",
    "| Figure | Median ratio | Per round |",
    "|---|---|---|",
    row(
      "p50 at 1 in flight",
      ratio((m) => m.latencyP50),
    ),
    row(
      "executions/s at 64 in flight",
      ratio((m) => m.throughput),
    ),
    row(
      "CPU per execution at 64 in flight (API + workers)",
      ratio((m) => m.cpuUs),
    ),
    "",
    "| Peak RSS (VmHWM) after the last round, MB | API | Workers |",
    "|---|---|---|",
    ...sides.map(
      (side) =>
        `| ${side.name} | ${side.pids.api.map((pid) => peakRssMB(pid).toFixed(1)).join(", ")} | ${side.pids.workers.map((pid) => peakRssMB(pid).toFixed(1)).join(", ")} |`,
    ),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  completed = true;
} finally {
  await stopAll(children);
  // The children's logs stay for a failed run.
  if (completed) rmSync(workDir, { recursive: true, force: true });
  else log(`logs kept in ${workDir}`);
}
