import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createClient } from "@pes/client";
import { PlaybookExecutionResult, PlaybookList } from "@pes/contracts";
import { freePort } from "@pes/local-services";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { repoRoot } from "../support/processes.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

// The typed client and the `pes` CLI against the real API and a worker, as separate processes. The
// CLI runs as a user runs it (`npm run -s pes --`, i.e. node packages/client/bin/pes.js) with its
// output piped: not a terminal.

const time = "2026-11-21T13:43:00Z";

let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;
let dir: string;

beforeAll(async () => {
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
  // A small MAX_IN_FLIGHT, so that a test can fill it and see the client wait out the API's 429.
  // Its identical requests are meant as separate executions (three of them fill MAX_IN_FLIGHT).
  stack = await startStack({ name: "client-cli", configDir: config.dir, apiEnv: { MAX_IN_FLIGHT: "3", BATCH_MAX_ITEMS: "3", COALESCE_BUCKET_SECONDS: "0" } });
  dir = await mkdtemp(join(tmpdir(), "pes-client-cli-"));
});

afterAll(async () => {
  await stack?.stop();
  await prometheus?.close();
  await config?.remove();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Runs `pes <args>` as a process, stdin closed and stdout/stderr piped; PES_URL/PES_TOKEN from the stack. */
async function pes(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [`${repoRoot}packages/client/bin/pes.js`, ...args], {
    env: { PATH: process.env.PATH ?? "", PES_URL: stack.baseUrl, PES_TOKEN: stack.token(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "close", not "exit": by then stdout and stderr have been read to the end.
  await once(child, "close");
  return { code: child.exitCode, stdout, stderr };
}

/** The host a node-cpu result is about, read from its gadget's title ("CPU of <host>"). */
function hostOf(result: PlaybookExecutionResult): string | undefined {
  return /^CPU of (.+)$/.exec(result.gadgetsHighlights?.[0]?.title ?? "")?.[1];
}

describe("the typed client against a running API", () => {
  const client = () => createClient({ baseUrl: stack.baseUrl, token: () => stack.token() });

  it("lists the organization's playbooks", async () => {
    const playbooks = await client().listPlaybooks();
    expect(playbooks.map((playbook) => playbook.name).sort()).toEqual(["checkout-errors", "checkout-latency", "node-cpu"]);
  });

  it("runs an investigation identified by its title", async () => {
    const result = await client().run({ title: "High CPU on web-1", time });
    expect(result.error).toBeUndefined();
    expect(hostOf(result)).toBe("web-1");
    const action = result.actionResults?.find((candidate) => candidate.title === "CPU busy");
    expect(new URL(action?.mostImportantLink ?? "").origin).toBe(prometheus.url);
  });

  it("runs a batch: one result per input, in order, a bad item being that item's error", async () => {
    const results = await client().runBatch({
      inputList: [
        { title: "High CPU on web-1", time },
        { title: "Nothing matches this", time },
        { bookName: "node-cpu", attributes: { host: "web-3" }, time },
      ],
    });
    expect(results).toHaveLength(3);
    expect(hostOf(results[0] ?? {})).toBe("web-1");
    expect(results[1]?.error).toMatch(/monitor name/);
    expect(hostOf(results[2] ?? {})).toBe("web-3");
  });

  it("waits out a 429 for the Retry-After the API gives, then runs", async () => {
    // Three executions held at Prometheus fill the API's load shedding (MAX_IN_FLIGHT=3).
    prometheus.hold();
    const seen = prometheus.requests.length;
    const inputList = ["web-1", "web-2", "web-3"].map((host) => ({ bookName: "node-cpu", attributes: { host }, time }));
    const filling = client().runBatch({ inputList });
    await prometheus.waitForRequests(seen + 3);
    const waits: number[] = [];
    const patient = createClient({
      baseUrl: stack.baseUrl,
      token: stack.token(),
      // Refused (429): the held executions finish (freeing room under MAX_IN_FLIGHT) while the client waits as asked.
      sleep: async (ms, signal) => {
        waits.push(ms);
        prometheus.release();
        await filling;
        await delay(ms, undefined, { signal });
      },
    });
    const result = await patient.run({ title: "High CPU on web-4", time });
    expect(waits).toEqual([1000]);
    expect(hostOf(result)).toBe("web-4");
    expect((await filling).map(hostOf)).toEqual(["web-1", "web-2", "web-3"]);
  });

  it("throws a 400 as an ApiError carrying the API's issues", async () => {
    const error = await client()
      .run({ bookName: "no-such-book" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, issues: [{ path: ["body", "bookName"], message: expect.stringMatching(/Unknown playbook "no-such-book"/) }] });
  });
});

describe("the pes CLI against a running API, output piped", () => {
  it("pes playbooks prints the list as JSON", async () => {
    const { code, stdout } = await pes(["playbooks"]);
    expect(code).toBe(0);
    expect(PlaybookList.parse(JSON.parse(stdout)).map((playbook) => playbook.name)).toContain("node-cpu");
  });

  it("pes run with flags prints the investigation as text when asked", async () => {
    const { code, stdout, stderr } = await pes(["run", "--title", "High CPU on web-1", "--attr", "env=prod", "--time", "2026-11-21T13:43Z", "-o", "text"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Gadgets\n {2}- CPU of web-1\n/m);
    expect(stdout).toMatch(/^Actions\n {2}- CPU busy/m);
    expect(stdout).toContain(`    ${prometheus.url}/graph?`);
    expect(stdout).toMatch(/^Mitigations\n {2}- Node Exporter dashboard of web-1 \(Grafana\)/m);
  });

  it("pes batch sends the file in chunks: JSON lines on stdout in input order, a progress line per request on stderr", async () => {
    const hosts = ["web-1", "web-2", "web-3", "web-4", "web-5"];
    const lines = hosts.map((host, i) =>
      JSON.stringify(i === 2 ? { title: "Nothing matches this", time } : { bookName: "node-cpu", attributes: { host }, time }),
    );
    const file = join(dir, "issues.jsonl");
    await writeFile(file, `${lines.join("\n")}\n`);

    const { code, stdout, stderr } = await pes(["batch", file, "--chunk", "2"]);
    const results = stdout
      .trimEnd()
      .split("\n")
      .map((line) => PlaybookExecutionResult.parse(JSON.parse(line)));
    expect(results.map((result) => hostOf(result) ?? result.error)).toEqual(["web-1", "web-2", expect.stringMatching(/monitor name/), "web-4", "web-5"]);
    // The third input's error makes the run's exit code 1.
    expect(code).toBe(1);
    expect(stderr).toBe(
      "pes batch: 2/5 inputs answered (request 1 of 3)\n" +
        "pes batch: 4/5 inputs answered (request 2 of 3)\n" +
        "pes batch: 5/5 inputs answered (request 3 of 3)\n",
    );
  });

  it("exits 3 when a chunk is larger than the API's BATCH_MAX_ITEMS, saying so", async () => {
    const file = join(dir, "four.jsonl");
    await writeFile(
      file,
      Array(4)
        .fill(JSON.stringify({ bookName: "node-cpu", time }))
        .join("\n"),
    );
    const { code, stdout, stderr } = await pes(["batch", file, "--chunk", "4", "--quiet"]);
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^pes: HTTP 400: body\.inputList: inputList must hold at most 3 inputs/);
  });

  it("exits 3 for the API's 400, saying why", async () => {
    // The token from the flag this time, not the environment.
    const { code, stdout, stderr } = await pes(["run", "--book", "no-such-book", "--token", stack.token()], { PES_TOKEN: "" });
    expect(code).toBe(3);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/^pes: HTTP 400: body\.bookName: Unknown playbook "no-such-book".*\(request id \S+\)\n$/);
  });

  it("exits 3 for a token the API refuses", async () => {
    const { code, stderr } = await pes(["playbooks"], { PES_TOKEN: "not-a-jwt" });
    expect(code).toBe(3);
    expect(stderr).toMatch(/^pes: HTTP 401: /);
  });

  it("exits 4 when nothing answers at the URL", async () => {
    const port = await freePort();
    const { code, stderr } = await pes(["playbooks", "--url", `http://127.0.0.1:${port}`]);
    expect(code).toBe(4);
    expect(stderr).toMatch(/unreachable: ECONNREFUSED/);
  });
});
