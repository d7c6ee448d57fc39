// A page with nothing else abnormal: the alert that opened the investigation is context, not a finding.
// The verdict finds no cause, lists no symptom, and the bottom line says so and what was checked.
import { bottomLineOf, findingsOfAction, judgeExecution } from "@pes/analysis";
import { describe, expect, it } from "vitest";
import { BUNDLE_VARIANTS } from "./bundle-variants.js";

describe("a page with nothing else abnormal (healthy, paged all the same)", () => {
  it("finds no cause, keeps the page apart, and says what was checked", async () => {
    const variant = BUNDLE_VARIANTS.find(({ name }) => name === "healthy, paged all the same");
    const bundle = await variant?.build();
    if (bundle === undefined) throw new Error("no such variant");
    const { attributes } = bundle.issue;
    const judgement = judgeExecution(
      bundle.actions.flatMap((action) => findingsOfAction(action, attributes)),
      {
        time: new Date(bundle.issue.time),
        attributes,
        upstreams: bundle.issue.upstreams ?? [],
      },
    );
    expect(judgement.verdict.conclusion).toBe("no-cause");
    expect(judgement.verdict.symptoms).toEqual([]);
    expect(judgement.verdict.paged).toEqual([
      expect.objectContaining({ kind: "alert", detail: "CheckoutHighErrorRate", action: "Alerts firing for checkout" }),
    ]);
    const bottomLine = bottomLineOf(judgement, attributes ?? {});
    expect(bottomLine).toMatch(
      /^Around [-0-9 ]*\d\d:\d\d UTC for service=checkout: no cause found: nothing abnormal but the alert that paged \(Alerts firing for checkout: CheckoutHighErrorRate firing/,
    );
    expect(bottomLine).toMatch(/Within usual range: Error ratio of checkout, p99 latency of checkout/);
  });
});
