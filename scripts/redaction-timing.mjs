// Times the redaction boundary on the benchmark's largest answer: one execution of a playbook whose one
// action gets the 30 MiB Prometheus range answer with 3000 series (largeRangeAnswer, as the benchmark and
// apps/worker/src/large-answer.test.ts make it), with every built-in detector on and with all of them off,
// three runs each, with and without keeping the evidence bundle. Prints the medians and their difference:
// what redaction adds to an execution. Run after a build: `node scripts/redaction-timing.mjs`.
// First, the redaction alone: the answer parsed whole (as a bundle holds it) and redacted with every
// built-in detector on, every label and sample string walked.
// Not a test: figures depend on the machine; write them in the report, never assert them.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, resolveCatalogSecrets } from "../packages/config/dist/index.js";
import { compileRedaction, createRedactor, DEFAULT_REDACTION_POLICY } from "../packages/connectors/dist/index.js";
import { createEngine } from "../packages/engine/dist/index.js";
import { LARGE_ANSWER_END, largeRangeAnswer, startTestHttpServer } from "../packages/local-services/dist/index.js";
import { createLogger } from "../packages/logger/dist/index.js";

const RUNS = 3;
const answer = largeRangeAnswer(30, 3000);
{
  const parsed = JSON.parse(answer.toString("utf8"));
  const compiled = compileRedaction(DEFAULT_REDACTION_POLICY);
  const durations = [];
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    const redacted = createRedactor(compiled).value({ kind: "prometheus", data: parsed.data });
    durations.push(performance.now() - started);
    if (redacted.data.result[0].metric.instance === parsed.data.result[0].metric.instance) throw new Error("nothing was redacted");
  }
  durations.sort((a, b) => a - b);
  process.stdout.write(`redacting the parsed answer alone: ${durations.map((ms) => ms.toFixed(0)).join(", ")} ms (median ${durations[1].toFixed(0)} ms)\n`);
}
const prometheus = await startTestHttpServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
  response.end(answer);
});
const dir = await mkdtemp(join(tmpdir(), "pes-redaction-timing-"));
const off = { detectors: { email: false, ipv4: false, ipv6: false, bearer: false, "api-key": false, card: false, jwt: false } };
const organizations = {
  on: {},
  off: { redaction: off },
  "on-kept": { evidence: { keep: true, maxBytes: 64 * 1024 * 1024 } },
  "off-kept": { evidence: { keep: true, maxBytes: 64 * 1024 * 1024 }, redaction: off },
};
const playbook = {
  name: "large",
  gadgets: [{ title: "Large", actions: [{ title: "large", dataSource: "metrics", prometheus: { query: "large", unit: "s" } }] }],
};
try {
  await mkdir(join(dir, "organizations"));
  for (const [id, extra] of Object.entries(organizations)) {
    const file = { id, clientIds: [id], dataSources: { metrics: { type: "prometheus", url: prometheus.url } }, ...extra };
    await writeFile(join(dir, "organizations", `${id}.yaml`), JSON.stringify(file));
    await mkdir(join(dir, "playbooks", id), { recursive: true });
    await writeFile(join(dir, "playbooks", id, "large.yaml"), JSON.stringify(playbook));
  }
  const catalog = await loadConfig(dir);
  const engine = createEngine({
    catalog,
    secrets: resolveCatalogSecrets(catalog, { env: {} }).secrets,
    logger: createLogger({ name: "redaction-timing", level: "warn" }),
    actionTimeoutMs: 120_000,
    maxConcurrentActions: 1,
    keepEvidence: async () => {},
  });
  const time = new Date((LARGE_ANSWER_END - 600) * 1000).toISOString();
  const medians = {};
  for (const orgId of Object.keys(organizations)) {
    const durations = [];
    for (let run = 0; run < RUNS; run += 1) {
      const job = { orgId, requestId: `t-${run}`, v: 1, replyTo: "t", deadline: Date.now() + 120_000, bookName: "large", time, attributes: {}, liveRun: false };
      const started = performance.now();
      const { result } = await engine.investigate(job, undefined, `exec-${orgId}-${run}`);
      durations.push(performance.now() - started);
      if ("error" in result && result.error !== undefined) throw new Error(result.error);
    }
    durations.sort((a, b) => a - b);
    medians[orgId] = durations[Math.floor(RUNS / 2)];
    process.stdout.write(`${orgId}: ${durations.map((ms) => ms.toFixed(0)).join(", ")} ms (median ${medians[orgId].toFixed(0)} ms)\n`);
  }
  process.stdout.write(
    `redaction adds ${(medians.on - medians.off).toFixed(0)} ms without a bundle, ${(medians["on-kept"] - medians["off-kept"]).toFixed(0)} ms keeping one\n`,
  );
  await engine.close();
} finally {
  await prometheus.close();
  await rm(dir, { recursive: true, force: true });
}
