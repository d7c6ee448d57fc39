import { bundleProblems, replayBundle } from "@pes/analysis";
import type { EvidenceBundle, ExpectedVerdict, Verdict, VerdictCause } from "@pes/contracts";
import { UsageError } from "./cli-inputs.js";

/**
 * The bundle, when the analysis can read it whole (bundleProblems); otherwise a usage error naming each
 * field it cannot read, or, when `lenient`, the bundle with those problems told on `stderr` (its unknown
 * observations replay as failed actions).
 */
export function readableBundle(source: string, bundle: EvidenceBundle, lenient: boolean, stderr: { write(text: string): unknown }): EvidenceBundle {
  const problems = bundleProblems(bundle);
  if (problems.length === 0) return bundle;
  if (!lenient) throw new UsageError(`${source}: the analysis cannot read: ${problems.join("; ")} (--lenient replays what it can)`);
  stderr.write(`pes: ${source}: read leniently: ${problems.join("; ")}\n`);
  return bundle;
}

/** A verdict in a line: `cause: deploy of checkout (Rollouts of checkout), high confidence`. */
export function verdictLine(verdict: Verdict): string {
  if (verdict.conclusion === "no-cause") return `no cause (${verdict.symptoms.length} ${verdict.symptoms.length === 1 ? "symptom" : "symptoms"})`;
  const cause = verdict.cause === undefined ? "?" : causeText(verdict.cause);
  if (verdict.conclusion === "ambiguous") return `ambiguous: ${cause} or ${verdict.alternative === undefined ? "?" : causeText(verdict.alternative)}`;
  return `cause: ${cause}, ${verdict.cause?.confidence ?? "?"} confidence`;
}

function causeText(cause: VerdictCause): string {
  return `${cause.kind}${cause.subject === undefined ? "" : ` of ${cause.subject}`} (${cause.action})`;
}

/** How a case's cause compares with what it expects. */
export type CauseOutcome = "right cause" | "wrong cause" | "no cause" | "no cause expected";

/** One case of `pes eval`: a bundle, what it expects, and what its replay gave. */
export interface EvalCase {
  name: string;
  expected: ExpectedVerdict;
  verdict: Verdict;
  cause: CauseOutcome;
  /** Whether the mitigations the replay offers are the expected ones; absent when none are expected. */
  mitigationsFit?: boolean;
  /** The case passes: the conclusion, the cause and the mitigations are what it expects. */
  ok: boolean;
}

/** Replays a bundle and judges it against what it expects. */
export function evaluateCase(name: string, bundle: EvidenceBundle, expected: ExpectedVerdict): EvalCase {
  const { verdict, actionableMitigations } = replayBundle(bundle);
  const cause = causeOutcome(expected, verdict);
  const names = actionableMitigations.map((mitigation) => mitigation.customName ?? mitigation.toolName);
  const mitigationsFit = expected.mitigations === undefined ? undefined : sameSet(expected.mitigations, names);
  const ok = verdict.conclusion === expected.conclusion && (cause === "right cause" || cause === "no cause expected") && mitigationsFit !== false;
  return { name, expected, verdict, cause, ...(mitigationsFit === undefined ? {} : { mitigationsFit }), ok };
}

function causeOutcome(expected: ExpectedVerdict, verdict: Verdict): CauseOutcome {
  const wanted = expected.cause;
  const got = verdict.cause;
  if (wanted === undefined) return got === undefined || expected.conclusion !== "no-cause" ? "no cause expected" : "wrong cause";
  if (got === undefined) return "no cause";
  // Ambiguous between two: the two named, in either order (which one the verdict puts first is a tie's).
  const other = expected.alternative;
  if (other !== undefined) {
    const alternative = verdict.alternative;
    if (alternative === undefined) return "wrong cause";
    const both = (matches(got, wanted) && matches(alternative, other)) || (matches(got, other) && matches(alternative, wanted));
    return both ? "right cause" : "wrong cause";
  }
  return matches(got, wanted) ? "right cause" : "wrong cause";
}

/** Whether a cause is the one expected: its kind, and its subject, action and detail where the case gives them. */
function matches(got: VerdictCause, wanted: NonNullable<ExpectedVerdict["cause"]>): boolean {
  return (
    got.kind === wanted.kind &&
    (wanted.action === undefined || got.action === wanted.action) &&
    (wanted.subject === undefined || got.subject === wanted.subject) &&
    (wanted.detailPattern === undefined || new RegExp(wanted.detailPattern, "i").test(got.detail ?? ""))
  );
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");
}

/** The table `pes eval` prints: one row per case, then the counts. */
export function renderEvalTable(cases: readonly EvalCase[]): string {
  const rows = cases.map((item) => [
    item.ok ? "ok" : "WRONG",
    item.name,
    item.expected.conclusion,
    item.verdict.conclusion,
    item.cause,
    item.mitigationsFit === undefined ? "-" : item.mitigationsFit ? "fit" : "do not fit",
  ]);
  const header = ["", "case", "expected", "got", "cause", "mitigations"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    `${cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd()}\n`;
  const count = (outcome: CauseOutcome) => cases.filter((item) => item.cause === outcome).length;
  const withMitigations = cases.filter((item) => item.mitigationsFit !== undefined);
  const summary =
    `${cases.length} cases: ${count("right cause")} right cause, ${count("wrong cause")} wrong cause, ${count("no cause")} no cause` +
    `, ${withMitigations.filter((item) => item.mitigationsFit === true).length}/${withMitigations.length} mitigations fit` +
    `; ${cases.filter((item) => !item.ok).length} wrong\n`;
  return `${line(header)}${rows.map(line).join("")}${summary}`;
}
