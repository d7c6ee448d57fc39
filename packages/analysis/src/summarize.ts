import { isBlip } from "./blips.js";
import type { ChangeEvidence, EventEvidence, Evidence, FailedEvidence, NoDataEvidence, SkippedEvidence, SymptomEvidence } from "./evidence.js";
import { describeChange, missingText, noDataWhen, normalEventsSummary, shortAnswer, symptomLevel, symptomMovement } from "./evidence-text.js";
import { formatClock, formatElapsed } from "./human-format.js";
import { truncate } from "./outcome-text.js";
import { compareText, listOf } from "./plain-text.js";
import { rankFindings, roleOf, type Finding, type LikelyCause, type RankedChange, type Ranking } from "./ranking.js";
import { ruledOutChanges, type Judgement } from "./verdict.js";

const MAX_ATTRIBUTES_SHOWN = 5;
const MAX_ATTRIBUTE_CHARS = 64;

/**
 * One sentence on a gadget's actions: symptoms first (strongest first), then what was within its usual
 * range, answers and changes, what found no data, skipped and failed actions. E.g. "p99 latency rose 4.1×
 * since 14:05 UTC; error rate within its usual range." Pure: the same findings always give the same sentence.
 */
export function summarizeGadget(findings: readonly Finding[], time: Date): string {
  const ranking = rankFindings(findings, { time });
  const { noData, skipped, failed } = ranking;
  // A gadget tells what each action saw: what was so before the incident too, after the incident's symptoms.
  const symptoms = [...ranking.symptoms, ...ranking.background];
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
  parts.push(...contextClauses([...context, ...noData, ...skipped], time));
  if (failed.length > 0) {
    const total = findings.length;
    parts.push(
      `${failed.length} of ${total} action${total === 1 ? "" : "s"} failed: ${failed.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}`,
    );
  }
  return `${parts.join("; ")}.`;
}

/**
 * The bottom line of a judgement, in words: the likely cause with the evidence behind it (or the two
 * its verdict cannot tell apart), the other symptoms, the changes ruled out and why, what was checked and
 * found normal, answers (context, never a judgement), what found no data, what failed and what was not
 * run. Every claim names the action that supports it by its title. With nothing abnormal it says so and
 * names no cause; when nothing could be checked it says so, and why: no data is not "normal". What it
 * concludes is the verdict's; the ranking gives the words for it.
 */
export function bottomLineOf(judgement: Judgement, attributes: Readonly<Record<string, string>>): string {
  const { time, verdict, ranking } = judgement;
  const { symptoms, background, changes, normal, answers, paged, noData, failed, skipped } = ranking;
  const likelyCause = verdict.conclusion === "no-cause" ? undefined : ranking.likelyCause;
  const rival = verdict.conclusion === "ambiguous" ? likelyCause?.rival : undefined;
  const ruledOut = ruledOutChanges(ranking);
  const scope = attributeText(attributes);
  const opening = `Around ${formatClock(time)}${scope === "" ? "" : ` for ${scope}`}`;
  const level = (finding: Finding<SymptomEvidence>) => symptomLevel(finding.evidence, finding.gadget, time);
  const sentences: string[] = [];
  /** The symptoms already named, so that no list repeats them. */
  const told = new Set<Evidence>();

  let noDataTold = false;
  const [strongest] = symptoms;
  if (likelyCause !== undefined) {
    sentences.push(causeSentence(ranking, likelyCause, rival, opening, time));
    const earlier = firstBeforeCause(ranking, likelyCause, time);
    if (earlier !== undefined) sentences.push(earlier);
    told.add(likelyCause.finding.evidence);
    if (rival !== undefined) told.add(rival.evidence);
    if (likelyCause.basis === "change") for (const finding of ranking.first?.symptoms ?? []) told.add(finding.evidence);
    if (likelyCause.basis === "node") for (const finding of [...likelyCause.confined, ...likelyCause.signals]) told.add(finding.evidence);
  } else if (strongest !== undefined) {
    sentences.push(`${opening}: ${level(strongest)}.`);
    told.add(strongest.evidence);
  } else if (paged.length > 0) {
    // The page says what the issue says: with nothing else abnormal, no cause was found, and what was checked follows.
    sentences.push(`${opening}: no cause found: nothing abnormal but the alert that paged (${paged.map(level).join("; ")}).`);
  } else if (background.length > 0) {
    sentences.push(`${opening}: nothing abnormal began near the issue time.`);
  } else if (normal.length > 0) {
    sentences.push(`${opening}: nothing abnormal found.`);
  } else if (answers.length + changes.length > 0) {
    // Answers and changes are context: without anything compared with a baseline there is no judgement.
    sentences.push(`${opening}: nothing was compared with a baseline, so nothing was judged normal or abnormal.`);
  } else if (noData.length > 0) {
    noDataTold = true;
    sentences.push(`${opening}: nothing could be checked: ${noDataGroups(noData, time, "found no data ")}.`);
  } else {
    sentences.push(`${opening}: nothing could be checked.`);
  }
  const others = symptoms.filter((finding) => !told.has(finding.evidence));
  const symptomTold = symptoms.some((finding) => told.has(finding.evidence));
  if (others.length > 0) sentences.push(`${symptomTold ? "Also abnormal" : "Abnormal"}: ${others.map(level).join("; ")}.`);
  if (paged.length > 0 && symptoms.length > 0) sentences.push(`Paged by: ${paged.map(level).join("; ")}.`);
  if (likelyCause === undefined) {
    // Said plainly: a blip could have been named as a cause, and is not one.
    const blips = symptoms.filter((finding) => isBlip(finding.evidence));
    if (blips.length > 0) {
      sentences.push(
        `No cause found: ${listOf(blips.map((finding) => finding.evidence.action))} ${blips.length === 1 ? "was" : "were"} over within minutes, too brief to explain it.`,
      );
    }
    const first = firstSymptom(ranking, time);
    if (first !== undefined) sentences.push(first);
  }
  if (background.length > 0)
    sentences.push(`Abnormal since before the incident (background, not counted as its symptoms): ${background.map(level).join("; ")}.`);
  if (ruledOut.length > 0) {
    sentences.push(
      `${likelyCause?.basis === "change" ? "Other changes" : "Changes"}: ${ruledOut.map((change) => changeWithVerdict(change, ranking, time)).join("; ")}.`,
    );
  }
  const measured = normal.filter((finding) => finding.evidence.kind !== "none");
  const notFound = normal.filter((finding) => finding.evidence.kind === "none");
  if (measured.length > 0) sentences.push(`Within usual range: ${measured.map((finding) => finding.evidence.action).join(", ")}.`);
  if (notFound.length > 0) sentences.push(`Found none: ${notFound.map((finding) => clause(shortAnswer(finding.evidence, time))).join("; ")}.`);
  if (answers.length > 0) sentences.push(`Other findings: ${contextClauses(answers, time).join("; ")}.`);
  if (noData.length > 0 && !noDataTold) sentences.push(`No data: ${noDataGroups(noData, time, "")}.`);
  if (failed.length > 0) sentences.push(`Could not check: ${failed.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  if (skipped.length > 0) sentences.push(`Not run: ${skipped.map((finding) => withReason(finding.evidence)).join("; ")}.`);
  return sentences.join(" ");
}

/**
 * "…: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), 4 min before the first symptom
 * (p99 latency rose 4.1× since 14:05 UTC)." or "…: likely cause: DB connections 3× its level in the hour
 * before (Database), since 13:50 UTC, 13 min before the next symptom."; with a rival, "…: two likely
 * causes, too close to tell apart: … and …", then the same.
 */
function causeSentence(ranking: Ranking, likelyCause: LikelyCause, rival: LikelyCause["rival"], opening: string, time: Date): string {
  const lead = likelyCause.leadMs === 0 ? undefined : formatElapsed(likelyCause.leadMs);
  // An upstream's symptom is named as the upstream's: it is where the cause lies, not what it looked like.
  const claimOf = ({ evidence, gadget, upstream }: Finding<ChangeEvidence> | Finding<SymptomEvidence>) =>
    `${upstream === undefined ? "" : `upstream ${upstream}, `}${evidence.kind === "change" ? changeClaim(evidence, time) : symptomLevel(evidence, gadget, time)}`;
  const named = `${opening}: ${rival === undefined ? "likely cause" : "two likely causes, too close to tell apart"}: ${claimOf(likelyCause.finding)}${
    rival === undefined ? "" : ` and ${claimOf(rival)}`
  }`;
  if (likelyCause.basis === "node") {
    // Where first, then what the node itself shows: the place is the claim, its signals the why.
    const { node, confined, signals } = likelyCause;
    const list = (findings: ReadonlyArray<Finding<SymptomEvidence>>) => listOf(findings.map((symptom) => claimOf(symptom)));
    return `${opening}: likely cause: ${node}: only the pods on ${node} are abnormal (${list(confined)}), and ${node} itself: ${list(signals)}.`;
  }
  if (likelyCause.basis === "latency") {
    // Where the slowdown begins, not why: the claim says so.
    const claims = rival === undefined ? `likely begins at ${claimOf(likelyCause.finding)}` : `begins at ${claimOf(likelyCause.finding)} or ${claimOf(rival)}`;
    const why =
      likelyCause.slowed === 1
        ? "the one service slowed"
        : `of ${likelyCause.slowed} services slowed, ${likelyCause.byGraph ? "by who calls whom, its slowdown explains the others'" : "it rose most against its normal"}`;
    return `${opening}: the slowdown ${claims}: ${why} (where it begins, not why).`;
  }
  if (likelyCause.basis === "fault") {
    // The state names the mechanism: what would undo it follows, for each fault named.
    const remedies = [likelyCause.finding, ...(rival === undefined ? [] : [rival])].flatMap(({ evidence }) =>
      evidence.kind === "fault" ? [evidence.remedy] : [],
    );
    return `${named}. ${remedies.map((remedy) => `${remedy}.`).join(" ")}`;
  }
  if (likelyCause.basis === "symptom") {
    // A rival symptom may be what began next: the lead then says nothing of what followed them both.
    if (rival !== undefined) return `${named}.`;
    return `${named}, ${lead === undefined ? "as other symptoms began" : `${lead} before the next symptom`}.`;
  }
  const { first } = ranking;
  if (first === undefined) {
    // No symptom is dated: the issue time is all there is to compare the change with.
    return `${named}, ${lead === undefined ? "at the issue time" : `${lead} before the issue`}.`;
  }
  const which = first.symptoms.length === 1 ? "the first symptom" : "the first symptoms";
  const when = lead === undefined ? `as ${which} began` : `${lead} before ${which}`;
  return `${named}, ${when} (${listOf(first.symptoms.map((finding) => symptomMovement(finding.evidence, time)))}).`;
}

/**
 * When the likely cause is a symptom and another began before it, says so: the cause's kind made it the
 * likelier cause, but what came first is still worth a look.
 */
function firstBeforeCause(ranking: Ranking, likelyCause: LikelyCause, time: Date): string | undefined {
  const { first } = ranking;
  const at = likelyCause.basis === "symptom" ? likelyCause.finding.evidence.onset : undefined;
  if (first === undefined || at === undefined || first.at.getTime() >= at.getTime()) return undefined;
  const names = listOf(first.symptoms.map(({ evidence, gadget }) => (gadget === evidence.action ? evidence.action : `${evidence.action} (${gadget})`)));
  return `It began after the first symptom${first.symptoms.length === 1 ? "" : "s"}: ${names} at ${formatClock(first.at, time)}.`;
}

/** "deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy)": a change, citing its action. */
function changeClaim(change: ChangeEvidence, time: Date): string {
  return `${describeChange(change, time)} (${change.action})`;
}

/** A change that is not the likely cause, and why not. */
function changeWithVerdict(change: RankedChange, ranking: Ranking, time: Date): string {
  const claim = changeClaim(change.evidence, time);
  const lead = formatElapsed(Math.abs(change.leadMs ?? 0));
  const first = (ranking.first?.symptoms.length ?? 1) > 1 ? "the first symptoms" : "the first symptom";
  switch (change.verdict) {
    case "no-symptom":
      return `${claim}, followed by nothing abnormal`;
    case "before-likely-cause":
      return `${claim}, before the likely cause`;
    case "after-first-symptom":
      return `${claim}, ${lead} after ${first}: not the cause`;
    case "long-before":
      return `${claim}, ${lead} before ${first}, too long before to be the cause`;
  }
}

/**
 * The symptoms of the incident that began first, when several are dated and not all began together and
 * no likely cause was named: the likely place to look for the cause.
 */
function firstSymptom(ranking: Ranking, time: Date): string | undefined {
  const { first, symptoms } = ranking;
  const dated = symptoms.filter((finding) => finding.evidence.onset !== undefined);
  if (first === undefined || dated.length < 2) return undefined;
  const clock = formatClock(first.at, time);
  if (first.symptoms.length === dated.length) return `All of them started together at ${clock}.`;
  const names = listOf(first.symptoms.map(({ evidence, gadget }) => (gadget === evidence.action ? evidence.action : `${evidence.action} (${gadget})`)));
  return `First symptom${first.symptoms.length === 1 ? "" : "s"}: ${names} at ${clock}, before the others: the likely place to look for the cause.`;
}

/**
 * Each finding's short answer as a clause, in order, but an action's several events that are not warnings
 * as one clause in the place of its first: their count and reasons (normalEventsSummary).
 */
function contextClauses(findings: readonly Finding[], time: Date): string[] {
  const normalEvents = new Map<string, EventEvidence[]>();
  for (const { evidence } of findings) {
    if (evidence.kind === "event" && !evidence.warning) normalEvents.set(evidence.action, [...(normalEvents.get(evidence.action) ?? []), evidence]);
  }
  return findings.flatMap(({ evidence }) => {
    const events = evidence.kind === "event" && !evidence.warning ? (normalEvents.get(evidence.action) ?? []) : [];
    if (events.length < 2) return [clause(shortAnswer(evidence, time))];
    return events[0] === evidence ? [normalEventsSummary(events)] : [];
  });
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

/** A sentence as a clause inside a sentence: no trailing period. */
function clause(text: string): string {
  return text.trim().replace(/[.\s]+$/, "");
}
