import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlaybookExecutionResult } from "@pes/contracts";
import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";
import { repoRoot } from "../support/processes.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

// `pes batch --async` as a user runs it (node packages/client/bin/pes.js, output to a file, progress
// piped: JSON lines), against the real API and a worker over real Redis, through a TCP proxy the test
// cuts. 1,000 node-cpu investigations, one per host; their Prometheus is a fake on 127.0.0.1 that
// answers at once, except for the hosts the test holds back: those hold the results in order at a
// known place (item 500, then item 800), so that "midway" is a state, not a moment.

const TOTAL = 1_000;
const time = "2026-11-21T13:43:00Z";

/** A request held until the test lets it through. */
interface Gate {
  promise: Promise<void>;
  open(): void;
}

function gate(): Gate {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const gates = new Map<string, Gate>();
let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;
let proxy: TcpProxy;
let dir: string;

beforeAll(async () => {
  prometheus = await startTestHttpServer(async (request, response) => {
    // The connector POSTs the query as a form: node-cpu asks about instance="<host>".
    const query = new URLSearchParams(request.body).get("query") ?? "";
    const host = /instance="([^"]+)"/.exec(query)?.[1] ?? "";
    await gates.get(host)?.promise;
    const now = Math.floor(Date.now() / 1000);
    const values = Array.from({ length: 10 }, (_, i) => [now - 600 + i * 60, "0.5"]);
    sendJson(response, 200, { status: "success", data: { resultType: "matrix", result: [{ metric: { instance: host }, values }] } });
  });
  config = await exampleConfig({ metrics: prometheus.url });
  stack = await startStack({
    name: "client-batch-async",
    configDir: config.dir,
    // A held item must not time out while the test cuts and restores the network.
    workerEnv: { WORKER_CONCURRENCY: "40", WORKER_BATCH_CONCURRENCY: "40", ACTION_TIMEOUT_MS: "120000" },
  });
  const api = new URL(stack.baseUrl);
  proxy = await startTcpProxy({ host: api.hostname, port: Number(api.port) });
  dir = await mkdtemp(join(tmpdir(), "pes-batch-async-"));
});

afterAll(async () => {
  for (const held of gates.values()) held.open();
  await proxy?.close();
  await stack?.stop();
  await prometheus?.close();
  await config?.remove();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface CliEvent {
  event: "accepted" | "progress" | "reconnecting";
  batchId: string;
  written?: number;
  resume?: string;
  status?: string;
}

/** `pes` as a process, its stderr's JSON lines (the progress) read as they come. */
interface PesRun {
  child: ChildProcess;
  events: CliEvent[];
  /** Resolves with the first event (seen or to come) for which `test` holds. */
  waitFor(test: (event: CliEvent) => boolean): Promise<CliEvent>;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function pes(args: string[]): PesRun {
  const child = spawn(process.execPath, [`${repoRoot}packages/client/bin/pes.js`, ...args], {
    env: { PATH: process.env.PATH ?? "", PES_URL: proxy.url, PES_TOKEN: stack.token() },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const events: CliEvent[] = [];
  const waiters = new Set<() => void>();
  let stdout = "";
  let stderr = "";
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("{")) events.push(JSON.parse(line) as CliEvent);
    for (const waiter of [...waiters]) waiter();
  });
  const exited = once(child, "close").then(() => ({ code: child.exitCode, stdout, stderr }));
  return {
    child,
    events,
    exited,
    waitFor: (test) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(test);
          if (found === undefined) return;
          waiters.delete(check);
          resolve(found);
        };
        waiters.add(check);
        void exited.then(({ code }) => {
          waiters.delete(check);
          reject(new Error(`pes exited (${code}) before the event awaited:\n${stderr}`));
        });
        check();
      }),
  };
}

/** The host a node-cpu result is about, from its gadget's title ("CPU of <host>"). */
function hostOf(result: PlaybookExecutionResult): string | undefined {
  return /^CPU of (.+)$/.exec(result.gadgetsHighlights?.[0]?.title ?? "")?.[1];
}

describe("pes batch --async against a running API and worker", () => {
  it("1,000 items: the connection cut midway and made again, the CLI killed and run again: every result written once, in order", {
    timeout: 240_000,
  }, async () => {
    const hosts = Array.from({ length: TOTAL }, (_, i) => `web-${i}`);
    const file = join(dir, "issues.jsonl");
    await writeFile(file, hosts.map((host) => JSON.stringify({ bookName: "node-cpu", attributes: { host }, time })).join("\n"));
    const out = join(dir, "results.jsonl");
    const atItem500 = gate();
    const atItem800 = gate();
    gates.set("web-500", atItem500);
    gates.set("web-800", atItem800);

    const first = pes(["batch", "--async", file, "--out", out]);
    const accepted = await first.waitFor((event) => event.event === "accepted");
    expect(accepted.resume).toBe(`pes batch --resume ${accepted.batchId} --out ${out}`);

    // Items 0-499 answered, 500 held: the written results stop there.
    await first.waitFor((event) => event.written === 500);
    // The network goes: every connection through the proxy is reset, and new ones are refused.
    const connectionsBefore = proxy.accepted;
    await proxy.cut();
    await first.waitFor((event) => event.event === "reconnecting");
    await proxy.restore();
    atItem500.open();
    // The CLI connected again by itself and wrote on, up to the next held item.
    await first.waitFor((event) => event.written === 800);
    expect(proxy.accepted).toBeGreaterThan(connectionsBefore);

    // Now the CLI itself dies mid-batch, without a chance to tidy up.
    first.child.kill("SIGKILL");
    await first.exited;
    expect((await readFile(out, "utf8")).split("\n").filter((line) => line !== "")).toHaveLength(800);
    atItem800.open();

    // The same command again: the same batch (the key derived from the file), continued after the file's 800 lines.
    const second = pes(["batch", "--async", file, "--out", out]);
    const { code, stderr } = await second.exited;
    expect(code, stderr).toBe(0);
    expect(second.events[0]).toMatchObject({ event: "accepted", batchId: accepted.batchId });
    const written = second.events.flatMap((event) => (event.written === undefined ? [] : [event.written]));
    expect(Math.min(...written)).toBeGreaterThanOrEqual(800);
    expect(second.events.at(-1)).toMatchObject({ event: "progress", status: "completed", written: TOTAL });

    // Every result once, in input order: line i is host i's investigation.
    const lines = (await readFile(out, "utf8")).split("\n");
    expect(lines.pop()).toBe("");
    const results = lines.map((line) => PlaybookExecutionResult.parse(JSON.parse(line)));
    expect(results.map(hostOf)).toEqual(hosts);
    expect(results.filter((result) => result.error !== undefined)).toEqual([]);

    // --resume by id, on stdout from --from: the same results again, read from the API.
    const tail = pes(["batch", "--resume", accepted.batchId, "--from", String(TOTAL - 10), "--quiet"]);
    const resumed = await tail.exited;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trimEnd().split("\n")).toEqual(lines.slice(TOTAL - 10));
  });
});
