import { formatClock, formatPeriodBefore, formatRatio, type ActionOutcome } from "@pes/connectors";

/** One action's outcome with what the sentences need to name it. */
export interface ActionFinding {
  /** The action's title, templated. */
  title: string;
  /** The title of the gadget the action belongs to, templated. */
  gadgetTitle: string;
  outcome: ActionOutcome;
}

export interface ExecutionSummaryInput {
  /** The issue time. */
  time: Date;
  attributes: Readonly<Record<string, string>>;
  /** The playbook's window before the issue, in ms: the period the findings were compared with. */
  baselineMs: number;
  /** Every action's finding, in playbook order. */
  findings: readonly ActionFinding[];
}

const MAX_ATTRIBUTES_SHOWN = 5;
const MAX_ATTRIBUTE_CHARS = 64;

/**
 * One sentence on a gadget's actions, abnormal findings first (strongest first), then what was within
 * its usual range, other answers, skipped and failed actions. E.g. "p99 latency rose 4.1× since 14:05 UTC;
 * error rate within its usual range." Pure: the same findings always give the same sentence.
 */
export function summarizeGadget(findings: readonly ActionFinding[], time: Date): string {
  const groups = group(findings);
  const { abnormal, compared, answered, skipped, failed } = groups;
  if (abnormal.length + answered.length + skipped.length + failed.length === 0 && compared.length > 0) {
    return compared.length === 1
      ? `${compared[0]?.title ?? ""} within its usual range.`
      : `All ${compared.length} actions within their usual range.`;
  }
  const parts = abnormal.map((finding) => `${finding.title} ${movement(finding.outcome, time)}`);
  if (compared.length > 0) {
    parts.push(`${listOf(compared.map((finding) => finding.title))} within ${compared.length === 1 ? "its" : "their"} usual range`);
  }
  parts.push(...answered.map((finding) => clause(finding.outcome.shortAnswer)));
  parts.push(...skipped.map((finding) => clause(finding.outcome.shortAnswer)));
  if (failed.length > 0) {
    const total = findings.length;
    parts.push(
      `${failed.length} of ${total} action${total === 1 ? "" : "s"} failed: ${failed.map((finding) => clause(finding.outcome.shortAnswer)).join("; ")}`,
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
  const period = formatPeriodBefore(input.baselineMs);
  const { abnormal, compared, answered, skipped, failed } = group(findings);
  const scope = attributeText(input.attributes);
  const opening = `Around ${formatClock(time)}${scope === "" ? "" : ` for ${scope}`}`;
  const sentences: string[] = [];

  const [strongest, ...others] = abnormal;
  if (strongest === undefined) {
    sentences.push(`${opening}: ${compared.length + answered.length > 0 ? "nothing abnormal found" : "nothing could be checked"}.`);
  } else {
    sentences.push(`${opening}: ${level(strongest, period, time)}.`);
    if (others.length > 0) sentences.push(`Also abnormal: ${others.map((finding) => level(finding, period, time)).join("; ")}.`);
    const first = firstSymptom(abnormal, time);
    if (first !== undefined) sentences.push(first);
  }
  if (compared.length > 0) sentences.push(`Within usual range: ${compared.map((finding) => finding.title).join(", ")}.`);
  if (answered.length > 0) sentences.push(`Other findings: ${answered.map((finding) => clause(finding.outcome.shortAnswer)).join("; ")}.`);
  if (failed.length > 0) sentences.push(`Could not check: ${failed.map(withReason).join("; ")}.`);
  if (skipped.length > 0) sentences.push(`Not run: ${skipped.map(withReason).join("; ")}.`);
  return sentences.join(" ");
}

interface Groups {
  /** Strongest first; ties keep playbook order. */
  abnormal: ActionFinding[];
  /** Normal after a comparison with the baseline. */
  compared: ActionFinding[];
  /** Normal answers without a baseline (instant values, HTTP answers, no data). */
  answered: ActionFinding[];
  skipped: ActionFinding[];
  failed: ActionFinding[];
}

function group(findings: readonly ActionFinding[]): Groups {
  const groups: Groups = { abnormal: [], compared: [], answered: [], skipped: [], failed: [] };
  for (const finding of findings) {
    const { status, ratio } = finding.outcome;
    if (status === "abnormal") groups.abnormal.push(finding);
    else if (status === "normal") (ratio === undefined ? groups.answered : groups.compared).push(finding);
    else groups[status].push(finding);
  }
  // Array.prototype.sort is stable, so equal severities stay in playbook order.
  groups.abnormal.sort((a, b) => compareSeverity(b.outcome.severity, a.outcome.severity));
  return groups;
}

/** "rose 4.1× since 14:05 UTC", "fell to 0.25×", "rose from zero": the gadget-level wording. */
function movement(outcome: ActionOutcome, time: Date): string {
  const since = outcome.since === undefined ? "" : ` since ${formatClock(outcome.since, time)}`;
  const { ratio } = outcome;
  if (ratio === undefined || Number.isNaN(ratio)) return `abnormal${since}`;
  if (ratio === Infinity) return `rose from zero${since}`;
  if (ratio > 1) return `rose ${formatRatio(ratio)}×${since}`;
  if (ratio > 0) return `fell to ${formatRatio(ratio)}×${since}`;
  if (ratio === 0) return `fell to zero${since}`;
  return `changed sign${since}`;
}

/** "p99 latency 4.1× its level in the hour before (Checkout latency), since 14:05 UTC". */
function level(finding: ActionFinding, period: string, time: Date): string {
  const { outcome, title, gadgetTitle } = finding;
  const { ratio } = outcome;
  let change: string;
  if (ratio === undefined || Number.isNaN(ratio)) change = "abnormal";
  else if (ratio === Infinity) change = `up from zero in ${period}`;
  else if (ratio > 1) change = `${formatRatio(ratio)}× its level in ${period}`;
  else if (ratio > 0) change = `down to ${formatRatio(ratio)}× its level in ${period}`;
  else if (ratio === 0) change = `down to zero from its level in ${period}`;
  else change = `changed sign against ${period}`;
  const gadget = gadgetTitle === title ? "" : ` (${gadgetTitle})`;
  const since = outcome.since === undefined ? "" : `, since ${formatClock(outcome.since, time)}`;
  return `${title} ${change}${gadget}${since}`;
}

/**
 * The earliest start among abnormal findings, when several are dated and one came first: a symptom that
 * precedes the others is the likely place to look for the cause.
 */
function firstSymptom(abnormal: readonly ActionFinding[], time: Date): string | undefined {
  const dated = abnormal.filter((finding) => finding.outcome.since !== undefined);
  if (dated.length < 2) return undefined;
  const earliest = Math.min(...dated.map((finding) => finding.outcome.since?.getTime() ?? Infinity));
  const first = dated.filter((finding) => finding.outcome.since?.getTime() === earliest);
  const clock = formatClock(new Date(earliest), time);
  if (first.length === dated.length) return `All of them started together at ${clock}.`;
  const names = listOf(first.map((finding) => (finding.gadgetTitle === finding.title ? finding.title : `${finding.title} (${finding.gadgetTitle})`)));
  return first.length === 1
    ? `First symptom: ${names} at ${clock}, before the others: the likely place to look for the cause.`
    : `First symptoms: ${names} at ${clock}, before the others: the likely place to look for the cause.`;
}

/** "Deploy status (timed out after 15 s)": the failure reason without the repeated title. */
function withReason(finding: ActionFinding): string {
  const prefix = `${finding.title}: `;
  const text = clause(finding.outcome.shortAnswer);
  // A skipped action's answer starts "not run, …": under "Not run:" that would say it twice.
  return text.startsWith(prefix) ? `${finding.title} (${text.slice(prefix.length).replace(/^not run, /, "")})` : text;
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

/** A short answer as a clause inside a sentence: no trailing period. */
function clause(text: string): string {
  return text.trim().replace(/[.\s]+$/, "");
}

function compareSeverity(a: number | undefined, b: number | undefined): number {
  const x = a ?? 0;
  const y = b ?? 0;
  return x === y ? 0 : x < y ? -1 : 1;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
