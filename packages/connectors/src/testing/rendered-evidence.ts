import { shortAnswer, type Evidence } from "@pes/analysis";

/** What a result shows of an evidence: its kind, its short answer as the engine renders it, its link. */
export interface RenderedEvidence {
  kind: Evidence["kind"];
  shortAnswer: string;
  link?: string;
}

/**
 * An evidence as an execution result shows it, for connector tests that assert the words a person reads:
 * rendered with the analysis's `shortAnswer` at the issue time `time`.
 */
export function rendered(evidence: Evidence, time: Date): RenderedEvidence {
  return { kind: evidence.kind, shortAnswer: shortAnswer(evidence, time), ...(evidence.link === undefined ? {} : { link: evidence.link }) };
}
