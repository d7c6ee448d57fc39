import { describe, expect, it } from "vitest";
import {
  asText,
  asUrlComponent,
  fillTemplate,
  fillTextOrKeep,
  fillTemplates,
  isDotSegment,
  MissingAttributesError,
  placeholdersIn,
  textBeforePlaceholders,
  UnsafeValueError,
} from "./template.js";

describe("placeholdersIn", () => {
  it("finds names and filters, tolerating inner spaces", () => {
    expect(placeholdersIn("a {{host}} b {{ env | regex }} {{host}}")).toEqual([{ name: "host" }, { name: "env", filter: "regex" }, { name: "host" }]);
  });

  it("ignores text that only looks like a placeholder", () => {
    expect(placeholdersIn("{{}} {{ 1abc }} {host} {{a b}}")).toEqual([]);
  });
});

describe("fillTemplate", () => {
  it("splices in what the encoder returns", () => {
    expect(fillTemplate("up{job={{job}}}", { job: 'a"b' }, (value) => JSON.stringify(value))).toBe('up{job="a\\"b"}');
  });

  it("passes the filter to the encoder", () => {
    const seen: unknown[] = [];
    fillTemplate("{{x|regex}}", { x: "v" }, (value, placeholder) => {
      seen.push(placeholder);
      return value;
    });
    expect(seen).toEqual([{ name: "x", filter: "regex" }]);
  });

  it("names every missing attribute once", () => {
    const fill = () => fillTemplate("{{a}} {{b}} {{a}} {{c}}", { c: "1" }, asText);
    expect(fill).toThrow(MissingAttributesError);
    expect(fill).toThrow("missing attributes a, b");
  });

  it("does not read inherited properties as attributes", () => {
    expect(() => fillTemplate("{{constructor}}", {}, asText)).toThrow("missing attribute constructor");
  });

  it("does not re-expand placeholders inside values", () => {
    expect(fillTemplate("{{a}}", { a: "{{b}}", b: "x" }, asText)).toBe("{{b}}");
  });

  it("URL-encodes with asUrlComponent", () => {
    expect(fillTemplate("/s/{{svc}}?q={{q}}", { svc: "a/b", q: "x&y=z" }, asUrlComponent)).toBe("/s/a%2Fb?q=x%26y%3Dz");
  });
});

describe("asUrlComponent", () => {
  const fill = (value: string) => fillTemplate("/s/{{svc}}", { svc: value }, asUrlComponent);

  it.each([".", "..", "%2e", "%2E%2e", ".%2E", "%2e.", "%252e%252e", "%25252e", "．．", "‥", "\uFE52"])(
    "refuses %j, a dot segment once parsed or decoded",
    (value) => {
      expect(() => fill(value)).toThrow(UnsafeValueError);
      expect(() => fill(value)).toThrow(`attribute svc is ${JSON.stringify(value)}, a dot segment`);
    },
  );

  it.each(["...", ".a", "a.", "a..b", ". .", "%2e%2e%2e", "%2x%2e", ".%2", "%"])("writes %j, which is no dot segment", (value) => {
    expect(fill(value)).toBe(`/s/${encodeURIComponent(value)}`);
  });

  it("refuses a lone surrogate with its own error, not encodeURIComponent's URIError", () => {
    expect(() => fill("a\uD800")).toThrow(new UnsafeValueError("attribute svc is not valid Unicode text (it holds a lone surrogate)"));
    expect(fill("\uD83D\uDE00")).toBe("/s/%F0%9F%98%80");
  });
});

describe("isDotSegment", () => {
  it("reads dots through up to three percent-decodings", () => {
    expect(isDotSegment("%2525252e")).toBe(false);
    expect(isDotSegment("%25252e")).toBe(true);
  });
});

describe("textBeforePlaceholders", () => {
  it("cuts at the first real placeholder only", () => {
    expect(textBeforePlaceholders("https://x/{{}}/{{ a }}/{{b}}")).toBe("https://x/{{}}/");
    expect(textBeforePlaceholders("https://x/plain")).toBe("https://x/plain");
    expect(textBeforePlaceholders("{{a}}")).toBe("");
  });
});

describe("fillTemplates", () => {
  it("fills string leaves only", () => {
    expect(fillTemplates({ n: 1, k: ["{{a}}", true, null], "{{a}}": "x-{{a}}" }, { a: "v" }, asText)).toEqual({
      n: 1,
      k: ["v", true, null],
      "{{a}}": "x-v",
    });
  });
});

describe("fillTextOrKeep", () => {
  it("fills prose as text, and keeps it as written when an attribute is missing", () => {
    expect(fillTextOrKeep("Errors of {{service}}", { service: "checkout" })).toBe("Errors of checkout");
    expect(fillTextOrKeep("Errors of {{service}} on {{node}}", { service: "checkout" })).toBe("Errors of {{service}} on {{node}}");
  });
});
