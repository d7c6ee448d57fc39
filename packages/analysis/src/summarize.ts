import type { Evidence } from "./evidence.js";
import { missingText, shortAnswer, symptomLevel, symptomMovement, type SymptomEvidence } from "./evidence-text.js";
import { formatClock } from "./human-format.js";
import { truncate } from "./outcome-text.js";

/** One action's evidence, with the (templated) title of the gadget it belongs to. */
export interface Finding {
  gadget: string;
  evidence: Evidence;
}

export interface ExecutionSummaryInput {
  /** The issue time. */
  time: Date;
  attributes: Readonly<Record<string, string>>;
  /** Every action's finding, in playbook order. */
  findings: readonly Finding[];
}

const MAX_ATTRIBUTES_SHOWN = 5;
const MAX_ATTRIBUTE_CHARS = 64;

/**
 * One sentence on a gadget's actions, abnormal findings first (strongest first), then what was within
 * its usual range, other answers, skipped and failed actions. E.g. "p99 latency rose 4.1× since 14:05 UTC;
 * error rate within its usual range." Pure: the same findings always give the same sentence.
 */
export function summarizeGadget(findings: readonly Finding[], time: Date): string {
  const { abnormal, compared, answered, skipped, failed } = group(findings);
  if (abnormal.length + answered.length + skipped.length + failed.length === 0 && compared.length > 0) {
    return compared.length === 1
      ? `${compared[0]?.evidence.action ?? ""} within its usual range.`
      : `All ${compared.length} actions within their usual range.`;
  }
  const parts = abnormal.map((finding) => symptomMovement(finding.evidence, time));
  if (compared.length > 0) {
    parts.push(`${listOf(compared.map((finding) => finding.evidence.action))} within ${compared.length === 1 ? "its" : "their"} usual range`);
  }
  parts.push(...answered.map((finding) => clause(shortAnswer(finding.evidence, time))));
  parts.push(...skipped.map((finding) => clause(shortAnswer(finding.evidence, time))));
  if (failed.length > 0) {
    const total = findings.length;
    parts.push(
      `${failed.length} of ${total} action${total === 1 ? "" : "s"} failed: ${failed.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}`,
    );
  }
  return `${parts.join("; ")}.`;
}

/**
 * The bottom line of an execution: what was abnormal around the issue time, strongest first, with when it
 * started; which abnormal finding came first (the likely place to look for the cause); then what was
 * normal, other answers, and what could not be checked. Pure and deterministic.
 */
export function summarizeExecution(input: ExecutionSummaryInput): string {
  const { time, findings } = input;
  const { abnormal, compared, answered, skipped, failed } = group(findings);
  const scope = attributeText(input.attributes);
  const opening = `Around ${formatClock(time)}${scope === "" ? "" : ` for ${scope}`}`;
  const sentences: string[] = [];

  const [strongest, ...others] = abnormal;
  if (strongest === undefined) {
    sentences.push(`${opening}: ${compared.length + answered.length > 0 ? "nothing abnormal found" : "nothing could be checked"}.`);
  } else {
    sentences.push(`${opening}: ${symptomLevel(strongest.evidence, strongest.gadget, time)}.`);
    if (others.length > 0) sentences.push(`Also abnormal: ${others.map((finding) => symptomLevel(finding.evidence, finding.gadget, time)).join("; ")}.`);
    const first = firstSymptom(abnormal, time);
    if (first !== undefined) sentences.push(first);
  }
  if (compared.length > 0) sentences.push(`Within usual range: ${compared.map((finding) => finding.evidence.action).join(", ")}.`);
  if (answered.length > 0) sentences.push(`Other findings: ${answered.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}.`);
  if (failed.length > 0) sentences.push(`Could not check: ${failed.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  if (skipped.length > 0) sentences.push(`Not run: ${skipped.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  return sentences.join(" ");
}

interface Symptom {
  gadget: string;
  evidence: SymptomEvidence;
}

interface Groups {
  /** Strongest first; ties keep playbook order. */
  abnormal: Symptom[];
  /** Normal after a comparison with the baseline. */
  compared: Finding[];
  /** Answers without a baseline (instant values, plain answers, changes, events, no data). */
  answered: Finding[];
  skipped: Finding[];
  failed: Finding[];
}

function group(findings: readonly Finding[]): Groups {
  const groups: Groups = { abnormal: [], compared: [], answered: [], skipped: [], failed: [] };
  for (const finding of findings) {
    const { evidence } = finding;
    switch (evidence.kind) {
      case "metric":
      case "log-pattern":
        if (evidence.abnormal) groups.abnormal.push({ gadget: finding.gadget, evidence });
        else groups.compared.push(finding);
        break;
      case "alert":
        groups.abnormal.push({ gadget: finding.gadget, evidence });
        break;
      case "event":
        if (evidence.warning) groups.abnormal.push({ gadget: finding.gadget, evidence });
        else groups.answered.push(finding);
        break;
      case "failed":
        groups.failed.push(finding);
        break;
      case "skipped":
        groups.skipped.push(finding);
        break;
      default:
        groups.answered.push(finding);
    }
  }
  // Array.prototype.sort is stable, so equal severities stay in playbook order.
  groups.abnormal.sort((a, b) => compareNumbers(severityOf(b.evidence), severityOf(a.evidence)));
  return groups;
}

/** How far from normal, for ranking: measured for metrics and log patterns, 0 for the rest. */
function severityOf(evidence: SymptomEvidence): number {
  return evidence.kind === "metric" || evidence.kind === "log-pattern" ? evidence.severity : 0;
}

/**
 * The earliest start among abnormal findings, when several are dated and one came first: a symptom that
 * precedes the others is the likely place to look for the cause.
 */
function firstSymptom(abnormal: readonly Symptom[], time: Date): string | undefined {
  const dated = abnormal.filter((finding) => finding.evidence.onset !== undefined);
  if (dated.length < 2) return undefined;
  const earliest = Math.min(...dated.map((finding) => finding.evidence.onset?.getTime() ?? Infinity));
  const first = dated.filter((finding) => finding.evidence.onset?.getTime() === earliest);
  const clock = formatClock(new Date(earliest), time);
  if (first.length === dated.length) return `All of them started together at ${clock}.`;
  const names = listOf(first.map(({ evidence, gadget }) => (gadget === evidence.action ? evidence.action : `${evidence.action} (${gadget})`)));
  return first.length === 1
    ? `First symptom: ${names} at ${clock}, before the others: the likely place to look for the cause.`
    : `First symptoms: ${names} at ${clock}, before the others: the likely place to look for the cause.`;
}

/** "Deploy status (timed out after 15 s)", "Pods of {{pod}} (the issue has no attribute pod)". */
function withReason(evidence: Evidence): string {
  if (evidence.kind === "failed") return `${evidence.action} (${clause(truncate(evidence.reason))})`;
  if (evidence.kind === "skipped") return `${evidence.action} (${missingText(evidence.missing)})`;
  return evidence.action;
}

function attributeText(attributes: Readonly<Record<string, string>>): string {
  const names = Object.keys(attributes).sort(compareText);
  const shown = names.slice(0, MAX_ATTRIBUTES_SHOWN).map((name) => {
    const value = attributes[name] ?? "";
    return `${name}=${value.length > MAX_ATTRIBUTE_CHARS ? `${value.slice(0, MAX_ATTRIBUTE_CHARS - 1)}…` : value}`;
  });
  const more = names.length > MAX_ATTRIBUTES_SHOWN ? ` and ${names.length - MAX_ATTRIBUTES_SHOWN} more` : "";
  return `${shown.join(", ")}${more}`;
}

/** "a", "a and b", "a, b and c". */
function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1] ?? ""}`;
}

/** A sentence as a clause inside a sentence: no trailing period. */
function clause(text: string): string {
  return text.trim().replace(/[.\s]+$/, "");
}

function compareNumbers(a: number, b: number): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
