import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type { TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

// OTLP's SpanKind numbers.
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

// Values that must never reach a span: an attribute value (it is in the PromQL the worker sends) and the
// data source's bearer token.
const attributeValue = "svc-attribute-value-5e1f";
const secret = "prom-token-secret-9b7c";
const requestId = "trace-e2e-request-1";

let receiver: OtlpReceiver;
let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
  const orgFile = join(config.dir, "organizations/acme.yaml");
  const doc = parseDocument(await readFile(orgFile, "utf8"));
  doc.setIn(["dataSources", "metrics", "auth"], { bearerToken: { env: "PROM_TOKEN" } });
  await writeFile(orgFile, doc.toString());
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    // Export each batch at once rather than every 5 s.
    OTEL_BSP_SCHEDULE_DELAY: "20",
  };
  stack = await startStack({ name: "traces", configDir: config.dir, apiEnv: otel, workerEnv: { ...otel, PROM_TOKEN: secret } });
});

afterAll(async () => {
  await stack?.stop();
  await prometheus?.close();
  await receiver?.close();
  await config?.remove();
});

function only(spans: ReceivedSpan[], match: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(match);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${JSON.stringify(spans, null, 1)}`);
  return found[0] as ReceivedSpan;
}

describe("tracing with OTEL_* set: one trace per execution, API → queue → worker → actions → data source", () => {
  it("exports the spans of both processes with their parents, the request id, and no secret or attribute value", async () => {
    const response = await fetch(`${stack.baseUrl}/playbook/execution`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.token()}`, "content-type": "application/json", "x-request-id": requestId },
      body: JSON.stringify({ bookName: "checkout-latency", attributes: { service: attributeValue, env: "production" } }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).not.toHaveProperty("error");
    const actions = prometheus.requests.length;
    expect(actions).toBeGreaterThan(0);

    // Each process exports its spans as they end, in batches: wait for the last of each kind.
    const spans = await receiver.waitFor(
      (received) =>
        received.some((span) => span.kind === SERVER && span.attributes["pes.request_id"] === requestId) &&
        received.some((span) => span.kind === CONSUMER) &&
        received.filter((span) => span.service === "pes-worker" && span.kind === CLIENT).length >= actions,
    );

    const server = only(
      spans,
      (span) => span.service === "pes-api" && span.kind === SERVER && span.attributes["pes.request_id"] === requestId,
      "API server span",
    );
    const trace = spans.filter((span) => span.traceId === server.traceId);
    const enqueue = only(trace, (span) => span.kind === PRODUCER, "enqueue span");
    expect(enqueue.service).toBe("pes-api");
    expect(enqueue.parentSpanId).toBe(server.spanId);

    const job = only(trace, (span) => span.kind === CONSUMER, "worker job span");
    expect(job.service).toBe("pes-worker");
    expect(job.parentSpanId).toBe(enqueue.spanId);

    const actionSpans = trace.filter((span) => span.kind === INTERNAL && span.parentSpanId === job.spanId);
    expect(actionSpans).toHaveLength(actions);
    for (const action of actionSpans) {
      expect(action.service).toBe("pes-worker");
      expect(action.attributes).toMatchObject({ "pes.connector.type": "prometheus", "pes.data_source.name": "metrics" });
    }
    // The worker's requests to the data source (the API's own, for its JWKS, are in the trace too).
    const clients = trace.filter((span) => span.service === "pes-worker" && span.kind === CLIENT);
    expect(clients).toHaveLength(actions);
    const actionIds = new Set(actionSpans.map((span) => span.spanId));
    for (const client of clients) {
      expect(actionIds.has(client.parentSpanId)).toBe(true);
      expect(client.attributes["url.full"]).toBe(prometheus.url);
    }
    // Every span of the execution carries the request id, except the HTTP client spans (the instrumentation's).
    for (const span of [server, enqueue, job, ...actionSpans]) expect(span.attributes["pes.request_id"]).toBe(requestId);

    // Nothing from the API or the worker outside this one trace (probes are not traced).
    expect(spans.filter((span) => span.traceId !== server.traceId)).toEqual([]);
    const exported = JSON.stringify(spans);
    expect(exported).not.toContain(attributeValue);
    expect(exported).not.toContain(secret);
  });
});
