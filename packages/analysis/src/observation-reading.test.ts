import type { DatadogMetricSeries } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { shortAnswer } from "./evidence-text.js";
import { readObservation } from "./observation-reading.js";

// A fixed past incident: the p99 of checkout jumps from 440 ms to 1.8 s at 14:05 UTC.
const JUMP = Date.parse("2026-11-20T14:05:00Z");
const window = { start: new Date("2026-11-20T13:08:00Z"), time: new Date("2026-11-20T14:08:00Z"), end: new Date("2026-11-20T14:23:00Z") };
const reading = { action: "p99 latency", window };

/** A series as Datadog's v1 query API answers it: `[ms, value]` points every 20 s, tags as `key:value`. */
function series(tags: string[], valueAt: (ms: number) => number | null, scope = tags.join(",")): DatadogMetricSeries {
  const pointlist: Array<[number, number | null]> = [];
  for (let at = window.start.getTime(); at <= window.end.getTime(); at += 20_000) pointlist.push([at, valueAt(at)]);
  return { pointlist, tag_set: tags, scope };
}
const checkout = (ms: number) => (ms >= JUMP ? 1.8 : ([0.42, 0.44, 0.46][(ms / 20_000) % 3] ?? 0.44));
const datadog = (...list: DatadogMetricSeries[]) => readObservation({ kind: "datadog-metrics", series: list, unit: "s" }, reading);

describe("reading a Datadog metric query's series", () => {
  it("finds the jump, named by the series' tags", () => {
    const [found] = datadog(series(["service:checkout", "env:prod", "host:web-1"], checkout));
    expect(found).toMatchObject({ kind: "metric", abnormal: true, onset: new Date(JUMP), seriesCount: 1 });
    expect(found && shortAnswer(found, window.time)).toBe(
      "p99 latency (env=prod, host=web-1, service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC",
    );
  });

  it("names the worst of several series by the tags that tell them apart, reading null points as gaps", () => {
    const [found] = datadog(
      series(["service:checkout", "host:web-1"], () => 0.3),
      series(["service:checkout", "host:web-2"], (ms) => (ms % 60_000 === 0 ? null : checkout(ms))),
    );
    expect(found).toMatchObject({ kind: "metric", abnormal: true, labels: { host: "web-2" }, seriesCount: 2 });
    expect(found && shortAnswer(found, window.time)).toMatch(/^p99 latency \(host=web-2\) .*; worst of 2 series$/);
  });

  it("names a series without tags by its scope, and a bare tag by its name", () => {
    expect(datadog(series([], checkout, "service:checkout,env:prod"))).toMatchObject([{ kind: "metric", labels: { service: "checkout", env: "prod" } }]);
    expect(datadog(series(["canary", "service:a:b"], checkout))).toMatchObject([{ kind: "metric", labels: { canary: "", service: "a:b" } }]);
  });

  it("reports a steady series as normal, and no series as no data, not as normal", () => {
    const [steady] = datadog(series(["service:search"], () => 0.3));
    expect(steady && shortAnswer(steady, window.time)).toBe("p99 latency (service=search) 300 ms, within its usual range (300 ms over the hour before)");
    const [none] = datadog();
    expect(none).toMatchObject({ kind: "no-data", reason: "empty" });
    expect(none && shortAnswer(none, window.time)).toBe("p99 latency: no data in the window");
  });
});
