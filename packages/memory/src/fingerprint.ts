import type { Verdict, VerdictFinding } from "@pes/contracts";
import { z } from "zod";
import { normaliseDetail, normaliseSubject } from "./normalisation.js";

/** The version of the stored fingerprint's format: a reader skips one it does not know. */
export const FINGERPRINT_VERSION = 1;

/**
 * What is remembered of a finished execution: its verdict reduced to what identifies the incident (the
 * cause's kind, subject and detail normalised; the symptoms' kinds; its log templates; its alerts), the
 * playbook and the issue's attributes, with its issue time, its teams and its page. Stored as JSON
 * (`memory:<execution id>`), so every field is short.
 */
export const Fingerprint = z.object({
  v: z.literal(FINGERPRINT_VERSION),
  id: z.string().min(1),
  /** The issue time (epoch ms): what "when it happened" means. */
  at: z.number(),
  playbook: z.string(),
  conclusion: z.string(),
  cause: z.object({ kind: z.string(), subject: z.string().optional(), detail: z.string().optional() }).optional(),
  /** The symptoms' kinds (the cause's among them when it is one), each once, sorted. */
  symptoms: z.array(z.string()),
  /** The log patterns among the symptoms and the cause, masked, each once, sorted. */
  templates: z.array(z.string()),
  /** The alerts that paged or fired as symptoms, by name, each once, sorted. */
  alerts: z.array(z.string()),
  /** The attributes, their values normalised as subjects are. */
  attributes: z.record(z.string(), z.string()),
  /** The teams the execution belongs to; absent: the whole organization's. */
  teams: z.array(z.string()).optional(),
  pageUrl: z.string().optional(),
});
export type Fingerprint = z.infer<typeof Fingerprint>;

/** A finished execution, as fingerprintOf reads it. */
export interface RememberedExecution {
  executionId: string;
  playbook: string;
  /** The issue time. */
  at: Date;
  attributes: Readonly<Record<string, string>>;
  verdict: Verdict;
  teams?: readonly string[];
  pageUrl?: string;
}

/** At most this many symptoms' kinds, templates and alerts each: an incident with a hundred symptoms stays one small key. */
const MAX_LISTED = 12;

/** The fingerprint of a finished execution (see Fingerprint). Pure: the same execution gives the same fingerprint. */
export function fingerprintOf(execution: RememberedExecution): Fingerprint {
  const { verdict } = execution;
  const cause = verdict.cause;
  const findings = [...(cause === undefined ? [] : [cause]), ...verdict.symptoms];
  const alerts = [...(verdict.paged ?? []), ...findings].filter((finding) => finding.kind === "alert" && finding.detail !== undefined);
  const teams = execution.teams === undefined || execution.teams.length === 0 ? undefined : sortedUnique(execution.teams, Number.POSITIVE_INFINITY);
  return {
    v: FINGERPRINT_VERSION,
    id: execution.executionId,
    at: execution.at.getTime(),
    playbook: execution.playbook,
    conclusion: verdict.conclusion,
    ...(cause === undefined ? {} : { cause: causeOf(cause) }),
    symptoms: sortedUnique(
      verdict.symptoms.map((symptom) => symptom.kind),
      MAX_LISTED,
    ),
    templates: sortedUnique(
      findings.filter((finding) => finding.kind === "log-pattern" && finding.detail !== undefined).map((finding) => normaliseDetail(finding.detail ?? "")),
      MAX_LISTED,
    ),
    alerts: sortedUnique(
      alerts.map((alert) => (alert.detail ?? "").trim()),
      MAX_LISTED,
    ),
    attributes: Object.fromEntries(
      Object.entries(execution.attributes)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => [name, normaliseSubject(value)]),
    ),
    ...(teams === undefined ? {} : { teams }),
    ...(execution.pageUrl === undefined ? {} : { pageUrl: execution.pageUrl }),
  };
}

function causeOf(cause: VerdictFinding): NonNullable<Fingerprint["cause"]> {
  return {
    kind: cause.kind,
    ...(cause.subject === undefined ? {} : { subject: normaliseSubject(cause.subject) }),
    ...(cause.detail === undefined ? {} : { detail: normaliseDetail(cause.detail) }),
  };
}

function sortedUnique(values: readonly string[], max: number): string[] {
  return [...new Set(values.filter((value) => value !== ""))].sort().slice(0, max);
}

/**
 * What the fingerprints of one incident share, by which its occurrences are counted: the cause's kind and
 * subject when there is a cause; else the playbook, alerts, log templates and symptoms' kinds.
 */
export function groupOf(fingerprint: Fingerprint): string {
  const { cause } = fingerprint;
  if (cause !== undefined) return JSON.stringify(["cause", cause.kind, cause.subject ?? ""]);
  return JSON.stringify(["symptoms", fingerprint.playbook, fingerprint.alerts, fingerprint.templates, fingerprint.symptoms]);
}
