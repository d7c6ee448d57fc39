import type { Finding } from "../ranking.js";
import { bottomLineOf } from "../summarize.js";
import { judgeExecution } from "../verdict.js";

/** The bottom line of findings, as the worker writes it: judged, then rendered (for tests of the words). */
export function summarizeExecution(input: {
  time: Date;
  attributes: Readonly<Record<string, string>>;
  findings: readonly Finding[];
  lookbackMs?: number;
}): string {
  const judgement = judgeExecution(input.findings, {
    time: input.time,
    attributes: input.attributes,
    ...(input.lookbackMs === undefined ? {} : { lookbackMs: input.lookbackMs }),
  });
  return bottomLineOf(judgement, input.attributes);
}
