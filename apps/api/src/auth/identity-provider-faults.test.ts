/**
 * Hostile tests: the identity provider's JWKS endpoint fails in each way seen in the field, and the caller
 * must get the right answer in bounded time (a hang fails the test through vitest's test timeout), then
 * be served again on the very next request once the identity provider heals.
 *   - 503 + Retry-After when the keys cannot be had (unreachable, broken, slow, oversized, unusable key):
 *     the token may well be valid, so the client must keep it and retry.
 *   - 401 only when the identity provider answered and does not publish the token's kid.
 */
import { generateKeyPairSync, type JsonWebKey } from "node:crypto";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import { AUDIENCE, ecKey, ISSUER, rsaKey, signToken, startJwksServer, testApp, type JwksFault, type JwksServer } from "../testing/fixtures.js";
import { createTokenVerifier } from "./token-verifier.js";

/** Small, so that a stalled identity provider costs a test about a second; ample for a healthy answer on loopback. */
const DEADLINE_MS = 500;
const key = rsaKey("key-1");
const rotated = rsaKey("key-2");
const ec = ecKey("key-ec");
let idp: JwksServer;

beforeEach(async () => {
  idp = await startJwksServer([key.jwk]);
});

afterEach(async () => {
  await idp.close();
});

function verifier(now?: () => number) {
  return createTokenVerifier({ jwksUrl: idp.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id", jwksTimeoutMs: DEADLINE_MS, now });
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

async function expectUnavailable(promise: Promise<unknown>): Promise<void> {
  const error = await rejection(promise);
  expect(error.code).toBe("service_unavailable");
  expect(error.headers?.["Retry-After"]).toMatch(/^[1-9]\d*$/);
}

const jwksBody = (keys: JsonWebKey[]) => JSON.stringify({ keys });
/** A valid key set padded past any sane size: only the size is wrong with it. */
const oversizedBody = () => JSON.stringify({ keys: [key.jwk], padding: "x".repeat(2 * 1024 * 1024) });

/** Writes `body` one byte at a time, faster than the deadline: no idle timeout ever fires, only an overall deadline. */
function drip(res: Parameters<JwksFault>[1], body: string, everyMs: number): void {
  res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) });
  let sent = 0;
  const timer = setInterval(() => {
    res.write(body.slice(sent, sent + 1));
    sent += 1;
    if (sent === body.length) {
      clearInterval(timer);
      res.end();
    }
  }, everyMs);
  res.on("close", () => clearInterval(timer));
}

/** Every way the JWKS endpoint misbehaves while the identity provider is reachable at the TCP level. */
const faults: Array<[string, JwksFault]> = [
  ["connection reset", (req) => req.socket.destroy()],
  [
    "connection reset in the middle of the body",
    (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "2000" });
      res.write('{"keys":[', () => req.socket.destroy());
    },
  ],
  ["500", (_req, res) => res.writeHead(500, { "Content-Type": "text/plain" }).end("upstream connect error")],
  ["a redirect", (_req, res) => res.writeHead(302, { Location: "http://127.0.0.1:1/elsewhere" }).end()],
  ["non-JSON", (_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<html>maintenance</html>")],
  ["JSON that is not a key set", (_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end('{"keys":"none"}')],
  ["an empty key set", (_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(jwksBody([]))],
  [
    "a slow answer (after the deadline)",
    (_req, res) => {
      const timer = setTimeout(() => res.writeHead(200, { "Content-Type": "application/json" }).end(jwksBody([key.jwk])), DEADLINE_MS * 3);
      res.on("close", () => clearTimeout(timer));
    },
  ],
  [
    "a stall after the headers (content-length, a few bytes, then nothing)",
    (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "2000" });
      res.write('{"keys":[');
    },
  ],
  ["a drip (a byte at a time, never idle for long)", (_req, res) => drip(res, jwksBody([key.jwk]), DEADLINE_MS / 3)],
  [
    "an oversized answer with its content-length",
    (_req, res) => {
      const body = oversizedBody();
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) }).end(body);
    },
  ],
  [
    "an oversized answer without a content-length (chunked)",
    (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.write(oversizedBody().slice(0, 1024 * 1024));
      res.end(oversizedBody().slice(1024 * 1024));
    },
  ],
  [
    "too many keys (a small answer, but each key costs an import)",
    (_req, res) => {
      const keys = Array.from({ length: 200 }, (_, i) => ({ ...ec.jwk, kid: `ec-${i}` }));
      res.writeHead(200, { "Content-Type": "application/json" }).end(jwksBody([key.jwk, ...keys]));
    },
  ],
];

describe("the verifier while the identity provider misbehaves", () => {
  it.each(faults)("%s: 503 with Retry-After; the next request after healing succeeds", async (_name, fault) => {
    const subject = verifier();
    const token = signToken({ key });
    idp.fault = fault;
    await expectUnavailable(subject.verify(token));
    await expectUnavailable(subject.verify(token));
    idp.fault = undefined;
    await expect(subject.verify(token)).resolves.toMatchObject({ orgId: "acme" });
  });

  it("connection refused: 503 with Retry-After; the next request once it listens again succeeds", async () => {
    const subject = verifier();
    const token = signToken({ key });
    const { port } = idp;
    await idp.close();
    try {
      await expectUnavailable(subject.verify(token));
      await expectUnavailable(subject.verify(token));
    } finally {
      idp = await startJwksServer([key.jwk], port);
    }
    await expect(subject.verify(token)).resolves.toMatchObject({ orgId: "acme" });
  });

  it("callers waiting on one stalled fetch all get their 503: one fetch, not one each", async () => {
    const subject = verifier();
    idp.fault = (_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "2000" });
      res.write("{");
    };
    await Promise.all(Array.from({ length: 5 }, (_, i) => expectUnavailable(subject.verify(signToken({ key, claims: { org_id: "acme", n: i } })))));
    expect(idp.fetches).toBe(1);
  });

  it("rotation during an outage: 503s however many (never 401), then the new key is found on the first request after healing", async () => {
    const subject = verifier();
    await subject.verify(signToken({ key }));
    // The identity provider rotates to key-2 and goes down before we have seen it.
    idp.keys = [key.jwk, rotated.jwk];
    idp.fault = (_req, res) => res.writeHead(503, { "Content-Type": "text/plain" }).end("down for maintenance");
    const fresh = signToken({ key: rotated });
    // More failed fetches than the refetch budget allows answered fetches in a minute: failures spend none of it.
    for (let attempt = 0; attempt < 15; attempt += 1) await expectUnavailable(subject.verify(fresh));
    // Keys already held keep working through the outage.
    await expect(subject.verify(signToken({ key, claims: { org_id: "acme", during: "outage" } }))).resolves.toMatchObject({ orgId: "acme" });
    idp.fault = undefined;
    await expect(subject.verify(fresh)).resolves.toMatchObject({ orgId: "acme" });
  });

  it("unknown kids sprayed at us cost a bounded number of fetches; a kid published later is found once the budget refills", async () => {
    let now = Date.now();
    const subject = verifier(() => now);
    await subject.verify(signToken({ key }));
    for (let i = 0; i < 40; i += 1) {
      const error = await rejection(subject.verify(signToken({ key, kid: `spray-${i}` })));
      expect(error.code).toBe("unauthenticated");
      expect(error.detail).toBe("Invalid token: unknown signing key");
    }
    expect(idp.fetches).toBeLessThanOrEqual(10);
    const fetchesAfterSpray = idp.fetches;

    idp.keys = [key.jwk, rotated.jwk];
    now += 60_000;
    await expect(subject.verify(signToken({ key: rotated }))).resolves.toMatchObject({ orgId: "acme" });
    expect(idp.fetches).toBe(fetchesAfterSpray + 1);
  });

  it("tells the logs what is wrong, once per run of the same failure, without the caller's token", async () => {
    const problems: string[] = [];
    const subject = createTokenVerifier({
      jwksUrl: idp.url,
      issuer: ISSUER,
      audience: AUDIENCE,
      orgClaim: "org_id",
      jwksTimeoutMs: DEADLINE_MS,
      onJwksProblem: (problem) => problems.push(problem),
    });
    const token = signToken({ key });
    idp.fault = (_req, res) => res.writeHead(500).end();
    for (let attempt = 0; attempt < 3; attempt += 1) await expectUnavailable(subject.verify(token));
    idp.fault = undefined;
    idp.keys = [{ ...key.jwk, n: "!!!" }];
    await expectUnavailable(subject.verify(token));
    expect(problems).toEqual(["answered HTTP 500", 'publishes under kid "key-1" an RSA key shorter than 2048 bits']);
    expect(problems.join()).not.toContain(token);
  });

  it("an unknown kid with the identity provider answering is a 401", async () => {
    const subject = verifier();
    const error = await rejection(subject.verify(signToken({ key, kid: "no-such-key" })));
    expect(error.code).toBe("unauthenticated");
    expect(error.detail).toBe("Invalid token: unknown signing key");
  });

  // Each published under the token's kid. Used, any of them would give a 200 or a 401; a 503 shows it was not.
  const malformed: Array<[string, JsonWebKey]> = [
    ["a modulus that is not base64url", { ...key.jwk, n: "!!!" }],
    ["no exponent", { kty: "RSA", kid: key.kid, alg: "RS256", use: "sig", n: key.jwk.n }],
    ["a 1024-bit modulus", { ...generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256" }],
    ["private key material", { ...key.privateKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256", use: "sig" }],
    ["an alg that is not a string", { ...key.jwk, alg: 256 }],
  ];

  it.each(malformed)("a key with %s under the token's kid: 503 with Retry-After, not honoured, retried on the next request", async (_name, jwk) => {
    const subject = verifier();
    const token = signToken({ key });
    idp.keys = [jwk];
    await expectUnavailable(subject.verify(token));
    const before = idp.fetches;
    await expectUnavailable(subject.verify(token));
    expect(idp.fetches).toBe(before + 1);
    idp.keys = [key.jwk];
    await expect(subject.verify(token)).resolves.toMatchObject({ orgId: "acme" });
  });
});

describe("GET /playbook while the identity provider misbehaves", () => {
  const listWith = (app: ReturnType<typeof testApp>["app"], token: string) => request(app).get("/playbook").set("Authorization", `Bearer ${token}`);

  async function expect503(app: ReturnType<typeof testApp>["app"], token: string): Promise<void> {
    const response = await listWith(app, token);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: expect.stringMatching(/^Service unavailable: the identity provider/) });
    expect(response.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
    expect(response.headers["www-authenticate"]).toBeUndefined();
  }

  it.each([
    [
      "a stall after the headers",
      ((_req, res) => {
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": "2000" });
        res.write('{"keys":[');
      }) satisfies JwksFault,
    ],
    ["a drip", ((_req, res) => drip(res, jwksBody([key.jwk]), DEADLINE_MS / 3)) satisfies JwksFault],
    ["500", ((_req, res) => res.writeHead(500).end()) satisfies JwksFault],
    ["an oversized answer", ((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(oversizedBody())) satisfies JwksFault],
  ])("%s: 503 with Retry-After, then 200 on the first request after healing", async (_name, fault) => {
    const { app } = testApp({ jwksUrl: idp.url, jwksTimeoutMs: DEADLINE_MS });
    const token = signToken({ key });
    idp.fault = fault;
    await expect503(app, token);
    idp.fault = undefined;
    expect((await listWith(app, token)).status).toBe(200);
  });

  it("rotation during an outage: 503 with Retry-After throughout, 200 on the first request after healing", async () => {
    const { app } = testApp({ jwksUrl: idp.url, jwksTimeoutMs: DEADLINE_MS });
    expect((await listWith(app, signToken({ key }))).status).toBe(200);
    idp.keys = [key.jwk, rotated.jwk];
    idp.fault = (req) => req.socket.destroy();
    const fresh = signToken({ key: rotated });
    for (let attempt = 0; attempt < 12; attempt += 1) await expect503(app, fresh);
    idp.fault = undefined;
    expect((await listWith(app, fresh)).status).toBe(200);
  });

  it("a malformed key under the token's kid: 503 with Retry-After, then 200 once the identity provider publishes it right", async () => {
    const { app } = testApp({ jwksUrl: idp.url, jwksTimeoutMs: DEADLINE_MS });
    const token = signToken({ key });
    idp.keys = [{ ...key.jwk, n: "!!!" }];
    await expect503(app, token);
    idp.keys = [key.jwk];
    expect((await listWith(app, token)).status).toBe(200);
  });

  it("an unknown kid with the identity provider answering: 401", async () => {
    const { app } = testApp({ jwksUrl: idp.url, jwksTimeoutMs: DEADLINE_MS });
    const response = await listWith(app, signToken({ key, kid: "no-such-key" }));
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: "Invalid token: unknown signing key" });
    expect(response.headers["retry-after"]).toBeUndefined();
  });
});
