// End to end from the data sources' answers to everything the engine hands on: a fake Loki and a local
// Prometheus-speaking server answer with every detector's sample in log lines and metric labels; the
// result, the charts, the evidence bundle, the language model's prompt (a local chat-completions server
// records it) and the engine's log lines (pino's output, captured) must hold none of them, while the
// verdict is the one judged from the unredacted answers (an organization with every detector off).
import { Writable } from "node:stream";
import { resolveCatalogSecrets, type Catalog } from "@pes/config";
import { catalogOf } from "@pes/config/testing";
import { BUILT_IN_REDACTION_KINDS } from "@pes/connectors";
import type { EvidenceBundle, ExecutionJob } from "@pes/contracts";
import {
  SENSITIVE_INCIDENT_TIME,
  SENSITIVE_SAMPLES,
  sendJson,
  sensitiveErrorLines,
  sensitiveLatencyAnswer,
  startFakeLoki,
  startTestHttpServer,
  type FakeLoki,
  type TestHttpServer,
} from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Investigation, type KeptEvidence } from "./engine.js";

const SAMPLES = SENSITIVE_SAMPLES;
const ISSUE = SENSITIVE_INCIDENT_TIME.getTime();

const PLAYBOOK = {
  name: "Checkout errors",
  monitorNames: ["Checkout errors on {{service}}"],
  gadgets: [
    {
      title: "Checkout",
      actions: [
        { title: "Error logs of {{service}}", dataSource: "logs", loki: { selector: '{app={{service}}} |= "level=error"' } },
        { title: "Latency of {{service}}", dataSource: "metrics", prometheus: { query: "http_request_duration_seconds{service={{service}}}", unit: "s" } },
      ],
    },
  ],
};

describe("the redaction boundary, from the data sources' answers to everything after judging", () => {
  let loki: FakeLoki;
  let prometheus: TestHttpServer;
  let model: TestHttpServer;
  let catalog: Catalog;

  beforeAll(async () => {
    loki = await startFakeLoki({ streams: [{ labels: { app: "checkout", customer: SAMPLES.customer }, entries: sensitiveErrorLines() }] });
    prometheus = await startTestHttpServer((_request, response) => sendJson(response, 200, sensitiveLatencyAnswer()));
    model = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, { choices: [{ index: 0, message: { role: "assistant", content: "{}" }, finish_reason: "stop" }] }),
    );
    const dataSources = { logs: { type: "loki", url: loki.url }, metrics: { type: "prometheus", url: prometheus.url } };
    const redaction = { patterns: [{ name: "employee-id", regex: "EMP-[0-9]{5}" }], labels: ["customer"] };
    const off = { detectors: Object.fromEntries(BUILT_IN_REDACTION_KINDS.map((kind) => [kind, false])) };
    const evidence = { keep: true };
    catalog = await catalogOf({
      organizations: [
        { id: "acme", clientIds: ["c"], dataSources, evidence, redaction },
        { id: "open", clientIds: ["o"], dataSources, evidence, redaction: off },
      ],
      playbooks: { acme: [PLAYBOOK], open: [PLAYBOOK] },
    });
  });

  afterAll(async () => {
    await Promise.all([loki?.close(), prometheus?.close(), model?.close()]);
  });

  /** One execution of the playbook for `orgId`: what the engine handed on, and what it logged and prompted. */
  async function execute(orgId: string) {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const kept: KeptEvidence[] = [];
    const prompts = model.requests.length;
    const engine = createEngine({
      catalog,
      secrets: resolveCatalogSecrets(catalog, { env: {} }).secrets,
      logger: createLogger({ name: "redaction-test", level: "debug", destination }),
      actionTimeoutMs: 10_000,
      maxConcurrentActions: 4,
      languageModel: { baseUrl: `${model.url}/v1/`, model: "small", timeoutMs: 5_000 },
      keepEvidence: async (evidence) => {
        kept.push(evidence);
      },
      now: () => new Date(ISSUE + 60 * 60_000),
    });
    const job: ExecutionJob = {
      orgId,
      requestId: `req-${orgId}`,
      v: 1,
      replyTo: "api-1",
      deadline: Date.now() + 60_000,
      bookName: "Checkout errors",
      time: new Date(ISSUE).toISOString(),
      attributes: { service: "checkout" },
      liveRun: false,
    };
    try {
      const investigation: Investigation = await engine.investigate(job, undefined, `exec-${orgId}`);
      const bundle: EvidenceBundle | undefined = kept[0]?.bundle;
      return {
        investigation,
        handedOn: JSON.stringify({ result: investigation.result, charts: [...investigation.charts.values()], bundle }),
        bundle: JSON.stringify(bundle),
        prompt: model.requests
          .slice(prompts)
          .map((request) => request.body)
          .join("\n"),
        logs: lines.join(""),
      };
    } finally {
      await engine.close();
    }
  }

  it("hands on no sample in the result, charts, evidence bundle, prompt or log lines, and judges as without redaction", async () => {
    const redacted = await execute("acme");
    const open = await execute("open");

    // The run without redaction shows the samples did reach every one of these.
    for (const where of [open.handedOn, open.bundle, open.prompt]) expect(where).toContain(SAMPLES.email);
    expect(redacted.prompt).not.toBe("");
    expect(redacted.investigation.charts.size).toBeGreaterThan(0);
    for (const [name, sample] of Object.entries(SAMPLES)) {
      for (const [where, text] of Object.entries({ handedOn: redacted.handedOn, prompt: redacted.prompt, logs: redacted.logs })) {
        expect(text.includes(sample), `${name} in ${where}`).toBe(false);
      }
    }
    // JSON escapes nothing in these samples but the card's spaces are kept: check its digits alone too.
    expect(redacted.handedOn.includes(SAMPLES.card.replaceAll(" ", ""))).toBe(false);

    const { verdict } = redacted.investigation.result as { verdict?: { conclusion: string; cause?: { kind: string; subject?: string } } };
    const unredacted = (open.investigation.result as { verdict?: typeof verdict }).verdict;
    expect(verdict?.conclusion).toBe(unredacted?.conclusion);
    expect(verdict?.cause?.kind).toBe(unredacted?.cause?.kind);
    expect(verdict?.cause?.subject).toBe(unredacted?.cause?.subject);
    const symptoms = (result: unknown) => (result as { verdict?: { symptoms: { action: string }[] } }).verdict?.symptoms.length ?? 0;
    expect(symptoms(redacted.investigation.result)).toBe(symptoms(open.investigation.result));
    expect(symptoms(redacted.investigation.result)).toBeGreaterThan(0);
  });

  it("writes one value as one token however often it appears, and two values as two", async () => {
    const { bundle } = await execute("acme");
    const emails = [...bundle.matchAll(/«email:([0-9a-f]{8})»/g)].map((match) => match[1]);
    // Every error line quotes the same address, and one series another: many tokens, two distinct.
    expect(emails.length).toBeGreaterThan(10);
    expect(new Set(emails).size).toBe(2);
    const customers = new Set([...bundle.matchAll(/«label:([0-9a-f]{8})»/g)].map((match) => match[1]));
    expect(customers.size).toBe(2);
  });
});
