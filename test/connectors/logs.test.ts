// A fake Loki and a fake Elasticsearch (each speaking its source's HTTP API), the loki and elasticsearch
// connectors and the analysis, as a worker runs them: what a result says of a log search, from the
// source's wire format to the words.
import { startFakeElasticsearch, startFakeLoki, type FakeDocument, type FakeElasticsearch, type FakeLoki, type FakeLokiStream } from "@pes/local-services";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answersOf, evidenceOf } from "./connector-reading.js";

// A fixed past incident: from 14:05 UTC checkout cannot reach its database, nor payment.
const ONSET = Date.parse("2026-11-20T14:05:00Z");
const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };

/** Something every `everyMs` over the window (from `from`), made by `make(index, at)`. */
function every<T>(everyMs: number, make: (index: number, at: number) => T, from = window.start.getTime()): T[] {
  const made: T[] = [];
  for (let at = from, index = 0; at <= window.end.getTime(); at += everyMs, index += 1) made.push(make(index, at));
  return made;
}

describe("a Loki answer, read", () => {
  let loki: FakeLoki;
  const streams: FakeLokiStream[] = [
    {
      labels: { app: "checkout", env: "prod" },
      entries: every(2_000, (i, at) => ({ at, line: `level=info msg="GET /api/cart" status=200 duration=${(i * 37) % 300}ms` })),
    },
    {
      labels: { app: "checkout", env: "prod" },
      entries: every(180_000, (i, at) => ({ at, line: `level=error msg="payment retry" attempt=${i % 3} error="timeout after 2s"` })),
    },
    {
      labels: { app: "checkout", env: "prod" },
      entries: every(
        4_000,
        (i, at) => ({ at, line: `level=error msg="query failed" error="dial tcp 10.0.3.${7 + (i % 2)}:5432: connect: connection refused"` }),
        ONSET + 1_000,
      ),
    },
  ];
  const search = (selector: string) =>
    evidenceOf(
      { type: "loki", url: loki.url, tenant: "acme" },
      { selector, limit: 1000 },
      { title: "Error logs of checkout", window, attributes: { service: "checkout" } },
    );

  beforeAll(async () => {
    loki = await startFakeLoki({ streams, tenant: "acme" });
  });
  afterAll(async () => {
    await loki?.close();
  });

  it("names the new error pattern, with its count, onset and an example", async () => {
    const found = await search('{app={{service}}, env="prod"} |= "level=error"');
    expect(found).toMatchObject([{ kind: "log-pattern", abnormal: true, ratio: Infinity, count: 270, onset: new Date(ONSET + 1_000) }]);
    expect(answersOf(found, window)).toEqual([
      'Error logs of checkout: "level=error msg="query failed" error="dial tcp <ip>:<num>: connect: connection refused"" 270 lines, not seen in the hour before, since 14:05 UTC — e.g. "level=error msg="query failed" error="dial tcp 10.0.3.7:5432: connect: connection refused""',
    ]);
  });

  it("reports the steady errors of a healthy service as normal, and no line as none", async () => {
    const steady = await search('{app={{service}}} |= "payment retry"');
    expect(steady).toMatchObject([{ kind: "log-pattern", total: true, abnormal: false }]);
    expect(answersOf(steady, window)[0]).toMatch(
      /^Error logs of checkout: \d+ lines? \([\d.]+ lines\/min\), within normal variation of its rate in the hour before \([\d.]+ lines\/min\); most common: "level=error msg="payment retry"/,
    );
    expect(answersOf(await search('{app="cart"}'), window)).toEqual(["Error logs of checkout: no matching log lines"]);
  });
});

describe("an Elasticsearch answer, read", () => {
  let elasticsearch: FakeElasticsearch;
  const log = (service: string, level: string, message: string, at: number): FakeDocument => ({
    index: "logs-2026.11.20",
    source: { "@timestamp": new Date(at).toISOString(), service: { name: service }, log: { level }, message },
  });
  const search = (filters: unknown[]) =>
    evidenceOf(
      { type: "elasticsearch", url: elasticsearch.url, flavor: "elasticsearch" },
      { index: "logs-*", filters },
      { title: "Checkout errors", window, attributes: { service: "checkout" } },
    );

  beforeAll(async () => {
    elasticsearch = await startFakeElasticsearch({
      documents: [
        ...every(2_000, (i, at) => log("checkout", "info", `GET /api/cart 200 in ${(i * 37) % 300}ms`, at)),
        ...every(180_000, (i, at) => log("checkout", "error", `payment retry ${i % 3} after timeout`, at)),
        ...every(5_000, (_i, at) => log("checkout", "error", "call to payment failed: connection refused by 10.0.4.2:8443", at), ONSET + 2_000),
      ],
    });
  });
  afterAll(async () => {
    await elasticsearch?.close();
  });

  it("names the new error pattern of the filtered documents, and the steady errors as normal", async () => {
    const found = await search([
      { field: "service.name", term: "{{service}}" },
      { field: "log.level", term: "error" },
    ]);
    expect(found).toMatchObject([{ kind: "log-pattern", abnormal: true, ratio: Infinity, count: 216, onset: new Date(ONSET + 2_000) }]);
    expect(answersOf(found, window)).toEqual([
      'Checkout errors: "call to payment failed: connection refused by <ip>:<num>" 216 lines, not seen in the hour before, since 14:05 UTC — e.g. "call to payment failed: connection refused by 10.0.4.2:8443"',
    ]);
    const steady = await search([{ field: "message", phrase: "payment retry" }]);
    expect(steady).toMatchObject([{ kind: "log-pattern", total: true, abnormal: false }]);
    expect(answersOf(steady, window)[0]).toMatch(/^Checkout errors: \d+ lines? \([\d.]+ lines\/min\), within normal variation of its rate in the hour before/);
  });
});
