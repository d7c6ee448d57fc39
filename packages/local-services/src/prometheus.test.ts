import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { access } from "node:fs/promises";
import { startPrometheus, toOpenMetrics, type LocalPrometheus } from "./prometheus.js";

describe("toOpenMetrics", () => {
  it("groups series by family, escapes label values and ends in # EOF", () => {
    const text = toOpenMetrics([
      {
        name: "latency_seconds",
        labels: { service: 'a"b\\c\nd' },
        help: "Latency.",
        samples: [
          [20, 2],
          [10, 1],
        ],
      },
      { name: "requests_total", type: "counter", samples: [[10, Number.NaN]] },
      { name: "latency_seconds", labels: { service: "x" }, samples: [[10, Infinity]] },
    ]);
    expect(text).toBe(
      [
        "# HELP latency_seconds Latency.",
        "# TYPE latency_seconds gauge",
        'latency_seconds{service="a\\"b\\\\c\\nd"} 1 10',
        'latency_seconds{service="a\\"b\\\\c\\nd"} 2 20',
        'latency_seconds{service="x"} +Inf 10',
        "# TYPE requests counter",
        "requests_total NaN 10",
        "# EOF",
        "",
      ].join("\n"),
    );
  });

  it("rejects names that are not metric or label names", () => {
    expect(() => toOpenMetrics([{ name: "bad name", samples: [] }])).toThrow("invalid metric name");
    expect(() => toOpenMetrics([{ name: "ok", labels: { "bad-label": "v" }, samples: [] }])).toThrow("invalid label name");
    expect(() => toOpenMetrics([{ name: "hits", type: "counter", samples: [] }])).toThrow("must end in _total");
  });
});

describe("startPrometheus", () => {
  // The last sample is "now": Debian's 2.42 accepts backfilled blocks reaching the present.
  const now = Math.floor(Date.now() / 1000);
  const samples: Array<[number, number]> = [];
  for (let t = now - 3 * 3600; t <= now; t += 60) samples.push([t, t >= now - 600 ? 4 : 1]);
  let prometheus: LocalPrometheus;

  beforeAll(async () => {
    prometheus = await startPrometheus({
      openMetrics: toOpenMetrics([{ name: "demo_latency_seconds", labels: { service: "checkout" }, samples }]),
    });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  it("serves the backfilled history, including the last minutes", async () => {
    const form = new URLSearchParams({
      query: 'demo_latency_seconds{service="checkout"}',
      start: String(now - 3 * 3600),
      end: String(now),
      step: "600",
    });
    const response = await fetch(`${prometheus.url}/api/v1/query_range`, { method: "POST", body: form });
    const body = (await response.json()) as {
      status: string;
      data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> };
    };
    expect(body.status).toBe("success");
    const values = body.data.result[0]?.values ?? [];
    expect(values.length).toBe(19);
    expect(values[0]?.[1]).toBe("1");
    expect(values.at(-1)).toEqual([now, "4"]);
  });

  it("answers readiness and then stops, removing its data", async () => {
    const extra = await startPrometheus({ openMetrics: toOpenMetrics([{ name: "x", samples: [[now, 1]] }]) });
    await access(extra.directory);
    const ready = await fetch(`${extra.url}/-/ready`);
    expect(ready.status).toBe(200);
    await extra.stop();
    await extra.stop();
    await expect(fetch(`${extra.url}/-/ready`)).rejects.toThrow();
    await expect(access(extra.directory)).rejects.toThrow(/ENOENT/);
  });

  it("fails with the backfill's own message when the history is not OpenMetrics", async () => {
    await expect(startPrometheus({ openMetrics: "not metrics" })).rejects.toThrow(/promtool/);
  });
});
