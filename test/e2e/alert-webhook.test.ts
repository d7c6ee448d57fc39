import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertWebhookAccepted, ExecutionStatus } from "@pes/contracts";
import {
  demoIncidentOpenMetrics,
  startAlertmanager,
  startPrometheus,
  startTestHttpServer,
  type LocalAlertmanager,
  type LocalPrometheus,
  type TestHttpServer,
} from "@pes/local-services";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

// The demo incident: checkout's p99 latency jumps about 4× at 14:05 UTC.
const incidentAt = new Date("2026-11-20T14:05:00Z");

/** One notification Alertmanager sent, and what the API answered it. */
interface Delivery {
  status: number;
  body: AlertWebhookAccepted;
}

let prometheus: LocalPrometheus;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;
let relay: TestHttpServer;
let alertmanager: LocalAlertmanager;
const deliveries: Delivery[] = [];

beforeAll(async () => {
  prometheus = await startPrometheus({ openMetrics: demoIncidentOpenMetrics({ incidentAt }) });
  config = await exampleConfig({ metrics: prometheus.url });
  // No reuse of finished results by coalescing: a re-sent alert joins its investigation by its id alone.
  stack = await startStack({ name: "alert-webhook", configDir: config.dir, apiEnv: { COALESCE_REUSE_SECONDS: "0" } });
  // Between Alertmanager and the API, a relay that passes each notification on as it is and keeps the
  // API's answer, which Alertmanager does not show: the executions started are read back with their ids.
  relay = await startTestHttpServer(async (request, response) => {
    const answer = await fetch(`${stack.baseUrl}${request.url}`, {
      method: "POST",
      headers: { authorization: request.headers.authorization ?? "", "content-type": request.headers["content-type"] ?? "" },
      body: request.body,
    });
    const text = await answer.text();
    deliveries.push({ status: answer.status, body: JSON.parse(text) as AlertWebhookAccepted });
    response.writeHead(answer.status, { "content-type": "application/json" }).end(text);
  });
  // The receiver configuration docs/http-api.md documents, with a token of the development issuer.
  alertmanager = await startAlertmanager({
    config: [
      "route:",
      "  receiver: playbooks",
      "  group_by: ['...']",
      "  group_wait: 0s",
      "  group_interval: 1s",
      // Alertmanager re-sends a firing alert every repeat_interval: here soon, to see it join.
      "  repeat_interval: 2s",
      "receivers:",
      "  - name: playbooks",
      "    webhook_configs:",
      `      - url: ${relay.url}/webhooks/alertmanager`,
      "        send_resolved: true",
      "        max_alerts: 100",
      "        http_config:",
      "          authorization:",
      `            credentials: ${stack.token()}`,
      "",
    ].join("\n"),
  });
});

afterAll(async () => {
  await alertmanager?.stop();
  await relay?.close();
  await stack?.stop();
  await prometheus?.stop();
  await config?.remove();
});

/** Waits (bounded by the test's timeout) for a delivery that satisfies `predicate`. */
async function delivery(predicate: (delivery: Delivery) => boolean): Promise<Delivery> {
  for (;;) {
    const found = deliveries.find(predicate);
    if (found !== undefined) return found;
    await delay(50);
  }
}

/** Reads an execution back until it has finished. */
async function finished(executionId: string): Promise<ExecutionStatus> {
  for (;;) {
    const response = await fetch(`${stack.baseUrl}/playbook/execution/${encodeURIComponent(executionId)}`, {
      headers: { authorization: `Bearer ${stack.token()}` },
    });
    expect(response.status).toBe(200);
    const status = (await response.json()) as ExecutionStatus;
    if (status.status === "completed" || status.status === "failed") return status;
    await delay(100);
  }
}

describe("alerts from a real Alertmanager start investigations through its webhook receiver", () => {
  it("investigates a firing alert with the playbook its summary matches, lists the unmatched one, joins a re-sent alert to its investigation, and starts nothing on resolution", async () => {
    const latency = {
      labels: { alertname: "CheckoutLatencyHigh", service: "checkout", env: "production", severity: "page" },
      annotations: { summary: "High latency on checkout in production", description: "p99 above 1 s" },
      startsAt: incidentAt,
    };
    const watchdog = { labels: { alertname: "Watchdog" }, annotations: { summary: "Always firing" }, startsAt: incidentAt };
    await alertmanager.postAlerts([latency, watchdog]);

    // group_by ['...']: one notification per alert.
    const started = await delivery((item) => item.body.executions?.length === 1);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      executions: [{ alert: 0, bookName: "checkout-latency", title: "High latency on checkout in production", joined: false }],
      unmatched: [],
      resolved: 0,
    });
    const unmatched = await delivery((item) => item.body.unmatched?.length === 1);
    expect(unmatched.status).toBe(202);
    expect(unmatched.body.unmatched).toEqual([
      expect.objectContaining({ reason: "no_playbook", message: expect.stringContaining('"Watchdog"'), fingerprint: expect.any(String) }),
    ]);

    // The investigation ran at the alert's start, with its labels as attributes, and can be read back.
    const executionId = started.body.executions[0]?.executionId ?? "";
    const execution = await finished(executionId);
    expect(execution.status).toBe("completed");
    expect(execution.result?.error).toBeUndefined();
    expect(execution.result?.highlights).toMatch(/p99 latency/i);
    expect(execution.result?.highlights).toMatch(/14:0[56]/);

    // Re-sent after it finished, the alert joins the same investigation instead of running it again.
    const resent = await delivery((item) => item !== started && item.body.executions?.[0]?.title === "High latency on checkout in production");
    expect(resent.status).toBe(202);
    expect(resent.body.executions).toEqual([expect.objectContaining({ executionId, joined: true })]);

    // Resolving the alert sends a resolved notification, which starts nothing.
    await alertmanager.postAlerts([{ ...latency, endsAt: new Date(Date.now() - 1_000) }]);
    const resolved = await delivery((item) => item.body.resolved === 1);
    expect(resolved.status).toBe(202);
    expect(resolved.body).toMatchObject({ executions: [], unmatched: [], resolved: 1 });
  });
});
