// Slack's interactivity requests through the app listening on 127.0.0.1: signed as Slack signs them, the
// result's message posted to the fake Slack with the buttons the worker renders, the real feedback store
// and signature ledger in a real Redis.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createFeedbackStore } from "@pes/executions";
import { FEEDBACK_ACTIONS, FEEDBACK_MODAL_CALLBACK_ID, FEEDBACK_MODAL_INPUTS, renderEnrichment, type FeedbackBlock } from "@pes/integrations";
import { createSlackPostClient } from "@pes/integrations/slack-feedback";
import { executionKey, keySpace, type KeySpace } from "@pes/jobs";
import { sendSlackInteraction, startFakeSlack, startRedis, uniquePrefix, type FakeSlack, type RedisHandle } from "@pes/local-services";
import { feedbackReference } from "@pes/signed-links";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignatureLedger } from "../feedback/signature-ledger.js";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acmeToken = signToken({ key });
const LINK_SECRET = "a-link-signing-secret-of-32-chars!!";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const BOT_TOKEN = "xoxb-acme-bot-token";
const CHANNEL = "C0FEEDBACK";
const E1 = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const E2 = "1c8d6e5f-2e8b-4c9f-8a62-6f7a8b9c0d1e";
const UNKNOWN = "2d9e7f6a-3f9c-4dab-9b73-7a8b9c0d1e2f";
const USER = { id: "U0ALICE01", username: "alice", name: "alice", team_id: "T0ACME" };

let jwks: JwksServer;
let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let slack: FakeSlack;
let server: Server;
let url: string;
let app: ReturnType<typeof testApp>["app"];

beforeAll(async () => {
  [jwks, redisHandle, slack] = await Promise.all([startJwksServer([key.jwk]), startRedis(), startFakeSlack({ token: BOT_TOKEN })]);
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("slack-interactivity"), redisHandle.url);
  for (const id of [E1, E2]) {
    await redis.hset(executionKey(keys, "acme", id), "status", "completed");
    await redis.pexpire(executionKey(keys, "acme", id), 3_600_000);
  }
  app = testApp({
    jwksUrl: jwks.url,
    feedback: createFeedbackStore(() => redis, keys),
    linkSigningSecret: LINK_SECRET,
    slackInteractivity: {
      apps: new Map([["acme", { signingSecret: SIGNING_SECRET, client: createSlackPostClient({ token: BOT_TOKEN, apiUrl: slack.apiUrl }) }]]),
      ledger: createSignatureLedger(() => redis, keys),
    },
    now: () => new Date(),
  }).app;
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/integrations/slack/interactivity`;
});

afterAll(async () => {
  server.close();
  redis.disconnect();
  await Promise.all([jwks.close(), redisHandle.stop(), slack.close()]);
});

/** Posts a result's message with its feedback buttons as the worker does; returns its ts and blocks. */
async function postResult(orgId: string, executionId: string): Promise<{ ts: string; blocks: unknown[]; buttons: FeedbackBlock }> {
  const reference = feedbackReference({ secret: LINK_SECRET, lifetimeSeconds: 3_600 }, { orgId, executionId });
  const [message] = renderEnrichment({ result: { highlights: "Root cause: the rollout of payments v2.4.0" }, feedback: { reference } });
  if (message === undefined) throw new Error("nothing rendered");
  const client = createSlackPostClient({ token: BOT_TOKEN, apiUrl: slack.apiUrl });
  const posted = await client.chat.postMessage({ channel: CHANNEL, text: message.text, blocks: message.blocks as never });
  const buttons = message.blocks.find((block) => block.type === "actions");
  if (posted.ts === undefined || buttons?.type !== "actions") throw new Error("not posted");
  return { ts: posted.ts, blocks: message.blocks, buttons };
}

/** A click as Slack sends it (block_actions), of the button `actionId` of that message. */
function click(message: { ts: string; blocks: unknown[]; buttons: FeedbackBlock }, actionId: string) {
  const button = message.buttons.type === "actions" ? message.buttons.elements.find((element) => element.action_id === actionId) : undefined;
  return {
    type: "block_actions",
    user: USER,
    team: { id: "T0ACME" },
    trigger_id: `trigger-${actionId}-${message.ts}`,
    container: { type: "message", channel_id: CHANNEL, message_ts: message.ts, is_ephemeral: false },
    channel: { id: CHANNEL },
    message: { type: "message", ts: message.ts, blocks: message.blocks },
    response_url: "https://hooks.slack.com/actions/T0ACME/1/abc",
    actions: [{ type: "button", action_id: actionId, block_id: "pes_feedback", value: button?.value, action_ts: "1" }],
  };
}

const feedbackOf = (id: string) => request(app).get(`/playbook/execution/${id}/feedback`).set("Authorization", `Bearer ${acmeToken}`);
const statusBlockOf = (blocks: unknown) =>
  (blocks as Array<{ block_id?: string; elements?: Array<{ text: string }> }>).find((block) => block.block_id === "pes_feedback_status");

describe("POST /integrations/slack/interactivity", () => {
  it("records a signed click as the Slack user's answer and shows it on the message, keeping the buttons", async () => {
    const message = await postResult("acme", E1);
    const answer = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: click(message, FEEDBACK_ACTIONS.right) });
    expect(answer.status).toBe(200);

    const feedback = await feedbackOf(E1);
    expect(feedback.body.current).toMatchObject({ verdict: "right", by: { via: "slack", subject: USER.id, name: "alice" } });
    const update = slack.updates.find((candidate) => candidate.ts === message.ts);
    expect(update?.channel).toBe(CHANNEL);
    expect(statusBlockOf(update?.blocks)?.elements?.[0]?.text).toContain(`<@${USER.id}>`);
    const blocks = update?.blocks as Array<{ type: string; block_id?: string }>;
    expect(blocks.map((block) => block.block_id ?? block.type).slice(-2)).toEqual(["pes_feedback_status", "pes_feedback"]);
  });

  it("refuses a bad signature, an old timestamp and a replay with 401, recording nothing", async () => {
    const message = await postResult("acme", E2);
    const payload = click(message, FEEDBACK_ACTIONS.wrong);
    const forged = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload, signature: `v0=${"0".repeat(64)}` });
    expect(forged.status).toBe(401);
    const otherSecret = await sendSlackInteraction({ url, signingSecret: "another-apps-signing-secret", payload });
    expect(otherSecret.status).toBe(401);
    const old = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload, timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(old.status).toBe(401);
    expect((await feedbackOf(E2)).status).toBe(404);

    const accepted = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: click(message, FEEDBACK_ACTIONS.right) });
    expect(accepted.status).toBe(200);
    const replay = await fetch(url, { method: "POST", headers: accepted.headers, body: accepted.body });
    expect(replay.status).toBe(401);
    expect((await feedbackOf(E2)).body.history).toHaveLength(1);
  });

  it("refuses a reference it did not sign or altered (401), and one of an execution not kept (404)", async () => {
    const message = await postResult("acme", UNKNOWN);
    const unknown = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: click(message, FEEDBACK_ACTIONS.right) });
    expect(unknown.status).toBe(404);

    const payload = click(message, FEEDBACK_ACTIONS.right);
    const value = String(payload.actions[0]?.value).replace("org=acme", "org=globex");
    const altered = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: { ...payload, actions: [{ ...payload.actions[0], value }] } });
    expect(altered.status).toBe(401);
    // globex's execution, correctly referenced: globex has no Slack app here, so nothing Slack signs can answer for it.
    const globexMessage = await postResult("globex", E1);
    const globex = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: click(globexMessage, FEEDBACK_ACTIONS.right) });
    expect(globex.status).toBe(404);
  });

  it("opens the modal for what fixed it, then records its answer and shows it on the message", async () => {
    const message = await postResult("acme", E2);
    const opened = await sendSlackInteraction({ url, signingSecret: SIGNING_SECRET, payload: click(message, FEEDBACK_ACTIONS.details) });
    expect(opened.status).toBe(200);
    const modal = slack.views.find((view) => view.triggerId === `trigger-${FEEDBACK_ACTIONS.details}-${message.ts}`);
    expect(modal?.view.callback_id).toBe(FEEDBACK_MODAL_CALLBACK_ID);

    const submit = (values: Record<string, unknown>) => ({
      type: "view_submission",
      user: USER,
      team: { id: "T0ACME" },
      view: { id: "V1", callback_id: FEEDBACK_MODAL_CALLBACK_ID, private_metadata: modal?.view.private_metadata, state: { values } },
    });
    const radio = (value: string) => ({
      [FEEDBACK_MODAL_INPUTS.verdict]: { [FEEDBACK_MODAL_INPUTS.verdict]: { type: "radio_buttons", selected_option: { value } } },
    });
    const text = (id: string, value: string) => ({ [id]: { [id]: { type: "plain_text_input", value } } });

    const invalid = await sendSlackInteraction({
      url,
      signingSecret: SIGNING_SECRET,
      payload: submit({ ...radio("wrong"), ...text(FEEDBACK_MODAL_INPUTS.causeSubject, "payments") }),
    });
    expect(invalid.status).toBe(200);
    expect(Object.keys(JSON.parse(invalid.text).errors)).toEqual([FEEDBACK_MODAL_INPUTS.causeKind]);
    expect((await feedbackOf(E2)).body.history).toHaveLength(1);

    const saved = await sendSlackInteraction({
      url,
      signingSecret: SIGNING_SECRET,
      payload: submit({
        ...radio("wrong"),
        ...text(FEEDBACK_MODAL_INPUTS.causeKind, "deploy"),
        ...text(FEEDBACK_MODAL_INPUTS.causeSubject, "payments"),
        ...text(FEEDBACK_MODAL_INPUTS.resolution, "Rolled payments back to v2.3.0"),
      }),
    });
    expect(saved.status).toBe(200);
    const feedback = await feedbackOf(E2);
    expect(feedback.body.current).toMatchObject({
      verdict: "wrong",
      cause: { kind: "deploy", subject: "payments" },
      resolution: "Rolled payments back to v2.3.0",
      by: { via: "slack", subject: USER.id },
    });
    const update = slack.updates.findLast((candidate) => candidate.ts === message.ts);
    expect(statusBlockOf(update?.blocks)?.elements?.[0]?.text).toContain("Rolled payments back to v2.3.0");
  });
});
