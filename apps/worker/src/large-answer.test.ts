// Black-box: the built worker started with the Docker image's NODE_OPTIONS (read from the Dockerfile,
// as the benchmark does) survives real-sized Prometheus answers: one of 30 MiB with 3000 series and,
// at the same time, eight of 5 MiB, all under the 32 MiB cap, from a stub Prometheus on 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { writeConfigDir } from "@pes/config/testing";
import { JsonText, type PlaybookExecutionResult } from "@pes/contracts";
import { createLogger } from "@pes/logger";
import { LARGE_ANSWER_END, largeRangeAnswer, startRedis, startTestHttpServer, uniquePrefix, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { createExecutionClient, type ExecutionClient, type ExecutionAnswer } from "@pes/executions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const DOCKERFILE = fileURLToPath(new URL("../../../Dockerfile", import.meta.url));
const END = LARGE_ANSWER_END;

/** The image's `ENV NODE_OPTIONS=…` line, read the way bench/src/service-processes.ts reads it. */
function imageNodeOptions(): string {
  const line = /^\s*NODE_OPTIONS="?([^"\\\n]*)"?/m.exec(readFileSync(DOCKERFILE, "utf8"));
  if (line?.[1] === undefined) throw new Error("the Dockerfile sets no NODE_OPTIONS");
  return line[1];
}

const PLAYBOOK = [
  "name: large-answers",
  "gadgets:",
  "  - title: One large answer",
  "    actions:",
  "      - { title: large, dataSource: metrics, prometheus: { query: large, unit: s } }",
  "  - title: Eight at once",
  "    actions:",
  ...Array.from({ length: 8 }, (_, i) => `      - { title: medium ${i}, dataSource: metrics, prometheus: { query: 'medium{n="${i}"}', unit: s } }`),
  "",
].join("\n");

describe("a worker with the image's heap ceiling", () => {
  let redis: RedisHandle;
  let prometheus: TestHttpServer;
  let configDir: string;
  let client: ExecutionClient;
  let worker: ChildProcess | undefined;
  const prefix = uniquePrefix("worker-large");

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error("apps/worker is not built: run `npx turbo run build --filter=@pes/worker...` first");
    const large = largeRangeAnswer(30, 3000);
    const medium = largeRangeAnswer(5, 500);
    prometheus = await startTestHttpServer((request, response) => {
      const answer = new URLSearchParams(request.body).get("query") === "large" ? large : medium;
      response.writeHead(200, { "content-type": "application/json", "content-length": answer.length });
      response.end(answer);
    });
    configDir = await writeConfigDir({
      organizations: [`id: acme\nclientIds: [cli]\ndataSources:\n  metrics: { type: prometheus, url: "${prometheus.url}" }\n`],
      playbooks: { acme: [PLAYBOOK] },
    });
    redis = await startRedis();
    client = createExecutionClient({ redisUrl: redis.url, prefix, logger: createLogger({ name: "test-client", level: "silent" }) });
    await client.start();
  });

  afterAll(async () => {
    if (worker !== undefined && worker.exitCode === null && worker.signalCode === null) {
      worker.kill("SIGKILL");
      await once(worker, "exit");
    }
    await client?.close();
    await redis?.stop();
    await prometheus?.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("answers a 30 MiB range answer with 3000 series and eight 5 MiB ones at once, and keeps running", async () => {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        NODE_OPTIONS: imageNodeOptions(),
        REDIS_URL: redis.url,
        QUEUE_PREFIX: prefix,
        CONFIG_DIR: configDir,
        ACTION_TIMEOUT_MS: "60000",
        LOG_LEVEL: "info",
        WORKER_HTTP_PORT: "0",
        WORKER_HTTP_HOST: "127.0.0.1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    worker = child;
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const exited = once(child, "exit");
    while (!output.includes('"msg":"worker ready"')) {
      const event = await Promise.race([once(child.stdout, "data").then(() => "data"), exited.then(() => "exit")]);
      if (event === "exit") throw new Error(`worker exited before it was ready:\n${output}`);
    }

    const reply = await Promise.race([
      client.execute(
        { orgId: "acme", requestId: "req-large", bookName: "large-answers", time: new Date((END - 600) * 1000).toISOString(), attributes: {}, liveRun: false },
        60_000,
      ),
      exited.then(() => {
        throw new Error(`worker exited while answering:\n${output.slice(-2000)}`);
      }),
    ]);
    const result = resultOf(reply);
    const answers = result.actionResults?.map((action) => action.shortAnswer) ?? [];
    expect(answers).toHaveLength(9);
    expect(answers[0]).toMatch(/^large \(instance=«ipv4:[0-9a-f]{8}»:\d+, pod=checkout-\d+\) 1\.\d+ s, .*; worst of 3000 series$/);
    for (const answer of answers.slice(1))
      expect(answer).toMatch(/^medium \d \(instance=«ipv4:[0-9a-f]{8}»:\d+, pod=checkout-\d+\) 1\.\d+ s, .*; worst of 500 series$/);
    expect(child.exitCode).toBeNull();
    expect(output).not.toMatch(/heap out of memory/);
  }, 60_000);
});

/** The result an execution answered (a refusal fails the test). */
function resultOf({ outcome }: ExecutionAnswer): PlaybookExecutionResult {
  if (!(outcome instanceof JsonText)) throw new Error(`expected a result, got a refusal: ${outcome.describe()}`);
  return JSON.parse(outcome.text) as PlaybookExecutionResult;
}
