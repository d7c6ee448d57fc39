// End to end from the data sources' answers to everything the engine hands on: a fake Loki and a local
// Prometheus-speaking server answer with every detector's sample in log lines and metric labels; the
// result, the charts, the evidence bundle, the language model's prompt (a local chat-completions server
// records it) and the engine's log lines (pino's output, captured) must hold none of them, while the
// verdict is the one judged from the unredacted answers (an organization with every detector off).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { loadConfig, resolveCatalogSecrets, type Catalog } from "@pes/config";
import { BUILT_IN_REDACTION_KINDS } from "@pes/connectors";
import type { EvidenceBundle, ExecutionJob } from "@pes/contracts";
import { sendJson, startFakeLoki, startTestHttpServer, type FakeLoki, type TestHttpServer } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Investigation, type KeptEvidence } from "./engine.js";

const ISSUE = Date.parse("2026-11-20T14:08:00Z");
const START = ISSUE - 60 * 60_000;

/** One sample of each built-in kind, and the organization's own pattern and label. */
const SAMPLES = {
  email: "jane.doe@example.com",
  ipv4: "203.0.113.7",
  ipv6: "2001:db8::8a2e:370:7334",
  bearer: "abcdefgh12345678ijkl",
  apiKey: "sk-proj-abcdefghijklmnopqrstuvwx",
  slackToken: "xoxb-1234567890-abcdefghij",
  awsKey: "AKIAIOSFODNN7EXAMPLE",
  githubToken: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  card: "4111 1111 1111 1111",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  employee: "EMP-48213",
  customer: "Globex Corporation",
} as const;
const OTHER_EMAIL = "ops@example.org";

/** Checkout's error log: quiet before 14:05, then failing requests quoting every sample, the same ones each time. */
function errorLines(): { at: number; line: string }[] {
  const lines: { at: number; line: string }[] = [];
  for (let at = START; at < ISSUE; at += 20_000) {
    if (at < ISSUE - 3 * 60_000 && at % 600_000 !== 0) continue;
    lines.push({
      at,
      line:
        `level=error msg="payment refused for ${SAMPLES.email} from ${SAMPLES.ipv4} via ${SAMPLES.ipv6}" ` +
        `auth="Bearer ${SAMPLES.bearer}" key=${SAMPLES.apiKey} slack=${SAMPLES.slackToken} aws=${SAMPLES.awsKey} gh=${SAMPLES.githubToken} ` +
        `card="${SAMPLES.card}" session=${SAMPLES.jwt} owner=${SAMPLES.employee} customer="${SAMPLES.customer}"`,
    });
  }
  return lines;
}

/** A range answer whose series' labels hold samples; its latency quadruples from 14:05. */
function latencyAnswer(): object {
  const series = [
    { instance: `${SAMPLES.ipv4}:9100`, client: SAMPLES.ipv6, owner: SAMPLES.email, customer: SAMPLES.customer },
    { instance: "10.0.0.9:9100", client: "fe80::1", owner: OTHER_EMAIL, customer: "Initech" },
  ];
  return {
    status: "success",
    data: {
      resultType: "matrix",
      result: series.map((labels, index) => ({
        metric: { __name__: "http_request_duration_seconds", service: "checkout", ...labels },
        values: Array.from({ length: 240 }, (_, i) => {
          const at = START / 1000 + i * 15;
          return [at, String((at * 1000 > ISSUE - 3 * 60_000 ? 2 : 0.5) + index * 0.01 + (i % 7) / 1000)];
        }),
      })),
    },
  };
}

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
    loki = await startFakeLoki({ streams: [{ labels: { app: "checkout", customer: SAMPLES.customer }, entries: errorLines() }] });
    prometheus = await startTestHttpServer((_request, response) => sendJson(response, 200, latencyAnswer()));
    model = await startTestHttpServer((_request, response) =>
      sendJson(response, 200, { choices: [{ index: 0, message: { role: "assistant", content: "{}" }, finish_reason: "stop" }] }),
    );
    const dir = await mkdtemp(join(tmpdir(), "pes-redaction-"));
    try {
      await mkdir(join(dir, "organizations"));
      const dataSources = { logs: { type: "loki", url: loki.url }, metrics: { type: "prometheus", url: prometheus.url } };
      const redaction = { patterns: [{ name: "employee-id", regex: "EMP-[0-9]{5}" }], labels: ["customer"] };
      const off = { detectors: Object.fromEntries(BUILT_IN_REDACTION_KINDS.map((kind) => [kind, false])) };
      const evidence = { keep: true };
      await writeFile(join(dir, "organizations", "acme.yaml"), JSON.stringify({ id: "acme", clientIds: ["c"], dataSources, evidence, redaction }));
      await writeFile(join(dir, "organizations", "open.yaml"), JSON.stringify({ id: "open", clientIds: ["o"], dataSources, evidence, redaction: off }));
      for (const org of ["acme", "open"]) {
        await mkdir(join(dir, "playbooks", org), { recursive: true });
        await writeFile(join(dir, "playbooks", org, "checkout.yaml"), JSON.stringify(PLAYBOOK));
      }
      catalog = await loadConfig(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
