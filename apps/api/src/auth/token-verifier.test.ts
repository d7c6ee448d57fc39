import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors.js";
import { AUDIENCE, ISSUER, rsaKey, signToken, startJwksServer, type JwksServer } from "../testing/fixtures.js";
import { createTokenVerifier } from "./token-verifier.js";

const key = rsaKey("key-1");
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

function verifier(now?: () => number) {
  return createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id", now });
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe("createTokenVerifier", () => {
  it("answers the org and client of a valid token", async () => {
    const verified = await verifier().verify(signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", azp: "other" } }));
    expect(verified).toMatchObject({ orgId: "acme", clientId: "acme-ci" });
  });

  it("fetches the JWKS once for many tokens", async () => {
    const before = jwks.fetches;
    const subject = verifier();
    await Promise.all(Array.from({ length: 20 }, (_, i) => subject.verify(signToken({ key, claims: { org_id: "acme", n: i } }))));
    expect(jwks.fetches - before).toBe(1);
  });

  it("re-checks exp on every use of a cached token", async () => {
    let now = Date.now();
    const subject = verifier(() => now);
    const token = signToken({ key, expiresIn: 60 });
    await subject.verify(token);
    now += 60_000 + 31_000;
    const error = await rejection(subject.verify(token));
    expect(error.code).toBe("unauthenticated");
    expect(error.detail).toBe("Token has expired");
  });

  it("honours nbf with the clock tolerance", async () => {
    let now = Date.now();
    const subject = verifier(() => now);
    const token = signToken({ key, notBefore: 120 });
    expect((await rejection(subject.verify(token))).detail).toBe("Token is not yet valid");
    now += 120_000;
    await expect(subject.verify(token)).resolves.toMatchObject({ orgId: "acme" });
  });

  it("refetches the JWKS once for an unknown kid, so a rotated-in key is accepted", async () => {
    const subject = verifier();
    await subject.verify(signToken({ key }));
    const rotated = rsaKey("key-2");
    jwks.keys = [key.jwk, rotated.jwk];
    const before = jwks.fetches;
    await expect(subject.verify(signToken({ key: rotated }))).resolves.toMatchObject({ orgId: "acme" });
    expect(jwks.fetches - before).toBe(1);
    jwks.keys = [key.jwk];
  });

  it("reads the organization from the configured claim", async () => {
    const subject = createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "https://acme.test/org" });
    const token = signToken({ key, claims: { "https://acme.test/org": "acme", org_id: "globex", client_id: "acme-ci" } });
    await expect(subject.verify(token)).resolves.toMatchObject({ orgId: "acme" });
  });

  it("keeps the grants of scope, scp and roles, and a token without an organization (the API's routes refuse it)", async () => {
    const verified = await verifier().verify(signToken({ key, claims: { scope: "read  pes:admin", scp: ["write", 3], roles: "ops", client_id: "console" } }));
    expect(verified).toMatchObject({ orgId: undefined, clientId: "console" });
    expect(verified.scopes).toEqual(["read", "pes:admin", "write", "ops"]);
    expect((await verifier().verify(signToken({ key }))).scopes).toEqual([]);
  });

  it("reads who asked and the teams from the configured claim, deduplicated, and none when absent", async () => {
    const subject = createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id", teamsClaim: "groups" });
    const token = signToken({ key, claims: { org_id: "acme", sub: "alice", groups: ["payments", "search", "payments", 7], teams: "ignored" } });
    await expect(subject.verify(token)).resolves.toMatchObject({ subject: "alice", teams: ["payments", "search"] });
    await expect(verifier().verify(signToken({ key, claims: { teams: "payments search" } }))).resolves.toMatchObject({ teams: ["payments", "search"] });
    await expect(verifier().verify(signToken({ key }))).resolves.toMatchObject({ subject: undefined, teams: [] });
  });
});
