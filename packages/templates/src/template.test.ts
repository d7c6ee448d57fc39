import { describe, expect, it } from "vitest";
import { asText, asUrlComponent, fillTemplate, fillTemplates, MissingAttributesError, placeholdersIn } from "./template.js";

describe("placeholdersIn", () => {
  it("finds names and filters, tolerating inner spaces", () => {
    expect(placeholdersIn("a {{host}} b {{ env | regex }} {{host}}")).toEqual([
      { name: "host" },
      { name: "env", filter: "regex" },
      { name: "host" },
    ]);
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

describe("fillTemplates", () => {
  it("fills string leaves only", () => {
    expect(fillTemplates({ n: 1, k: ["{{a}}", true, null], "{{a}}": "x-{{a}}" }, { a: "v" }, asText)).toEqual({
      n: 1,
      k: ["v", true, null],
      "{{a}}": "x-v",
    });
  });
});
