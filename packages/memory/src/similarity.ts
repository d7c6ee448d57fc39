import type { HistoryDifference, HistoryMatch } from "@pes/contracts";
import type { Fingerprint } from "./fingerprint.js";

/**
 * One part of a fingerprint: its field (as a history entry names it), its value, and its weight in the
 * similarity. The cause's subject weighs most (the same object failing again), then its kind; a log
 * template or an alert says more than a symptom's kind; the playbook and attributes little (most
 * executions of a service share them).
 */
export interface Part {
  field: string;
  value: string;
  weight: number;
  /** Identifies the incident (a cause, a symptom, a template, an alert) rather than where it happened. */
  incident: boolean;
  /** Kept in the index (the conclusion is not: it would list every execution). */
  indexed: boolean;
}

export const WEIGHTS = {
  causeKind: 3,
  causeSubject: 5,
  causeDetail: 2,
  conclusion: 1,
  symptomKind: 1,
  template: 2,
  alert: 2,
  playbook: 1,
  attribute: 1,
} as const;

/** Every part of a fingerprint, in the order a history entry lists them. */
export function partsOf(fingerprint: Fingerprint): Part[] {
  const parts: Part[] = [];
  const add = (field: string, value: string, weight: number, incident: boolean, indexed = true) => parts.push({ field, value, weight, incident, indexed });
  const { cause } = fingerprint;
  if (cause !== undefined) {
    add("cause.kind", cause.kind, WEIGHTS.causeKind, true);
    if (cause.subject !== undefined) add("cause.subject", cause.subject, WEIGHTS.causeSubject, true);
    if (cause.detail !== undefined) add("cause.detail", cause.detail, WEIGHTS.causeDetail, true);
  }
  add("conclusion", fingerprint.conclusion, WEIGHTS.conclusion, false, false);
  for (const kind of fingerprint.symptoms) add("symptom.kind", kind, WEIGHTS.symptomKind, true);
  for (const template of fingerprint.templates) add("log-template", template, WEIGHTS.template, true);
  for (const alert of fingerprint.alerts) add("alert", alert, WEIGHTS.alert, true);
  add("playbook", fingerprint.playbook, WEIGHTS.playbook, false);
  for (const [name, value] of Object.entries(fingerprint.attributes)) add(`attribute.${name}`, value, WEIGHTS.attribute, false);
  return parts;
}

/** A part's identity: its field and value. */
export function partKey(part: Pick<Part, "field" | "value">): string {
  return `${part.field}\u0000${part.value}`;
}

/** How a past fingerprint compares with this one's. */
export interface Comparison {
  /** Σ weights of the parts both have ÷ Σ weights of the parts either has (weighted Jaccard), 0 to 1. */
  similarity: number;
  /** Both share a part that identifies the incident, not only where it happened. */
  sharesIncident: boolean;
  matched: HistoryMatch[];
  differed: HistoryDifference[];
}

/**
 * Compares a past fingerprint (`then`) with this one's (`now`), part by part: the parts both have are
 * matched; a field with a value on one side only, or other values on each, differs (`now`, `then`).
 */
export function compare(now: Fingerprint, then: Fingerprint): Comparison {
  return compareParts(partsOf(now), partsOf(then));
}

/** compare, of parts already made (a recall makes its own once for every candidate). */
export function compareParts(nowParts: readonly Part[], thenParts: readonly Part[]): Comparison {
  const thenKeys = new Set(thenParts.map(partKey));
  const nowKeys = new Set(nowParts.map(partKey));
  let shared = 0;
  let union = 0;
  let sharesIncident = false;
  const matched: HistoryMatch[] = [];
  for (const part of nowParts) {
    union += part.weight;
    if (thenKeys.has(partKey(part))) {
      shared += part.weight;
      sharesIncident ||= part.incident;
      matched.push({ field: part.field, value: part.value });
    }
  }
  for (const part of thenParts) if (!nowKeys.has(partKey(part))) union += part.weight;
  return { similarity: union === 0 ? 0 : shared / union, sharesIncident, matched, differed: differences(nowParts, thenParts, nowKeys, thenKeys) };
}

/** The fields whose parts differ: a single-valued field once (now, then); a listed one per value. */
function differences(nowParts: readonly Part[], thenParts: readonly Part[], nowKeys: ReadonlySet<string>, thenKeys: ReadonlySet<string>): HistoryDifference[] {
  const onlyNow = nowParts.filter((part) => !thenKeys.has(partKey(part)));
  const onlyThen = thenParts.filter((part) => !nowKeys.has(partKey(part)));
  const fields = [...new Set([...onlyNow, ...onlyThen].map((part) => part.field))];
  return fields.flatMap((field): HistoryDifference[] => {
    const nows = onlyNow.filter((part) => part.field === field).map((part) => part.value);
    const thens = onlyThen.filter((part) => part.field === field).map((part) => part.value);
    if (nows.length <= 1 && thens.length <= 1)
      return [{ field, ...(nows[0] === undefined ? {} : { now: nows[0] }), ...(thens[0] === undefined ? {} : { past: thens[0] }) }];
    return [...nows.map((now) => ({ field, now })), ...thens.map((then) => ({ field, past: then }))];
  });
}
