/**
 * `npm run bench [-- --quick] [-- --only=plumbing,throughput,parallelism,batch,storm,webhook,async-batch,memory-recall]`
 * Runs the benchmark's scenarios (BENCHMARKS.md) against the built service and writes bench/results/latest.{json,md}.
 * It asserts no wall-clock bound: it exits non-zero only when the harness could not measure.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBench, SCENARIOS, type ScenarioName } from "./bench-run.js";
import { renderMarkdown } from "./report.js";
import { FULL_DURATIONS, QUICK_DURATIONS } from "./scenarios.js";
import { serviceIsBuilt } from "./service-processes.js";

const usage = `Usage: npm run bench -- [--quick] [--only=${SCENARIOS.join(",")}]
  --quick  short durations (under a minute), for local checks and CI
  --only   run only these scenarios (memory is measured with throughput)
Environment: REDIS_URL (use this Redis instead of spawning one).`;

function isScenario(name: string): name is ScenarioName {
  return (SCENARIOS as readonly string[]).includes(name);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const requested = values.only === undefined ? [...SCENARIOS] : values.only.split(",").map((name) => name.trim());
  const unknown = requested.filter((name) => !isScenario(name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown scenario(s): ${unknown.join(", ")}\n${usage}\n`);
    return 2;
  }
  const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
  if (!serviceIsBuilt(repoRoot)) {
    process.stderr.write("apps/api/dist/main.js or apps/worker/dist/main.js is missing: build first (npm run build)\n");
    return 2;
  }
  const resultsDir = join(repoRoot, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const started = performance.now();
  const log = (line: string): void => {
    process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
  };
  const results = await runBench({
    repoRoot,
    resultsDir,
    mode: values.quick ? "quick" : "full",
    durations: values.quick ? QUICK_DURATIONS : FULL_DURATIONS,
    scenarios: new Set(requested.filter(isScenario)),
    log,
  });
  const markdown = renderMarkdown(results);
  writeFileSync(join(resultsDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, "latest.md"), `${markdown}\n`);
  process.stdout.write(`${markdown}\n`);
  log(`wrote ${join(resultsDir, "latest.json")} and latest.md`);
  return results.failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
