// The alertmanager connector against a real Alertmanager (Debian's prometheus-alertmanager), and against
// a local server where what was sent, or a failure, must be seen exactly. Which of the alerts it holds
// fired in the window, most severe first, is the analysis' (alertmanager-reading.test.ts).
import type { Observation } from "@pes/contracts";
import { sendJson, startAlertmanager, startTestHttpServer, type LocalAlertmanager, type TestHttpServer } from "@pes/local-services";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ActionRequest, TimeWindow } from "../connector.js";
import { resolveSecrets } from "../data-source-secrets.js";
import { runConnectorAction, type Observed } from "../run-action.js";
import { redactedObservation } from "../testing/redacted-observation.js";
import { createHttpClient } from "../undici-http-client.js";
import { alertmanagerRuntime } from "./runtime.js";
import { alertmanagerConnector } from "./definition.js";
import { AlertmanagerAction, AlertmanagerDataSource } from "./schema.js";

/** Runs an action as the worker does: matchers filled with their escaping, then the fetch. */
const runAlertmanagerAction = (request: ActionRequest<AlertmanagerDataSource, AlertmanagerAction>): Promise<Observed> =>
  runConnectorAction(alertmanagerConnector.definition, alertmanagerRuntime, request);

const MINUTE = 60_000;
/** Alertmanager holds alerts as of now: the window is around now (to the second, as it stores times). */
const now = Math.floor(Date.now() / 1000) * 1000;
const window: TimeWindow = { start: new Date(now - 60 * MINUTE), time: new Date(now - 10 * MINUTE), end: new Date(now + 5 * MINUTE) };
/** Values built to break out of a matcher string or add matchers, and regex metacharacters. */
const HOSTILE = 'a"b\\c\n{x="y"}|*..=,~!';

const env: Record<string, string> = {};
const http = createHttpClient();
afterAll(async () => {
  await http.close();
});

function request(
  dataSource: unknown,
  action: unknown,
  attributes: Record<string, string> = { service: "checkout" },
  overrides: Partial<ActionRequest<AlertmanagerDataSource, AlertmanagerAction>> = {},
): ActionRequest<AlertmanagerDataSource, AlertmanagerAction> {
  const parsed = AlertmanagerDataSource.parse(dataSource);
  return {
    title: "Related alerts",
    dataSource: parsed,
    secrets: resolveSecrets(parsed, { env }).secrets,
    http,
    spec: AlertmanagerAction.parse(action),
    attributes,
    window,
    signal: AbortSignal.timeout(10_000),
    ...overrides,
  };
}

const byService = { matchers: [{ name: "service", value: "{{service}}" }] };
/** The names of the alerts an observation holds, sorted (Alertmanager answers in its own order). */
const alertNames = (observation: Observation): string[] =>
  observation.kind === "alertmanager" ? observation.alerts.map(({ labels }) => labels.alertname ?? "").sort() : [observation.kind];

describe("runAlertmanagerAction against a real Alertmanager", () => {
  let alertmanager: LocalAlertmanager;
  let dataSource: { type: "alertmanager"; url: string };

  beforeAll(async () => {
    alertmanager = await startAlertmanager();
    dataSource = { type: "alertmanager", url: alertmanager.url };
    await alertmanager.postAlerts([
      { labels: { alertname: "HighLatency", service: "checkout", severity: "warning" }, startsAt: new Date(now - 30 * MINUTE) },
      { labels: { alertname: "HighErrorRate", service: "checkout", instance: "checkout-1:8080", severity: "critical" }, startsAt: new Date(now - 20 * MINUTE) },
      { labels: { alertname: "CheckoutNoise", service: "checkout-canary", severity: "critical" }, startsAt: new Date(now - 25 * MINUTE) },
      { labels: { alertname: "DiskFull", service: "search", severity: "critical" }, startsAt: new Date(now - 15 * MINUTE) },
      { labels: { alertname: "Odd", service: HOSTILE, severity: "info" }, startsAt: new Date(now - 5 * MINUTE) },
      { labels: { alertname: "CartDown", service: "cart", severity: "critical" }, startsAt: new Date(now - 12 * MINUTE) },
    ]);
    await alertmanager.postSilence({
      matchers: [{ name: "service", value: "cart" }],
      startsAt: new Date(now - MINUTE),
      endsAt: new Date(now + 60 * MINUTE),
      createdBy: "ops",
      comment: "cart maintenance",
    });
  });
  afterAll(async () => {
    await alertmanager?.stop();
  });

  it("reads the alerts Alertmanager holds for the matchers, with their labels and times, linked to the UI's filtered list", async () => {
    const observed = await runAlertmanagerAction(request(dataSource, byService));
    expect(alertNames(observed.observation)).toEqual(["HighErrorRate", "HighLatency"]);
    const alerts = observed.observation.kind === "alertmanager" ? observed.observation.alerts : [];
    expect(alerts.find(({ labels }) => labels.alertname === "HighErrorRate")).toEqual({
      labels: { alertname: "HighErrorRate", service: "checkout", instance: "checkout-1:8080", severity: "critical" },
      startsAt: new Date(now - 20 * MINUTE).toISOString(),
      endsAt: expect.any(String),
    });
    expect(observed.link).toBe(`${alertmanager.url}/#/alerts?silenced=false&inhibited=false&active=true&filter=${encodeURIComponent('{service="checkout"}')}`);
  });

  it("reads a hostile value as one literal value: it matches only the alert with exactly that label", async () => {
    expect(alertNames((await runAlertmanagerAction(request(dataSource, byService, { service: HOSTILE }))).observation)).toEqual(["Odd"]);
    expect(alertNames((await runAlertmanagerAction(request(dataSource, byService, { service: 'a"b' }))).observation)).toEqual([]);
  });

  it("escapes a value in a regex matcher: `.*` matches only itself, a plain value still matches", async () => {
    const regex = { matchers: [{ name: "service", value: "{{service|regex}}(-canary)?", isRegex: true }] };
    const names = async (service: string) => alertNames((await runAlertmanagerAction(request(dataSource, regex, { service }))).observation);
    expect(await names("checkout")).toEqual(["CheckoutNoise", "HighErrorRate", "HighLatency"]);
    expect(await names(".*")).toEqual([]);
    expect(await names(HOSTILE)).toEqual(["Odd"]);
  });

  it("reads the silences over the same matchers, and leaves out the alerts they silence unless asked", async () => {
    const cart = { matchers: [{ name: "service", value: "cart" }], silences: true };
    const observed = (await runAlertmanagerAction(request(dataSource, cart))).observation;
    expect(alertNames(observed)).toEqual([]);
    expect(observed.kind === "alertmanager" ? observed.silences : undefined).toEqual([
      {
        id: expect.any(String),
        startsAt: expect.any(String),
        endsAt: new Date(now + 60 * MINUTE).toISOString(),
        createdBy: "ops",
        comment: "cart maintenance",
        status: { state: "active" },
      },
    ]);
    expect(alertNames((await runAlertmanagerAction(request(dataSource, { ...cart, includeSilenced: true }))).observation)).toEqual(["CartDown"]);
  });

  it("says what Alertmanager refused, in its own words", async () => {
    const bad = { matchers: [{ name: "service", value: "(", isRegex: true }] };
    const failed = await runAlertmanagerAction(request(dataSource, bad));
    expect(failed.observation).toEqual({ kind: "failed", reason: expect.stringMatching(/^Alertmanager answered 400 Bad Request: .*error parsing regexp/) });
    expect(failed.link).toContain("/#/alerts?");
  });
});

describe("runAlertmanagerAction on the wire", () => {
  let server: TestHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    delete env.PES_TEST_AM_TOKEN;
  });

  it("sends each matcher as one filter parameter, the hostile value quoted and escaped, and the bearer token", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, []));
    env.PES_TEST_AM_TOKEN = "am-token-123";
    const action = {
      matchers: [
        { name: "service", value: "{{service}}" },
        { name: "route", value: "{{service|regex}}", isRegex: true, isEqual: false },
      ],
      silences: true,
    };
    const found = await runAlertmanagerAction(
      request({ type: "alertmanager", url: `${server.url}/am/`, auth: { bearerToken: { env: "PES_TEST_AM_TOKEN" } } }, action, { service: HOSTILE }),
    );
    expect(found.observation).toEqual({ kind: "alertmanager", alerts: [], silences: [] });
    const sent = server.requests.map((seen) => new URL(seen.url, server?.url));
    const alerts = sent.find((url) => url.pathname === "/am/api/v2/alerts");
    expect(alerts?.searchParams.getAll("filter")).toEqual([
      'service="a\\"b\\\\c\\n{x=\\"y\\"}|*..=,~!"',
      'route!~"a\\"b\\\\\\\\c\\n\\\\{x=\\"y\\"\\\\}\\\\|\\\\*\\\\.\\\\.=,~!"',
    ]);
    expect(Object.fromEntries([...(alerts?.searchParams ?? [])].filter(([name]) => name !== "filter"))).toEqual({
      active: "true",
      silenced: "false",
      inhibited: "false",
    });
    const silences = sent.find((url) => url.pathname === "/am/api/v2/silences");
    expect(silences?.searchParams.getAll("filter")).toEqual(alerts?.searchParams.getAll("filter"));
    expect(server.requests.every((seen) => seen.method === "GET" && seen.headers.authorization === "Bearer am-token-123")).toBe(true);
  });

  it("links to externalUrl when the data source has one", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, []));
    const none = await runAlertmanagerAction(request({ type: "alertmanager", url: server.url, externalUrl: "https://alerts.example/" }, byService));
    expect(none.link).toBe(`https://alerts.example/#/alerts?silenced=false&inhibited=false&active=true&filter=${encodeURIComponent('{service="checkout"}')}`);
  });

  it("fails without a request on a value no matcher can hold", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, []));
    const failed = await runAlertmanagerAction(request({ type: "alertmanager", url: server.url }, byService, { service: "a\uD800" }));
    expect(failed.observation).toEqual({ kind: "failed", reason: expect.stringContaining("lone surrogate") });
    expect(server.requests).toHaveLength(0);
  });

  it("is skipped, without a request, when the issue lacks the attribute", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, []));
    const skipped = await runAlertmanagerAction(request({ type: "alertmanager", url: server.url }, byService, {}));
    expect(skipped.observation).toEqual({ kind: "skipped", missing: ["service"] });
    expect(server.requests).toHaveLength(0);
  });

  it("keeps a token that an error answer echoes out of the reason", async () => {
    server = await startTestHttpServer((request, response) => sendJson(response, 401, `invalid credentials: ${request.headers.authorization ?? ""}`));
    env.PES_TEST_AM_TOKEN = "am-token-123";
    const failed = redactedObservation(
      await runAlertmanagerAction(request({ type: "alertmanager", url: server.url, auth: { bearerToken: { env: "PES_TEST_AM_TOKEN" } } }, byService)),
    );
    expect(failed).toEqual({ kind: "failed", reason: "Alertmanager answered 401 Unauthorized: invalid credentials: Bearer [redacted]" });
    expect(JSON.stringify(failed)).not.toContain("am-token-123");
  });

  it("fails with 'timed out' when the deadline passes first", async () => {
    server = await startTestHttpServer(() => {
      // never answers
    });
    const failed = await runAlertmanagerAction(request({ type: "alertmanager", url: server.url }, byService, undefined, { signal: AbortSignal.timeout(100) }));
    expect(failed.observation).toEqual({ kind: "failed", reason: "no answer from Alertmanager before the deadline (timed out)" });
  });

  it("fails on an answer that is not Alertmanager's", async () => {
    server = await startTestHttpServer((_request, response) => sendJson(response, 200, { data: [] }));
    const failed = await runAlertmanagerAction(request({ type: "alertmanager", url: server.url }, byService));
    expect(failed.observation).toEqual({ kind: "failed", reason: "Alertmanager answered alerts in a shape this connector does not know" });
  });
});

describe("alertmanager actions in configuration", () => {
  it("refuses a regex matcher whose placeholder is not regex-escaped, a filter elsewhere, and a bad label name", () => {
    const problems = (action: unknown) => AlertmanagerAction.safeParse(action).error?.issues.map((issue) => issue.message) ?? [];
    expect(problems({ matchers: [{ name: "service", value: "{{service}}.*", isRegex: true }] })).toEqual([
      "in a regex matcher write {{service|regex}}: a value is matched literally, never as a regular expression",
    ]);
    expect(problems({ matchers: [{ name: "service", value: "{{service|regex}}" }] })).toEqual([
      "{{service|regex}}: filters apply only in regex matchers (isRegex: true)",
    ]);
    expect(problems({ matchers: [{ name: "service{x}", value: "a" }] })).toHaveLength(1);
    expect(problems({ matchers: [{ name: "service", value: "{{service|regex}}-.*", isRegex: true }] })).toEqual([]);
  });
});
