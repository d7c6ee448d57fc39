// GET /audit over a real Redis: the records a worker appended to each organization's stream, read back
// by that organization's admins only, paged and filtered.
import { AUDIT_RECORD_VERSION, AuditPage, type AuditRecord } from "@pes/contracts";
import { createAuditTrail, type AuditTrail } from "@pes/executions";
import { keySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const admin = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "ops-lead", scope: "pes:org-admin" } });
const member = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "alice", teams: ["payments"] } });
const searcher = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "sam", teams: ["search"] } });
const noTeam = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "carol" } });
const globexAdmin = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci", sub: "root", scope: "pes:org-admin" } });

let jwks: JwksServer;
let redis: RedisHandle;
let connection: Redis;
let trail: AuditTrail;

function record(orgId: string, n: number, subject: string, playbook: string, teams?: string[]): AuditRecord {
  return {
    ...(teams === undefined ? {} : { teams }),
    v: AUDIT_RECORD_VERSION,
    executionId: `${orgId}-execution-${n}`,
    requestId: `request-${n}`,
    orgId,
    finishedAt: new Date(Date.UTC(2024, 4, 1, 12, 0, n)).toISOString(),
    requestedBy: { subject, clientId: `${orgId}-ci`, teams: [], entry: { kind: "route", route: "POST /playbook/execution" } },
    playbook: { name: playbook, version: "sha256:0f" },
    outcome: "success",
    queries: [
      { action: "disk usage", query: { promql: `disk{host="db-${n}"}` }, window: { start: "2024-05-01T11:00:00.000Z", end: "2024-05-01T12:00:00.000Z" } },
    ],
    sent: [],
  };
}

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  connection = new Redis(redis.url);
  trail = createAuditTrail(() => connection, keySpace(uniquePrefix("api-audit"), redis.url));
  for (let n = 1; n <= 5; n += 1)
    await trail.append(record("acme", n, n <= 3 ? "alice" : "bob", n % 2 === 0 ? "disk-full" : "cpu-high", n === 2 ? ["payments"] : undefined), {
      retentionDays: 30,
    });
  await trail.append(record("globex", 1, "root", "disk-full"), { retentionDays: 30 });
});
afterAll(async () => {
  await connection.quit();
  await Promise.all([jwks.close(), redis.stop()]);
});

function app() {
  return testApp({ jwksUrl: jwks.url, audit: trail }).app;
}

async function page(token: string, query = ""): Promise<AuditPage> {
  const response = await request(app()).get(`/audit${query}`).set("Authorization", `Bearer ${token}`);
  expect(response.status).toBe(200);
  return AuditPage.parse(response.body);
}

const ids = (read: AuditPage) => read.records.map((entry) => entry.executionId);

describe("GET /audit", () => {
  it("gives an admin its organization's records, newest first, and never another organization's", async () => {
    expect(ids(await page(admin))).toEqual([5, 4, 3, 2, 1].map((n) => `acme-execution-${n}`));
    expect(ids(await page(globexAdmin))).toEqual(["globex-execution-1"]);
    const [newest] = (await page(admin)).records;
    expect(newest?.queries[0]?.query).toEqual({ promql: 'disk{host="db-5"}' });
  });

  it("gives a member of teams only its teams' records, refuses a caller of neither teams nor the admin scope with a 403, and one without a token with a 401", async () => {
    expect(ids(await page(member))).toEqual(["acme-execution-2"]);
    expect(ids(await page(searcher))).toEqual([]);
    const refused = await request(app()).get("/audit").set("Authorization", `Bearer ${noTeam}`);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("AUTH_ORG_ADMIN_SCOPE");
    expect(refused.body).not.toHaveProperty("records");

    expect((await request(app()).get("/audit")).status).toBe(401);
  });

  it("pages with the cursor it gives, and filters by subject, playbook, execution and time", async () => {
    const first = await page(admin, "?limit=2");
    expect(ids(first)).toEqual(["acme-execution-5", "acme-execution-4"]);
    const second = await page(admin, `?limit=2&cursor=${first.next}`);
    expect(ids(second)).toEqual(["acme-execution-3", "acme-execution-2"]);
    const third = await page(admin, `?limit=2&cursor=${second.next}`);
    expect(ids(third)).toEqual(["acme-execution-1"]);
    expect(third.next).toBeUndefined();

    expect(ids(await page(admin, "?subject=bob"))).toEqual(["acme-execution-5", "acme-execution-4"]);
    expect(ids(await page(admin, "?playbook=disk-full&subject=alice"))).toEqual(["acme-execution-2"]);
    expect(ids(await page(admin, "?execution=acme-execution-3"))).toEqual(["acme-execution-3"]);
    // Another organization's execution is not found in this one's trail.
    expect(ids(await page(admin, "?execution=globex-execution-1"))).toEqual([]);

    const oldest = (await page(admin)).records.at(-1);
    const appendedAt = Number(oldest?.id.split("-")[0]);
    const upToOldest = await page(admin, `?to=${new Date(appendedAt).toISOString()}`);
    expect(ids(upToOldest)).toContain("acme-execution-1");
    expect(ids(await page(admin, `?from=${new Date(Date.now() + 60_000).toISOString()}`))).toEqual([]);
  });

  it("answers 400 with the issues for a bad cursor, limit or time range", async () => {
    for (const query of ["?cursor=abc", "?limit=0", "?limit=501", "?from=yesterday", "?from=2024-05-02T00:00:00Z&to=2024-05-01T00:00:00Z", "?unknown=1"]) {
      const response = await request(app()).get(`/audit${query}`).set("Authorization", `Bearer ${admin}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error?.[0]?.path?.[0], query).toBe("query");
    }
  });
});
