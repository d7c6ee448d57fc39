// Chat and incident tools, black-box: the API and worker processes with fakes on 127.0.0.1 speaking
// Slack's Web API (reading linked messages, posting results), Microsoft Graph and its token service
// (posting results to Teams), PagerDuty's REST API and Opsgenie's Alert API (notes). Message links and
// alert notifications in, enrichment threads and incident notes out.
import { rm } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import { writeConfigDir } from "@pes/config/testing";
import {
  startFakeMicrosoftGraph,
  startFakeOpsgenie,
  startFakePagerDuty,
  startFakeSlack,
  type FakeIncidentTool,
  type FakeMicrosoftGraph,
  type FakeSlack,
  type FakeSlackMessage,
  type TestHttpServer,
} from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRisingPrometheus } from "../support/rising-prometheus.js";
import { postJson, startStack, type Stack } from "../support/stack.js";

const SLACK_TOKEN = "xoxb-e2e-slack-token";
const PAGERDUTY_TOKEN = "pd-e2e-token";
const OPSGENIE_KEY = "og-e2e-key";
const TEAMS = {
  tenantId: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
  clientId: "11111111-2222-3333-4444-555555555555",
  clientSecret: "teams-e2e-client-secret",
  refreshToken: "teams-e2e-refresh-token",
};
const LINK_SIGNING_SECRET = "e2e-link-signing-secret-of-32-characters-at-least";
const PUBLIC_URL = "https://pes.example.com";
const TEAMS_OPS = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:ops@thread.tacv2";
const TEAMS_BATCH = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:batch@thread.tacv2";

/** Alertmanager's Slack notifier with `text: '{{ template "__text_alert_list" .Alerts }}'`, as Slack stores it. */
function alertmanager(ts: string, subject: string, lines: string[]): FakeSlackMessage {
  return {
    type: "message",
    subtype: "bot_message",
    ts,
    bot_id: "B0ALERTMGR",
    username: "AlertManager",
    text: "",
    attachments: [{ title: subject, title_link: "http://alertmanager.example:9093/#/alerts", fallback: subject, text: [...lines, ""].join("\n") }],
  };
}

/** An alert whose summary carries a mention (stored escaped, as Slack stores a literal `<`), linking its PagerDuty incident. */
const alert = (ts: string, incident: string) =>
  alertmanager(ts, "[FIRING:1] HighLatency checkout (production)", [
    "Labels:",
    " - alertname = HighLatency",
    " - service = checkout",
    " - env = production",
    "Annotations:",
    " - summary = High latency on checkout &lt;!channel&gt;",
    ` - incident = <https://acme.pagerduty.com/incidents/${incident}|${incident}>`,
  ]);
const ALERT = alert("1714651200.000100", "PINC001");
/** Another alert, of another incident: the one whose note survives a dying worker. */
const ALERT_RETRIED = alert("1714651500.000500", "PINC002");
/** A person's reply in the alert's thread, naming another service. */
const REPLY = { type: "message", user: "U0ONCALL", ts: "1714651260.000200", text: "High latency on payments" };
const UNMATCHED = { type: "message", user: "U0ONCALL", ts: "1714651300.000300", text: "Disk full on db-1" };
/** An alert no monitor name matches: with bookName, it still supplies the service. */
const SATURATION = alertmanager("1714651400.000400", "[FIRING:1] Saturation payments", [
  "Labels:",
  " - alertname = Saturation",
  " - service = payments",
  "Annotations:",
  " - summary = Saturation of payments",
]);
/** globex's Opsgenie alert, and the Slack message of it, which names it by alias. */
const OPSGENIE_ALERT = { id: "5d0a3c1e-7b1f-4c2a-9e8d-2f4b6a8c0e1f-1714651600000", alias: "checkout-latency-eu" };
const GLOBEX_ALERT = alertmanager("1714651600.000600", "[FIRING:1] HighLatency checkout", [
  "Labels:",
  " - alertname = HighLatency",
  " - service = checkout",
  ` - opsgenie_alias = ${OPSGENIE_ALERT.alias}`,
  "Annotations:",
  " - summary = High latency on checkout",
]);

/** The first eight bytes of every PNG file. */
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const link = (channel: string, ts: string, threadTs?: string) =>
  `https://acme.slack.com/archives/${channel}/p${ts.replace(".", "")}${threadTs === undefined ? "" : `?thread_ts=${threadTs}&cid=${channel}`}`;

const PLAYBOOK = `name: checkout-latency
monitorNames: ["High latency on {{service}}"]
requiredAttributes: [service]
gadgets:
  - title: "Latency of {{service}}"
    args: { service: "{{service}}" }
    actions:
      - title: p99 latency
        dataSource: metrics
        prometheus: { query: 'histogram_quantile(0.99, rate(http_request_duration_seconds_bucket{service={{service}}}[5m]))', unit: s }
`;

async function writeConfig(urls: { prometheus: string; slack: string; pagerduty: string; opsgenie: string; graph: string; login: string }): Promise<string> {
  const slack = `slack:\n  botToken: { env: E2E_SLACK_TOKEN }\n  apiUrl: ${urls.slack}\n  alertChannelId: C0PAGES\n`;
  const teams =
    `teams:\n  tenantId: ${TEAMS.tenantId}\n  clientId: ${TEAMS.clientId}\n  clientSecret: { env: E2E_TEAMS_SECRET }\n` +
    `  refreshToken: { env: E2E_TEAMS_REFRESH }\n  graphUrl: ${urls.graph}\n  loginUrl: ${urls.login}\n`;
  const metrics = `dataSources:\n  metrics: { type: prometheus, url: "${urls.prometheus}" }\n`;
  return writeConfigDir({
    organizations: [
      `id: acme\nclientIds: [quickstart-cli]\n${metrics}${slack}${teams}incidentTools:\n  pagerduty: { apiToken: { env: E2E_PD_TOKEN }, from: oncall@acme.example, apiUrl: "${urls.pagerduty}" }\n`,
      `id: globex\nclientIds: [quickstart-cli]\n${metrics}${slack}incidentTools:\n  opsgenie: { apiKey: { env: E2E_OPSGENIE_KEY }, apiUrl: "${urls.opsgenie}" }\n`,
    ],
    playbooks: { acme: [PLAYBOOK], globex: [PLAYBOOK] },
  });
}

interface Result {
  error?: string;
  highlights?: string;
  enrichmentLink?: string;
  verdict?: { cause?: { action: string }; symptoms: { action: string }[] };
  actionResults?: { title?: string; chartUrl?: string }[];
  pageUrl?: string;
  gadgetsHighlights?: { title: string; args?: Record<string, unknown> }[];
}

let prometheus: TestHttpServer;
let slack: FakeSlack;
let pagerduty: FakeIncidentTool;
let opsgenie: FakeIncidentTool;
let graph: FakeMicrosoftGraph;
let configDir: string;
let stack: Stack;

beforeAll(async () => {
  prometheus = await startRisingPrometheus();
  slack = await startFakeSlack({
    token: SLACK_TOKEN,
    channels: {
      C0ALERTS: { messages: [ALERT, UNMATCHED, SATURATION, ALERT_RETRIED], replies: { [ALERT.ts]: [REPLY] } },
      C0PRIVATE: { member: false, messages: [ALERT] },
      C0GLOBEX: { messages: [GLOBEX_ALERT] },
      C0OPS: {},
      C0BATCH: {},
      C0PAGES: {},
    },
  });
  pagerduty = await startFakePagerDuty({ token: PAGERDUTY_TOKEN, incidents: ["PINC001", "PINC002"] });
  opsgenie = await startFakeOpsgenie({ apiKey: OPSGENIE_KEY, alerts: [OPSGENIE_ALERT] });
  graph = await startFakeMicrosoftGraph({ ...TEAMS, channels: [TEAMS_OPS, TEAMS_BATCH] });
  configDir = await writeConfig({
    prometheus: prometheus.url,
    slack: slack.apiUrl,
    pagerduty: pagerduty.url,
    opsgenie: opsgenie.url,
    graph: graph.graphUrl,
    login: graph.loginUrl,
  });
  stack = await startStack({
    name: "chat-and-incidents",
    configDir,
    workers: 1,
    // Its identical requests are meant as separate executions (the same link before and after Slack fails).
    apiEnv: { EXECUTION_TIMEOUT_MS: "20000", COALESCE_BUCKET_SECONDS: "0", LINK_SIGNING_SECRET },
    workerEnv: {
      // Pages and chart images by signed links, under the address people reach the API at.
      LINK_SIGNING_SECRET,
      PUBLIC_URL,
      E2E_SLACK_TOKEN: SLACK_TOKEN,
      E2E_PD_TOKEN: PAGERDUTY_TOKEN,
      E2E_OPSGENIE_KEY: OPSGENIE_KEY,
      E2E_TEAMS_SECRET: TEAMS.clientSecret,
      E2E_TEAMS_REFRESH: TEAMS.refreshToken,
      // A killed worker's job runs again within seconds; posts to a channel 10 ms apart instead of Slack's 1 s.
      WORKER_LOCK_DURATION_MS: "1500",
      WORKER_STALLED_INTERVAL_MS: "1000",
      SLACK_POST_INTERVAL_MS: "10",
      TEAMS_POST_INTERVAL_MS: "10",
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await Promise.all([prometheus, slack, pagerduty, opsgenie, graph].map((fake) => fake?.close()));
  if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
});

async function execute(body: unknown, org = "acme"): Promise<{ status: number; body: Result }> {
  const answer = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token({ org }), body);
  return { status: answer.status, body: answer.body as Result };
}

const noteRequests = () => [...pagerduty.requests, ...opsgenie.requests].filter((request) => request.method === "POST");
/** The last message posted, the messages sharing charts left out. */
const lastPost = () => slack.posts.filter((message) => message.files === undefined).at(-1);
const postCalls = () => slack.calls.filter((call) => call.method === "chat.postMessage").length;

describe("message links", () => {
  it("identify the playbook from the linked alert, top-level or a thread reply, with its attributes; liveRun false sends nothing", async () => {
    const notesBefore = noteRequests().length;
    const top = await execute({ messageLink: link("C0ALERTS", ALERT.ts) });
    expect(top.status).toBe(200);
    expect(top.body.error).toBeUndefined();
    expect(top.body.gadgetsHighlights?.[0]).toMatchObject({ title: "Latency of checkout", args: { service: "checkout" } });
    expect(slack.calls).toContainEqual(
      expect.objectContaining({
        method: "conversations.history",
        args: expect.objectContaining({ channel: "C0ALERTS", latest: ALERT.ts, oldest: ALERT.ts, inclusive: "true" }),
      }),
    );

    const reply = await execute({ messageLink: link("C0ALERTS", REPLY.ts, ALERT.ts) });
    expect(reply.status).toBe(200);
    expect(reply.body.gadgetsHighlights?.[0]).toMatchObject({ title: "Latency of payments", args: { service: "payments" } });
    expect(slack.calls).toContainEqual(
      expect.objectContaining({ method: "conversations.replies", args: expect.objectContaining({ channel: "C0ALERTS", ts: ALERT.ts, latest: REPLY.ts }) }),
    );

    // No channel, no liveRun: nothing was posted, no incident tool was called.
    expect(postCalls()).toBe(0);
    expect(noteRequests()).toHaveLength(notesBefore);
  });

  it("with bookName, take the issue's attributes and time from the message", async () => {
    const before = prometheus.requests.length;
    const { status, body } = await execute({ messageLink: link("C0ALERTS", SATURATION.ts), bookName: "checkout-latency" });
    expect(status).toBe(200);
    expect(body.gadgetsHighlights?.[0]?.args).toEqual({ service: "payments" });
    // The queries looked at the alert's time (2024-05-02), not at now.
    const query = new URL(prometheus.requests[before]?.url ?? "", "http://prometheus");
    expect(Number(query.searchParams.get("end"))).toBeLessThan(Date.UTC(2024, 4, 3) / 1000);
  });

  it("that lead to no readable message, or to one no playbook matches, are a 400 on messageLink", async () => {
    const refused = async (messageLink: string) => {
      const { status, body } = await execute({ messageLink });
      expect(status).toBe(400);
      return body.error;
    };
    expect(await refused(link("C0PRIVATE", ALERT.ts))).toEqual([
      { path: ["body", "messageLink"], message: expect.stringContaining("not a member of channel C0PRIVATE") },
    ]);
    expect(await refused(link("C0ALERTS", "1714651999.000900"))).toEqual([
      { path: ["body", "messageLink"], message: "message 1714651999.000900 was not found in channel C0ALERTS" },
    ]);
    expect(await refused(link("C0ALERTS", UNMATCHED.ts))).toEqual([
      {
        path: ["body", "messageLink"],
        message: expect.stringContaining("No playbook's monitor name matches the linked message's title \"Disk full on db-1\""),
      },
    ]);

    // In a batch, the item says so and the others run.
    const batch = await postJson(`${stack.baseUrl}/playbook/execution/batch`, stack.token(), {
      inputList: [{ messageLink: link("C0ALERTS", "1714651999.000900") }, { bookName: "checkout-latency", attributes: { service: "checkout" } }],
    });
    expect(batch.status).toBe(200);
    const [missing, ran] = batch.body as Result[];
    expect(missing).toEqual({ error: "messageLink: message 1714651999.000900 was not found in channel C0ALERTS" });
    expect(ran?.highlights).toBeDefined();
  });

  it("on a host that is not allowed are refused and never fetched", async () => {
    const calls = slack.calls.length;
    for (const messageLink of [
      "https://acme.slack.com.evil.example/archives/C0ALERTS/p1714651200000100",
      "https://evil.example/archives/C0ALERTS/p1714651200000100",
      "https://acme.slack.com@evil.example/archives/C0ALERTS/p1714651200000100",
    ]) {
      const { status, body } = await execute({ messageLink });
      expect(status).toBe(400);
      expect(body.error).toEqual([{ path: ["body", "messageLink"], message: expect.any(String) }]);
    }
    expect(slack.calls).toHaveLength(calls);
  });

  it("answer 200 with an error naming Slack when Slack cannot be reached", async () => {
    slack.down = true;
    try {
      const { status, body } = await execute({ messageLink: link("C0ALERTS", ALERT.ts) });
      expect(status).toBe(200);
      expect(body.error).toMatch(/^Could not read the linked message from Slack: Slack could not be reached/);
      expect(body.highlights).toBeUndefined();
    } finally {
      slack.down = false;
    }
  });
});

describe("channelId", () => {
  it("posts the result and the charts its bottom line cites in the linked message's thread, returns the post's permalink, alert text escaped", async () => {
    const { status, body } = await execute({ messageLink: link("C0ALERTS", ALERT.ts), channelId: "C0ALERTS" });
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    const post = lastPost();
    expect(post).toMatchObject({ channel: "C0ALERTS", threadTs: ALERT.ts });
    // The charts of the findings the bottom line cites, drawn as PNG, shared in the same thread.
    const cited = [body.verdict?.cause?.action, ...(body.verdict?.symptoms ?? []).map((symptom) => symptom.action)];
    const drawn = (body.actionResults ?? []).filter((action) => action.chartUrl !== undefined && cited.includes(action.title));
    expect(drawn.length).toBeGreaterThan(0);
    const shared = slack.messages("C0ALERTS").flatMap((message) => (message.threadTs === ALERT.ts ? (message.files ?? []) : []));
    expect(shared.map((file) => file.title).sort()).toEqual(drawn.map((action) => action.title).sort());
    expect(shared.every((file) => file.bytes.subarray(0, 8).equals(PNG_SIGNATURE))).toBe(true);
    expect(body.enrichmentLink).toBe(slack.permalinkOf("C0ALERTS", post?.ts ?? "", ALERT.ts));
    // The alert's `<!channel>` arrives as text: escaped, never a mention.
    const blocks = JSON.stringify(post?.blocks);
    expect(blocks).toContain("High latency on checkout &lt;!channel&gt;");
    expect(`${blocks}${post?.text}`).not.toContain("<!channel>");
    expect(noteRequests().filter((request) => request.path.includes("PINC001"))).toHaveLength(0);
  });

  it("posts to another channel as a message of its own", async () => {
    const { body } = await execute({ messageLink: link("C0ALERTS", ALERT.ts), channelId: "C0OPS" });
    const post = lastPost();
    expect(post).toMatchObject({ channel: "C0OPS" });
    expect(post?.threadTs).toBeUndefined();
    expect(body.enrichmentLink).toBe(slack.permalinkOf("C0OPS", post?.ts ?? ""));
  });

  it("posts a batch to one channel as one thread: a root, then a reply per item, whose permalink is that item's enrichmentLink", async () => {
    const posts = slack.posts.length;
    const inputList = Array.from({ length: 100 }, (_, index) => ({ bookName: "checkout-latency", attributes: { service: `svc-${index}` } }));
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution/batch`, stack.token(), { channelId: "C0BATCH", inputList });
    expect(status).toBe(200);
    const results = body as Result[];
    expect(results.filter((result) => result.error !== undefined)).toEqual([]);

    // The caller waited for the thread (10 ms a post here): every reply is in it, once, before the answer.
    expect(slack.posts).toHaveLength(posts + 101);
    const root = slack.posts.find((post) => post.channel === "C0BATCH" && post.threadTs === undefined);
    const replies = slack.posts.filter((post) => post.channel === "C0BATCH" && post.threadTs === root?.ts);
    const headings = replies.map((reply) => /Issue (\d+) of 100/.exec(JSON.stringify(reply.blocks))?.[1]).sort((a, b) => Number(a) - Number(b));
    expect(headings).toEqual(Array.from({ length: 100 }, (_, index) => String(index + 1)));
    // Item i links the reply headed "Issue i+1 of 100".
    results.forEach((result, index) => {
      const reply = replies.find((candidate) => JSON.stringify(candidate.blocks).includes(`Issue ${index + 1} of 100`));
      expect(result.enrichmentLink).toBe(slack.permalinkOf("C0BATCH", reply?.ts ?? "", root?.ts));
    });
  });
});

describe("channelId on Microsoft Teams", () => {
  /** Every element of a card, nested ones included. */
  const elementsOf = (card: unknown): { type: string; text?: unknown }[] => {
    if (Array.isArray(card)) return card.flatMap(elementsOf);
    if (typeof card !== "object" || card === null) return [];
    const own = "type" in card && typeof card.type === "string" ? [card as { type: string; text?: unknown }] : [];
    return [...own, ...Object.values(card).flatMap(elementsOf)];
  };

  it("posts the result as one Adaptive Card in the Teams channel and returns the message's link, alert text as text", async () => {
    const { status, body } = await execute({ messageLink: link("C0ALERTS", ALERT.ts), channelId: TEAMS_OPS });
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    const post = graph.posts.at(-1);
    expect(post).toMatchObject({ teamId: "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b", channelId: "19:ops@thread.tacv2" });
    expect(post?.replyToId).toBeUndefined();
    expect(body.enrichmentLink).toBe(post?.webUrl);
    const elements = elementsOf(post?.attachments[0]?.card);
    const texts = elements.flatMap((element) => (element.type === "TextRun" ? [String(element.text)] : []));
    // The bottom line leads the card; nothing was read as Markdown; the Slack thread got nothing.
    expect(texts).toContain(body.highlights);
    expect(elements.some((element) => element.type === "TextBlock")).toBe(false);
    expect(slack.posts.some((candidate) => candidate.channel === "19:ops@thread.tacv2")).toBe(false);
    // The service account's secrets went to the token service only, never into a message.
    expect(JSON.stringify(graph.posts)).not.toMatch(/teams-e2e-(client-secret|refresh-token)/);
    // The charts its bottom line cites are images by signed links, which the API answers without a token.
    const images = elements.flatMap((element) => (element.type === "Image" ? [String((element as { url?: unknown }).url)] : []));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) {
      expect(image.startsWith(`${PUBLIC_URL}/view/execution/`)).toBe(true);
      const served = await fetch(image.replace(PUBLIC_URL, stack.baseUrl));
      expect(served.status).toBe(200);
      expect(served.headers.get("content-type")).toBe("image/png");
    }
    expect(body.pageUrl?.startsWith(`${PUBLIC_URL}/view/execution/`)).toBe(true);
  });

  it("posts a batch to one Teams channel as one thread: a root, then a reply per item, whose link is that item's enrichmentLink", async () => {
    const posts = graph.posts.length;
    const inputList = Array.from({ length: 30 }, (_, index) => ({ bookName: "checkout-latency", attributes: { service: `svc-${index}` } }));
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution/batch`, stack.token(), { channelId: TEAMS_BATCH, inputList });
    expect(status).toBe(200);
    const results = body as Result[];
    expect(results.filter((result) => result.error !== undefined)).toEqual([]);

    // The caller waited for the thread (10 ms a post here): every reply is in it, once, before the answer.
    expect(graph.posts).toHaveLength(posts + 31);
    const root = graph.posts.find((post) => post.channelId === "19:batch@thread.tacv2" && post.replyToId === undefined);
    const replies = graph.posts.filter((post) => post.replyToId === root?.id);
    const headings = replies.map((reply) => /^Issue (\d+) of 30:/.exec(reply.summary ?? "")?.[1]).sort((a, b) => Number(a) - Number(b));
    expect(headings).toEqual(Array.from({ length: 30 }, (_, index) => String(index + 1)));
    // Item i links the reply headed "Issue i+1 of 30".
    results.forEach((result, index) => {
      const reply = replies.find((candidate) => candidate.summary?.startsWith(`Issue ${index + 1} of 30:`));
      expect(result.enrichmentLink).toBe(reply?.webUrl);
    });
  });
});

describe("alert webhook", () => {
  it("posts the investigation of a firing alert to the organization's alert channel, and its result links the post", async () => {
    const firing = {
      status: "firing",
      labels: { alertname: "HighLatency", service: "checkout", severity: "page" },
      annotations: { summary: "High latency on checkout" },
      startsAt: "2024-05-02T12:00:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus.example:9090/graph",
      fingerprint: "1f2e3d4c5b6a7988",
    };
    const notification = { version: "4", status: "firing", receiver: "playbooks", groupKey: "{}:{}", alerts: [firing] };
    const accepted = await postJson(`${stack.baseUrl}/webhooks/alertmanager`, stack.token(), notification);
    expect(accepted.status).toBe(202);
    const [started] = (accepted.body as { executions: { executionId: string }[] }).executions;
    const executionId = started?.executionId ?? "";

    let execution: { status: string; result?: Result } = { status: "queued" };
    while (execution.status === "queued" || execution.status === "running") {
      await delay(50);
      const response = await fetch(`${stack.baseUrl}/playbook/execution/${executionId}`, { headers: { authorization: `Bearer ${stack.token()}` } });
      expect(response.status).toBe(200);
      execution = (await response.json()) as typeof execution;
    }
    expect(execution.status).toBe("completed");
    const post = slack.posts.find((candidate) => candidate.channel === "C0PAGES");
    expect(JSON.stringify(post?.blocks)).toContain("High latency on checkout");
    expect(execution.result?.enrichmentLink).toBe(slack.permalinkOf("C0PAGES", post?.ts ?? ""));
  });
});

describe("liveRun", () => {
  it("adds the result as one note to the PagerDuty incident the linked message refers to", async () => {
    const { status, body } = await execute({ messageLink: link("C0ALERTS", ALERT.ts), liveRun: true });
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    const notes = pagerduty.notes("PINC001");
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(body.highlights ?? "(no highlights)");
  });

  it("adds the note to the Opsgenie alert a label names, for an organization on Opsgenie", async () => {
    const { status, body } = await execute({ messageLink: link("C0GLOBEX", GLOBEX_ALERT.ts), liveRun: true }, "globex");
    expect(status).toBe(200);
    expect(body.error).toBeUndefined();
    expect(opsgenie.notes(OPSGENIE_ALERT.id)).toHaveLength(1);
  });

  it("says in error when there is no incident or the tool fails, and still returns the investigation", async () => {
    const unnamed = await execute({ bookName: "checkout-latency", attributes: { service: "checkout" }, liveRun: true });
    expect(unnamed.body.highlights).toBeDefined();
    expect(unnamed.body.error).toMatch(/^liveRun: no PagerDuty incident to add the note to/);

    pagerduty.failNextAdd({ httpStatus: 500 });
    const failed = await execute({ messageLink: link("C0ALERTS", ALERT.ts), liveRun: true });
    expect(failed.status).toBe(200);
    expect(failed.body.highlights).toBeDefined();
    expect(failed.body.error).toMatch(/^liveRun: adding the note to PagerDuty incident PINC001 failed: .*500/);
  });

  it("adds exactly one note when the worker dies after adding it and the job runs again", async () => {
    pagerduty.failNextAdd({ holdAfterHandling: true });
    const pending = execute({ messageLink: link("C0ALERTS", ALERT_RETRIED.ts), liveRun: true });
    await pagerduty.waitForNotes("PINC002", 1);
    const [first] = stack.workers;
    await stack.addWorker();
    await first?.stop("SIGKILL");

    const { status, body } = await pending;
    expect(status).toBe(200);
    // The job ran again on the other worker: the investigation is there, and the note was not added twice.
    expect(body.highlights).toBeDefined();
    expect(pagerduty.notes("PINC002")).toHaveLength(1);
    expect(pagerduty.requests.filter((request) => request.method === "POST" && request.path.includes("PINC002"))).toHaveLength(1);
  });
});
