import type { FailedEvidence, NoDataEvidence, SkippedEvidence, SymptomEvidence } from "./evidence.js";
import { describeChange, missingText, noDataWhen, shortAnswer, symptomLevel, symptomMovement } from "./evidence-text.js";
import { formatClock, formatDuration } from "./human-format.js";
import { truncate } from "./outcome-text.js";
import { rankFindings, roleOf, type Finding, type Ranking } from "./ranking.js";

export interface ExecutionSummaryInput {
  /** The issue time. */
  time: Date;
  attributes: Readonly<Record<string, string>>;
  /** Every action's finding, in playbook order. */
  findings: readonly Finding[];
  /** How long before the first symptom a change counts as its likely cause; default 30 min. */
  changeLookbackMs?: number;
}

const MAX_ATTRIBUTES_SHOWN = 5;
const MAX_ATTRIBUTE_CHARS = 64;

/**
 * One sentence on a gadget's actions: symptoms first (strongest first), then what was within its usual
 * range, answers and changes, what found no data, skipped and failed actions. E.g. "p99 latency rose 4.1×
 * since 14:05 UTC; error rate within its usual range." Pure: the same findings always give the same sentence.
 */
export function summarizeGadget(findings: readonly Finding[], time: Date): string {
  const ranking = rankFindings(findings, { time });
  const { symptoms, noData, skipped, failed } = ranking;
  const normal = ranking.normal.filter((finding) => finding.evidence.kind !== "none");
  // Answers, changes and what was looked for and not found read in playbook order, as the gadget lists them.
  const context = findings.filter((finding) => {
    const role = roleOf(finding.evidence);
    return role === "answer" || role === "change" || finding.evidence.kind === "none";
  });
  if (symptoms.length + context.length + noData.length + skipped.length + failed.length === 0 && normal.length > 0) {
    return normal.length === 1 ? `${normal[0]?.evidence.action ?? ""} within its usual range.` : `All ${normal.length} actions within their usual range.`;
  }
  const parts = symptoms.map((finding) => symptomMovement(finding.evidence, time));
  if (normal.length > 0) {
    parts.push(`${listOf(normal.map((finding) => finding.evidence.action))} within ${normal.length === 1 ? "its" : "their"} usual range`);
  }
  parts.push(...[...context, ...noData, ...skipped].map((finding) => clause(shortAnswer(finding.evidence, time))));
  if (failed.length > 0) {
    const total = findings.length;
    parts.push(
      `${failed.length} of ${total} action${total === 1 ? "" : "s"} failed: ${failed.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}`,
    );
  }
  return `${parts.join("; ")}.`;
}

/**
 * The bottom line of an execution. It leads with the likely cause when a change (deploy, config, restart)
 * came shortly before the first symptom; else with the strongest symptom, then the others and the one
 * that came first (the likely place to look for the cause). Then other changes, what was normal, other
 * answers, what found no data, what failed and what was not run. When nothing could be checked it says
 * so, and why: no data is not "normal". Pure and deterministic.
 */
export function summarizeExecution(input: ExecutionSummaryInput): string {
  const { time } = input;
  const ranking = rankFindings(input.findings, {
    time,
    ...(input.changeLookbackMs === undefined ? {} : { changeLookbackMs: input.changeLookbackMs }),
  });
  const { symptoms, likelyCause, changes, normal, answers, noData, failed, skipped } = ranking;
  const scope = attributeText(input.attributes);
  const opening = `Around ${formatClock(time)}${scope === "" ? "" : ` for ${scope}`}`;
  const level = (finding: Finding<SymptomEvidence>) => symptomLevel(finding.evidence, finding.gadget, time);
  const sentences: string[] = [];

  let noDataTold = false;
  const [strongest, ...others] = symptoms;
  if (likelyCause !== undefined) {
    sentences.push(...causeSentences(ranking, likelyCause, opening, time));
  } else if (strongest !== undefined) {
    sentences.push(`${opening}: ${level(strongest)}.`);
    if (others.length > 0) sentences.push(`Also abnormal: ${others.map(level).join("; ")}.`);
    const first = firstSymptom(ranking, time);
    if (first !== undefined) sentences.push(first);
  } else if (normal.length + answers.length + changes.length > 0) {
    sentences.push(`${opening}: nothing abnormal found.`);
  } else if (noData.length > 0) {
    noDataTold = true;
    sentences.push(`${opening}: nothing could be checked: ${noDataGroups(noData, time, "found no data ")}.`);
  } else {
    sentences.push(`${opening}: nothing could be checked.`);
  }
  if (changes.length > 0) {
    sentences.push(`${likelyCause === undefined ? "Changes" : "Other changes"}: ${changes.map((finding) => describeChange(finding.evidence, time)).join("; ")}.`);
  }
  const measured = normal.filter((finding) => finding.evidence.kind !== "none");
  const notFound = normal.filter((finding) => finding.evidence.kind === "none");
  if (measured.length > 0) sentences.push(`Within usual range: ${measured.map((finding) => finding.evidence.action).join(", ")}.`);
  if (notFound.length > 0) sentences.push(`Found none: ${notFound.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}.`);
  if (answers.length > 0) sentences.push(`Other findings: ${answers.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}.`);
  if (noData.length > 0 && !noDataTold) sentences.push(`No data: ${noDataGroups(noData, time, "")}.`);
  if (failed.length > 0) sentences.push(`Could not check: ${failed.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  if (skipped.length > 0) sentences.push(`Not run: ${skipped.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  return sentences.join(" ");
}

/**
 * "…: likely cause: deploy v1.2.3 of checkout at 14:01 UTC, 4 min before the first symptom (p99 latency
 * rose 4.1× since 14:05 UTC). Also abnormal: …": the change, how long before the first symptom, which
 * symptom that was, then the other symptoms strongest first.
 */
function causeSentences(ranking: Ranking, likelyCause: NonNullable<Ranking["likelyCause"]>, opening: string, time: Date): string[] {
  const { first, symptoms } = ranking;
  const change = describeChange(likelyCause.finding.evidence, time);
  const lead = likelyCause.leadMs === 0 ? undefined : formatDuration(likelyCause.leadMs);
  const level = (finding: Finding<SymptomEvidence>) => symptomLevel(finding.evidence, finding.gadget, time);
  if (first === undefined) {
    // No symptom is dated: the issue time is all there is to compare the change with.
    const when = lead === undefined ? "at the issue time" : `${lead} before the issue`;
    return [`${opening}: likely cause: ${change}, ${when}.`, `Abnormal: ${symptoms.map(level).join("; ")}.`];
  }
  const which = first.symptoms.length === 1 ? "the first symptom" : "the first symptoms";
  const when = lead === undefined ? `as ${which} began` : `${lead} before ${which}`;
  const firstText = listOf(first.symptoms.map((finding) => symptomMovement(finding.evidence, time)));
  const sentences = [`${opening}: likely cause: ${change}, ${when} (${firstText}).`];
  const others = symptoms.filter((finding) => !first.symptoms.includes(finding));
  if (others.length > 0) sentences.push(`Also abnormal: ${others.map(level).join("; ")}.`);
  return sentences;
}

/**
 * The symptoms that began first, when several are dated and not all began together: a symptom that
 * precedes the others is the likely place to look for the cause.
 */
function firstSymptom(ranking: Ranking, time: Date): string | undefined {
  const { first, symptoms } = ranking;
  const dated = symptoms.filter((finding) => finding.evidence.onset !== undefined);
  if (first === undefined || dated.length < 2) return undefined;
  const clock = formatClock(first.at, time);
  if (first.symptoms.length === dated.length) return `All of them started together at ${clock}.`;
  const names = listOf(first.symptoms.map(({ evidence, gadget }) => (gadget === evidence.action ? evidence.action : `${evidence.action} (${gadget})`)));
  return first.symptoms.length === 1
    ? `First symptom: ${names} at ${clock}, before the others: the likely place to look for the cause.`
    : `First symptoms: ${names} at ${clock}, before the others: the likely place to look for the cause.`;
}

/**
 * No-data actions grouped by why, in playbook order: "p99 latency and error ratio found no data in the
 * window; request rate found no data after 13:54 UTC" (with `verb` "found no data "), or without the verb
 * under a "No data:" heading.
 */
function noDataGroups(noData: ReadonlyArray<Finding<NoDataEvidence>>, time: Date, verb: string): string {
  const groups = new Map<string, string[]>();
  for (const { evidence } of noData) {
    const when = noDataWhen(evidence, time);
    groups.set(when, [...(groups.get(when) ?? []), evidence.action]);
  }
  return [...groups].map(([when, actions]) => `${listOf(actions)} ${verb}${when}`).join("; ");
}

/** "Deploy status (timed out after 15 s)", "Pods of {{pod}} (the issue has no attribute pod)". */
function withReason(evidence: FailedEvidence | SkippedEvidence): string {
  return evidence.kind === "failed" ? `${evidence.action} (${clause(truncate(evidence.reason))})` : `${evidence.action} (${missingText(evidence.missing)})`;
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

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
