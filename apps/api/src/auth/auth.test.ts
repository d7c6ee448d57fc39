import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIENCE, ecKey, hmac, ISSUER, nowSeconds, rawToken, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const ec = ecKey("key-ec");
const attacker = rsaKey("key-1");
let jwks: JwksServer;
let app: ReturnType<typeof testApp>["app"];

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk, ec.jwk]);
  app = testApp({ jwksUrl: jwks.url }).app;
});

afterAll(async () => {
  await jwks.close();
});

const listWith = (authorization: string | undefined) => {
  const pending = request(app).get("/playbook");
  return authorization === undefined ? pending : pending.set("Authorization", authorization);
};
const bearer = (token: string) => `Bearer ${token}`;

async function expectUnauthenticated(authorization: string | undefined, message: RegExp): Promise<void> {
  const response = await listWith(authorization);
  expect(response.status).toBe(401);
  expect(response.headers["www-authenticate"]).toBe("Bearer");
  expect(response.body).toEqual({ error: expect.stringMatching(message) });
}

describe("401 for a missing or invalid token", () => {
  it("accepts a valid RS256 token", async () => {
    const response = await listWith(bearer(signToken({ key })));
    expect(response.status).toBe(200);
    expect(response.body.map((playbook: { name: string }) => playbook.name)).toEqual(["checkout-latency", "disk-full", "node-cpu"]);
  });

  it("accepts a valid ES256 token", async () => {
    const response = await listWith(bearer(signToken({ key: ec, algorithm: "ES256" })));
    expect(response.status).toBe(200);
  });

  it("rejects a request without Authorization", async () => {
    await expectUnauthenticated(undefined, /Missing Authorization/);
  });

  it("rejects another scheme", async () => {
    await expectUnauthenticated(`Basic ${Buffer.from("acme:secret").toString("base64")}`, /Bearer scheme/);
  });

  it("rejects garbage", async () => {
    await expectUnauthenticated("Bearer not-a-jwt", /not a JWT/);
  });

  it("rejects an expired token", async () => {
    const token = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", exp: nowSeconds() - 120 }, expiresIn: null });
    await expectUnauthenticated(bearer(token), /expired/);
  });

  it("accepts a token expired by less than the clock tolerance", async () => {
    const token = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", exp: nowSeconds() - 5 }, expiresIn: null });
    expect((await listWith(bearer(token))).status).toBe(200);
  });

  it("rejects a token without exp", async () => {
    await expectUnauthenticated(bearer(signToken({ key, expiresIn: null })), /exp claim is required/);
  });

  it("rejects a token that is not yet valid", async () => {
    await expectUnauthenticated(bearer(signToken({ key, notBefore: 300 })), /not yet valid/);
  });

  it("rejects a wrong issuer", async () => {
    await expectUnauthenticated(bearer(signToken({ key, issuer: "https://evil.test/" })), /issuer invalid/);
  });

  it("does not tell the caller which issuer or audience is expected", async () => {
    const response = await listWith(bearer(signToken({ key, audience: "someone-else" })));
    expect(response.body.error).not.toContain(AUDIENCE);
  });

  it("rejects a wrong audience", async () => {
    await expectUnauthenticated(bearer(signToken({ key, audience: "someone-else" })), /audience invalid/);
  });

  it('rejects alg "none"', async () => {
    const token = rawToken(
      { alg: "none", typ: "JWT", kid: key.kid },
      { org_id: "acme", client_id: "acme-ci", iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 300 },
      () => "",
    );
    await expectUnauthenticated(bearer(token), /algorithm/);
  });

  it("rejects HS256 signed with the RSA public key as the secret", async () => {
    const publicPem = key.publicKey.export({ format: "pem", type: "spki" });
    const token = rawToken(
      { alg: "HS256", typ: "JWT", kid: key.kid },
      { org_id: "acme", client_id: "acme-ci", iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 300 },
      (input) => hmac(publicPem, input),
    );
    await expectUnauthenticated(bearer(token), /algorithm/);
  });

  it("rejects an unknown kid", async () => {
    await expectUnauthenticated(bearer(signToken({ key, kid: "no-such-key" })), /unknown signing key/);
  });

  it("rejects a token signed by a key that is not in the JWKS, under a kid that is", async () => {
    await expectUnauthenticated(bearer(signToken({ key: attacker })), /invalid signature/);
  });

  it("rejects an RS256 header on a token whose kid names the EC key", async () => {
    await expectUnauthenticated(bearer(signToken({ key, kid: ec.kid })), /algorithm does not match/);
  });

  it("rejects an overlong kid without looking it up", async () => {
    const before = jwks.fetches;
    await expectUnauthenticated(bearer(signToken({ key, kid: "k".repeat(300) })), /kid/);
    expect(jwks.fetches).toBe(before);
  });

  it("rejects a token without the org claim", async () => {
    await expectUnauthenticated(bearer(signToken({ key, claims: { client_id: "acme-ci" } })), /org_id claim/);
  });
});

describe("403 when the client is not configured for the organization", () => {
  const forbidden = { error: "Client ID is not configured for the organization" };

  it("refuses an organization unknown to the catalog", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "umbrella", client_id: "acme-ci" } })));
    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden);
  });

  it("refuses an organization without client IDs", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "initech", client_id: "initech-ci" } })));
    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden);
  });

  it("refuses a client the organization does not list", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "acme", client_id: "stranger" } })));
    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden);
  });

  it("refuses a client ID that belongs to another organization", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "acme", client_id: "globex-ci" } })));
    expect(response.status).toBe(403);
    expect(response.body).toEqual(forbidden);
  });

  it("refuses a token that names no client", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "acme" } })));
    expect(response.status).toBe(403);
  });

  it("accepts the client from azp when client_id is absent", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "acme", azp: "acme-bot" } })));
    expect(response.status).toBe(200);
  });

  it("takes the organization from the token only, never from a header", async () => {
    const response = await listWith(bearer(signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } }))).set("X-Org-Id", "acme");
    expect(response.status).toBe(200);
    expect(response.body.map((playbook: { name: string }) => playbook.name)).toEqual(["disk-full"]);
  });
});

describe("authentication on every organization route", () => {
  it.each([
    ["get", "/playbook"],
    ["post", "/playbook/execution"],
    ["post", "/playbook/execution/batch"],
  ] as const)("%s %s needs a token", async (method, path) => {
    const response = await request(app)[method](path).send({ bookName: "disk-full" });
    expect(response.status).toBe(401);
  });

  it("checks the token before reading the body", async () => {
    const response = await request(app).post("/playbook/execution").set("Content-Type", "text/plain").send("hello");
    expect(response.status).toBe(401);
  });
});
