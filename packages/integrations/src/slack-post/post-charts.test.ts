// Sharing charts in a thread through the real @slack/web-api client (filesUploadV2: the external upload
// flow), against the local fake Slack, with a real Redis holding the record and the channel's pacing.
import { startFakeSlack, startRedis, uniquePrefix, type FakeSlack, type RedisHandle } from "@pes/local-services";
import { keySpace, slackPostKey, type KeySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createChannelPacer } from "../delivery/channel-pacer.js";
import { MAX_CHART_FILES, postChartFiles, type ChartFile } from "./post-charts.js";
import { postEnrichment, type SlackPostContext } from "./post-enrichment.js";
import { createSlackPostClient } from "./slack-calls.js";

const TOKEN = "xoxb-test-secret-token";
const CHANNEL = "C0ALERTS";

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let fake: FakeSlack;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});
afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});
beforeEach(async () => {
  keys = keySpace(uniquePrefix("slack-charts"), redisHandle.url);
  fake = await startFakeSlack({ token: TOKEN, channels: { [CHANNEL]: {} } });
});
afterEach(async () => {
  await fake.close();
});

function context(overrides: Partial<SlackPostContext> = {}): SlackPostContext {
  return {
    client: createSlackPostClient({ token: TOKEN, apiUrl: fake.apiUrl }),
    redis,
    keys,
    pacer: createChannelPacer({ redis, keys, intervalMs: 1 }),
    deadline: Date.now() + 10_000,
    ...overrides,
  };
}

function chart(index: number): ChartFile {
  return { filename: `chart-${index}.png`, title: `p99 latency <${index}>`, altText: "x".repeat(1_500), png: Buffer.from(`png bytes ${index}`) };
}

describe("postChartFiles", () => {
  it("shares the charts as one reply in the thread of the posted result, by the external upload flow", async () => {
    const posted = await postEnrichment(context(), { key: "exec-1", channel: CHANNEL, view: { result: { highlights: "p99 latency rose 4×." } } });
    if (posted.status !== "posted") throw new Error(posted.reason);

    const outcome = await postChartFiles(context(), { key: "exec-1", channel: CHANNEL, threadTs: posted.ts, files: [chart(0), chart(1)] });

    expect(outcome).toEqual({ status: "posted", count: 2 });
    expect(fake.calls.map((call) => call.method)).toEqual([
      "chat.postMessage",
      "chat.getPermalink",
      "files.getUploadURLExternal",
      "files.getUploadURLExternal",
      "upload",
      "upload",
      "files.completeUploadExternal",
    ]);
    const [root, reply] = fake.messages(CHANNEL);
    expect(reply?.threadTs).toBe(root?.ts);
    expect(reply?.files?.map(({ title, filename, bytes }) => ({ title, filename, bytes: bytes.toString() }))).toEqual([
      { title: "p99 latency <0>", filename: "chart-0.png", bytes: "png bytes 0" },
      { title: "p99 latency <1>", filename: "chart-1.png", bytes: "png bytes 1" },
    ]);
    // Cut to Slack's limit on alt text (the fake refuses longer, as Slack does).
    expect(reply?.files?.[0]?.altText).toHaveLength(1_000);
  });

  it("shares them once however often the job runs, and at most MAX_CHART_FILES", async () => {
    const posted = await postEnrichment(context(), { key: "exec-2", channel: CHANNEL, view: { result: { highlights: "…" } } });
    if (posted.status !== "posted") throw new Error(posted.reason);
    const files = Array.from({ length: MAX_CHART_FILES + 2 }, (_, index) => chart(index));

    const first = await postChartFiles(context(), { key: "exec-2", channel: CHANNEL, threadTs: posted.ts, files });
    const again = await postChartFiles(context(), { key: "exec-2", channel: CHANNEL, threadTs: posted.ts, files });

    expect(first).toEqual({ status: "posted", count: MAX_CHART_FILES });
    expect(again).toEqual(first);
    expect(await redis.exists(slackPostKey(keys, `exec-2:${CHANNEL}:charts`))).toBe(1);
    expect(fake.calls.filter((call) => call.method === "files.completeUploadExternal")).toHaveLength(1);
    expect(fake.messages(CHANNEL)[1]?.files).toHaveLength(MAX_CHART_FILES);
  });

  it("says why when Slack refuses, and shares nothing", async () => {
    fake.failNext("files.completeUploadExternal", { error: "not_in_channel" });
    const posted = await postEnrichment(context(), { key: "exec-3", channel: CHANNEL, view: { result: { highlights: "…" } } });
    if (posted.status !== "posted") throw new Error(posted.reason);

    const outcome = await postChartFiles(context(), { key: "exec-3", channel: CHANNEL, threadTs: posted.ts, files: [chart(0)] });

    expect(outcome).toEqual({ status: "failed", reason: "sharing the charts in Slack failed: Slack answered not_in_channel" });
    expect(fake.messages(CHANNEL)).toHaveLength(1);
  });

  it("waits for the channel's posting slot like any message, and gives up when it is past the deadline", async () => {
    const posted = await postEnrichment(context(), { key: "exec-4", channel: CHANNEL, view: { result: { highlights: "…" } } });
    if (posted.status !== "posted") throw new Error(posted.reason);
    const slow = createChannelPacer({ redis, keys, intervalMs: 60_000 });
    await slow.holdOff(CHANNEL, 60_000);

    const outcome = await postChartFiles(context({ pacer: slow }), { key: "exec-4", channel: CHANNEL, threadTs: posted.ts, files: [chart(0)] });

    expect(outcome.status).toBe("failed");
    expect(fake.calls.some((call) => call.method === "files.getUploadURLExternal")).toBe(false);
  });
});
