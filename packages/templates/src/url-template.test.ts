import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MissingAttributesError, UnsafeValueError } from "./template.js";
import { fillUrlTemplate } from "./url-template.js";

/** Every injection family, as whole values; dot segments (refused) are listed apart. */
const HOSTILE_VALUES = [
  '"',
  "'",
  "`",
  "{",
  "}",
  "}}",
  "{{x}}",
  "|",
  "\\",
  "..\\..\\x",
  "a\nb",
  "a\rb",
  "a\u0000b",
  "...",
  ".x",
  "/",
  "../x",
  "a/../../b",
  "?",
  "?admin=1",
  "#",
  "#frag",
  "@",
  "user@evil.example",
  "//evil.example/x",
  "%2e%2e%2f",
  "%2F",
  "ünïcödé ✓ 😀 中文",
  "\u202Eevil",
  "。。",
  " ",
  "",
];
const DOT_SEGMENTS = [".", "..", "%2e%2e", "%2E", ".%2e", "%252e%252e", "．．"];
/** Fragments the property test combines into values, so that families meet each other. */
const FRAGMENTS = [".", "..", "/", "\\", "%", "%2e", "%2E", "%25", "2e", "?", "#", "&", "=", "@", ":", '"', "{{", "}}", "\n", "\u0000", "．", "a"];

/** One placeholder in each place a URL template can put it. */
const TEMPLATES = {
  segment: "https://grafana.example/d/{{v}}/status",
  lastSegment: "https://grafana.example/d/{{v}}",
  inSegment: "https://grafana.example/d/svc-{{v}}.json",
  query: "https://grafana.example/d/abc?var-service={{v}}&var-env=prod",
  queryWithoutPath: "https://grafana.example?var-service={{v}}",
  fragment: "https://am.example/#/silences/{{v}}",
};

/** What the value must have become in each place: exactly one component holding exactly the value. */
function expectInPlace(place: keyof typeof TEMPLATES, value: string, filled: string): void {
  const url = new URL(filled);
  const host = place === "fragment" ? "am.example" : "grafana.example";
  expect(url.host).toBe(host);
  expect(url.protocol).toBe("https:");
  expect(url.username + url.password).toBe("");
  switch (place) {
    case "segment":
      expect(url.pathname.split("/").map(decodeURIComponent)).toEqual(["", "d", value, "status"]);
      expect(url.search + url.hash).toBe("");
      break;
    case "lastSegment":
      expect(url.pathname.split("/").map(decodeURIComponent)).toEqual(["", "d", value]);
      expect(url.search + url.hash).toBe("");
      break;
    case "inSegment":
      expect(url.pathname.split("/").map(decodeURIComponent)).toEqual(["", "d", `svc-${value}.json`]);
      expect(url.search + url.hash).toBe("");
      break;
    case "query":
      expect(url.pathname).toBe("/d/abc");
      expect([...url.searchParams]).toEqual([
        ["var-service", value],
        ["var-env", "prod"],
      ]);
      expect(url.hash).toBe("");
      break;
    case "queryWithoutPath":
      expect(url.pathname).toBe("/");
      expect([...url.searchParams]).toEqual([["var-service", value]]);
      expect(url.hash).toBe("");
      break;
    case "fragment":
      expect(url.pathname).toBe("/");
      expect(url.search).toBe("");
      expect(decodeURIComponent(url.hash)).toBe(`#/silences/${value}`);
      break;
  }
}

describe("fillUrlTemplate", () => {
  const places = Object.keys(TEMPLATES) as (keyof typeof TEMPLATES)[];

  it.each(places.flatMap((place) => HOSTILE_VALUES.map((value) => [place, value] as const)))(
    "%s: keeps %j as one component, origin and path fixed",
    (place, value) => {
      expectInPlace(place, value, fillUrlTemplate(TEMPLATES[place], { v: value }));
    },
  );

  it.each(places.flatMap((place) => DOT_SEGMENTS.map((value) => [place, value] as const)))("%s: refuses the dot segment %j", (place, value) => {
    expect(() => fillUrlTemplate(TEMPLATES[place], { v: value })).toThrow(
      new UnsafeValueError(`attribute v is ${JSON.stringify(value)}, a dot segment, which would move the URL to another path`),
    );
  });

  it("property: any value is either refused as a dot segment or stays one component in its place", () => {
    const value = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom(...FRAGMENTS), maxLength: 6 }));
    fc.assert(
      fc.property(fc.constantFrom(...places), value, (place, v) => {
        let filled: string;
        try {
          filled = fillUrlTemplate(TEMPLATES[place], { v });
        } catch (error) {
          expect(error).toBeInstanceOf(UnsafeValueError);
          expect((error as Error).message).toMatch(/a dot segment/);
          return;
        }
        expectInPlace(place, v, filled);
      }),
      { seed: 20261120, numRuns: 2000 },
    );
    // 2,000 cases take about a second alone, and several times that on a loaded shared host.
  }, 30_000);

  it("returns the text as filled, and a template without placeholders as it is", () => {
    expect(fillUrlTemplate("https://grafana.example/d/abc?var-service={{v}}", { v: "check out&x=1" })).toBe(
      "https://grafana.example/d/abc?var-service=check%20out%26x%3D1",
    );
    expect(fillUrlTemplate("https://am.example/#/silences/new", {})).toBe("https://am.example/#/silences/new");
  });

  it("names missing attributes before checking anything", () => {
    expect(() => fillUrlTemplate("https://x.example/{{a}}/{{b}}", { a: ".." })).toThrow(MissingAttributesError);
  });

  describe("with a base URL", () => {
    const base = "http://127.0.0.1:9/api";

    it("appends the filled path to the base", () => {
      expect(fillUrlTemplate("/{{service}}/status", { service: "check out/../x?y#z" }, base)).toBe(
        "http://127.0.0.1:9/api/check%20out%2F..%2Fx%3Fy%23z/status",
      );
      expect(fillUrlTemplate("/status", {}, "http://127.0.0.1:9")).toBe("http://127.0.0.1:9/status");
    });

    it.each(DOT_SEGMENTS)("refuses %j, which would ask for /status outside /api", (value) => {
      expect(() => fillUrlTemplate("/{{service}}/status", { service: value }, base)).toThrow(UnsafeValueError);
    });
  });

  // The encoder stops dot segments before the URL is built; these reach the second line of defence.
  describe("the check on the filled URL", () => {
    it("refuses a path that leaves the base, whatever made it leave", () => {
      expect(() => fillUrlTemplate("/{{service}}/../../admin", { service: "x" }, "http://127.0.0.1:9/api")).toThrow(
        new UnsafeValueError("the URL would leave the base path /api"),
      );
      expect(() => fillUrlTemplate("/../admin", {}, "http://127.0.0.1:9/api")).toThrow("the URL would leave the base path /api");
      expect(fillUrlTemplate("/x/../status", {}, "http://127.0.0.1:9/api")).toBe("http://127.0.0.1:9/api/x/../status");
    });

    it("refuses a path that leaves the template's fixed path", () => {
      expect(() => fillUrlTemplate("https://x.example/d/{{v}}/../..", { v: "a" })).toThrow(
        new UnsafeValueError("attribute values would move the URL out of the path /d/"),
      );
      expect(() => fillUrlTemplate("https://x.example/d?q={{v}}/../..", { v: "a" })).not.toThrow();
    });

    it("refuses another host, also for a template that does not fix it (configuration loading reports those)", () => {
      expect(() => fillUrlTemplate("https://grafana.example{{v}}/d", { v: ".evil.example" })).toThrow(
        new UnsafeValueError("attribute values would send the URL to another host than https://grafana.example"),
      );
      expect(() => fillUrlTemplate("https://grafana.example:{{v}}/d", { v: "8443" })).toThrow("another host");
      expect(() => fillUrlTemplate("{{v}}", { v: "https://evil.example" })).toThrow(
        "the URL template does not fix its scheme and host before its first placeholder",
      );
    });
  });
});
