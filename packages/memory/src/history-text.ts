import type { ExecutionHistory, HistoryEntry } from "@pes/contracts";

/** The heading every surface shows above a result's history: what it is, and that it proves nothing. */
export const HISTORY_HEADING = "Seen before — verify";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
/** Matched and differing fields listed per entry, each. */
const MAX_LISTED_FIELDS = 6;

/**
 * A result's history in words, one line per past execution, plain (each surface escapes it its own way):
 * when, what it concluded, how often such executions happened, what matched and what differed, and what
 * someone confirmed. Empty without history. Pure.
 */
export function historyLines(history: ExecutionHistory | undefined): string[] {
  return (history ?? []).map(historyEntryText);
}

/** One past execution in words (see historyLines). */
export function historyEntryText(entry: HistoryEntry): string {
  const parts = [`${day(entry.at)}: ${conclusionText(entry)}`];
  const { count, first, last } = entry.occurrences;
  parts.push(count === 1 ? "seen once" : `seen ${count} times, first ${day(first)}, last ${day(last)}`);
  parts.push(`${Math.round(entry.similarity * 100)} % alike`);
  if (entry.matched.length > 0) parts.push(`same ${listed(entry.matched.map((match) => `${match.field} ${match.value}`))}`);
  if (entry.differed.length > 0) {
    parts.push(
      `different ${listed(entry.differed.map((difference) => `${difference.field} ${difference.now ?? "(none)"} (then ${difference.past ?? "none"})`))}`,
    );
  }
  const { confirmed } = entry;
  if (confirmed !== undefined) {
    const who = confirmed.by === undefined ? "" : ` by ${confirmed.by}`;
    const said = [
      `confirmed ${confirmed.verdict === "right" ? "right" : "wrong"}${who}`,
      ...(confirmed.cause === undefined ? [] : [`actual cause: ${confirmed.cause}`]),
      ...(confirmed.resolution === undefined ? [] : [`resolved by: ${confirmed.resolution}`]),
    ];
    parts.push(said.join(", "));
  }
  return `${parts.join("; ")}.`;
}

function conclusionText(entry: HistoryEntry): string {
  const { cause } = entry;
  if (cause === undefined) return entry.conclusion === "no-cause" ? `no cause found (${entry.playbook})` : `${entry.conclusion} (${entry.playbook})`;
  const subject = cause.subject === undefined ? "" : ` of ${cause.subject}`;
  const detail = cause.detail === undefined ? "" : ` (${cause.detail})`;
  return `${entry.conclusion === "ambiguous" ? "one of two likely causes" : "likely cause"}: ${cause.kind}${subject}${detail}`;
}

function listed(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED_FIELDS).join(", ");
  return items.length > MAX_LISTED_FIELDS ? `${shown} and ${items.length - MAX_LISTED_FIELDS} more` : shown;
}

/** `Tue 2026-11-24 18:26 UTC`. */
function day(iso: string): string {
  const date = new Date(iso);
  return `${WEEKDAYS[date.getUTCDay()] ?? ""} ${iso.slice(0, 16).replace("T", " ")} UTC`;
}
