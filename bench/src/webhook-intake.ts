import { setTimeout as sleep } from "node:timers/promises";
import { ALERT_NAME } from "./bench-config.js";
import { closedLoops, type HttpCaller, type TimedReply } from "./http-calls.js";
import { readCounter } from "./metric-counter.js";
import { summarizeLatencies, type LatencySummary } from "./stats.js";
import { parseOrUndefined, settled } from "./storm.js";

export interface WebhookOptions {
  notifications: number;
  alertsPerNotification: number;
  /** Notifications in flight at once (Alertmanager sends each group's on its own). */
  connections: number;
}

/** One pass of notifications through `POST /webhooks/alertmanager`. */
export interface IntakePass {
  notifications: number;
  alerts: number;
  /** Alerts the 202s list as started or joined. */
  accepted: number;
  started: number;
  joined: number;
  /** Firing alerts the answers list as unmatched (none expected: every alert names the playbook). */
  unmatched: number;
  /** Notifications not answered 202 with one entry per alert. */
  failures: number;
  firstFailure: string | undefined;
  elapsedMs: number;
  /** Accepted alerts per second of the pass. */
  alertsPerSecond: number;
  /** Each notification's answer time. */
  latency: LatencySummary;
}

export interface WebhookIntakeResult {
  alertsPerNotification: number;
  connections: number;
  /** Distinct firing alerts: each starts an investigation. */
  fresh: IntakePass;
  /** The same notifications again at once, as Alertmanager re-sends a group: they join. */
  renotified: IntakePass;
  /** Executions the workers ran for both passes, and when the last finished (from the first notification). */
  executionsRun: number;
  drainMs: number;
}

/**
 * Webhook intake: `notifications` Alertmanager (v4) notifications of `alertsPerNotification` distinct
 * firing alerts each, `connections` at a time, then the same notifications again (re-notification). The
 * intake rate is accepted alerts over each pass's wall time: the 202 comes before anything runs. Then it
 * waits until the workers ran every started investigation (not timed against a target: the queue drains
 * at the throughput scenario's rate), so that the next scenario starts on idle workers.
 */
export async function webhookIntake(
  caller: HttpCaller,
  workerMetricsUrls: readonly string[],
  options: WebhookOptions,
  runId: string,
): Promise<WebhookIntakeResult> {
  const executions = () => readCounter(workerMetricsUrls, "pes_jobs_total", { job_name: "execute" });
  const before = await settled(executions);
  const startsAt = new Date().toISOString();
  const bodies = Array.from({ length: options.notifications }, (_, index) => notification(runId, index, options.alertsPerNotification, startsAt));
  const started = performance.now();
  const fresh = await pass(caller, bodies, options);
  if (fresh.accepted === 0) throw new Error(`webhook intake: no alert accepted: ${fresh.firstFailure}`);
  const renotified = await pass(caller, bodies, options);
  const expected = fresh.started + renotified.started;
  let ran = (await executions()) - before;
  const deadline = Date.now() + 300_000;
  while (ran < expected) {
    if (Date.now() > deadline) throw new Error(`webhook intake: ${ran} of ${expected} started investigations ran within 300 s`);
    await sleep(100);
    ran = (await executions()) - before;
  }
  const drainMs = performance.now() - started;
  return {
    alertsPerNotification: options.alertsPerNotification,
    connections: options.connections,
    fresh,
    renotified,
    executionsRun: (await settled(executions)) - before,
    drainMs,
  };
}

async function pass(caller: HttpCaller, bodies: readonly string[], options: WebhookOptions): Promise<IntakePass> {
  let next = 0;
  const started = performance.now();
  const replies = await closedLoops<TimedReply>(options.connections, () => {
    const body = bodies[next];
    next += 1;
    return body === undefined ? undefined : caller.post("/webhooks/alertmanager", body);
  });
  const elapsedMs = performance.now() - started;
  const counts = { accepted: 0, started: 0, joined: 0, unmatched: 0, failures: 0 };
  let firstFailure: string | undefined;
  for (const reply of replies) {
    const answer = parseOrUndefined(reply.body) as { executions?: { joined: boolean }[]; unmatched?: unknown[] } | undefined;
    const listed = (answer?.executions?.length ?? 0) + (answer?.unmatched?.length ?? 0);
    if (reply.status !== 202 || answer?.executions === undefined || listed !== options.alertsPerNotification) {
      counts.failures += 1;
      firstFailure ??= `${reply.status} ${reply.body.slice(0, 500)}`;
      continue;
    }
    counts.accepted += answer.executions.length;
    counts.joined += answer.executions.filter((execution) => execution.joined).length;
    counts.started += answer.executions.filter((execution) => !execution.joined).length;
    counts.unmatched += answer.unmatched?.length ?? 0;
  }
  return {
    notifications: bodies.length,
    alerts: bodies.length * options.alertsPerNotification,
    ...counts,
    firstFailure,
    elapsedMs,
    alertsPerSecond: counts.accepted / (elapsedMs / 1000),
    latency: summarizeLatencies(replies.map((reply) => reply.latencyMs)),
  };
}

/**
 * Alertmanager's webhook payload (version 4) for one alert group: `alerts` firing alerts of the bench's
 * alert, each for its own service (the playbook's attribute), all started at `startsAt`.
 */
export function notification(runId: string, group: number, alerts: number, startsAt: string): string {
  const groupLabels = { alertname: ALERT_NAME, group: `g${group}` };
  return JSON.stringify({
    version: "4",
    groupKey: `{}:{alertname="${ALERT_NAME}", group="g${group}"}`,
    truncatedAlerts: 0,
    status: "firing",
    receiver: "playbooks",
    groupLabels,
    commonLabels: groupLabels,
    commonAnnotations: {},
    externalURL: "http://alertmanager.bench:9093",
    alerts: Array.from({ length: alerts }, (_, index) => ({
      status: "firing",
      labels: { ...groupLabels, service: `svc-${runId}-${group}-${index}`, severity: "page" },
      annotations: { summary: `Bench alert for svc-${group}-${index}` },
      startsAt,
      endsAt: "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus.bench:9090/graph",
      fingerprint: `${group.toString(16).padStart(8, "0")}${index.toString(16).padStart(8, "0")}`,
    })),
  });
}
