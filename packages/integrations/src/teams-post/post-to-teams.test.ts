// Posting results to Microsoft Teams through the official Graph client (@microsoft/microsoft-graph-client),
// against a local server speaking Graph's channel-message endpoints and the token service's
// refresh-token grant, with a real Redis holding the posts' records and the channels' pacing.
import type { PlaybookExecutionResult, TeamsChannelRef } from "@pes/contracts";
import {
  startFakeMicrosoftGraph,
  startRedis,
  uniquePrefix,
  type FakeMicrosoftGraph,
  type FakeMicrosoftGraphOptions,
  type RedisHandle,
} from "@pes/local-services";
import { keySpace, teamsPostKey, type KeySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createChannelPacer } from "../delivery/channel-pacer.js";
import { postTeamsBatchRoot, postTeamsEnrichment, postTeamsItemReply, type TeamsPostContext } from "./post-to-teams.js";
import { createTeamsPostClient } from "./teams-calls.js";
import { markOf } from "./teams-card.js";

const TENANT = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
const CLIENT_ID = "11111111-2222-3333-4444-555555555555";
const SECRET = "teams-client-secret-value";
const REFRESH = "teams-refresh-token-value";
const CHANNEL: TeamsChannelRef = { teamId: "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b", channelId: "19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2" };
const CHANNEL_ID = `${CHANNEL.teamId}/${CHANNEL.channelId}`;
/** A small simulated rate limit: 5 posts at once, one more per 10 ms; and a pacer twice as slow. */
const RATE_LIMIT = { burst: 5, refillMs: 10, retryAfterSeconds: 1 };
const PACE_MS = 20;

const result: PlaybookExecutionResult = {
  highlights: "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×.",
  gadgetsHighlights: [{ title: "Golden signals", highlights: "p99 latency rose 4.1× since 14:02 UTC." }],
  actionResults: [{ title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:02 UTC", mostImportantLink: "https://grafana.example/d/1" }],
};

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let graph: FakeMicrosoftGraph;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(() => {
  keys = keySpace(uniquePrefix("teams-post"), redisHandle.url);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function startFake(options: Partial<FakeMicrosoftGraphOptions> = {}): Promise<FakeMicrosoftGraph> {
  graph = await startFakeMicrosoftGraph({
    tenantId: TENANT,
    clientId: CLIENT_ID,
    clientSecret: SECRET,
    refreshToken: REFRESH,
    channels: [CHANNEL_ID],
    ...options,
  });
  closers.push(() => graph.close());
  return graph;
}

function client(overrides: { clientSecret?: string; refreshToken?: string } = {}) {
  return createTeamsPostClient({
    tenantId: TENANT,
    clientId: CLIENT_ID,
    clientSecret: SECRET,
    refreshToken: REFRESH,
    graphUrl: graph.graphUrl,
    loginUrl: graph.loginUrl,
    ...overrides,
  });
}

function context(overrides: Partial<TeamsPostContext> = {}): TeamsPostContext {
  return {
    client: client(),
    redis,
    keys,
    pacer: createChannelPacer({ redis, keys, intervalMs: PACE_MS, service: "teams" }),
    deadline: Date.now() + 30_000,
    ...overrides,
  };
}

const postRequests = () => graph.requests.filter((request) => request.method === "POST" && request.url.startsWith("/v1.0/"));

describe("postTeamsEnrichment", () => {
  it("posts the result as an Adaptive Card with the service account's token, and returns the message's webUrl", async () => {
    await startFake();
    const outcome = await postTeamsEnrichment(context(), { key: "exec-1", channel: CHANNEL, view: { result, title: "High latency" } });

    const [message] = graph.posts;
    expect(graph.posts).toHaveLength(1);
    expect(outcome).toEqual({ status: "posted", channel: CHANNEL_ID, messageId: message?.id, permalink: message?.webUrl });
    expect(message?.webUrl).toBe(
      `https://teams.microsoft.com/l/message/${encodeURIComponent(CHANNEL.channelId)}/${message?.id}?groupId=${CHANNEL.teamId}&tenantId=${TENANT}&createdTime=${message?.id}&parentMessageId=${message?.id}`,
    );
    expect(message?.attachments[0]?.id).toBe(markOf(`exec-1:${CHANNEL_ID}:0`));
    expect(JSON.stringify(message?.attachments[0]?.card)).toContain("High latency");
    expect(message?.summary).toContain("p99 latency rose 4.1×");
    // One refresh-token grant with the app's credentials, then Graph with the access token it gave.
    const [token] = graph.requests;
    expect(token?.url).toBe(`/${TENANT}/oauth2/v2.0/token`);
    expect(Object.fromEntries(new URLSearchParams(token?.body))).toMatchObject({
      grant_type: "refresh_token",
      client_id: CLIENT_ID,
      client_secret: SECRET,
      refresh_token: REFRESH,
    });
    expect(postRequests()[0]?.headers.authorization).toMatch(/^Bearer fake-access-1-/);
  });

  it("keeps its access token across posts, and renews it after Graph refuses it", async () => {
    await startFake();
    const shared = context();
    await postTeamsEnrichment(shared, { key: "exec-a", channel: CHANNEL, view: { result } });
    await postTeamsEnrichment(shared, { key: "exec-b", channel: CHANNEL, view: { result } });
    expect(graph.tokensIssued()).toBe(1);

    graph.failNext("post", { status: 401, code: "InvalidAuthenticationToken", message: "Lifetime validation failed, the token is expired." });
    const refused = await postTeamsEnrichment(shared, { key: "exec-c", channel: CHANNEL, view: { result } });
    expect(refused).toEqual({ status: "failed", reason: "posting to Microsoft Teams failed: Microsoft Graph answered HTTP 401 InvalidAuthenticationToken" });
    const retry = await postTeamsEnrichment(shared, { key: "exec-c", channel: CHANNEL, view: { result } });
    expect(retry.status).toBe("posted");
    expect(graph.tokensIssued()).toBe(2);
    // The rotated refresh token was the one redeemed the second time.
    const grants = graph.requests
      .filter((request) => request.url.endsWith("/oauth2/v2.0/token"))
      .map((request) => new URLSearchParams(request.body).get("refresh_token"));
    expect(grants[0]).toBe(REFRESH);
    expect(grants[1]).toMatch(/^fake-refresh-1-/);
  });

  it("waits out a 429's Retry-After and posts once", async () => {
    await startFake();
    graph.failNext("post", { retryAfterSeconds: 1 });

    const outcome = await postTeamsEnrichment(context(), { key: "exec-429", channel: CHANNEL, view: { result } });

    expect(outcome.status).toBe("posted");
    expect(postRequests()).toHaveLength(2);
    expect(graph.posts).toHaveLength(1);
  });

  it("gives up when the Retry-After goes past the deadline, and a later try posts", async () => {
    await startFake();
    graph.failNext("post", { retryAfterSeconds: 30 });

    const first = await postTeamsEnrichment(context({ deadline: Date.now() + 5_000 }), { key: "exec-late", channel: CHANNEL, view: { result } });
    expect(first).toEqual({
      status: "failed",
      reason: "posting to Microsoft Teams failed: Microsoft Graph throttled the call (Retry-After 30 s) and the deadline leaves no time to wait",
    });
    expect(graph.posts).toHaveLength(0);

    const retry = await postTeamsEnrichment(context(), { key: "exec-late", channel: CHANNEL, view: { result } });
    expect(retry.status).toBe("posted");
    expect(graph.posts).toHaveLength(1);
  });

  it("posts a huge result within Teams' message size (the fake refuses what Teams refuses)", async () => {
    await startFake();
    const long = (seed: string, length: number) => `${seed} `.repeat(Math.ceil(length / (seed.length + 1))).slice(0, length);
    const huge: PlaybookExecutionResult = {
      highlights: long("bottom <line>", 30_000),
      gadgetsHighlights: Array.from({ length: 300 }, (_, index) => ({ title: long(`gadget ${index}`, 500), highlights: long('finding "x"', 8_000) })),
    };
    const outcome = await postTeamsEnrichment(context(), { key: "exec-huge", channel: CHANNEL, view: { result: huge } });

    expect(outcome.status).toBe("posted");
    expect(JSON.stringify(graph.posts[0]?.attachments[0]?.card)).toMatch(/…and \d+ more findings not shown/);
  });
});

describe("posting to Teams is idempotent", () => {
  it("posts once for one key, however often it is called, and returns the same webUrl", async () => {
    await startFake();
    const first = await postTeamsEnrichment(context(), { key: "exec-3", channel: CHANNEL, view: { result } });
    const second = await postTeamsEnrichment(context(), { key: "exec-3", channel: CHANNEL, view: { result } });

    expect(second).toEqual(first);
    expect(postRequests()).toHaveLength(1);
    // The record is under the post id redis-keys.ts lists: renaming it would post again after a deploy.
    expect(await redis.exists(teamsPostKey(keys, `exec-3:${CHANNEL_ID}:0`))).toBe(1);
    await postTeamsEnrichment(context(), { key: "exec-4", channel: CHANNEL, view: { result } });
    expect(graph.posts).toHaveLength(2);
  });

  it("finds its own message after a try that posted but lost the answer (a worker dying there), instead of posting again", async () => {
    await startFake();
    // Other messages in the channel, before and after, each with a card of its own.
    await postTeamsEnrichment(context(), { key: "exec-before", channel: CHANNEL, view: { result } });
    graph.failNext("post", { dropAfterHandling: true });

    const lost = await postTeamsEnrichment(context(), { key: "exec-5", channel: CHANNEL, view: { result } });
    expect(lost.status).toBe("failed");
    expect(graph.posts).toHaveLength(2);
    await postTeamsEnrichment(context(), { key: "exec-after", channel: CHANNEL, view: { result } });

    const retry = await postTeamsEnrichment(context(), { key: "exec-5", channel: CHANNEL, view: { result } });
    const mine = graph.posts[1];
    expect(retry).toEqual({ status: "posted", channel: CHANNEL_ID, messageId: mine?.id, permalink: mine?.webUrl });
    expect(graph.posts).toHaveLength(3);
    expect(graph.requests.some((request) => request.method === "GET" && /\/messages\?(?:\$|%24)top=50$/.test(request.url))).toBe(true);
  });

  it("posts on a retry when the earlier try certainly posted nothing", async () => {
    await startFake();
    graph.failNext("post", { status: 403, code: "Forbidden", message: "User is not a member of the team." });

    const refused = await postTeamsEnrichment(context(), { key: "exec-6", channel: CHANNEL, view: { result } });
    expect(refused).toEqual({ status: "failed", reason: "posting to Microsoft Teams failed: Microsoft Graph answered HTTP 403 Forbidden" });

    const retry = await postTeamsEnrichment(context(), { key: "exec-6", channel: CHANNEL, view: { result } });
    expect(retry.status).toBe("posted");
    expect(graph.posts).toHaveLength(1);
  });

  it("reports the token service's and Graph's errors without any secret or Graph's message", async () => {
    await startFake();
    const badSecret = await postTeamsEnrichment(context({ client: client({ clientSecret: "wrong-secret-value" }) }), {
      key: "exec-7",
      channel: CHANNEL,
      view: { result },
    });
    const expired = await postTeamsEnrichment(context({ client: client({ refreshToken: "expired-refresh-value" }) }), {
      key: "exec-8",
      channel: CHANNEL,
      view: { result },
    });
    const missing = await postTeamsEnrichment(context(), { key: "exec-9", channel: { ...CHANNEL, channelId: "19:other@thread.tacv2" }, view: { result } });
    graph.failNext("post", { status: 400, code: "BadRequest", message: `echo of Bearer ${REFRESH}` });
    const echoed = await postTeamsEnrichment(context(), { key: "exec-10", channel: CHANNEL, view: { result } });

    expect(badSecret).toEqual({
      status: "failed",
      reason:
        "posting to Microsoft Teams failed: the Microsoft token service refused the service account's token (invalid_client AADSTS7000215): check teams.clientSecret",
    });
    expect(expired).toEqual({
      status: "failed",
      reason:
        "posting to Microsoft Teams failed: the Microsoft token service refused the service account's token (invalid_grant AADSTS70000): sign the service account in again and replace teams.refreshToken",
    });
    expect(missing).toEqual({ status: "failed", reason: "posting to Microsoft Teams failed: Microsoft Graph answered HTTP 404 NotFound" });
    expect(echoed).toEqual({ status: "failed", reason: "posting to Microsoft Teams failed: Microsoft Graph answered HTTP 400 BadRequest" });
    expect(JSON.stringify([badSecret, expired, missing, echoed])).not.toMatch(/secret-value|refresh-value|wrong-secret/);
  });

  it("posts nothing when Redis cannot record the post", async () => {
    await startFake();
    const offline = new Redis(redisHandle.url, { lazyConnect: true, enableOfflineQueue: false });
    const outcome = await postTeamsEnrichment(context({ redis: offline }), { key: "exec-11", channel: CHANNEL, view: { result } });

    expect(outcome.status === "failed" && outcome.reason).toMatch(/cannot record it in Redis/);
    expect(postRequests()).toHaveLength(0);
  });
});

describe("a batch in one Teams channel", () => {
  it("posts a root and 100 paced replies in its thread: none lost, in order, none refused by the rate limit", async () => {
    await startFake({ rateLimit: RATE_LIMIT });
    const batch = context({ deadline: Date.now() + 120_000 });
    const root = await postTeamsBatchRoot(batch, { key: "batch-1", channel: CHANNEL, title: "node-cpu", itemCount: 100 });
    if (root.status !== "posted") throw new Error(root.reason);

    for (let index = 0; index < 100; index += 1) {
      const view = { result: { ...result, highlights: `finding of issue ${index}` } };
      const reply = await postTeamsItemReply(batch, { batchKey: "batch-1", channel: CHANNEL, rootId: root.messageId, index, total: 100, view });
      expect(reply.status).toBe("posted");
    }

    const replies = graph.posts.filter((message) => message.replyToId === root.messageId);
    expect(replies.map((message) => message.summary)).toEqual(
      Array.from({ length: 100 }, (_, index) => `Issue ${index + 1} of 100: Playbook findings: finding of issue ${index}`),
    );
    expect(replies.every((message) => message.webUrl.endsWith(`&parentMessageId=${root.messageId}`))).toBe(true);
    expect(graph.rateLimitedCount()).toBe(0);
  });

  it("finds a reply whose answer was lost in the root's thread", async () => {
    await startFake();
    const root = await postTeamsBatchRoot(context(), { key: "batch-2", channel: CHANNEL, itemCount: 2 });
    if (root.status !== "posted") throw new Error(root.reason);
    graph.failNext("post", { dropAfterHandling: true });
    const item = { batchKey: "batch-2", channel: CHANNEL, rootId: root.messageId, index: 0, total: 2, view: { result } };

    expect((await postTeamsItemReply(context(), item)).status).toBe("failed");
    const retry = await postTeamsItemReply(context(), item);

    expect(retry).toMatchObject({ status: "posted", messageId: graph.posts[1]?.id });
    expect(graph.posts).toHaveLength(2);
    expect(graph.requests.some((request) => request.method === "GET" && request.url.includes(`/messages/${root.messageId}/replies?`))).toBe(true);
  });
});
