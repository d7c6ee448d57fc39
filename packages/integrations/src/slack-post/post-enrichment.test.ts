// Posting results to Slack through the real @slack/web-api client, against a local server speaking the
// Web API, with a real Redis holding the posts' records and the channels' pacing.
import type { PlaybookExecutionResult } from "@pes/contracts";
import { startFakeSlack, startRedis, uniquePrefix, type FakeSlack, type FakeSlackOptions, type RedisHandle } from "@pes/local-services";
import { keySpace, slackPostKey, type KeySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createChannelPacer } from "../delivery/channel-pacer.js";
import { postBatchRoot, postEnrichment, postItemReply, POST_MARK_EVENT, type SlackPostContext } from "./post-enrichment.js";
import { createSlackPostClient } from "./slack-calls.js";

const TOKEN = "xoxb-test-secret-token";
const CHANNEL = "C0ALERTS";
/** A small simulated rate limit: 5 posts at once, one more per 10 ms; and a pacer twice as slow. */
const RATE_LIMIT = { burst: 5, refillMs: 10, retryAfterSeconds: 1 };
const PACE_MS = 20;

const result: PlaybookExecutionResult = {
  highlights: "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×.",
  gadgetsHighlights: [{ title: "Golden signals", highlights: "p99 latency rose 4.1× since 14:02 UTC." }],
  actionResults: [{ title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:02 UTC", mostImportantLink: "https://grafana.example/d/1" }],
  actionableMitigations: [{ toolName: "argocd", customName: "Roll back checkout", url: "https://argocd.example/app/checkout" }],
};

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let fake: FakeSlack;
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
  keys = keySpace(uniquePrefix("slack-post"), redisHandle.url);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function startFake(options: Partial<FakeSlackOptions> = {}): Promise<FakeSlack> {
  fake = await startFakeSlack({ token: TOKEN, ...options });
  closers.push(() => fake.close());
  return fake;
}

function context(overrides: Partial<SlackPostContext> = {}): SlackPostContext {
  return {
    client: createSlackPostClient({ token: TOKEN, apiUrl: fake.apiUrl }),
    redis,
    keys,
    pacer: createChannelPacer({ redis, keys, intervalMs: PACE_MS }),
    deadline: Date.now() + 30_000,
    ...overrides,
  };
}

function posts(): number {
  return fake.calls.filter((call) => call.method === "chat.postMessage").length;
}

describe("postEnrichment", () => {
  it("posts the result with the bot token and returns the message's permalink", async () => {
    await startFake();
    const outcome = await postEnrichment(context(), { key: "exec-1", channel: CHANNEL, view: { result, title: "High latency" } });

    const [message] = fake.messages(CHANNEL);
    expect(outcome).toEqual({
      status: "posted",
      channel: CHANNEL,
      ts: message?.ts,
      permalink: `https://acme.slack.com/archives/${CHANNEL}/p${message?.ts.replace(".", "")}`,
    });
    expect(fake.messages(CHANNEL)).toHaveLength(1);
    expect(message?.text).toContain("High latency");
    expect(JSON.stringify(message?.blocks)).toContain("<https://grafana.example/d/1|p99 latency>");
    expect(message?.metadata).toEqual({ event_type: POST_MARK_EVENT, event_payload: { key: `exec-1:${CHANNEL}:0` } });
    expect(fake.calls.every((call) => call.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(fake.calls.find((call) => call.method === "chat.postMessage")?.args).toMatchObject({ unfurl_links: "false", unfurl_media: "false" });
  });

  it("replies in the thread of the message the issue came from", async () => {
    await startFake();
    const alert = await postBatchRoot(context(), { key: "alert-message", channel: CHANNEL, itemCount: 1 });
    if (alert.status !== "posted") throw new Error(alert.reason);

    const outcome = await postEnrichment(context(), { key: "exec-2", channel: CHANNEL, threadTs: alert.ts, view: { result } });

    const post = fake.calls.filter((call) => call.method === "chat.postMessage").at(-1);
    expect(post?.args.thread_ts).toBe(alert.ts);
    expect(outcome.status === "posted" && outcome.permalink).toMatch(new RegExp(`\\?thread_ts=${alert.ts.replace(".", "\\.")}&cid=${CHANNEL}$`));
  });

  it("continues a result too large for one message in the root's thread", async () => {
    await startFake();
    const big: PlaybookExecutionResult = {
      ...result,
      gadgetsHighlights: Array.from({ length: 120 }, (_, index) => ({ title: `Gadget ${index}`, highlights: `finding ${index} `.repeat(20) })),
    };
    const outcome = await postEnrichment(context(), { key: "exec-big", channel: CHANNEL, view: { result: big } });

    const [root, ...rest] = fake.messages(CHANNEL);
    expect(outcome).toMatchObject({ status: "posted", ts: root?.ts });
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((message) => message.threadTs === root?.ts)).toBe(true);
    expect(fake.calls.filter((call) => call.method === "chat.postMessage").every((call) => call.args.text !== "")).toBe(true);
  });

  it("waits out a 429's Retry-After and posts once", async () => {
    await startFake();
    fake.failNext("chat.postMessage", { retryAfterSeconds: 1 });

    const outcome = await postEnrichment(context(), { key: "exec-429", channel: CHANNEL, view: { result } });

    expect(outcome.status).toBe("posted");
    expect(posts()).toBe(2);
    expect(fake.messages(CHANNEL)).toHaveLength(1);
  });

  it("gives up when the Retry-After goes past the deadline, and a later try posts", async () => {
    await startFake();
    fake.failNext("chat.postMessage", { retryAfterSeconds: 30 });

    const first = await postEnrichment(context({ deadline: Date.now() + 5_000 }), { key: "exec-late", channel: CHANNEL, view: { result } });
    expect(first.status).toBe("failed");
    expect(first.status === "failed" && first.reason).toMatch(/rate-limited.*Retry-After 30 s/);
    expect(fake.messages(CHANNEL)).toHaveLength(0);

    // Nothing was posted, so the record was released: the job's retry posts.
    const retry = await postEnrichment(context(), { key: "exec-late", channel: CHANNEL, view: { result } });
    expect(retry.status).toBe("posted");
    expect(fake.messages(CHANNEL)).toHaveLength(1);
  });

  it("delivers injected mentions and links in alert values as text", async () => {
    await startFake();
    const hostile: PlaybookExecutionResult = {
      highlights: "Around 14:05 UTC for pod=<!channel>: <https://evil.example|click>",
      gadgetsHighlights: [{ title: "Pods", args: { pod: "<!channel>" }, highlights: "<https://evil.example|click>" }],
      actionResults: [{ title: "<!here>", shortAnswer: "<!here>: <https://evil.example|click>", mostImportantLink: "https://grafana.example/d/1" }],
    };
    await postEnrichment(context(), { key: "exec-hostile", channel: CHANNEL, view: { result: hostile, title: "<!channel> alert" } });

    const post = fake.calls.find((call) => call.method === "chat.postMessage");
    const received = `${post?.args.text ?? ""}${post?.args.blocks ?? ""}`;
    expect(received).not.toContain("<!channel>");
    expect(received).not.toContain("<!here>");
    expect(received).not.toContain("<https://evil");
    expect(received).toContain("&lt;!channel&gt;");
    expect(received).toContain("&lt;https://evil.example|click&gt;");
    expect(received).toContain("<https://grafana.example/d/1|&lt;!here&gt;>");
  });

  it("posts a huge result within Slack's limits (the fake refuses what Slack refuses)", async () => {
    await startFake();
    const long = (seed: string, length: number) => `${seed} `.repeat(Math.ceil(length / (seed.length + 1))).slice(0, length);
    const huge: PlaybookExecutionResult = {
      highlights: long("bottom <line>", 30_000),
      gadgetsHighlights: Array.from({ length: 300 }, (_, index) => ({ title: long(`gadget ${index}`, 500), highlights: long("finding &", 8_000) })),
      actionResults: Array.from({ length: 300 }, (_, index) => ({
        title: `a${index}`,
        shortAnswer: long("answer", 5_000),
        mostImportantLink: `https://grafana.example/${index}`,
      })),
      actionableMitigations: Array.from({ length: 50 }, () => ({ toolName: "t", action: { cmd: long("x", 5_000) } })),
    };
    const outcome = await postEnrichment(context(), { key: "exec-huge", channel: CHANNEL, view: { result: huge } });

    expect(outcome).toMatchObject({ status: "posted" });
    expect(outcome.status === "posted" && outcome.incomplete).toBeUndefined();
    expect(fake.messages(CHANNEL)).toHaveLength(5);
  });
});

describe("posting is idempotent", () => {
  it("posts once for one key, however often it is called, and returns the same permalink", async () => {
    await startFake();
    const first = await postEnrichment(context(), { key: "exec-3", channel: CHANNEL, view: { result } });
    const second = await postEnrichment(context(), { key: "exec-3", channel: CHANNEL, view: { result } });

    expect(second).toEqual(first);
    expect(posts()).toBe(1);
    expect(fake.calls.filter((call) => call.method === "chat.getPermalink")).toHaveLength(2);
    // The record is under the post id redis-keys.ts lists: renaming it would post again after a deploy.
    expect(await redis.exists(slackPostKey(keys, `exec-3:${CHANNEL}:0`))).toBe(1);
    // Another execution posts its own message.
    await postEnrichment(context(), { key: "exec-4", channel: CHANNEL, view: { result } });
    expect(fake.messages(CHANNEL)).toHaveLength(2);
  });

  it("finds its own message after a try that lost Slack's answer, instead of posting again", async () => {
    await startFake();
    fake.failNext("chat.postMessage", { dropAfterHandling: true });

    const lost = await postEnrichment(context(), { key: "exec-5", channel: CHANNEL, view: { result } });
    expect(lost.status).toBe("failed");
    expect(fake.messages(CHANNEL)).toHaveLength(1);

    const retry = await postEnrichment(context(), { key: "exec-5", channel: CHANNEL, view: { result } });
    expect(retry).toMatchObject({ status: "posted", ts: fake.messages(CHANNEL)[0]?.ts });
    expect(fake.messages(CHANNEL)).toHaveLength(1);
    expect(fake.calls.some((call) => call.method === "conversations.history" && call.args.include_all_metadata === "true")).toBe(true);
  });

  it("posts on a retry when the earlier try certainly posted nothing", async () => {
    await startFake();
    fake.failNext("chat.postMessage", { error: "not_in_channel" });

    const refused = await postEnrichment(context(), { key: "exec-6", channel: CHANNEL, view: { result } });
    expect(refused).toEqual({ status: "failed", reason: "posting to Slack failed: Slack answered not_in_channel" });

    const retry = await postEnrichment(context(), { key: "exec-6", channel: CHANNEL, view: { result } });
    expect(retry.status).toBe("posted");
    expect(fake.messages(CHANNEL)).toHaveLength(1);
  });

  it("reports Slack's errors without the token", async () => {
    await startFake({ channels: { C0OTHER: {} } });
    const missing = await postEnrichment(context(), { key: "exec-7", channel: CHANNEL, view: { result } });
    fake.failNext("chat.postMessage", { httpStatus: 401 });
    const unauthorized = await postEnrichment(context(), { key: "exec-8", channel: "C0OTHER", view: { result } });
    const badToken = await postEnrichment(context({ client: createSlackPostClient({ token: "xoxb-wrong-secret", apiUrl: fake.apiUrl }) }), {
      key: "exec-9",
      channel: "C0OTHER",
      view: { result },
    });

    expect(missing).toEqual({ status: "failed", reason: "posting to Slack failed: Slack answered channel_not_found" });
    expect(unauthorized).toEqual({ status: "failed", reason: "posting to Slack failed: Slack answered HTTP 401" });
    expect(badToken).toEqual({ status: "failed", reason: "posting to Slack failed: Slack answered invalid_auth" });
    expect(JSON.stringify([missing, unauthorized, badToken])).not.toMatch(/secret/);
  });

  it("repeats only an error code of Slack's answer, never text that could quote the request", async () => {
    await startFake();
    fake.failNext("chat.postMessage", { error: `invalid_auth: got Bearer ${TOKEN}` });
    const echoed = await postEnrichment(context(), { key: "exec-echo", channel: CHANNEL, view: { result } });
    expect(echoed).toEqual({ status: "failed", reason: "posting to Slack failed: Slack answered an error that is no Slack error code" });
  });

  it("posts nothing when Redis cannot record the post", async () => {
    await startFake();
    const offline = new Redis(redisHandle.url, { lazyConnect: true, enableOfflineQueue: false });
    const outcome = await postEnrichment(context({ redis: offline }), { key: "exec-10", channel: CHANNEL, view: { result } });

    expect(outcome.status).toBe("failed");
    expect(outcome.status === "failed" && outcome.reason).toMatch(/cannot record it in Redis/);
    expect(posts()).toBe(0);
  });
});

describe("a batch in one channel", () => {
  it("posts a root and 100 paced replies: none lost, in order, none refused by the rate limit", async () => {
    // The fake refuses a post when the channel's bucket is empty; the pacer spaces posts further apart than
    // the bucket refills, its burst absorbing timers that fire late. Without pacing, most posts would be
    // refused and wait out Retry-After.
    await startFake({ rateLimit: RATE_LIMIT });
    const batch = context({ deadline: Date.now() + 120_000 });
    const root = await postBatchRoot(batch, { key: "batch-1", channel: CHANNEL, title: "node-cpu", itemCount: 100 });
    if (root.status !== "posted") throw new Error(root.reason);

    for (let index = 0; index < 100; index += 1) {
      const view = { result: { ...result, highlights: `finding of issue ${index}` } };
      const reply = await postItemReply(batch, { batchKey: "batch-1", channel: CHANNEL, rootTs: root.ts, index, total: 100, view });
      expect(reply.status).toBe("posted");
    }

    const replies = fake.messages(CHANNEL).filter((message) => message.threadTs === root.ts);
    expect(replies.map((message) => message.text)).toEqual(
      Array.from({ length: 100 }, (_, index) => `Issue ${index + 1} of 100: Playbook findings: finding of issue ${index}`),
    );
    expect(fake.rateLimitedCount()).toBe(0);
  });

  it("spaces the posts of two workers sharing the channel", async () => {
    await startFake({ rateLimit: RATE_LIMIT });
    const other = new Redis(redisHandle.url);
    closers.push(async () => other.disconnect());
    const workers = [context(), context({ redis: other, pacer: createChannelPacer({ redis: other, keys, intervalMs: PACE_MS }) })];

    await Promise.all(
      workers.map(async (worker, workerIndex) => {
        for (let index = 0; index < 15; index += 1) {
          const outcome = await postEnrichment(worker, { key: `w${workerIndex}-${index}`, channel: CHANNEL, view: { result } });
          expect(outcome.status).toBe("posted");
        }
      }),
    );

    expect(fake.messages(CHANNEL)).toHaveLength(30);
    expect(fake.rateLimitedCount()).toBe(0);
  });

  it("refuses a reply whose posting slot is past the deadline, without posting it", async () => {
    await startFake();
    const slow = context({ pacer: createChannelPacer({ redis, keys, intervalMs: 60_000 }), deadline: Date.now() + 10_000 });
    const root = await postBatchRoot(slow, { key: "batch-2", channel: CHANNEL, itemCount: 2 });
    if (root.status !== "posted") throw new Error(root.reason);

    const reply = await postItemReply(slow, { batchKey: "batch-2", channel: CHANNEL, rootTs: root.ts, index: 0, total: 2, view: { result } });

    expect(reply.status === "failed" && reply.reason).toMatch(/next free posting slot is past the deadline/);
    expect(fake.messages(CHANNEL)).toHaveLength(1);
  });
});
