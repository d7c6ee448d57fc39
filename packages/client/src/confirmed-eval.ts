import type { ConfirmedExecutions, EvidenceBundle, ExpectedVerdict, FeedbackEntry, VerdictCause } from "@pes/contracts";
import { evaluateCase, type EvalCase } from "./evidence-replay.js";

/**
 * `pes eval --confirmed`: the organization's confirmed executions as eval cases. A case's expected cause
 * is the confirmed one: the recorded verdict's own for `right`, the actual cause's kind and subject for
 * `wrong`. Each bundle is replayed through the current analysis; the figure is the rate of right causes.
 */

/** What the eval needs of the API: the confirmed executions, a page at a time, and their bundles. */
export interface ConfirmedSource {
  listConfirmed(page: { since?: string; offset: number; limit: number }): Promise<ConfirmedExecutions>;
  /** The execution's bundle, or undefined when none is kept (a 404). */
  readBundle(executionId: string): Promise<EvidenceBundle | undefined>;
}

/** Why a confirmed execution is no case. */
export type SkipReason = "no bundle kept" | "no cause to compare" | "no verdict recorded";

export interface ConfirmedEval {
  cases: EvalCase[];
  skipped: Array<{ executionId: string; reason: SkipReason }>;
  /** Cases whose replayed verdict names the confirmed cause (or, confirmed without a cause, names none), over all cases. */
  rightCauses: number;
  /** rightCauses / cases; absent with no case. */
  rightCauseRate?: number;
}

const PAGE = 500;

/** Every confirmed execution from `since` (all kept without), replayed against its confirmed cause. */
export async function evaluateConfirmed(source: ConfirmedSource, since?: string): Promise<ConfirmedEval> {
  const cases: EvalCase[] = [];
  const skipped: ConfirmedEval["skipped"] = [];
  for (let offset: number | undefined = 0; offset !== undefined; ) {
    const page = await source.listConfirmed({ ...(since === undefined ? {} : { since }), offset, limit: PAGE });
    for (const { executionId, feedback } of page.items) {
      // Only a cause in words: nothing a verdict can be compared with (and no bundle worth reading).
      if (feedback.verdict === "wrong" && feedback.cause?.kind === undefined) {
        skipped.push({ executionId, reason: "no cause to compare" });
        continue;
      }
      const bundle = await source.readBundle(executionId);
      if (bundle === undefined) {
        skipped.push({ executionId, reason: "no bundle kept" });
        continue;
      }
      const expected = expectedOf(feedback, bundle);
      if (typeof expected === "string") {
        skipped.push({ executionId, reason: expected });
        continue;
      }
      cases.push(evaluateCase(executionId, bundle, expected));
    }
    offset = page.nextOffset;
  }
  const rightCauses = cases.filter((item) => item.cause === "right cause" || item.cause === "no cause expected").length;
  return { cases, skipped, rightCauses, ...(cases.length === 0 ? {} : { rightCauseRate: rightCauses / cases.length }) };
}

/** The verdict a confirmed execution expects, or why it cannot say. */
export function expectedOf(feedback: FeedbackEntry, bundle: EvidenceBundle): ExpectedVerdict | SkipReason {
  if (feedback.verdict === "wrong") {
    const kind = feedback.cause?.kind;
    // Only a cause in words: nothing a verdict can be compared with.
    if (kind === undefined) return "no cause to compare";
    const subject = feedback.cause?.subject;
    return { conclusion: "cause", cause: { kind, ...(subject === undefined ? {} : { subject }) } };
  }
  const recorded = bundle.verdict;
  if (recorded === undefined) return "no verdict recorded";
  return {
    conclusion: recorded.conclusion,
    ...(recorded.cause === undefined ? {} : { cause: expectedCause(recorded.cause) }),
    ...(recorded.alternative === undefined ? {} : { alternative: expectedCause(recorded.alternative) }),
  };
}

function expectedCause(cause: VerdictCause): NonNullable<ExpectedVerdict["cause"]> {
  return { kind: cause.kind, ...(cause.subject === undefined ? {} : { subject: cause.subject }) };
}

/** The line under the table: the rate of right causes, and what could not be a case. */
export function renderConfirmedSummary(result: ConfirmedEval): string {
  const rate = result.rightCauseRate === undefined ? "no case" : `${(result.rightCauseRate * 100).toFixed(1)}%`;
  const skipped = result.skipped.length === 0 ? "" : `; ${result.skipped.length} confirmed executions skipped (${countReasons(result.skipped)})`;
  return `confirmed executions: ${result.rightCauses}/${result.cases.length} right causes (${rate})${skipped}\n`;
}

function countReasons(skipped: ConfirmedEval["skipped"]): string {
  const counts = new Map<string, number>();
  for (const { reason } of skipped) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  return [...counts].map(([reason, count]) => `${count} ${reason}`).join(", ");
}
