import type { HistoryEntry } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { historyEntryText, historyLines } from "./history-text.js";

const entry: HistoryEntry = {
  executionId: "e-41",
  at: "2026-11-24T18:26:00.000Z",
  playbook: "high-error-rate",
  conclusion: "cause",
  cause: { kind: "deploy", subject: "checkout", detail: "checkout:v<num>" },
  pageUrl: "https://pes.example.com/executions/e-41/page",
  similarity: 0.8125,
  matched: [
    { field: "cause.kind", value: "deploy" },
    { field: "cause.subject", value: "checkout" },
    { field: "alert", value: "CheckoutHighErrorRate" },
  ],
  differed: [
    { field: "log-template", now: "payment capture failed <id>" },
    { field: "attribute.region", now: "eu-west-1", past: "us-east-1" },
  ],
  occurrences: { count: 4, first: "2026-11-02T09:00:00.000Z", last: "2026-11-24T18:26:00.000Z" },
  confirmed: { verdict: "right", resolution: "rolled back to v1.41", by: "alice" },
};

describe("historyEntryText", () => {
  it("says when, what it concluded, how often, what matched and differed, and what someone confirmed", () => {
    expect(historyEntryText(entry)).toBe(
      "Tue 2026-11-24 18:26 UTC: likely cause: deploy of checkout (checkout:v<num>); seen 4 times, first Mon 2026-11-02 09:00 UTC, last Tue 2026-11-24 18:26 UTC; " +
        "81 % alike; same cause.kind deploy, cause.subject checkout, alert CheckoutHighErrorRate; " +
        "different log-template payment capture failed <id> (then none), attribute.region eu-west-1 (then us-east-1); " +
        "confirmed right by alice, resolved by: rolled back to v1.41.",
    );
  });

  it("says seen once, and what was wrong, without the parts it lacks", () => {
    const { confirmed: _confirmed, cause: _cause, ...unconfirmed } = entry;
    expect(
      historyEntryText({
        ...unconfirmed,
        conclusion: "no-cause",
        matched: [{ field: "alert", value: "CheckoutHighErrorRate" }],
        differed: [],
        occurrences: { count: 1, first: entry.at, last: entry.at },
        confirmed: { verdict: "wrong", cause: "a bad feature flag" },
      }),
    ).toBe(
      "Tue 2026-11-24 18:26 UTC: no cause found (high-error-rate); seen once; 81 % alike; same alert CheckoutHighErrorRate; confirmed wrong, actual cause: a bad feature flag.",
    );
    expect(historyLines(undefined)).toEqual([]);
  });
});
