// A result posted to Slack carries the feedback buttons when the service signs links: each with the
// execution's reference, which the API checks when Slack sends a click back.
import type { PlaybookExecutionResult } from "@pes/contracts";
import { createChannelPacer, createSlackPostClient } from "@pes/integrations";
import { keySpace } from "@pes/jobs";
import { createLogger } from "@pes/logger";
import { startFakeSlack, startRedis, uniquePrefix, type FakeSlack, type RedisHandle } from "@pes/local-services";
import { checkFeedbackReference } from "@pes/signed-links";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverResult, type DeliveryDeps } from "./result-delivery.js";

const TOKEN = "xoxb-feedback-buttons";
const SECRET = "a-link-signing-secret-of-32-chars!!";
const EXECUTION = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const result: PlaybookExecutionResult = { highlights: "Root cause: the rollout of payments v2.4.0", gadgetsHighlights: [{ title: "Changes" }] };

let redisHandle: RedisHandle;
let redis: Redis;
let slack: FakeSlack;

beforeAll(async () => {
  [redisHandle, slack] = await Promise.all([startRedis(), startFakeSlack({ token: TOKEN })]);
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await Promise.all([redisHandle.stop(), slack.close()]);
});

function deps(signing: boolean): DeliveryDeps {
  const keys = keySpace(uniquePrefix("feedback-buttons"), redisHandle.url);
  const postClient = createSlackPostClient({ token: TOKEN, apiUrl: slack.apiUrl });
  return {
    integrations: new Map([["acme", { slack: { connection: { token: TOKEN, slackApiUrl: slack.apiUrl }, postClient, allowedHosts: [] }, incidentTools: [] }]]),
    redis,
    keys,
    pacer: createChannelPacer({ redis, keys, intervalMs: 1 }),
    teamsPacer: createChannelPacer({ redis, keys, intervalMs: 1, service: "teams" }),
    enqueueBatchItemPost: async () => {},
    logger: createLogger({ name: "feedback-buttons-test", level: "silent" }),
    ...(signing ? { charts: { store: { keep: async () => {} }, retentionMs: 3_600_000, signing: { secret: SECRET, lifetimeSeconds: 3_600 } } } : {}),
  };
}

const delivery = (channelId: string) => ({ jobId: EXECUTION, orgId: "acme", requestId: "req-1", liveRun: false, attributes: {}, channelId });
const bounds = () => ({ deadline: Date.now() + 10_000, signal: new AbortController().signal });
type Block = { type: string; elements?: Array<{ action_id: string; value: string }> };

describe("the feedback buttons of a posted result", () => {
  it("carry a reference to the execution of its organization, checked with LINK_SIGNING_SECRET", async () => {
    await deliverResult(deps(true), delivery("C0SIGNED"), result, bounds());
    const blocks = (slack.messages("C0SIGNED")[0]?.blocks ?? []) as Block[];
    const buttons = blocks.find((block) => block.type === "actions")?.elements ?? [];
    expect(buttons.map((button) => button.action_id)).toEqual(["pes_feedback_right", "pes_feedback_wrong", "pes_feedback_details"]);
    for (const button of buttons) {
      expect(checkFeedbackReference(SECRET, button.value, new Date())).toEqual({ status: "valid", orgId: "acme", executionId: EXECUTION });
    }
  });

  it("are left out when links are not signed", async () => {
    await deliverResult(deps(false), delivery("C0UNSIGNED"), result, bounds());
    const blocks = (slack.messages("C0UNSIGNED")[0]?.blocks ?? []) as Block[];
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.some((block) => block.type === "actions")).toBe(false);
  });
});
