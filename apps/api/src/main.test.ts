import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { request, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { freePort, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, ISSUER, rsaKey, signToken, startJwksServer } from "./testing/fixtures.js";

/** The built entry point, started as a user would (`npm start` runs `node dist/main.js`). */
const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

interface Started {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

const started: Started[] = [];

function startApi(env: Record<string, string>): Started {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run: Started = {
    child,
    stdout: [],
    stderr: [],
    exited: once(child, "exit").then(([code]) => code as number | null),
  };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => run.stdout.push(chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => run.stderr.push(chunk));
  started.push(run);
  return run;
}

/** Resolves with the first log line whose msg is `msg` (JSON lines on stdout). */
async function logLine(run: Started, msg: string): Promise<Record<string, unknown>> {
  for (;;) {
    const line = run.stdout
      .join("")
      .split("\n")
      .filter((text) => text.startsWith("{"))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === msg);
    if (line !== undefined) return line;
    const event = await Promise.race([once(run.child.stdout ?? run.child, "data").then(() => "data"), run.exited.then(() => "exit")]);
    if (event === "exit") throw new Error(`api exited before logging "${msg}": ${run.stderr.join("")}`);
  }
}

afterEach(async () => {
  for (const run of started.splice(0)) {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill("SIGKILL");
      await run.exited;
    }
  }
});

describe("api process start-up failures", () => {
  it("stops naming a missing CONFIG_DIR: it never runs the shipped example by accident", async () => {
    const run = startApi({ AUTH_DEV_ISSUER: "true" });
    expect(await run.exited).toBe(1);
    expect(run.stderr.join("")).toContain("CONFIG_DIR: is required");
  });

  it("stops naming the missing identity-provider variables", async () => {
    const run = startApi({ CONFIG_DIR: "/config" });
    expect(await run.exited).toBe(1);
    expect(run.stderr.join("")).toContain("AUTH_JWKS_URL: is required unless AUTH_DEV_ISSUER=true");
  });

  it("stops printing the configuration errors", async () => {
    const dir = await mkdtemp(join(tmpdir(), "api-config-"));
    try {
      const run = startApi({ AUTH_DEV_ISSUER: "true", CONFIG_DIR: dir, DEV_ISSUER_DIR: join(dir, "key") });
      expect(await run.exited).toBe(1);
      expect(run.stderr.join("")).toContain("config error in organizations");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("api process with Redis and the development issuer", () => {
  let redis: RedisHandle;
  let keyDir: string;

  beforeAll(async () => {
    redis = await startRedis();
    keyDir = await mkdtemp(join(tmpdir(), "api-main-key-"));
  });

  afterAll(async () => {
    await redis.stop();
    await rm(keyDir, { recursive: true, force: true });
  });

  /** Starts the API on a free port against the test's Redis, with the development issuer and `env`. */
  async function startServing(env: Record<string, string> = {}): Promise<{ run: Started; base: string; port: number }> {
    const port = await freePort();
    const run = startApi({
      PORT: String(port),
      HOST: "127.0.0.1",
      REDIS_URL: redis.url,
      QUEUE_PREFIX: uniquePrefix("api-main"),
      AUTH_DEV_ISSUER: "true",
      DEV_ISSUER_DIR: keyDir,
      CONFIG_DIR: fileURLToPath(new URL("../../../config/example", import.meta.url)),
      SHUTDOWN_DRAIN_MS: "0",
      ...env,
    });
    await logLine(run, "listening");
    return { run, base: `http://127.0.0.1:${port}`, port };
  }

  it("serves requests, then shuts down cleanly on SIGTERM", async () => {
    const { run, base } = await startServing();

    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const token = mintDevToken(await loadOrCreateDevKey(keyDir), { org: "acme" });
    const listed = await fetch(`${base}/playbook`, { headers: { Authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { name: string }[]).map((playbook) => playbook.name)).toContain("checkout-latency");

    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    const log = run.stdout.join("");
    for (const step of ["shutting down: no longer accepting connections", "execution client closed", "shutdown complete"]) {
      expect(log).toContain(step);
    }
    expect(log).not.toContain(token);
  });

  it("serves the queue dashboard when ADMIN_DASHBOARD=true, to the Basic credentials of its environment", async () => {
    const { run, base } = await startServing({ ADMIN_DASHBOARD: "true", ADMIN_USER: "ops", ADMIN_PASSWORD: "a password of 16+" });
    const queues = `${base}/admin/queues/api/queues`;
    expect((await fetch(queues)).status).toBe(401);
    const response = await fetch(queues, { headers: { Authorization: `Basic ${Buffer.from("ops:a password of 16+").toString("base64")}` } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { queues: { name: string; readOnlyMode: boolean }[] }).queues).toEqual([
      expect.objectContaining({ name: "playbook-executions", readOnlyMode: true }),
      expect.objectContaining({ name: "playbook-message-executions", readOnlyMode: true }),
      expect.objectContaining({ name: "playbook-batch-executions", readOnlyMode: true }),
      expect.objectContaining({ name: "playbook-batch-starts", readOnlyMode: true }),
      expect.objectContaining({ name: "playbook-chat-posts", readOnlyMode: true }),
    ]);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(run.stdout.join("")).not.toContain("a password of 16+");
  });

  it("drains on SIGTERM: /readyz answers 503 while requests are still served, then in-flight ones finish", async () => {
    // No worker: the execution waits on the queue until EXECUTION_TIMEOUT_MS and answers that it timed out.
    const { run, base, port } = await startServing({ SHUTDOWN_DRAIN_MS: "4000", EXECUTION_TIMEOUT_MS: "300" });
    const token = mintDevToken(await loadOrCreateDevKey(keyDir), { org: "acme" });
    const body = Buffer.from(JSON.stringify({ bookName: "node-cpu", attributes: { host: "db-1" } }));
    // In flight across the whole shutdown: headers and half the body now, the rest once the API stops accepting.
    const inFlight = request({
      port,
      host: "127.0.0.1",
      method: "POST",
      path: "/playbook/execution",
      agent: false,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "Content-Length": body.length },
    });
    const answered = new Promise<IncomingMessage>((resolve, reject) => inFlight.on("response", resolve).on("error", reject)).then(async (response) => ({
      status: response.statusCode,
      body: JSON.parse(await text(response)) as unknown,
    }));
    inFlight.write(body.subarray(0, 10));

    run.child.kill("SIGTERM");
    await logLine(run, "draining: /readyz answers 503, requests are still served");
    const probe = await fetch(`${base}/readyz`);
    expect(probe.status).toBe(503);
    expect(await probe.json()).toEqual({ error: "Not ready: shutting down" });
    expect((await fetch(`${base}/playbook`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);

    await logLine(run, "shutting down: no longer accepting connections");
    await expect(fetch(`${base}/readyz`, { headers: { Connection: "close" } })).rejects.toThrow();
    inFlight.end(body.subarray(10));
    expect(await answered).toEqual({ status: 200, body: { error: expect.stringMatching(/^Execution timed out after 300 ms/) } });
    expect(await run.exited).toBe(0);
    expect(run.stdout.join("")).toContain("in-flight requests finished");
  }, 20_000);

  it("answers 408 and closes the sockets of clients too slow with their headers or body, serving others meanwhile", async () => {
    const { base, port } = await startServing({ HTTP_HEADERS_TIMEOUT_MS: "300", HTTP_REQUEST_TIMEOUT_MS: "600" });
    const token = mintDevToken(await loadOrCreateDevKey(keyDir), { org: "acme" });
    const execution = `POST /playbook/execution HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer ${token}\r\n`;
    const slowClients = [
      // Connects and sends nothing.
      ...Array.from({ length: 5 }, () => slowClient(port, "", "")),
      // Sends a header line now and then, never the end of the headers.
      ...Array.from({ length: 5 }, () => slowClient(port, "GET /readyz HTTP/1.1\r\nHost: api\r\n", "X-Slow: 1\r\n")),
      // Sends its headers, then its body a byte at a time.
      ...Array.from({ length: 5 }, () => slowClient(port, `${execution}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"details":"`, "x")),
    ];

    // Each on a connection of its own: with timeouts this short, a kept-alive socket idle between the two
    // could be closed by the server just as the second request is written (a reset, not an answer).
    expect(await statusCodeOf(`${base}/playbook`, { Authorization: `Bearer ${token}` })).toBe(200);
    for (const answer of await Promise.all(slowClients.map((client) => client.closed))) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    }
    expect(await statusCodeOf(`${base}/readyz`)).toBe(200);
  });
});

describe("api process whose AUTH_JWKS_URL holds a user and password", () => {
  const PASSWORD = "s3cret p@ss:word";
  const key = rsaKey("idp-key");
  let redis: RedisHandle;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis.stop();
  });

  it("sends them as Basic credentials, and never logs or answers the password", async () => {
    const idp = await startJwksServer([key.jwk]);
    const expected = `Basic ${Buffer.from(`pes-api:${PASSWORD}`).toString("base64")}`;
    const seen: (string | undefined)[] = [];
    // The identity provider answers only with the credentials; later it fails, so that the API logs about it.
    let failing = false;
    idp.fault = (req, res) => {
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== expected) res.writeHead(401, { "WWW-Authenticate": "Basic" }).end();
      else if (failing) res.writeHead(500).end(`internal error`);
      else res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ keys: [key.jwk] }));
    };
    try {
      const port = await freePort();
      const jwksUrl = new URL(idp.url);
      jwksUrl.username = "pes-api";
      jwksUrl.password = PASSWORD;
      const run = startApi({
        PORT: String(port),
        HOST: "127.0.0.1",
        REDIS_URL: redis.url,
        QUEUE_PREFIX: uniquePrefix("api-main-jwks"),
        AUTH_JWKS_URL: jwksUrl.href,
        AUTH_ISSUER: ISSUER,
        AUTH_AUDIENCE: AUDIENCE,
        CONFIG_DIR: fileURLToPath(new URL("../../../config/example", import.meta.url)),
        SHUTDOWN_DRAIN_MS: "0",
      });
      await logLine(run, "listening");
      const base = `http://127.0.0.1:${port}`;
      const token = signToken({ key, claims: { org_id: "acme", client_id: "quickstart-cli" } });
      const listed = await fetch(`${base}/playbook`, { headers: { Authorization: `Bearer ${token}` } });
      expect(listed.status).toBe(200);
      expect(seen).toEqual([expected]);

      // A kid the key set lacks makes the API fetch it again, which fails: 503, and a warning in the log.
      failing = true;
      const unknownKid = signToken({ key, kid: "rotated-in", claims: { org_id: "acme", client_id: "quickstart-cli" } });
      const refused = await fetch(`${base}/playbook`, { headers: { Authorization: `Bearer ${unknownKid}` } });
      expect(refused.status).toBe(503);
      const answer = await refused.text();
      const warning = await logLine(run, "identity provider's JWKS misbehaves; the callers concerned get 503");
      expect(warning).toMatchObject({ jwksUrl: idp.url, problem: "answered HTTP 500" });

      run.child.kill("SIGTERM");
      expect(await run.exited).toBe(0);
      const output = [answer, run.stdout.join(""), run.stderr.join("")].join("\n");
      for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), jwksUrl.password, expected.slice("Basic ".length)]) {
        expect(output).not.toContain(secret);
      }
    } finally {
      await idp.close();
    }
  });
});

/** GET on a fresh connection (no keep-alive agent); the status, the body read and dropped. */
async function statusCodeOf(url: string, headers: Record<string, string> = {}): Promise<number> {
  const req = request(url, { headers, agent: false });
  req.end();
  const [response] = (await once(req, "response")) as [IncomingMessage];
  await text(response);
  return response.statusCode ?? 0;
}

async function text(stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString();
}

/**
 * A client that sends `start`, then `drip` every 50 ms until the server closes the socket; `closed`
 * resolves with what the server answered.
 */
function slowClient(port: number, start: string, drip: string): { closed: Promise<string> } {
  const socket = connect(port, "127.0.0.1");
  const received: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => received.push(chunk));
  socket.on("error", () => {});
  // Written now, before any drip: the socket keeps writes until it connects, in order. Written on
  // "connect" instead, a drip could go first when connecting took longer than its interval (a loaded
  // host), and the server rightly answered a request line of "X-Slow: 1" with 400.
  if (start !== "") socket.write(start);
  const timer = setInterval(() => {
    if (drip !== "" && socket.writable) socket.write(drip);
  }, 50);
  const closed = once(socket, "close").then(() => {
    clearInterval(timer);
    return Buffer.concat(received).toString("latin1");
  });
  return { closed };
}
