import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EvidenceBundle } from "@pes/contracts";
import { freePort } from "@pes/local-services";
import { ExitCode, runCli } from "./cli-program.js";
import { batchIdempotencyKey } from "./batch-idempotency-key.js";
import { isEventStream, startFakeBatchApi, type FakeBatchApi } from "./testing/batch-api.js";
import { replayReport } from "@pes/analysis";
import { deployBundle } from "./testing/deploy-bundle.js";
import { startScriptedApi, type ScriptedAnswer, type ScriptedApi } from "./testing/scripted-api.js";

const result = {
  highlights: "CPU of web-1 at 97 % since 13:40",
  actionResults: [{ title: "CPU busy", shortAnswer: "97 %", mostImportantLink: "http://prometheus/graph?g0.expr=cpu" }],
};

class Buffered {
  text = "";
  constructor(readonly isTTY = false) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

let api: ScriptedApi | undefined;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "pes-cli-test-"));
});
afterEach(async () => {
  await api?.close();
  api = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Runs `pes` in-process against a scripted API (PES_URL and PES_TOKEN set unless `env` says otherwise). */
async function pes(
  argv: string[],
  options: { answers?: ScriptedAnswer[]; env?: Record<string, string>; stdoutTTY?: boolean; stderrTTY?: boolean; stdin?: string } = {},
) {
  api = await startScriptedApi(options.answers ?? [{ status: 200, body: result }]);
  const stdout = new Buffered(options.stdoutTTY);
  const stderr = new Buffered(options.stderrTTY);
  const env = { PES_URL: api.url, PES_TOKEN: "env-token", ...options.env };
  const code = await runCli(argv, { stdout, stderr, env, stdin: Readable.from([options.stdin ?? ""]) });
  return { code, stdout: stdout.text, stderr: stderr.text, requests: api.requests };
}

const sentBodies = (requests: readonly { body: string }[]): unknown[] => requests.map((request) => JSON.parse(request.body));

describe("pes run", () => {
  it("turns its flags into the API's input, with minutes-only times completed", async () => {
    const { code, stdout, requests } = await pes([
      "run",
      "--title",
      "High CPU on web-1",
      "--attr",
      "host=web-1",
      "--attr",
      "query=a=b",
      "--time",
      "2026-11-21T13:43Z",
      "--details",
      "paged twice",
      "--channel",
      "C123",
      "--live",
    ]);
    expect(code).toBe(ExitCode.ok);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: "POST", url: "/playbook/execution", headers: { authorization: "Bearer env-token" } });
    expect(sentBodies(requests)).toEqual([
      {
        title: "High CPU on web-1",
        attributes: { host: "web-1", query: "a=b" },
        time: "2026-11-21T13:43:00Z",
        details: "paged twice",
        channelId: "C123",
        liveRun: true,
      },
    ]);
    // stdout is not a terminal: JSON by default.
    expect(JSON.parse(stdout)).toEqual(result);
  });

  it("takes --url and --token over the environment, before or after the command", async () => {
    const other = await startScriptedApi([{ status: 200, body: result }]);
    try {
      const { code, requests } = await pes(["--url", other.url, "run", "--book", "node-cpu", "--token", "flag-token"]);
      expect(code).toBe(ExitCode.ok);
      expect(requests).toHaveLength(0);
      expect(other.requests[0]?.headers.authorization).toBe("Bearer flag-token");
    } finally {
      await other.close();
    }
  });

  it("prints text on a terminal: highlights, actions with their links", async () => {
    const { stdout } = await pes(["run", "--book", "node-cpu"], { stdoutTTY: true });
    expect(stdout).toContain("CPU of web-1 at 97 % since 13:40");
    expect(stdout).toMatch(/Actions\n {2}- CPU busy: 97 %\n {4}http:\/\/prometheus\/graph\?g0\.expr=cpu/);
  });

  it("prints JSON on a terminal when asked to", async () => {
    const { stdout } = await pes(["run", "--book", "node-cpu", "-o", "json"], { stdoutTTY: true });
    expect(JSON.parse(stdout)).toEqual(result);
  });

  it("exits 1 when the result carries error, printing the result all the same", async () => {
    const { code, stdout } = await pes(["run", "--book", "node-cpu"], { answers: [{ status: 200, body: { error: "Execution timed out after 120000 ms" } }] });
    expect(code).toBe(ExitCode.resultError);
    expect(JSON.parse(stdout)).toEqual({ error: "Execution timed out after 120000 ms" });
  });

  it("exits 3 with the API's message for a 400, and for a 5xx", async () => {
    const invalid = await pes(["run", "--book", "nope"], {
      answers: [{ status: 400, body: { error: [{ path: ["body", "bookName"], message: 'Unknown playbook "nope"' }] }, headers: { "x-request-id": "r-1" } }],
    });
    expect(invalid.code).toBe(ExitCode.api);
    expect(invalid.stdout).toBe("");
    expect(invalid.stderr).toBe('pes: HTTP 400: body.bookName: Unknown playbook "nope" (request id r-1)\n');
    await api?.close();
    const broken = await pes(["playbooks"], { answers: [{ status: 500, body: { error: "Internal server error" } }] });
    expect(broken.code).toBe(ExitCode.api);
  });

  it("exits 4 when the API is unreachable", async () => {
    const port = await freePort();
    const { code, stderr } = await pes(["playbooks"], { env: { PES_URL: `http://127.0.0.1:${port}` } });
    expect(code).toBe(ExitCode.unreachable);
    expect(stderr).toMatch(/unreachable: ECONNREFUSED/);
  });

  it("exits 4 when the API does not answer within --timeout", async () => {
    const { code, stderr } = await pes(["--timeout", "0.05", "run", "--book", "node-cpu"], { answers: ["hold"] });
    expect(code).toBe(ExitCode.unreachable);
    expect(stderr).toMatch(/no answer within 50 ms/);
  });

  it.each([
    [["run", "--title", "High CPU on web-1"], /--time: time is required/],
    [["run", "--book", "node-cpu", "--time", "yesterday"], /--time: time must be an ISO 8601 date-time/],
    [["run", "--book", "node-cpu", "--attr", "host"], /--attr takes key=value/],
    [["run", "--book", "node-cpu", "--bogus"], /unknown option '--bogus'/],
    [["run", "--book", "node-cpu", "-o", "yaml"], /Allowed choices are json, text/],
    [["batch", "x.jsonl", "--chunk", "0"], /--chunk.*must be a positive integer/],
    [["batch"], /missing the input file \(- for stdin\), or --resume <id>/],
    [["batch", "x.jsonl", "--resume", "b-1"], /--resume follows a batch already submitted: give no input file/],
    [["batch", "--resume", "b-1", "--async"], /--resume and --async: choose one/],
    [["batch", "--resume", "b-1", "--live"], /--live is for submitting a batch, not for --resume/],
    [["batch", "x.jsonl", "--async", "--chunk", "10"], /--chunk is for synchronous batches/],
    [["batch", "--resume", "b-1", "--out", "r.jsonl", "--from", "3"], /--from is for stdout/],
    [["batch", "--resume", "b-1", "--out", "r.jsonl", "-o", "text"], /--out writes JSON lines/],
    [["batch", "x.jsonl", "--out", "r.jsonl"], /--out needs --async or --resume/],
    [["batch", "x.jsonl", "--idempotency-key", "k"], /--idempotency-key needs --async or --resume/],
    [["batch", "--resume", "b-1", "--from", "-1"], /--from.*must be a non-negative integer/],
    [["batch", "x.jsonl", "--async", "--idempotency-key", "é"], /--idempotency-key must be 1-255 printable ASCII characters/],
    [["frobnicate"], /unknown command 'frobnicate'/],
    [["playbooks", "--url", "ftp://example.com"], /--url: baseUrl must be an http\(s\) URL/],
  ])("exits 2 for a usage error and sends nothing: %j", async (argv, message) => {
    const { code, stderr, requests } = await pes(argv);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(message);
    expect(requests).toHaveLength(0);
  });

  it("exits 2 without a token", async () => {
    const { code, stderr } = await pes(["playbooks"], { env: { PES_TOKEN: "" } });
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/no token: pass --token or set PES_TOKEN/);
  });

  it("exits 0 for --help, listing the exit codes", async () => {
    const { code, stdout } = await pes(["--help"]);
    expect(code).toBe(ExitCode.ok);
    expect(stdout).toMatch(/Exit codes:\n {2}0 {2}ok\n {2}1 /);
  });
});

describe("pes playbooks", () => {
  const playbooks = [
    { name: "checkout-latency", monitorNames: ["High latency on {{service}} in {{env}}"], requiredAttributes: ["service"] },
    { name: "node-cpu", monitorNames: ["High CPU on {{host}}"] },
  ];

  it("prints the list as JSON when piped", async () => {
    const { code, stdout, requests } = await pes(["playbooks"], { answers: [{ status: 200, body: playbooks }] });
    expect(code).toBe(ExitCode.ok);
    expect(requests[0]).toMatchObject({ method: "GET", url: "/playbook" });
    expect(JSON.parse(stdout)).toEqual(playbooks);
  });

  it("prints names, monitor names and required attributes as text", async () => {
    const { stdout } = await pes(["playbooks", "--output", "text"], { answers: [{ status: 200, body: playbooks }] });
    expect(stdout).toBe(
      "checkout-latency\n  monitor: High latency on {{service}} in {{env}}\n  requires: service\nnode-cpu\n  monitor: High CPU on {{host}}\n",
    );
  });
});

describe("pes batch", () => {
  const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ bookName: "node-cpu", attributes: { host: `web-${i + 1}` } }));
  /** Each request answered with one result per item, naming the item's position in the file. */
  const answers: ScriptedAnswer[] = [
    { status: 200, body: [{ highlights: "1" }, { highlights: "2" }] },
    { status: 200, body: [{ highlights: "3" }, { error: "title: No playbook's monitor name matches this title" }] },
    { status: 200, body: [{ highlights: "5" }] },
  ];

  async function inputFile(content: string): Promise<string> {
    const file = join(dir, "issues.jsonl");
    await writeFile(file, content);
    return file;
  }

  it("sends the file in chunks and prints one JSON line per input, in order, with a progress line per request", async () => {
    const file = await inputFile(`${lines.join("\n")}\n\n`);
    const { code, stdout, stderr, requests } = await pes(["batch", file, "--chunk", "2", "--channel", "C9"], { answers });
    expect(requests.map((request) => request.url)).toEqual(Array(3).fill("/playbook/execution/batch"));
    expect(sentBodies(requests)).toEqual([
      { inputList: [JSON.parse(lines[0] ?? ""), JSON.parse(lines[1] ?? "")], channelId: "C9" },
      { inputList: [JSON.parse(lines[2] ?? ""), JSON.parse(lines[3] ?? "")], channelId: "C9" },
      { inputList: [JSON.parse(lines[4] ?? "")], channelId: "C9" },
    ]);
    expect(stdout.split("\n")).toEqual([
      '{"highlights":"1"}',
      '{"highlights":"2"}',
      '{"highlights":"3"}',
      '{"error":"title: No playbook\'s monitor name matches this title"}',
      '{"highlights":"5"}',
      "",
    ]);
    // One item carries error: exit 1.
    expect(code).toBe(ExitCode.resultError);
    expect(stderr).toBe(
      "pes batch: 2/5 inputs answered (request 1 of 3)\n" +
        "pes batch: 4/5 inputs answered (request 2 of 3)\n" +
        "pes batch: 5/5 inputs answered (request 3 of 3)\n",
    );
  });

  it("draws a bar redrawn in place when stderr is a terminal", async () => {
    const { stderr } = await pes(["batch", "-", "--chunk", "2"], { answers, stdin: lines.join("\n"), stderrTTY: true });
    const frames = stderr.split("\r\u001b[2K").filter((frame) => frame !== "");
    expect(frames[0]).toBe(`pes batch [${"-".repeat(30)}] 0/5 (0%)`);
    expect(frames).toContain(`pes batch [${"#".repeat(24)}${"-".repeat(6)}] 4/5 (80%)`);
    expect(frames.at(-1)).toBe(`pes batch [${"#".repeat(30)}] 5/5 (100%)\n`);
    expect(stderr).not.toMatch(/inputs answered/);
  });

  it("shows no progress with --quiet", async () => {
    const { stderr, stdout } = await pes(["batch", "-", "--chunk", "2", "--quiet"], { answers, stdin: lines.join("\n"), stderrTTY: true });
    expect(stderr).toBe("");
    expect(stdout.split("\n")).toHaveLength(6);
  });

  it("renders each result as text with --output text", async () => {
    const { stdout } = await pes(["batch", "-", "--chunk", "2", "-o", "text", "-q"], { answers, stdin: lines.join("\n") });
    expect(stdout).toContain("--- 1/5 ---\n1\n--- 2/5 ---\n2\n");
    expect(stdout).toContain("--- 4/5 ---\nError: title: No playbook's monitor name matches this title\n");
  });

  it("stops at a failed request with exit 3, keeping the results already printed", async () => {
    const { code, stdout, stderr } = await pes(["batch", "-", "--chunk", "2"], {
      answers: [answers[0] ?? "hold", { status: 500, body: { error: "Internal server error" } }],
      stdin: lines.join("\n"),
    });
    expect(code).toBe(ExitCode.api);
    expect(stdout).toBe('{"highlights":"1"}\n{"highlights":"2"}\n');
    expect(stderr).toContain("pes batch: stopped after 2 of 5 inputs; their results are above\npes: HTTP 500: Internal server error\n");
  });

  it("checks every line before sending anything, naming the bad ones", async () => {
    const file = await inputFile(`${lines[0]}\nnot json\n{"bookName":"x","colour":"red"}\n`);
    const { code, stderr, requests } = await pes(["batch", file]);
    expect(code).toBe(ExitCode.usage);
    expect(requests).toHaveLength(0);
    expect(stderr).toContain(`${file}:2: not JSON`);
    expect(stderr).toContain(`${file}:3: Unrecognized key: "colour"`);
  });

  it("exits 2 for a file it cannot read, or one without inputs", async () => {
    expect((await pes(["batch", join(dir, "missing.jsonl")])).stderr).toMatch(/cannot read .*missing\.jsonl: ENOENT/);
    const empty = await pes(["batch", "-"], { stdin: "\n\n" });
    expect(empty.code).toBe(ExitCode.usage);
    expect(empty.stderr).toMatch(/stdin holds no input/);
  });
});

describe("pes batch --async and --resume", () => {
  const total = 5;
  const inputs = Array.from({ length: total }, (_, i) => ({ bookName: "node-cpu", attributes: { host: `web-${i}` } }));
  const resultOf = (i: number) => ({ highlights: `web-${i}` });
  let batchApi: FakeBatchApi | undefined;
  afterEach(async () => {
    await batchApi?.close();
    batchApi = undefined;
  });

  /** Runs `pes` in-process against a fake API serving one batch of five items, the first `finished` of them done. */
  async function pesAsync(
    argv: string[],
    options: { finished?: number; stdin?: string; stderrTTY?: boolean; during?: (api: FakeBatchApi) => Promise<void> } = {},
  ) {
    batchApi ??= await startFakeBatchApi(total);
    const fake = batchApi;
    for (let i = 0; i < (options.finished ?? total); i++) fake.finish(i, i === 3 ? { error: "Execution timed out after 120000 ms" } : resultOf(i));
    const stdout = new Buffered();
    const stderr = new Buffered(options.stderrTTY);
    const io = { stdout, stderr, env: { PES_URL: fake.url, PES_TOKEN: "env-token" }, stdin: Readable.from([options.stdin ?? ""]) };
    // Reconnect waits are not spent.
    const running = runCli(argv, { ...io, sleep: async () => {} });
    await options.during?.(fake);
    const code = await running;
    return { code, stdout: stdout.text, stderr: stderr.text, requests: fake.requests };
  }

  async function inputFile(lines: readonly unknown[]): Promise<string> {
    const file = join(dir, "issues.jsonl");
    await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
    return file;
  }

  const jsonLines = (text: string): unknown[] =>
    text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
  const expectedLines = (from: number) =>
    Array.from({ length: total - from }, (_, k) => (k + from === 3 ? { error: "Execution timed out after 120000 ms" } : resultOf(k + from)));

  it("submits the file as one batch under a key derived from its inputs, and writes every result in order", async () => {
    const file = await inputFile(inputs);
    const { code, stdout, stderr, requests } = await pesAsync(["batch", "--async", file, "--channel", "C9"], {
      finished: 2,
      // The rest finish once the CLI follows the batch's progress.
      during: async (fake) => {
        await fake.waitFor(isEventStream);
        for (let i = 2; i < total; i++) fake.finish(i, i === 3 ? { error: "Execution timed out after 120000 ms" } : resultOf(i));
      },
    });
    const [submit] = requests;
    expect(submit).toMatchObject({
      method: "POST",
      url: "/playbook/execution/batch",
      headers: { prefer: "respond-async", "idempotency-key": batchIdempotencyKey({ inputList: inputs, channelId: "C9" }) },
    });
    expect(JSON.parse(submit?.body ?? "")).toEqual({ inputList: inputs, channelId: "C9" });
    expect(jsonLines(stdout)).toEqual(expectedLines(0));
    // Item 3 failed: exit 1.
    expect(code).toBe(ExitCode.resultError);
    // stderr is not a terminal: JSON lines, the batch id first.
    const events = jsonLines(stderr) as Array<Record<string, unknown>>;
    expect(events[0]).toEqual({ event: "accepted", batchId: batchApi?.batchId, total, resume: `pes batch --resume ${batchApi?.batchId}` });
    expect(events.at(-1)).toEqual({ event: "progress", batchId: batchApi?.batchId, status: "completed", total, done: total, failed: 1, written: total });
  });

  it("derives the same key from the same inputs however their keys are ordered, and another from other inputs", () => {
    const reordered = inputs.map(({ bookName, attributes }) => ({ attributes, bookName }));
    expect(batchIdempotencyKey({ inputList: reordered })).toBe(batchIdempotencyKey({ inputList: inputs }));
    expect(batchIdempotencyKey({ inputList: inputs.slice(1) })).not.toBe(batchIdempotencyKey({ inputList: inputs }));
    expect(batchIdempotencyKey({ inputList: inputs, liveRun: true })).not.toBe(batchIdempotencyKey({ inputList: inputs }));
    expect(batchIdempotencyKey({ inputList: inputs })).toMatch(/^pes-batch-[0-9a-f]{64}$/);
  });

  it("takes --idempotency-key over the derived key", async () => {
    const file = await inputFile(inputs);
    const { requests } = await pesAsync(["batch", "--async", file, "--idempotency-key", "nightly-2026-11-21", "-q"]);
    expect(requests[0]?.headers["idempotency-key"]).toBe("nightly-2026-11-21");
  });

  it("with --out, continues after the complete lines the file holds, cutting off a half-written one", async () => {
    const file = await inputFile(inputs);
    const out = join(dir, "results.jsonl");
    await writeFile(out, `${JSON.stringify(resultOf(0))}\n${JSON.stringify(resultOf(1))}\n{"highli`);
    const { code, stdout, stderr } = await pesAsync(["batch", "--async", file, "--out", out]);
    expect(code).toBe(ExitCode.resultError);
    expect(stdout).toBe("");
    expect(jsonLines(await readFile(out, "utf8"))).toEqual(expectedLines(0));
    expect((jsonLines(stderr)[0] as { resume: string }).resume).toBe(`pes batch --resume ${batchApi?.batchId} --out ${out}`);
    // Nothing before the third result was read again.
    expect(batchApi?.requests.find((request) => request.url.includes("offset="))?.url).toContain("offset=2&");
  });

  it("--resume <id> follows a batch by its id without submitting, from --from on stdout", async () => {
    batchApi = await startFakeBatchApi(total);
    const { code, stdout, requests } = await pesAsync(["batch", "--resume", batchApi.batchId, "--from", "3", "-q"]);
    expect(requests.every((request) => request.method === "GET")).toBe(true);
    expect(jsonLines(stdout)).toEqual(expectedLines(3));
    expect(code).toBe(ExitCode.resultError);
  });

  it("--resume --out with the whole batch already written writes nothing more", async () => {
    const out = join(dir, "results.jsonl");
    await writeFile(
      out,
      expectedLines(0)
        .map((line) => `${JSON.stringify(line)}\n`)
        .join(""),
    );
    batchApi = await startFakeBatchApi(total);
    const { stdout } = await pesAsync(["batch", "--resume", batchApi.batchId, "--out", out, "-q"]);
    expect(stdout).toBe("");
    expect(jsonLines(await readFile(out, "utf8"))).toEqual(expectedLines(0));
  });

  it("refuses an --out file with more lines than the batch has items, sending nothing", async () => {
    const file = await inputFile(inputs);
    const out = join(dir, "results.jsonl");
    await writeFile(out, "{}\n".repeat(total + 1));
    const { code, stderr, requests } = await pesAsync(["batch", "--async", file, "--out", out]);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/holds 6 lines, more than the batch's 5 items/);
    expect(requests).toHaveLength(0);
  });

  it("exits 3 for a batch id the API does not know", async () => {
    const { code, stderr } = await pesAsync(["batch", "--resume", "no-such-batch"]);
    expect(code).toBe(ExitCode.api);
    expect(stderr).toMatch(/^pes: HTTP 404: No such batch/m);
  });

  it("draws a bar on a terminal, with the batch id and the command that resumes above it", async () => {
    const file = await inputFile(inputs);
    const { stderr } = await pesAsync(["batch", "--async", file], { stderrTTY: true });
    expect(stderr).toContain(`pes batch: batch ${batchApi?.batchId}, 5 inputs; if interrupted: pes batch --resume ${batchApi?.batchId}\n`);
    const frames = stderr.split("\r\u001b[2K").filter((frame) => frame !== "");
    expect(frames.at(-1)).toBe(`pes batch [${"#".repeat(30)}] 5/5 (100%) done, 5 written, 1 failed\n`);
    expect(stderr).not.toContain("{");
  });

  it("stops with exit 4 when the API stays away, saying how to resume", async () => {
    const file = await inputFile(inputs);
    const out = join(dir, "results.jsonl");
    const { code, stderr } = await pesAsync(["batch", "--async", file, "--out", out], {
      finished: 2,
      during: async (fake) => {
        await fake.waitFor(isEventStream);
        await fake.close();
      },
    });
    batchApi = undefined;
    expect(code).toBe(ExitCode.unreachable);
    expect(stderr).toContain(`"event":"reconnecting"`);
    // However many results came before the API went: the file holds them, and the message says so.
    const stopped =
      /^pes batch: stopped with (\d) of 5 results written; resume with: pes batch --resume 4b7c0f3e-2a51-4c7e-9d1e-6f0a8b3c2d19 --out (.+)$/m.exec(stderr);
    expect(stopped?.[2]).toBe(out);
    const written = Number(stopped?.[1]);
    expect(written).toBeLessThanOrEqual(2);
    expect(
      (await readFile(out, "utf8"))
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line)),
    ).toEqual(expectedLines(0).slice(0, written));
    expect(stderr).toMatch(/^pes: .*unreachable: ECONNREFUSED/m);
  });
});

/**
 * A bundle of one deploy and one metric that rose after it: the deploy is the likely cause. Its observations
 * are what an HTTP API and Prometheus answered, as the worker kept them.
 */

describe("pes replay", () => {
  it("replays a bundle file offline: the verdict as JSON on stdout, a line for a person on stderr", async () => {
    const file = join(dir, "checkout.bundle.json");
    await writeFile(file, JSON.stringify(deployBundle()));
    const { code, stdout, stderr, requests } = await pes(["replay", file]);
    expect(code).toBe(ExitCode.ok);
    expect(requests).toEqual([]);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      executionId: "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01",
      verdict: { conclusion: "cause", cause: { kind: "deploy", subject: "checkout", action: "Last deploy of checkout", confidence: "high" } },
      actionableMitigations: [{ toolName: "argo", customName: "Roll back checkout", action: { rollback: "checkout" } }],
      unreadable: [],
      truncated: [],
      // The recorded verdict above is a stand-in, not this one.
      sameAsRecorded: false,
    });
    expect(stderr).toBe(
      "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01: cause: deploy of checkout (Last deploy of checkout), high confidence (differs from the recorded verdict or mitigations)\n",
    );
  });

  it("reads a bundle by execution id from the API", async () => {
    const bundle = deployBundle();
    const { code, stdout, requests } = await pes(["replay", bundle.executionId], { answers: [{ status: 200, body: bundle }] });
    expect(code).toBe(ExitCode.ok);
    expect(requests.map((request) => `${request.method} ${request.url}`)).toEqual([`GET /playbook/execution/${bundle.executionId}/evidence`]);
    expect(JSON.parse(stdout).verdict.conclusion).toBe("cause");
  });

  it("says it is as recorded only when the verdict and the mitigations offered both are", async () => {
    const bundle = deployBundle();
    const recorded = { ...bundle, verdict: replayReport(EvidenceBundle.parse(bundle)).verdict };
    const [rollBack, scaleOut] = bundle.mitigations;
    if (rollBack === undefined || scaleOut === undefined) throw new Error("the bundle has two mitigations");
    const offeredAlso = { ...recorded, mitigations: [rollBack, { ...scaleOut, offered: true }] };
    for (const [name, body, same] of [
      ["same", recorded, true],
      ["offered-also", offeredAlso, false],
    ] as const) {
      const file = join(dir, `${name}.bundle.json`);
      await writeFile(file, JSON.stringify(body));
      const { code, stdout, stderr } = await pes(["replay", file]);
      expect(code).toBe(ExitCode.ok);
      expect(JSON.parse(stdout).sameAsRecorded).toBe(same);
      expect(stderr.endsWith(same ? " (as recorded)\n" : " (differs from the recorded verdict or mitigations)\n")).toBe(true);
    }
  });

  it("names the actions whose observation was cut to fit the bundle's cap, and replays them", async () => {
    const bundle = deployBundle();
    const [latency, deploy] = bundle.actions;
    if (latency === undefined || deploy === undefined) throw new Error("the bundle has two actions");
    const cut = {
      ...bundle,
      actions: [{ ...latency, truncated: [{ cut: "thinned", path: "data.result.*.values", every: 2, kept: 31, of: 61 }] }, deploy],
      truncated: { maxBytes: 65_536, bytes: 2_400_000 },
    };
    const file = join(dir, "cut.bundle.json");
    await writeFile(file, JSON.stringify(cut));
    const { code, stdout, stderr } = await pes(["replay", file]);
    expect(code).toBe(ExitCode.ok);
    expect(JSON.parse(stdout)).toMatchObject({ verdict: { conclusion: "cause" }, truncated: ["p99 latency"] });
    expect(stderr).toMatch(/; 1 action was cut to fit the bundle's cap \(truncated\)\n$/);
  });

  it("says a file is no bundle, and sends nothing", async () => {
    const file = join(dir, "nope.json");
    await writeFile(file, JSON.stringify({ v: 1, actions: "none" }));
    const { code, stderr, requests } = await pes(["replay", file]);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/nope\.json: /);
    expect(requests).toEqual([]);
  });
});

describe("pes replay of a bundle a person wrote", () => {
  /** The deploy bundle with only what the analysis reads: no execution id, recording time, gadget, connector or offers. */
  function handWritten() {
    const { executionId: _id, recordedAt: _at, mitigations: _m, verdict: _v, ...bundle } = deployBundle();
    return { ...bundle, actions: bundle.actions.map(({ gadget: _g, connector: _c, query: _q, ...action }) => action) };
  }

  it("reads a bundle without what the analysis does not read", async () => {
    const file = join(dir, "hand.bundle.json");
    await writeFile(file, JSON.stringify(handWritten()));
    const { code, stdout, stderr } = await pes(["replay", file]);
    expect({ code, stderr }).toEqual({ code: ExitCode.ok, stderr: `${file}: cause: deploy of checkout (Last deploy of checkout), high confidence\n` });
    expect(JSON.parse(stdout)).toMatchObject({ verdict: { conclusion: "cause" }, unreadable: [] });
  });

  it("refuses what the analysis cannot read, naming the field, unless told to be lenient", async () => {
    const bundle = handWritten();
    const [latency, deploy] = bundle.actions;
    if (latency === undefined || deploy === undefined) throw new Error("the bundle has two actions");
    const logs = { kind: "logs", streams: [{ lines: [{ at: 1_795_000_000, line: "ERROR boom" }] }], counts: [] };
    for (const [name, actions, field] of [
      [
        "misspelled",
        [latency, { ...deploy, observation: { ...deploy.observation, kind: "jsn" } }],
        /actions\[1\]\.observation\.kind: "jsn" is not an observation kind/,
      ],
      ["seconds", [latency, { ...deploy, observation: logs }], /actions\[1\]\.observation\.streams\[0\]\.lines\[0\]\.at: 1795000000 looks like seconds/],
      [
        "no-line",
        [latency, { ...deploy, observation: { kind: "logs", streams: [{ lines: [{ at: 1_795_000_000_000 }] }] } }],
        /actions\[1\]\.observation\.streams\[0\]\.lines\[0\]\.line: /,
      ],
    ] as const) {
      const file = join(dir, `${name}.bundle.json`);
      await writeFile(file, JSON.stringify({ ...bundle, actions }));
      const refused = await pes(["replay", file]);
      expect({ name, code: refused.code }).toEqual({ name, code: ExitCode.usage });
      expect(refused.stderr).toMatch(field);
      const lenient = await pes(["replay", "--lenient", file]);
      expect({ name, code: lenient.code }).toEqual({ name, code: ExitCode.ok });
    }
  });
});

describe("pes eval", () => {
  it("expects a cause by kind alone, by its subject, or by a pattern of its detail", async () => {
    await writeFile(join(dir, "a.bundle.json"), JSON.stringify(deployBundle()));
    await writeFile(join(dir, "a.expected.json"), JSON.stringify({ conclusion: "cause", cause: { kind: "deploy", detailPattern: "^v1\\.2" } }));
    await writeFile(join(dir, "b.bundle.json"), JSON.stringify(deployBundle()));
    await writeFile(join(dir, "b.expected.json"), JSON.stringify({ conclusion: "cause", cause: { kind: "deploy", subject: "checkout", detailPattern: "v2" } }));
    const { stdout } = await pes(["eval", dir, "--output", "json"]);
    expect((JSON.parse(stdout) as Array<{ name: string; cause: string }>).map(({ name, cause }) => ({ name, cause }))).toEqual([
      { name: "a", cause: "right cause" },
      { name: "b", cause: "wrong cause" },
    ]);
  });

  it("prints a table of the cases and exits 1 when one is wrong", async () => {
    await writeFile(join(dir, "a.bundle.json"), JSON.stringify(deployBundle()));
    await writeFile(
      join(dir, "a.expected.json"),
      JSON.stringify({
        conclusion: "cause",
        cause: { kind: "deploy", subject: "checkout", action: "Last deploy of checkout" },
        mitigations: ["Roll back checkout"],
      }),
    );
    await writeFile(join(dir, "b.bundle.json"), JSON.stringify(deployBundle()));
    await writeFile(
      join(dir, "b.expected.json"),
      JSON.stringify({ conclusion: "cause", cause: { kind: "saturation", action: "p99 latency" }, mitigations: [] }),
    );

    const { code, stdout, requests } = await pes(["eval", dir]);
    expect(requests).toEqual([]);
    expect(stdout.split("\n")).toEqual([
      "       case  expected  got    cause        mitigations",
      "ok     a     cause     cause  right cause  fit",
      "WRONG  b     cause     cause  wrong cause  do not fit",
      "2 cases: 1 right cause, 1 wrong cause, 0 no cause, 1/2 mitigations fit; 1 wrong",
      "",
    ]);
    expect(code).toBe(ExitCode.resultError);
  });

  it("needs each bundle's expected verdict beside it", async () => {
    await writeFile(join(dir, "a.bundle.json"), JSON.stringify(deployBundle()));
    const { code, stderr } = await pes(["eval", dir]);
    expect(code).toBe(ExitCode.usage);
    expect(stderr).toMatch(/cannot read .*a\.expected\.json/);
  });
});
