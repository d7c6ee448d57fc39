import { describe, expect, it } from "vitest";
import { placeholderInLiteralProblem } from "./query-literals.js";

describe("placeholderInLiteralProblem", () => {
  it.each([
    '{app={{service}}} |= "error"',
    'sum(rate(x{service={{service}}, code=~"5.."}[5m]))',
    '{app=~{{service|regex}}} |~ "a{2}\\"b"',
    "{job=`{{`}",
    "{a={{ a }}, b={{b|regex}}}",
    'x{a="}"} or y{b={{b}}}',
  ])("accepts %s", (template) => {
    expect(placeholderInLiteralProblem(template)).toBeUndefined();
  });

  it.each([
    ['{app="{{service}}"}', "{{service}}"],
    ["{app='{{service}}'}", "{{service}}"],
    ["{app=`{{service}}`}", "{{service}}"],
    ['{app={{a}}} |= "id={{ id|regex }} done"', "{{ id|regex }}"],
    ['{a="\\"{{x}}"}', "{{x}}"],
  ])("refuses %s, naming %s", (template, placeholder) => {
    expect(placeholderInLiteralProblem(template)).toBe(
      `placeholder ${placeholder} is inside a string literal: write it without quotes (each value becomes a string literal of its own)`,
    );
  });
});

describe("placeholderInLiteralProblem with the quotes of a language", () => {
  it("reads only those quotes as literals (Datadog's search: only \")", () => {
    expect(placeholderInLiteralProblem("service:{{service}} message:don't @user:{{user}}", '"')).toBeUndefined();
    expect(placeholderInLiteralProblem('service:{{service}} "id \\" {{id}}"', '"')).toBe(
      "placeholder {{id}} is inside a string literal: write it without quotes (each value becomes a string literal of its own)",
    );
  });
});
