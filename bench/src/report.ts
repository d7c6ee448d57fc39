import type { CpuPerOperation } from "./cpu-time.js";
import type { HttpLoadResult } from "./http-load.js";
import type { BenchResults } from "./results.js";

function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function errors(load: HttpLoadResult): string {
  const total = load.errorBodies + load.non2xx + load.connectionErrors + load.timeouts;
  if (total === 0) return "0";
  const parts = [
    load.errorBodies > 0 ? `${load.errorBodies} {error}` : "",
    load.non2xx > 0
      ? `${load.non2xx} non-2xx (${Object.entries(load.statusCodes)
          .filter(([code]) => !code.startsWith("2"))
          .map(([code, count]) => `${code}×${count}`)
          .join(", ")})`
      : "",
    load.connectionErrors > 0 ? `${load.connectionErrors} connection errors` : "",
    load.timeouts > 0 ? `${load.timeouts} timeouts` : "",
  ].filter((part) => part !== "");
  return `**${total}**: ${parts.join("; ")}`;
}

function failureText(count: number, first: string | undefined): string {
  return count === 0 ? "0" : `**${count}**: ${first ?? ""}`;
}

/** "api + workers + redis": the roles a CPU figure sums. */
function cpuRoles(cpu: CpuPerOperation | undefined): string {
  return cpu === undefined ? "n/a" : Object.keys(cpu.byRoleUs).join(" + ");
}

/** "312 (api 120 + workers 150 + redis 42)". */
function cpuBreakdown(cpu: CpuPerOperation): string {
  const parts = Object.entries(cpu.byRoleUs).map(([role, us]) => `${role} ${fmt(us, 0)}`);
  return `${fmt(cpu.totalUs, 0)} (${parts.join(" + ")})`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n");
}

/** The run as markdown: machine and caveat, targets met/missed, then one table per scenario. */
export function renderMarkdown(results: BenchResults): string {
  const { machine, settings } = results;
  const lines: string[] = [];
  lines.push(`## Benchmark run: ${results.mode}, ${results.startedAt}`);
  lines.push("");
  lines.push(
    `Machine: ${machine.cpuModel}, **${machine.cores} cores**, **${fmt(machine.totalMemoryGiB)} GiB** memory, ` +
      `Node ${machine.node}, Redis ${machine.redis}, ${machine.platform}; load average at start ${machine.loadAverageAtStart.join(" / ")}. ` +
      `Commit ${results.commit}. Run took ${fmt(results.durationSeconds)} s.`,
  );
  lines.push("");
  lines.push(
    "> This machine is shared and noisy: absolute figures move from run to run. Only ratios measured in the " +
      "same run (full path vs raw BullMQ floor) compare; everything (load generator, API, workers, Redis, stub) " +
      "shares the same cores.",
  );
  lines.push("");
  lines.push(
    `Setup: 1 API process (and a second with coalescing on for scenarios 6 and 7), 1 then 2 worker processes (WORKER_CONCURRENCY=${settings.workerConcurrency}, ` +
      `MAX_CONCURRENT_ACTIONS=${settings.maxConcurrentActions}), ${settings.redis}, a stub Prometheus in its own process ` +
      `(instant and ${settings.stubDelaysMs.slow} ms), autocannon in the harness process. Raw floor: Queue.add of a no-op job → ` +
      `BullMQ Worker in a separate process → QueueEvents + job.waitUntilFinished in the producer. ` +
      `Durations: warm-up ${settings.durations.warmupSeconds} s (scenario 1: at 64 then at 1 in flight, both paths), ` +
      `latency ${settings.durations.latencySeconds} s per path in ${settings.durations.latencySliceSeconds} s slices taken in turn, ` +
      `throughput ${settings.durations.throughputSeconds} s per run; scenarios 1 and 2 in ${settings.durations.rounds} ` +
      "alternating round(s), the round with the median ratio shown.",
  );
  lines.push("");

  lines.push("### Targets");
  lines.push("");
  lines.push(
    table(
      ["Scenario", "Target", "Measured", "Limit", "Measured / limit", "Result"],
      results.targets.map((check) => [
        check.scenario,
        check.target,
        `${fmt(check.measured, check.unit === "×" ? 2 : 1)} ${check.unit}`,
        `${check.direction} ${fmt(check.limit, check.unit === "×" ? 2 : 0)} ${check.unit}`,
        fmt(check.ratioToLimit, 2),
        check.met ? "met" : "**missed**",
      ]),
    ),
  );
  lines.push("");

  if (results.plumbing !== undefined) {
    const { raw, service, p50Ratio, roundRatios } = results.plumbing;
    lines.push("### 1. Plumbing overhead: one-action playbook, instant stub, 1 in flight");
    lines.push("");
    lines.push(
      table(
        ["Path", "Completed", "p50 ms", "p90 ms", "p99 ms", "Per second", "Errors"],
        [
          [
            "raw BullMQ floor (add → worker process → result)",
            String(raw.completed),
            fmt(raw.latency.p50, 2),
            fmt(raw.latency.p90, 2),
            fmt(raw.latency.p99, 2),
            fmt(raw.jobsPerSecond, 0),
            String(raw.errors),
          ],
          [
            "full path (HTTP → API → worker → stub → API → HTTP)",
            String(service.successes),
            fmt(service.latency.p50, 2),
            fmt(service.latency.p90, 2),
            fmt(service.latency.p99, 2),
            fmt(service.throughput, 0),
            errors(service),
          ],
        ],
      ),
    );
    lines.push("");
    lines.push(
      `Full-path p50 / raw-floor p50 = **${fmt(p50Ratio, 2)}×**; per round ${roundRatios.map((ratio) => fmt(ratio, 2)).join(", ")} ` +
        "(the table is the median round).",
    );
    lines.push("");
  }

  if (results.throughput.length > 0) {
    lines.push(
      `### 2. Throughput and 5. memory: ${settings.throughputInFlight} in flight, ${settings.durations.throughputSeconds} s per side ` +
        `and round, ${settings.durations.rounds} round(s); peak RSS is each process's VmHWM after the last round`,
    );
    lines.push("");
    lines.push(
      table(
        [
          "Worker processes",
          "Raw BullMQ jobs/s",
          "Raw p50 / p99 ms",
          "Executions/s",
          "p50 ms",
          "p99 ms",
          "Ratio to raw",
          "Ratio per round",
          "Errors",
          "Raw CPU µs/job",
          "CPU µs/execution",
          "CPU ratio to raw",
          "API peak RSS MB",
          "Worker peak RSS MB",
        ],
        results.throughput.map((run) => [
          String(run.workerProcesses),
          fmt(run.raw.jobsPerSecond, 0),
          `${fmt(run.raw.latency.p50)} / ${fmt(run.raw.latency.p99)}`,
          fmt(run.service.throughput, 0),
          fmt(run.service.latency.p50),
          fmt(run.service.latency.p99),
          fmt(run.ratioToRaw, 2),
          run.roundRatios.map((ratio) => fmt(ratio, 2)).join(", "),
          errors(run.service),
          fmt(run.cpu.raw.totalUs, 0),
          fmt(run.cpu.service.totalUs, 0),
          fmt(run.cpu.ratioToRaw, 2),
          fmt(run.peakRssMB.api),
          fmt(run.peakRssMB.worker),
        ]),
      ),
    );
    lines.push("");
    const [first] = results.throughput;
    lines.push(
      `CPU is each process's utime + stime (\`/proc/<pid>/stat\`) over the measured window, per completed execution or job: ` +
        `the full path counts ${cpuRoles(first?.cpu.service)}, the raw floor ${cpuRoles(first?.cpu.raw)}` +
        `${first?.cpu.redisCounted === false ? " (Redis is external: not counted on either side)" : ""}.`,
    );
    lines.push("");
    for (const run of results.throughput) {
      lines.push(
        `- ${run.workerProcesses} worker process${run.workerProcesses > 1 ? "es" : ""}: full path ${cpuBreakdown(run.cpu.service)} µs per execution; ` +
          `raw floor ${cpuBreakdown(run.cpu.raw)} µs per job; CPU ratio per round ${run.roundCpuRatios.map((ratio) => fmt(ratio, 2)).join(", ")}.`,
      );
    }
    lines.push("");
  }

  if (results.parallelism !== undefined) {
    const p = results.parallelism;
    lines.push(`### 3. Parallelism: 10 gadgets × 3 actions, each answered after ${p.stubDelayMs} ms`);
    lines.push("");
    lines.push(
      table(
        ["Sequential requests", "Median wall ms", "p99 ms", "Wall / critical path", "Sequential sum ms (contrast)", "Errors"],
        [
          [
            String(p.requests.successes),
            fmt(p.medianWallMs),
            fmt(p.requests.latency.p99),
            `${fmt(p.criticalPathRatio, 2)}×`,
            fmt(p.sequentialSumMs, 0),
            errors(p.requests),
          ],
        ],
      ),
    );
    lines.push("");
  }

  if (results.batch.length > 0) {
    lines.push("### 4. Batch: one batch of 100 items of the one-action playbook at a time");
    lines.push("");
    lines.push(
      table(
        ["Worker processes", "Batches", "Median wall ms", "p99 wall ms", "Items/s (median)", "Errors"],
        results.batch.map(({ workerProcesses, result }) => [
          String(workerProcesses),
          String(result.requests.successes),
          fmt(result.medianWallMs),
          fmt(result.requests.latency.p99),
          fmt(result.itemsPerSecond, 0),
          errors(result.requests),
        ]),
      ),
    );
    lines.push("");
  }

  if (results.storm !== undefined) {
    const storm = results.storm;
    lines.push(
      `### 6. Storm: ${storm.requests} identical requests started within ${fmt(storm.sendWindowMs, 0)} ms, coalescing on (the default one-minute bucket), 2 worker processes`,
    );
    lines.push("");
    lines.push(
      table(
        [
          "Answered",
          "Executions run (workers)",
          "Distinct X-Execution-Id",
          "Joins (API)",
          "Stub queries",
          "Executions / request",
          "p50 ms",
          "p99 ms",
          "Lone caller p50 ms",
          "p50 / lone p50",
          "p99 / lone p50",
          "Failures",
        ],
        [
          [
            String(storm.answered),
            String(storm.executionsRun),
            String(storm.distinctExecutionIds),
            String(storm.joins),
            String(storm.stubQueries),
            fmt(storm.executionsPerRequest, 4),
            fmt(storm.latency.p50),
            fmt(storm.latency.p99),
            fmt(storm.lone.p50, 2),
            `${fmt(storm.p50ToLone, 2)}×`,
            `${fmt(storm.p99ToLone, 2)}×`,
            failureText(storm.failures, storm.firstFailure),
          ],
        ],
      ),
    );
    lines.push("");
  }

  if (results.webhookIntake !== undefined) {
    const intake = results.webhookIntake;
    lines.push(
      `### 7. Webhook intake: Alertmanager v4 notifications of ${intake.alertsPerNotification} firing alerts, ${intake.connections} at a time, ${intake.workerProcesses} worker processes`,
    );
    lines.push("");
    lines.push(
      table(
        ["Pass", "Alerts", "Started", "Joined", "Unmatched", "Alerts accepted/s", "Notification p50 / p99 ms", "Failures"],
        (
          [
            ["distinct alerts", intake.fresh],
            ["the same again (re-notification)", intake.renotified],
          ] as const
        ).map(([label, pass]) => [
          label,
          String(pass.alerts),
          String(pass.started),
          String(pass.joined),
          String(pass.unmatched),
          fmt(pass.alertsPerSecond, 0),
          `${fmt(pass.latency.p50)} / ${fmt(pass.latency.p99)}`,
          failureText(pass.failures, pass.firstFailure),
        ]),
      ),
    );
    lines.push("");
    lines.push(
      `Distinct alerts accepted/s / the throughput scenario's executions/s with ${intake.workerProcesses} workers = **${fmt(intake.ratioToThroughput, 2)}×** ` +
        `(the 202 comes before anything runs). The workers ran ${intake.executionsRun} executions for both passes; the last finished ` +
        `${fmt(intake.drainMs / 1000)} s after the first notification.`,
    );
    lines.push("");
  }

  if (results.asyncBatch !== undefined) {
    const batchRun = results.asyncBatch;
    lines.push(
      `### 8. Async batch: ${batchRun.items} items of the one-action playbook with \`Prefer: respond-async\`, ${batchRun.workerProcesses} worker processes, beside one synchronous caller`,
    );
    lines.push("");
    lines.push(
      table(
        ["Items", "202 after ms", "Last item done after s", "Items/s", "Items/s / throughput exec/s", "Failed items", "Progress reads", "Read p50 / max ms"],
        [
          [
            String(batchRun.items),
            fmt(batchRun.acceptMs, 0),
            fmt(batchRun.wallMs / 1000, 2),
            fmt(batchRun.itemsPerSecond, 0),
            `${fmt(batchRun.ratioToThroughput, 2)}×`,
            String(batchRun.failedItems),
            String(batchRun.polls),
            `${fmt(batchRun.progressReadLatency.p50, 0)} / ${fmt(batchRun.progressReadLatency.max, 0)}`,
          ],
        ],
      ),
    );
    lines.push("");
    lines.push(
      table(
        ["Synchronous caller (1 in flight)", "Requests", "p50 ms", "p99 ms", "Failures"],
        (
          [
            ["idle (before and after the batch)", batchRun.idle],
            ["while the batch runs", batchRun.busy],
            ["… of which before its 202 (the API taking it in)", batchRun.busyIntake],
            ["… of which after its 202 (its items running)", batchRun.busyItems],
          ] as const
        ).map(([label, sync]) => [
          label,
          String(sync.latency.count),
          fmt(sync.latency.p50, 2),
          fmt(sync.latency.p99, 2),
          failureText(sync.failures, sync.firstFailure),
        ]),
      ),
    );
    lines.push("");
    lines.push(`During / idle: p50 **${fmt(batchRun.p50Ratio, 2)}×**, p99 **${fmt(batchRun.p99Ratio, 2)}×**.`);
    lines.push("");
    const loop = batchRun.eventLoopDelay;
    lines.push(
      `API event-loop delay from just before the POST to ${settings.durations.asyncBatchEventLoopSeconds} s after its 202 ` +
        `(a ${fmt(loop.windowMs / 1000, 2)} s window, prom-client's \`monitorEventLoopDelay\` histogram, reset by the scrape that opened it): ` +
        `p50 ${fmt(loop.p50Ms)} ms, **p99 ${fmt(loop.p99Ms)} ms**, max ${fmt(loop.maxMs)} ms.`,
    );
    lines.push("");
  }

  if (results.memoryRecall !== undefined) {
    const memory = results.memoryRecall;
    lines.push(`### 9. Memory: ${memory.recalls} recalls over ${memory.executions} remembered executions of one organization`);
    lines.push("");
    lines.push(
      table(
        ["Recall", "p50 ms", "p90 ms", "p99 ms", "max ms"],
        (
          [
            ["as its caller waits (one round trip, the comparison included)", memory.recallWallMs],
            ...(memory.recallRedisMs === undefined ? [] : [["in Redis (Σ of its commands' SLOWLOG time)", memory.recallRedisMs] as const]),
          ] as const
        ).map(([label, latency]) => [label, fmt(latency.p50, 2), fmt(latency.p90, 2), fmt(latency.p99, 2), fmt(latency.max, 2)]),
      ),
    );
    lines.push("");
    lines.push(
      `**${fmt(memory.bytesPerExecution, 0)} bytes** per remembered execution (Σ MEMORY USAGE of ${memory.keys} keys); ` +
        `remembered at ${fmt(memory.rememberedPerSecond, 0)}/s (64 at a time); ${memory.recallsWithHistory} of ${memory.recalls} recalls found a similar past execution.`,
    );
    lines.push("");
  }

  if (results.failures.length > 0) {
    lines.push("### Failures");
    lines.push("");
    for (const failure of results.failures) lines.push(`- ${failure.split("\n")[0] ?? failure}`);
    lines.push("");
  }
  return lines.join("\n");
}
