// Delivering a result where the caller asked: through the real Slack client against a local server
// speaking chat.postMessage and chat.getPermalink, with a real Redis holding the records.
import type { BatchItemPostJob, ChartData, PlaybookExecutionResult } from "@pes/contracts";
import { createChannelPacer, createSlackPostClient, createTeamsPostClient } from "@pes/integrations";
import { createLogger } from "@pes/logger";
import {
  startFakeMicrosoftGraph,
  startFakeSlack,
  startRedis,
  uniquePrefix,
  type FakeMicrosoftGraph,
  type FakeSlack,
  type RedisHandle,
} from "@pes/local-services";
import { batchRootKey, batchRootLockKey, keySpace, type KeySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { OrganizationIntegrations } from "./organization-integrations.js";
import { deliverResult, incidentAttributes, postBatchItemReply, type Delivery, type DeliveryDeps } from "./result-delivery.js";

const TOKEN = "xoxb-delivery-test";
const result: PlaybookExecutionResult = { highlights: "p99 latency rose 4× since 14:02 UTC", gadgetsHighlights: [{ title: "Latency" }] };

let redisHandle: RedisHandle;
let redis: Redis;
let slack: FakeSlack;
let enqueued: { job: BatchItemPostJob; jobId: string }[];
let keys: KeySpace;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(async () => {
  enqueued = [];
  keys = keySpace(uniquePrefix("delivery"), redisHandle.url);
  // The linked message's channel holds it; the app is no member of C0NOTHERE.
  slack = await startFakeSlack({
    token: TOKEN,
    channels: { C0ALERTS: { messages: [{ type: "message", ts: "1714650000.000100", text: "an alert" }] }, C0OPS: {}, C0NOTHERE: { member: false } },
  });
});

afterEach(async () => {
  await slack.close();
});

function deps(integrations: OrganizationIntegrations = withSlack(), postIntervalMs = 1): DeliveryDeps {
  return {
    integrations: new Map([["acme", integrations]]),
    redis,
    keys,
    pacer: createChannelPacer({ redis, keys, intervalMs: postIntervalMs }),
    teamsPacer: createChannelPacer({ redis, keys, intervalMs: 1, service: "teams" }),
    enqueueBatchItemPost: async (job, jobId) => {
      enqueued.push({ job, jobId });
    },
    logger: createLogger({ name: "delivery-test", level: "silent" }),
  };
}

function withSlack(): OrganizationIntegrations {
  const { apiUrl } = slack;
  return {
    slack: { connection: { token: TOKEN, slackApiUrl: apiUrl }, postClient: createSlackPostClient({ token: TOKEN, apiUrl }), allowedHosts: [] },
    incidentTools: [],
  };
}

/** What the fake Slack was asked to post, in order. */
const posted = () => slack.posts.map(({ channel, threadTs, text }) => ({ channel, ...(threadTs === undefined ? {} : { threadTs }), text }));

const delivery = (overrides: Partial<Delivery> = {}): Delivery => ({
  jobId: "job-1",
  orgId: "acme",
  requestId: "req-1",
  liveRun: false,
  attributes: {},
  ...overrides,
});
const bounds = () => ({ deadline: Date.now() + 10_000, signal: new AbortController().signal });

describe("deliverResult", () => {
  it("sends nothing without channelId and liveRun", async () => {
    expect(await deliverResult(deps(), delivery(), result, bounds())).toBe(result);
    expect(slack.calls).toEqual([]);
  });

  it("replies in the linked message's thread in its own channel, and posts a message of its own elsewhere", async () => {
    const source = { channelId: "C0ALERTS", threadTs: "1714650000.000100", incidentRefs: [] };
    const inThread = await deliverResult(deps(), delivery({ channelId: "C0ALERTS", source }), result, bounds());
    const elsewhere = await deliverResult(deps(), delivery({ jobId: "job-2", channelId: "C0OPS", source }), result, bounds());

    expect(posted()).toEqual([
      { channel: "C0ALERTS", threadTs: "1714650000.000100", text: expect.any(String) },
      { channel: "C0OPS", text: expect.any(String) },
    ]);
    const [reply, own] = slack.posts;
    expect(inThread).toEqual({
      ...result,
      enrichmentLink: `https://acme.slack.com/archives/C0ALERTS/p${reply?.ts.replace(".", "")}?thread_ts=1714650000.000100&cid=C0ALERTS`,
    });
    expect(elsewhere.enrichmentLink).toBe(`https://acme.slack.com/archives/C0OPS/p${own?.ts.replace(".", "")}`);
  });

  it("posts once per job, however often it runs", async () => {
    const first = await deliverResult(deps(), delivery({ channelId: "C0OPS" }), result, bounds());
    const again = await deliverResult(deps(), delivery({ channelId: "C0OPS" }), result, bounds());
    expect(slack.posts).toHaveLength(1);
    expect(again.enrichmentLink).toBe(first.enrichmentLink);
  });

  it("keeps the investigation and says why when posting or the note fails, after the execution's own error", async () => {
    const failed = await deliverResult(
      deps({ ...withSlack(), incidentTools: [{ tool: "pagerduty", apiToken: "pd", fromEmail: "oncall@acme.example", baseUrl: "http://127.0.0.1:9" }] }),
      delivery({ channelId: "C0NOTHERE", liveRun: true }),
      { ...result, error: "1 action timed out" },
      bounds(),
    );
    expect(failed).toEqual({
      ...result,
      error:
        "1 action timed out; Posting to Slack failed: Slack answered not_in_channel; liveRun: no PagerDuty incident to add the note to: " +
        "the issue has no valid pagerduty_incident_id attribute and its message no PagerDuty incident link",
    });
    expect(failed.enrichmentLink).toBeUndefined();
  });

  it("sends nowhere a result without findings (the execution itself failed)", async () => {
    const unknown = { error: 'Unknown playbook "x" for this organization' };
    expect(await deliverResult(deps(), delivery({ channelId: "C0OPS", liveRun: true }), unknown, bounds())).toBe(unknown);
    expect(slack.calls).toEqual([]);
  });

  it("puts a batch's items in one thread per channel: one root, posted once while every item waits for it", async () => {
    const batch = (index: number) => ({ id: "batch-1", index, total: 10 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        deliverResult(deps(), delivery({ jobId: `job-${index}`, channelId: "C0OPS", batch: batch(index) }), result, bounds()),
      ),
    );

    expect(posted()).toEqual([{ channel: "C0OPS", text: expect.stringContaining("10 issues") }]);
    const rootTs = slack.posts[0]?.ts ?? "";
    expect(new Set(results.map((item) => item.enrichmentLink))).toEqual(new Set([slack.permalinkOf("C0OPS", rootTs)]));
    expect(JSON.parse((await redis.get(batchRootKey(keys, "batch-1", "C0OPS"))) ?? "null")).toEqual({ ts: rootTs, permalink: results[0]?.enrichmentLink });
    expect(await redis.exists(batchRootLockKey(keys, "batch-1", "C0OPS"))).toBe(0);
    // Each item's reply is a job of its own, one per item and channel, in the root's thread.
    expect(enqueued.map(({ jobId }) => jobId).sort()).toEqual(Array.from({ length: 10 }, (_, index) => `batch-1.${index}.C0OPS`).sort());
    expect(enqueued[0]?.job).toMatchObject({ orgId: "acme", channelId: "C0OPS", rootTs, result });

    await postBatchItemReply(deps(), enqueued[0]?.job ?? expect.unreachable(), { windowMs: 10_000, signal: new AbortController().signal });
    expect(posted()[1]).toEqual({ channel: "C0OPS", threadTs: rootTs, text: expect.stringMatching(/Issue \d+ of 10/) });
  });

  it("leaves the batch root's lock to the worker that took it over when this one's lease expired", async () => {
    const lock = batchRootLockKey(keys, "batch-lease", "C0OPS");
    // The lease runs out just before this worker gives the lock up, and another worker takes it.
    const expiring = new Proxy(redis, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          if (["del", "eval", "evalsha"].includes(String(property)) && args.includes(lock)) await redis.set(lock, "another-worker", "PX", 60_000);
          return Reflect.apply(value, target, args);
        };
      },
    });
    const settings = { ...deps(), redis: expiring };

    await deliverResult(settings, delivery({ channelId: "C0OPS", batch: { id: "batch-lease", index: 0, total: 2 } }), result, bounds());

    expect(posted()).toEqual([{ channel: "C0OPS", text: expect.stringContaining("2 issues") }]);
    expect(await redis.get(lock)).toBe("another-worker");
  });

  it("links each item of a batch its caller waits for to its own reply in the batch's thread", async () => {
    const batch = (index: number) => ({ id: "batch-2", index, total: 10, callerWaits: true });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        deliverResult(deps(), delivery({ jobId: `job-${index}`, channelId: "C0OPS", batch: batch(index) }), result, bounds()),
      ),
    );

    const [root, ...replies] = slack.posts;
    expect(posted()[0]).toEqual({ channel: "C0OPS", text: expect.stringContaining("10 issues") });
    expect(replies).toHaveLength(10);
    expect(replies.every((reply) => reply.threadTs === root?.ts)).toBe(true);
    // Item i's link opens the reply headed "Issue i+1 of 10": the reply's ts, in the root's thread.
    results.forEach((item, index) => {
      const reply = replies.find((candidate) => slack.permalinkOf("C0OPS", candidate.ts, root?.ts) === item.enrichmentLink);
      expect(reply, item.enrichmentLink).toBeDefined();
      expect(reply?.text).toContain(`Issue ${index + 1} of 10`);
    });
    expect(enqueued).toEqual([]);
  });

  it("queues an item's reply and links the thread's root when the channel's pace leaves no time before the caller's deadline", async () => {
    // One post a minute: the root takes this minute's slot, the reply's would come after the deadline.
    const slow = deps(withSlack(), 60_000);
    const item = await deliverResult(slow, delivery({ channelId: "C0OPS", batch: { id: "batch-3", index: 0, total: 2, callerWaits: true } }), result, {
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
    });

    expect(posted()).toEqual([{ channel: "C0OPS", text: expect.stringContaining("2 issues") }]);
    expect(item).toEqual({ ...result, enrichmentLink: slack.permalinkOf("C0OPS", slack.posts[0]?.ts ?? "") });
    expect(enqueued.map(({ jobId }) => jobId)).toEqual(["batch-3.0.C0OPS"]);
  });

  it("fails a batch item's reply job when the reply cannot be posted, so that it is retried", async () => {
    const job: BatchItemPostJob = { orgId: "acme", channelId: "C0NOTHERE", rootTs: "1714650000.000100", batch: { id: "b", index: 2, total: 3 }, result };
    await expect(postBatchItemReply(deps(), job, { windowMs: 10_000, signal: new AbortController().signal })).rejects.toThrow(
      /^reply 3 of 3 in C0NOTHERE: posting to Slack failed: Slack answered not_in_channel/,
    );
  });
});

describe("deliverResult to Microsoft Teams", () => {
  const TEAM = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b";
  const CHANNEL = `${TEAM}/19:ops@thread.tacv2`;
  const credentials = { tenantId: "contoso.onmicrosoft.com", clientId: "11111111-2222-3333-4444-555555555555", clientSecret: "s", refreshToken: "r" };
  let graph: FakeMicrosoftGraph;

  beforeEach(async () => {
    graph = await startFakeMicrosoftGraph({ ...credentials, channels: [CHANNEL] });
  });

  afterEach(async () => {
    await graph.close();
  });

  const withTeams = (): OrganizationIntegrations => ({
    ...withSlack(),
    teams: { postClient: createTeamsPostClient({ ...credentials, graphUrl: graph.graphUrl, loginUrl: graph.loginUrl }) },
  });

  it("posts to a channel named <team-id>/<channel-id> with the Teams account, and links the message", async () => {
    const source = { channelId: "C0ALERTS", threadTs: "1714650000.000100", incidentRefs: [] };
    const delivered = await deliverResult(deps(withTeams()), delivery({ channelId: CHANNEL, source, title: "High latency" }), result, bounds());

    expect(graph.posts).toHaveLength(1);
    expect(delivered).toEqual({ ...result, enrichmentLink: graph.posts[0]?.webUrl });
    expect(slack.posts).toEqual([]);
  });

  it("shows the charts the bottom line cites as images from their signed links, and links the page", async () => {
    const chart: ChartData = {
      title: "Latency p99",
      kind: "metric",
      window: { start: 0, time: 600, end: 1_200 },
      series: [
        {
          name: "service=checkout",
          points: [
            [0, 1],
            [600, 4],
          ],
        },
      ],
      abnormal: true,
    };
    const cited: PlaybookExecutionResult = {
      ...result,
      verdict: { conclusion: "no-cause", symptoms: [{ kind: "latency", action: "Latency p99" }], background: [], ruledOut: [], normal: [], unchecked: [] },
      actionResults: [{ title: "Latency p99", shortAnswer: "4× its usual", chartUrl: "https://pes.example.com/playbook/execution/job-1/charts/0" }],
      pageUrl: "https://pes.example.com/view/execution/job-1?org=acme&exp=1&sig=x",
    };
    const signing = { secret: "a-signing-secret-of-at-least-32-characters", lifetimeSeconds: 3_600 };
    const signed = { ...deps(withTeams()), charts: { store: { keep: async () => {} }, retentionMs: 3_600_000, publicUrl: "https://pes.example.com", signing } };
    await deliverResult(signed, delivery({ channelId: CHANNEL, charts: new Map([[0, chart]]) }), cited, bounds());

    const card = JSON.stringify(graph.posts[0]?.attachments);
    const image = /"type":"Image","url":"([^"]+)"/.exec(card)?.[1];
    expect(image).toMatch(/^https:\/\/pes\.example\.com\/view\/execution\/job-1\/charts\/0\.png\?/);
    expect(card).toContain(cited.pageUrl);

    // Unsigned, Teams cannot show the image: the card goes without it.
    await deliverResult(
      { ...deps(withTeams()), charts: { store: { keep: async () => {} }, retentionMs: 3_600_000 } },
      delivery({ jobId: "job-2", channelId: CHANNEL, charts: new Map([[0, chart]]) }),
      cited,
      bounds(),
    );
    expect(JSON.stringify(graph.posts[1]?.attachments)).not.toContain('"type":"Image"');
  });

  it("says so when the organization has no Teams account, and posts nowhere", async () => {
    const delivered = await deliverResult(deps(), delivery({ channelId: CHANNEL }), result, bounds());
    expect(delivered.error).toBe("Posting to Microsoft Teams failed: the organization has no Teams account configured");
    expect(graph.posts).toEqual([]);
  });

  it("puts a batch in one Teams thread: the root while the callers wait, each item's reply from its own job", async () => {
    const results = await Promise.all(
      [0, 1].map((index) =>
        deliverResult(deps(withTeams()), delivery({ jobId: `job-${index}`, channelId: CHANNEL, batch: { id: "batch-t", index, total: 2 } }), result, bounds()),
      ),
    );
    const [root] = graph.posts;
    expect(graph.posts).toHaveLength(1);
    expect(results.map((item) => item.enrichmentLink)).toEqual([root?.webUrl, root?.webUrl]);
    expect(enqueued.map(({ job }) => job.rootTs)).toEqual([root?.id, root?.id]);
    // A job id BullMQ takes: no `:`.
    expect(enqueued.map(({ jobId }) => jobId).sort()).toEqual([0, 1].map((index) => `batch-t.${index}.${encodeURIComponent(CHANNEL)}`));
    expect(enqueued.every(({ jobId }) => !jobId.includes(":"))).toBe(true);

    for (const { job } of enqueued) await postBatchItemReply(deps(withTeams()), job, { windowMs: 10_000, signal: new AbortController().signal });
    expect(graph.posts.slice(1).map((reply) => ({ replyToId: reply.replyToId, summary: reply.summary }))).toEqual([
      { replyToId: root?.id, summary: expect.stringMatching(/^Issue \d of 2: /) },
      { replyToId: root?.id, summary: expect.stringMatching(/^Issue \d of 2: /) },
    ]);
  });
});

describe("deliverResult to Microsoft Teams, a batch its caller waits for", () => {
  const CHANNEL = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:ops@thread.tacv2";
  const credentials = { tenantId: "contoso.onmicrosoft.com", clientId: "11111111-2222-3333-4444-555555555555", clientSecret: "s", refreshToken: "r" };

  it("links each item to its own reply in the root's thread", async () => {
    const graph = await startFakeMicrosoftGraph({ ...credentials, channels: [CHANNEL] });
    try {
      const integrations: OrganizationIntegrations = {
        ...withSlack(),
        teams: { postClient: createTeamsPostClient({ ...credentials, graphUrl: graph.graphUrl, loginUrl: graph.loginUrl }) },
      };
      const batch = (index: number) => ({ id: "batch-tw", index, total: 2, callerWaits: true });
      const results = await Promise.all(
        [0, 1].map((index) =>
          deliverResult(deps(integrations), delivery({ jobId: `job-${index}`, channelId: CHANNEL, batch: batch(index) }), result, bounds()),
        ),
      );
      const [root, ...replies] = graph.posts;
      expect(replies.map((reply) => reply.replyToId)).toEqual([root?.id, root?.id]);
      results.forEach((item, index) => {
        expect(item.enrichmentLink).toBe(replies.find((reply) => reply.summary?.startsWith(`Issue ${index + 1} of 2:`))?.webUrl);
      });
      expect(enqueued).toEqual([]);
    } finally {
      await graph.close();
    }
  });
});

describe("incidentAttributes", () => {
  it("adds what the linked message refers to where the attributes name no incident", () => {
    const refs = [
      { tool: "pagerduty", incidentId: "PFROMLINK" },
      { tool: "opsgenie", alertId: "22a1d1f7-8a77-4e3a-8050-8c51405541c1" },
      { tool: "opsgenie", alias: "from-label" },
    ] as const;
    expect(incidentAttributes({ pagerduty_incident_id: "PEXPLICIT", opsgenie_alias: "checkout-eu", service: "checkout" }, refs)).toEqual({
      pagerduty_incident_id: "PEXPLICIT",
      opsgenie_alias: "checkout-eu",
      opsgenie_alert_id: "22a1d1f7-8a77-4e3a-8050-8c51405541c1",
      service: "checkout",
    });
    expect(incidentAttributes({}, refs)).toEqual({
      pagerduty_incident_id: "PFROMLINK",
      opsgenie_alert_id: "22a1d1f7-8a77-4e3a-8050-8c51405541c1",
      opsgenie_alias: "from-label",
    });
  });
});
