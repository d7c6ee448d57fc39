// What the prometheus connector and the analysis keep while they read a range answer near the 32 MiB cap:
// the answer is analyzed one series at a time, so it runs in a process whose heap could not hold the answer's objects
// (a whole parse of this answer peaks near 155 MB of heap). The built connector and analysis run in a child
// process with a small heap ceiling, as a worker runs them; the answer comes from a stub Prometheus in this process.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LARGE_ANSWER_END, largeRangeAnswer, startTestHttpServer, type TestHttpServer } from "@pes/local-services";

const resolve = createRequire(import.meta.url).resolve;
const CONNECTORS = resolve("@pes/connectors");
const ANALYSIS = resolve("@pes/analysis");
const HEAP_MB = 64;
const END = LARGE_ANSWER_END;

const RUN = `
const { connectorRegistry, createHttpClient, NO_SECRETS, prepareAction } = await import(process.env.CONNECTORS);
const { readObservation, shortAnswer } = await import(process.env.ANALYSIS);
const http = createHttpClient();
const time = new Date((${END} - 600) * 1000);
const window = { start: new Date((${END} - 7200) * 1000), time, end: new Date(${END} * 1000) };
const dataSource = { type: "prometheus", url: process.env.PROMETHEUS_URL };
const action = prepareAction(connectorRegistry.get("prometheus"), dataSource, { query: "http_request_duration_seconds", range: true, unit: "s" }, { secrets: NO_SECRETS, http });
const observed = await action.run({ title: "p99 latency", attributes: {}, window, signal: AbortSignal.timeout(60_000) });
// The analysis reads the series from the answer's bytes one at a time, as the engine has it do.
const [evidence] = readObservation(observed.observation, { action: "p99 latency", window });
await http.close();
process.stdout.write(JSON.stringify({ ...evidence, shortAnswer: shortAnswer(evidence, time) }));
`;

describe("the prometheus connector on an answer near the size cap", () => {
  let prometheus: TestHttpServer;
  let dir: string;
  let size = 0;
  beforeAll(async () => {
    const answer = largeRangeAnswer(30, 3000);
    size = answer.length;
    prometheus = await startTestHttpServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      response.end(answer);
    });
    dir = await mkdtemp(join(tmpdir(), "pes-large-answer-"));
    await writeFile(join(dir, "run.mjs"), RUN);
  });
  afterAll(async () => {
    await prometheus?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(`analyzes 30 MiB and 3000 series with a ${HEAP_MB} MB heap`, async () => {
    expect(size).toBeGreaterThan(29 * 1024 * 1024);
    const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, join(dir, "run.mjs")], {
      env: { PATH: process.env.PATH ?? "", CONNECTORS, ANALYSIS, PROMETHEUS_URL: prometheus.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const [code] = (await once(child, "exit")) as [number | null];
    expect(output).not.toMatch(/heap out of memory/);
    expect(code).toBe(0);
    expect(JSON.parse(output)).toMatchObject({
      kind: "metric",
      abnormal: true,
      seriesCount: 3000,
      shortAnswer: expect.stringMatching(/^p99 latency \(instance=[\d.:]+, pod=checkout-\d+\) 1\.\d+ s, .*; worst of 3000 series$/),
    });
  }, 60_000);
});
