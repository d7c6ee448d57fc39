import { z } from "zod";
import { describe, expect, it } from "vitest";
import { describeIssues } from "@pes/contracts";
import { AppError } from "./errors.js";
import { MAX_LISTED_ISSUES, parseOrThrow, prefixIssues, toValidationIssues } from "./validation.js";

const Schema = z.strictObject({ name: z.string(), nested: z.strictObject({ count: z.number() }).optional(), list: z.array(z.number()).optional() });

function issuesOf(value: unknown, prefix?: string[]) {
  const result = Schema.safeParse(value);
  if (result.success) throw new Error("expected a failure");
  return toValidationIssues(result.error, prefix);
}

describe("toValidationIssues", () => {
  it("prefixes paths with body and stringifies array indexes", () => {
    expect(issuesOf({ name: 1, list: [1, "x"] })).toEqual([
      { path: ["body", "name"], message: expect.any(String) },
      { path: ["body", "list", "1"], message: expect.any(String) },
    ]);
  });

  it("gives one issue per unknown key, at the key", () => {
    const issues = issuesOf({ name: "a", nme: 1, typo: 2, nested: { count: 1, cnt: 2 } });
    expect(issues).toHaveLength(3);
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: ["body", "nme"], message: 'Unknown field "nme"' },
        { path: ["body", "typo"], message: 'Unknown field "typo"' },
        { path: ["body", "nested", "cnt"], message: 'Unknown field "cnt"' },
      ]),
    );
  });

  it(`lists at most ${MAX_LISTED_ISSUES} issues, then says how many more there are`, () => {
    const unknown = Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`k${index}`, index]));
    const issues = issuesOf({ name: 1, ...unknown });
    expect(issues).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(issues.at(-1)).toEqual({ path: ["body"], message: "81 more issues, not listed" });
    expect(issuesOf({ name: 1, ...unknown }, []).at(-1)).toEqual({ path: [], message: "81 more issues, not listed" });
  });

  it("uses another prefix when asked", () => {
    expect(issuesOf({}, [])).toEqual([{ path: ["name"], message: expect.any(String) }]);
  });
});

describe("parseOrThrow", () => {
  it("returns the data or throws the 400 AppError", () => {
    expect(parseOrThrow(Schema, { name: "a" })).toEqual({ name: "a" });
    expect(() => parseOrThrow(Schema, {})).toThrow(AppError);
  });
});

describe("describeIssues and prefixIssues", () => {
  it("joins paths with dots and issues with semicolons", () => {
    expect(
      describeIssues([
        { path: ["attributes", "host"], message: "is missing" },
        { path: [], message: "Invalid input" },
      ]),
    ).toBe("attributes.host: is missing; Invalid input");
  });

  it("puts body in front", () => {
    expect(prefixIssues([{ path: ["bookName"], message: "unknown" }])).toEqual([{ path: ["body", "bookName"], message: "unknown" }]);
  });
});
