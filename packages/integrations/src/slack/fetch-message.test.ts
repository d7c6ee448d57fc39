import { createServer } from "node:net";
import { startFakeSlack, type FakeSlack } from "@pes/local-services";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { datadogMonitor } from "../testing/alert-messages.js";
import { fetchLinkedMessage, fetchSlackMessage, type FetchLinkedMessageOptions } from "./fetch-message.js";
import { issueFromSlackMessage } from "./issue-from-message.js";

const TOKEN = "xoxb-1111-2222-secret-token-value";
const NOW = new Date("2024-05-02T12:00:00Z");
const PARENT_TS = "1714651200.000100";
const REPLY_TS = "1714651260.000200";
const ALERT = {
  ts: PARENT_TS,
  type: "message",
  subtype: "bot_message",
  username: "AlertManager",
  text: "",
  attachments: [{ title: "[FIRING:1] HighCPU web-1", text: "", fallback: "[FIRING:1] HighCPU web-1 | http://am/#/alerts" }],
};
const REPLY = { ts: REPLY_TS, thread_ts: PARENT_TS, type: "message", user: "U1", text: "it is back: <https://acme.pagerduty.com/incidents/Q1ABC|Q1ABC>" };
const OTHER = { ts: "1714651100.000000", type: "message", text: "an older message" };

let fake: FakeSlack;
let logged: string[];

beforeEach(async () => {
  fake = await startFakeSlack({
    token: TOKEN,
    channels: {
      C0ALERTS: { messages: [OTHER, ALERT], replies: { [PARENT_TS]: [REPLY] } },
      C0PRIVATE: { member: false, messages: [ALERT] },
      C0DATADOG: { messages: [datadogMonitor] },
    },
  });
  // Whatever the SDK or this module writes to the console is kept, to check that the token never is.
  logged = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map(String).join(" "));
    });
  }
});

afterEach(async () => {
  vi.restoreAllMocks();
  await fake.close();
});

function options(overrides: Partial<FetchLinkedMessageOptions> = {}): FetchLinkedMessageOptions {
  return {
    connection: { token: TOKEN, slackApiUrl: fake.apiUrl },
    allowedHosts: [],
    now: NOW,
    deadline: Date.now() + 5_000,
    ...overrides,
  };
}

const link = (channel: string, ts: string, thread?: string) =>
  `https://acme.slack.com/archives/${channel}/p${ts.replace(".", "")}${thread === undefined ? "" : `?thread_ts=${thread}&cid=${channel}`}`;

describe("fetchLinkedMessage", () => {
  it("reads a top-level message with conversations.history bounded to its ts", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", PARENT_TS), options());

    expect(result).toMatchObject({ outcome: "found", link: { channelId: "C0ALERTS", ts: PARENT_TS }, message: { ts: PARENT_TS, username: "AlertManager" } });
    expect(fake.calls).toHaveLength(1);
    expect(fake.calls[0]).toMatchObject({
      method: "conversations.history",
      args: { channel: "C0ALERTS", latest: PARENT_TS, oldest: PARENT_TS, inclusive: "true", limit: "1" },
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/x-www-form-urlencoded" },
    });
  });

  it("reads a linked alert into what an execution needs", async () => {
    const result = await fetchLinkedMessage(link("C0DATADOG", datadogMonitor.ts), options());
    if (result.outcome !== "found") throw new Error(`expected the message, got ${result.outcome}`);

    expect(issueFromSlackMessage(result.message)).toMatchObject({
      source: "datadog",
      title: "High CPU on web-1",
      attributes: { host: "web-1", env: "prod" },
      time: "2024-05-02T11:55:00.000Z",
    });
  });

  it("reads a thread reply with conversations.replies and keeps the entry whose ts matches", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", REPLY_TS, PARENT_TS), options());

    expect(result).toMatchObject({ outcome: "found", link: { threadTs: PARENT_TS }, message: { ts: REPLY_TS, thread_ts: PARENT_TS } });
    expect(fake.calls[0]).toMatchObject({
      method: "conversations.replies",
      args: { channel: "C0ALERTS", ts: PARENT_TS, latest: REPLY_TS, oldest: REPLY_TS, inclusive: "true" },
    });
  });

  it("reads a link to a thread's parent (thread_ts equal to its own ts) from history", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", PARENT_TS, PARENT_TS), options());
    expect(result).toMatchObject({ outcome: "found", message: { ts: PARENT_TS } });
    expect(fake.calls[0]?.method).toBe("conversations.history");
  });

  it.each([
    ["another host", "https://slack.example.com/archives/C0ALERTS/p1714651200000100"],
    ["a lookalike host", "https://acme.slack.com.evil.example/archives/C0ALERTS/p1714651200000100"],
    ["user info", "https://acme.slack.com@evil.example/archives/C0ALERTS/p1714651200000100"],
    ["an IP literal", "https://127.0.0.1/archives/C0ALERTS/p1714651200000100"],
    ["http", "http://acme.slack.com/archives/C0ALERTS/p1714651200000100"],
  ])("never fetches a link to %s", async (_, refused) => {
    const result = await fetchLinkedMessage(refused, options());
    expect(result.outcome).toBe("invalid_link");
    expect(fake.calls).toHaveLength(0);
  });

  it("accepts a host the organization configures", async () => {
    const configured = `https://chat.example.com/archives/C0ALERTS/p${PARENT_TS.replace(".", "")}`;
    const result = await fetchLinkedMessage(configured, options({ allowedHosts: ["chat.example.com"] }));
    expect(result.outcome).toBe("found");
  });

  it("waits out a 429's Retry-After, then asks again", async () => {
    fake.failNext("conversations.history", { retryAfterSeconds: 1 });

    const result = await fetchLinkedMessage(link("C0ALERTS", PARENT_TS), options());

    expect(result.outcome).toBe("found");
    expect(fake.calls).toHaveLength(2);
    const [first, second] = fake.calls;
    // A lower bound only: the second call came no sooner than Slack asked (timer granularity aside).
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("does not wait for a Retry-After that ends past the deadline: Slack is unavailable at once", async () => {
    fake.failNext("conversations.history", { retryAfterSeconds: 30 });

    const result = await fetchLinkedMessage(link("C0ALERTS", PARENT_TS), options({ deadline: Date.now() + 2_000 }));

    expect(result).toMatchObject({ outcome: "slack_unavailable", slackError: "ratelimited" });
    expect(result.outcome === "slack_unavailable" && result.reason).toMatch(/rate-limited .*retry in 30 s, past the deadline/);
    expect(fake.calls).toHaveLength(1);
  });

  it("says the app is not in the channel (not_in_channel) as a link that cannot be resolved", async () => {
    const result = await fetchLinkedMessage(link("C0PRIVATE", PARENT_TS), options());
    expect(result).toMatchObject({ outcome: "cannot_resolve", slackError: "not_in_channel" });
    expect(result.outcome === "cannot_resolve" && result.reason).toMatch(/not a member of channel C0PRIVATE/);
  });

  it("says an unknown channel cannot be resolved (channel_not_found)", async () => {
    const result = await fetchLinkedMessage(link("C0GONE", PARENT_TS), options());
    expect(result).toMatchObject({ outcome: "cannot_resolve", slackError: "channel_not_found" });
  });

  it("reads an empty history answer as message not found", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", "1714651199.000000"), options());
    expect(result).toMatchObject({ outcome: "cannot_resolve", reason: "message 1714651199.000000 was not found in channel C0ALERTS" });
    expect(result).not.toHaveProperty("slackError");
  });

  it("says a thread that does not exist cannot be resolved (thread_not_found)", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", REPLY_TS, "1714651000.000000"), options());
    expect(result).toMatchObject({ outcome: "cannot_resolve", slackError: "thread_not_found" });
  });

  it("says a reply that is not in its thread was not found", async () => {
    const result = await fetchLinkedMessage(link("C0ALERTS", "1714651299.000000", PARENT_TS), options());
    expect(result).toMatchObject({ outcome: "cannot_resolve", reason: "message 1714651299.000000 was not found in channel C0ALERTS" });
  });
});

describe("fetchSlackMessage when Slack cannot be used", () => {
  const ref = { channelId: "C0ALERTS", ts: PARENT_TS };

  it("reads an HTTP 5xx as Slack unavailable", async () => {
    fake.failNext("conversations.history", { httpStatus: 503 });
    const result = await fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: fake.apiUrl }, { deadline: Date.now() + 5_000 });
    expect(result).toEqual({ outcome: "slack_unavailable", reason: "Slack answered conversations.history with HTTP 503" });
  });

  it("reads a refused token as Slack unavailable, not as the caller's fault", async () => {
    const result = await fetchSlackMessage(ref, { token: "xoxb-wrong", slackApiUrl: fake.apiUrl }, { deadline: Date.now() + 5_000 });
    expect(result).toEqual({
      outcome: "slack_unavailable",
      reason: "Slack refused the organization's bot token (invalid_auth)",
      slackError: "invalid_auth",
    });
  });

  it("reads a connection refused as Slack unreachable", async () => {
    const port = await closedPort();
    const result = await fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: `http://127.0.0.1:${port}/api/` }, { deadline: Date.now() + 5_000 });
    expect(result).toEqual({ outcome: "slack_unavailable", reason: "Slack could not be reached (ECONNREFUSED)" });
  });

  it("stops at the deadline when Slack does not answer", async () => {
    fake.failNext("conversations.history", { holdAfterHandling: true });
    const result = await fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: fake.apiUrl }, { deadline: Date.now() + 300 });
    expect(result).toEqual({ outcome: "slack_unavailable", reason: "Slack did not answer before the deadline" });
  });

  it("takes a deadline without end, bounded by the caller's signal", async () => {
    const result = await fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: fake.apiUrl }, { deadline: Number.POSITIVE_INFINITY });
    expect(result.outcome).toBe("found");
  });

  it("stops when the caller's signal aborts", async () => {
    fake.failNext("conversations.history", { holdAfterHandling: true });
    const controller = new AbortController();
    const pending = fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: fake.apiUrl }, { deadline: Date.now() + 60_000, signal: controller.signal });
    await vi.waitFor(() => expect(fake.calls).toHaveLength(1));
    controller.abort();
    expect(await pending).toEqual({ outcome: "slack_unavailable", reason: "reading the message from Slack was cancelled" });
  });

  it("never puts the token in an outcome or a log line", async () => {
    const connection = { token: TOKEN, slackApiUrl: fake.apiUrl };
    const bounds = () => ({ deadline: Date.now() + 2_000 });
    fake.failNext("conversations.history", { httpStatus: 500, body: { ok: false, error: "internal_error" } });
    fake.failNext("conversations.history", { error: "fatal_error" });
    fake.failNext("conversations.history", { retryAfterSeconds: 60 });
    fake.failNext("conversations.history", { httpStatus: 429, body: { ok: false, error: "ratelimited" } });
    const outcomes = [
      await fetchSlackMessage(ref, connection, bounds()),
      await fetchSlackMessage(ref, connection, bounds()),
      await fetchSlackMessage(ref, connection, bounds()),
      await fetchSlackMessage(ref, connection, bounds()),
      await fetchSlackMessage({ channelId: "C0PRIVATE", ts: PARENT_TS }, connection, bounds()),
      await fetchSlackMessage(ref, { token: TOKEN, slackApiUrl: `http://127.0.0.1:${await closedPort()}/api/` }, bounds()),
    ];

    expect(outcomes.map((outcome) => outcome.outcome)).toEqual([
      "slack_unavailable",
      "slack_unavailable",
      "slack_unavailable",
      "slack_unavailable",
      "cannot_resolve",
      "slack_unavailable",
    ]);
    const everything = JSON.stringify(outcomes) + logged.join("\n");
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain("secret-token");
  });
});

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
