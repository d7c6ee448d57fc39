import { MissingAttributesError } from "@pes/templates";
import { describe, expect, it } from "vitest";
import { actionOutcomes } from "./action-outcomes.js";
import { resolveSecrets } from "./data-source-secrets.js";

describe("actionOutcomes", () => {
  // What a new connector gets by building its outcomes here: nothing to list, nothing to remember.
  const outcomes = () => {
    const dataSource = { type: "http", url: "http://127.0.0.1:9", headers: { "x-key": { env: "PES_TEST_OUTCOME_KEY" } } };
    return actionOutcomes({ title: "Check", secrets: resolveSecrets(dataSource, { env: { PES_TEST_OUTCOME_KEY: "key-123456" } }).secrets });
  };

  it("redacts the data source's secrets in every kind of outcome, keeping the link", () => {
    expect(outcomes().failed("the API said key-123456 is wrong", "http://link")).toEqual({
      status: "failed",
      shortAnswer: "Check: the API said [redacted] is wrong",
      mostImportantLink: "http://link",
    });
    expect(outcomes().answered({ status: "normal", shortAnswer: "Check: key-123456", severity: 1 })).toEqual({
      status: "normal",
      shortAnswer: "Check: [redacted]",
      severity: 1,
    });
    expect(outcomes().skipped(new MissingAttributesError(["service"]))).toEqual({
      status: "skipped",
      shortAnswer: "Check: not run, the issue has no attribute service",
    });
  });

  it("cuts a short answer to 300 characters after redacting", () => {
    const outcome = outcomes().failed(`${"x".repeat(285)} key-123456`);
    expect(outcome.shortAnswer).toHaveLength(300);
    expect(outcome.shortAnswer).not.toContain("key-1");
  });
});
