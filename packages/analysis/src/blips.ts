import type { SymptomEvidence } from "./evidence.js";

/**
 * How long an abnormal move may last, from its onset to its end, and still be a blip: a probe failing one
 * scrape, an error spike that rate() smears over a few minutes. A blip is a symptom (it happened) but not
 * a cause candidate: something that was over that quickly does not explain an incident, and naming it
 * would give a confident cause to what may be nothing.
 */
export const BLIP_MS = 5 * 60_000;

/** Whether a symptom is a blip: a metric whose abnormal move began and was over within BLIP_MS. */
export function isBlip(evidence: SymptomEvidence): boolean {
  return (
    evidence.kind === "metric" &&
    evidence.onset !== undefined &&
    evidence.endedAt !== undefined &&
    evidence.endedAt.getTime() - evidence.onset.getTime() <= BLIP_MS
  );
}
