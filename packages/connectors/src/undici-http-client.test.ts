// Each data source's own HTTP client against real local servers: HTTPS with a CA made for the test
// (openssl, at test time), mutual TLS, insecureSkipVerify, and a CONNECT proxy.
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import type { ServerOptions } from "node:https";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sendJson, startTestHttpServer, type TestHttpHandler, type TestHttpServer } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSecrets } from "./data-source-secrets.js";
import { answerText } from "./http-client.js";
import type { Observation } from "@pes/contracts";
import { httpRuntime } from "./http/runtime.js";
import { httpConnector } from "./http/definition.js";
import { HttpDataSource } from "./http/schema.js";
import { runConnectorAction } from "./run-action.js";
import { connectDataSource } from "./undici-http-client.js";

const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

let dir: string;
/** PEM files made for this run: a CA, a server certificate for 127.0.0.1, a client certificate; another CA. */
const pem = (name: string) => join(dir, name);

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A key and a certificate signed by `ca`, with `extensions` (subjectAltName, extendedKeyUsage). */
function issue(name: string, ca: string, extensions: string): void {
  openssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${name}`,
  );
  execFileSync("sh", ["-c", `printf '%s\\n' "${extensions}" > ${name}.ext`], { cwd: dir });
  openssl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "1",
    "-extfile",
    `${name}.ext`,
  );
}

function authority(name: string): void {
  openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "1",
    "-subj",
    `/CN=${name}`,
  );
}

/** Answers `{ state: "ok" }` with the client's port, to tell connections apart. */
const answerState: TestHttpHandler = (_request, response) => sendJson(response, 200, { state: "ok", port: response.req.socket.remotePort });

async function https(options: ServerOptions): Promise<TestHttpServer> {
  return startTestHttpServer(answerState, { https: { key: await readFile(pem("server.key")), cert: await readFile(pem("server.pem")), ...options } });
}

/** What the state endpoint answers through a client that reached it. */
const OK = { kind: "json", answer: { state: "ok" } };

/** Asks the data source (as configuration writes it) with its own client, as the worker would. */
async function ask(configured: unknown, env: Record<string, string> = {}): Promise<Observation> {
  const dataSource = HttpDataSource.parse(configured);
  const { secrets, missing } = resolveSecrets(dataSource, { env });
  expect(missing).toEqual([]);
  const connection = connectDataSource(dataSource, secrets);
  try {
    const observed = await runConnectorAction(httpConnector.definition, httpRuntime, {
      title: "TLS",
      dataSource,
      spec: { method: "GET", path: "/state", answerField: "state" },
      attributes: {},
      window,
      signal: AbortSignal.timeout(5_000),
      ...connection,
    });
    return observed.observation;
  } finally {
    await connection.http.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pes-tls-"));
  authority("ca");
  authority("other-ca");
  issue("server", "ca", "subjectAltName=IP:127.0.0.1");
  issue("client", "ca", "extendedKeyUsage=clientAuth");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a data source's HTTP client over TLS", () => {
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await https({});
  });
  afterAll(async () => {
    await server.close();
  });

  it("accepts the server with the data source's CA, from a file or from the environment", async () => {
    expect(await ask({ type: "http", url: server.url, tls: { ca: { file: pem("ca.pem") } } })).toMatchObject(OK);
    const ca = await readFile(pem("ca.pem"), "utf8");
    expect(await ask({ type: "http", url: server.url, tls: { ca: { env: "PES_TEST_CA" } } }, { PES_TEST_CA: ca })).toMatchObject(OK);
  });

  it("refuses it without that CA, or with another one, before sending anything", async () => {
    const before = server.requests.length;
    const refused = [await ask({ type: "http", url: server.url }), await ask({ type: "http", url: server.url, tls: { ca: { file: pem("other-ca.pem") } } })];
    for (const outcome of refused) {
      expect(outcome).toEqual({
        kind: "failed",
        reason: expect.stringMatching(/^could not reach the data source \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify the first certificate)\)$/),
      });
    }
    expect(server.requests).toHaveLength(before);
  });

  it("accepts any certificate with insecureSkipVerify", async () => {
    expect(await ask({ type: "http", url: server.url, tls: { insecureSkipVerify: true } })).toMatchObject(OK);
  });

  it("keeps one pool per data source: no connection shared with another's, and closing one leaves the other", async () => {
    const dataSource = HttpDataSource.parse({ type: "http", url: server.url, tls: { ca: { file: pem("ca.pem") } } });
    const { secrets } = resolveSecrets(dataSource, { env: {} });
    const first = connectDataSource(dataSource, secrets);
    const second = connectDataSource(dataSource, secrets);
    const request = { method: "GET", headers: {}, signal: AbortSignal.timeout(5_000) } as const;
    const portsOf = async (client: typeof first.http): Promise<Set<number>> => {
      const ports = new Set<number>();
      for (let i = 0; i < 3; i += 1) {
        const answer = await client.request(`${server.url}/port`, request);
        ports.add(Number((JSON.parse(answerText(answer.body)) as { port: number }).port));
      }
      return ports;
    };
    try {
      const firstPorts = await portsOf(first.http);
      const secondPorts = await portsOf(second.http);
      expect([...firstPorts].filter((port) => secondPorts.has(port))).toEqual([]);
      await first.http.close();
      await expect(first.http.request(`${server.url}/port`, request)).rejects.toThrow();
      expect((await second.http.request(`${server.url}/port`, request)).status).toBe(200);
    } finally {
      await second.http.close();
    }
  });
});

describe("a data source's HTTP client with mutual TLS", () => {
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await https({ ca: await readFile(pem("ca.pem")), requestCert: true, rejectUnauthorized: true });
  });
  afterAll(async () => {
    await server.close();
  });

  it("presents the configured client certificate, and is refused without one", async () => {
    const tls = { ca: { file: pem("ca.pem") }, cert: { file: pem("client.pem") }, key: { env: "PES_TEST_CLIENT_KEY" } };
    const key = await readFile(pem("client.key"), "utf8");
    expect(await ask({ type: "http", url: server.url, tls }, { PES_TEST_CLIENT_KEY: key })).toMatchObject(OK);
    const without = await ask({ type: "http", url: server.url, tls: { ca: { file: pem("ca.pem") } } });
    expect(without.kind).toBe("failed");
    expect(server.requests).toHaveLength(1);
  });

  it("refuses at start a key that does not fit, or a CA that is no certificate, naming the setting, not the PEM", () => {
    const connecting =
      (tls: unknown, env: Record<string, string> = {}) =>
      () => {
        const dataSource = HttpDataSource.parse({ type: "http", url: server.url, tls });
        const { secrets } = resolveSecrets(dataSource, { env });
        connectDataSource(dataSource, secrets);
      };
    expect(connecting({ cert: { file: pem("client.pem") }, key: { file: pem("server.key") } })).toThrow(/^unusable tls settings: .*key values mismatch/);
    expect(connecting({ ca: { env: "PES_TEST_CA" } }, { PES_TEST_CA: "not a PEM" })).toThrow("unusable tls settings: ca holds no PEM certificate");
    const garbled = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
    expect(connecting({ ca: { env: "PES_TEST_CA" } }, { PES_TEST_CA: garbled })).toThrow(/^unusable tls settings: ca: certificate 1 does not parse/);
  });
});

describe("a data source's HTTP client through a proxy", () => {
  let proxy: TestHttpServer;
  const tunnels: string[] = [];
  let target: TestHttpServer;
  let secureTarget: TestHttpServer;

  beforeAll(async () => {
    // A CONNECT proxy: opens a tunnel to the asked host and port, and records where to.
    proxy = await startTestHttpServer((_request, response) => {
      response.writeHead(405);
      response.end();
    });
    proxy.server.on("connect", (request: IncomingMessage, client: Socket, head: Buffer) => {
      tunnels.push(request.url ?? "");
      const [host, port] = (request.url ?? "").split(":");
      const upstream = connect(Number(port), host ?? "", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    target = await startTestHttpServer(answerState);
    secureTarget = await https({});
  });
  afterAll(async () => {
    await proxy.close();
    await target.close();
    await secureTarget.close();
  });

  it("sends an http and an https data source's requests through the data source's proxy", async () => {
    expect(await ask({ type: "http", url: target.url, proxy: proxy.url })).toMatchObject(OK);
    expect(await ask({ type: "http", url: secureTarget.url, proxy: proxy.url, tls: { ca: { file: pem("ca.pem") } } })).toMatchObject(OK);
    expect(tunnels).toEqual([new URL(target.url).host, new URL(secureTarget.url).host]);
  });

  it("goes direct without one", async () => {
    const before = tunnels.length;
    expect(await ask({ type: "http", url: target.url })).toMatchObject(OK);
    expect(tunnels).toHaveLength(before);
  });
});

describe("connection settings in configuration", () => {
  it("refuses a certificate without its key, and a proxy URL with credentials", () => {
    const problems = (value: unknown) => HttpDataSource.safeParse(value).error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    expect(problems({ type: "http", url: "https://x", tls: { cert: { file: "/c.pem" } } })).toEqual(["tls.cert: cert and key go together"]);
    expect(problems({ type: "http", url: "https://x", proxy: "http://user:pw@proxy:3128" })).toEqual(["proxy: a proxy URL must not hold credentials"]);
  });
});
