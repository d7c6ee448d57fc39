import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillTemplate } from "@pes/templates";
import { startPrometheus, toOpenMetrics, type LocalPrometheus } from "@pes/local-services";
import { promqlEncoder, promqlRegexString, promqlString } from "./promql-escape.js";

/** Every injection family, alone and as an attempt to close the literal or the selector. */
const HOSTILE_VALUES = [
  "checkout",
  '"} or vector(1) #',
  '"} or vector(1) or up{a="',
  '"',
  "'",
  "`",
  "'} or vector(1) #",
  "`} or vector(1) #",
  "{",
  "}",
  "}}",
  "{{x}}",
  "|",
  "\\",
  'a\\"b',
  "\\\\\\",
  "\\x41\\u0041\\101",
  "line1\nline2\r\tend",
  "\r",
  "ünïcödé ✓ 😀 中文",
  "'single' and `backtick`",
  "nul\u0000byte",
  "line\u2028separator",
  "{{service}}",
  "a.b*c+d?(e)|[f]{2}^$",
  "..",
  ".",
  "%2e%2e",
  "/",
  "?",
  "#",
  "# comment",
  "@",
  "offset 5m",
  "",
];

describe("promqlString", () => {
  it.each(HOSTILE_VALUES)("writes %j as one literal holding exactly the value", (value) => {
    const literal = promqlString(value);
    expect(literal.startsWith('"') && literal.endsWith('"')).toBe(true);
    expect(JSON.parse(literal)).toBe(value);
  });

  it("rejects lone surrogates, which PromQL cannot read", () => {
    expect(() => promqlString("a\uD800b")).toThrow("lone surrogate");
    expect(() => promqlString("\uDC00")).toThrow("lone surrogate");
    expect(promqlString("\uD83D\uDE00")).toBe('"😀"');
  });
});

/** Values for property tests: any text, and text built from the fragments that end literals and selectors. */
const ANY_VALUE = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom('"', "'", "`", "\\", "{", "}", "|", "\n", "\r", "\u0000", "#", " or ", "vector(1)", "=~", ".", "u", "x41"), maxLength: 8 }),
);

describe("promqlString property", () => {
  it("is one JSON string literal holding exactly the value, for any well-formed value", () => {
    fc.assert(
      fc.property(ANY_VALUE, (value) => {
        const literal = promqlString(value);
        // JSON.parse refuses anything after the closing quote: the literal ends where the value does.
        expect(JSON.parse(literal)).toBe(value);
      }),
      { seed: 20261120, numRuns: 2000 },
    );
  });
});

describe("promqlRegexString", () => {
  it("escapes every RE2 metacharacter before writing the literal", () => {
    expect(promqlRegexString("a.b*c+d?(e)|[f]{2}^$\\")).toBe(JSON.stringify("a\\.b\\*c\\+d\\?\\(e\\)\\|\\[f\\]\\{2\\}\\^\\$\\\\"));
    expect(promqlRegexString("plain-text_1")).toBe('"plain-text_1"');
  });
});

describe("promqlEncoder", () => {
  it("fills {{x}} with a string literal and {{x|regex}} with an escaped one", () => {
    const attributes = { service: 'a"b', pattern: "a.b" };
    expect(fillTemplate("up{service={{service}}, x=~{{pattern|regex}}}", attributes, promqlEncoder)).toBe('up{service="a\\"b", x=~"a\\\\.b"}');
  });

  it("refuses filters it does not know", () => {
    expect(() => fillTemplate("{{service|raw}}", { service: "x" }, promqlEncoder)).toThrow('unknown filter "|raw"');
  });
});

describe("escaped values in the real Prometheus parser", () => {
  let prometheus: LocalPrometheus;
  const now = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    prometheus = await startPrometheus({
      openMetrics: toOpenMetrics([{ name: "up", labels: { service: "checkout" }, samples: [[now - 60, 1]] }]),
    });
  });
  afterAll(async () => {
    await prometheus?.stop();
  });

  async function query(promql: string): Promise<{ status: string; error?: string; data?: { result: Array<{ metric: Record<string, string> }> } }> {
    const response = await fetch(`${prometheus.url}/api/v1/query`, {
      method: "POST",
      body: new URLSearchParams({ query: promql, time: String(now) }),
    });
    return (await response.json()) as { status: string; error?: string; data?: { result: Array<{ metric: Record<string, string> }> } };
  }

  it.each(HOSTILE_VALUES.filter((value) => value !== ""))("reads %j back as the exact label value", async (value) => {
    // label_replace copies the literal into a label: the answer shows what the parser made of it.
    const body = await query(fillTemplate('label_replace(vector(1), "v", {{value}}, "", "")', { value }, promqlEncoder));
    expect(body.error).toBeUndefined();
    expect(body.data?.result).toEqual([{ metric: { v: value }, value: expect.any(Array) }]);
  });

  it.each(HOSTILE_VALUES.filter((value) => value !== ""))("matches %j literally with |regex", async (value) => {
    const template = 'label_replace(label_replace(vector(1), "v", {{value}}, "", ""), "matched", "yes", "v", {{value|regex}})';
    const body = await query(fillTemplate(template, { value }, promqlEncoder));
    expect(body.error).toBeUndefined();
    expect(body.data?.result[0]?.metric.matched).toBe("yes");
  });

  it("does not let a regex-escaped value match other text", async () => {
    const template = 'label_replace(label_replace(vector(1), "v", "axb", "", ""), "matched", "yes", "v", {{value|regex}})';
    const body = await query(fillTemplate(template, { value: "a.b" }, promqlEncoder));
    expect(body.data?.result[0]?.metric.matched).toBeUndefined();
  });

  // absent() answers with the labels of its selector's equality matchers: what Prometheus parsed each
  // matcher's value as. An empty value is an absent label, so it is left out here.
  async function matcherLabels(template: string, value: string): Promise<Record<string, string> | string> {
    const body = await query(fillTemplate(template, { value }, promqlEncoder));
    return body.error ?? body.data?.result[0]?.metric ?? "no result";
  }

  it.each(HOSTILE_VALUES.filter((value) => value !== ""))("parses %j as the value of one label matcher", async (value) => {
    expect(await matcherLabels('absent(pes_no_such_metric{service={{value}}, env="prod"})', value)).toEqual({ service: value, env: "prod" });
  });

  it("property: any value is the value of one label matcher in the real parser", async () => {
    await fc.assert(
      fc.asyncProperty(
        ANY_VALUE.filter((value) => value !== ""),
        async (value) => {
          expect(await matcherLabels('absent(pes_no_such_metric{service={{value}}, env="prod"})', value)).toEqual({ service: value, env: "prod" });
        },
      ),
      { seed: 20261120, numRuns: 150 },
    );
  });

  it("property: any value matches itself with |regex", async () => {
    const template = 'label_replace(label_replace(vector(1), "v", {{value}}, "", ""), "matched", "yes", "v", {{value|regex}})';
    await fc.assert(
      fc.asyncProperty(
        ANY_VALUE.filter((value) => value !== ""),
        async (value) => {
          const body = await query(fillTemplate(template, { value }, promqlEncoder));
          expect(body.error).toBeUndefined();
          expect(body.data?.result[0]?.metric.matched).toBe("yes");
        },
      ),
      { seed: 20261120, numRuns: 100 },
    );
  });

  it("keeps an injection attempt inside the selector's value", async () => {
    const injection = '"} or vector(1) #';
    const escaped = await query(fillTemplate("up{service={{service}}}", { service: injection }, promqlEncoder));
    expect(escaped).toMatchObject({ status: "success", data: { result: [] } });
    // The same value spliced in naively changes the query: proof that the test above can fail.
    const naive = await query(`up{service="${injection}"}`);
    expect(naive.status === "error" || (naive.data?.result.length ?? 0) > 0).toBe(true);
  });
});
