import { describe, expect, it } from "vitest";
import { mapEvidenceText, type Evidence } from "./evidence.js";
import { shortAnswer } from "./evidence-text.js";
import type { Finding } from "./ranking.js";
import { summarizeGadget } from "./summarize.js";
import { summarizeExecution } from "./testing/bottom-line.js";

const time = new Date("2026-11-21T14:08:00Z");
const onset = new Date("2026-11-21T14:05:00Z");
const S = "s3cr3t-token";
const redact = (text: string) => text.split(S).join("[redacted]");

// Every kind, with the secret in every text a data source or an issue could have put there.
const samples: Evidence[] = [
  {
    kind: "metric",
    action: `p99 ${S}`,
    link: "https://prometheus/graph",
    unit: "s",
    labels: { [S]: S },
    seriesCount: 2,
    value: 2,
    baseline: 1,
    low: 1,
    high: 1,
    ratio: 2,
    severity: 2,
    abnormal: true,
    onset,
    baselineMs: 3_600_000,
  },
  {
    kind: "metric",
    action: "connections",
    labels: { db: S },
    seriesCount: 1,
    value: 98,
    baseline: 40,
    low: 38,
    high: 42,
    ratio: 2.45,
    severity: 10_002.45,
    abnormal: true,
    onset,
    saturation: { limit: 100, of: `max_${S}`, direction: "up" },
    baselineMs: 3_600_000,
  },
  {
    kind: "values",
    action: "restarts",
    values: [
      { labels: { pod: S }, value: 3 },
      { labels: { pod: "b" }, value: 1 },
    ],
    count: 2,
  },
  {
    kind: "log-pattern",
    action: "logs",
    pattern: `token=${S}`,
    perMinute: 4,
    baselinePerMinute: 1,
    ratio: 4,
    severity: 4,
    abnormal: true,
    onset,
    baselineMs: 3_600_000,
  },
  {
    kind: "log-pattern",
    action: "logs",
    pattern: "login <*>",
    perMinute: 4,
    baselinePerMinute: 0,
    ratio: Infinity,
    severity: 90,
    abnormal: true,
    onset,
    baselineMs: 3_600_000,
    example: `login token=${S}`,
    count: 80,
  },
  { kind: "event", action: "events", subject: `pod/${S}`, reason: S, message: `auth ${S}`, warning: true, onset },
  { kind: "alert", action: "alerts", name: S, subject: S, level: S, onset },
  { kind: "change", action: "deploys", change: "deploy", subject: S, detail: S, at: onset },
  { kind: "answer", action: "answer", text: `echo: Bearer ${S}` },
  { kind: "failed", action: "failed", reason: `Prometheus said: bad header Bearer ${S}` },
  { kind: "skipped", action: "skipped", missing: [S] },
  { kind: "no-data", action: `no data ${S}`, reason: "empty" },
];

describe("mapEvidenceText", () => {
  it.each(samples.map((evidence) => [evidence.kind, evidence] as const))("reaches every text of %s evidence, and only texts", (_kind, evidence) => {
    const mapped = mapEvidenceText(evidence, redact);
    expect(JSON.stringify(mapped)).not.toContain(S);
    expect(shortAnswer(mapped, time)).not.toContain(S);
    // Numbers, dates, kinds and the link are kept as they are.
    expect(mapEvidenceText(evidence, (text) => text)).toEqual(evidence);
    expect(mapped.kind).toBe(evidence.kind);
    expect(mapped.link).toBe(evidence.link);
  });

  it("keeps every rendered text free of the secret once mapped", () => {
    const findings: Finding[] = samples.map((evidence) => ({ gadget: "G", evidence: mapEvidenceText(evidence, redact) }));
    expect(summarizeExecution({ time, attributes: {}, findings })).not.toContain(S);
    expect(summarizeGadget(findings, time)).not.toContain(S);
  });
});
