/**
 * The few text helpers the analysis' words share: a list in a sentence, a quoted text on one line, and
 * the order texts are sorted in (by code unit, not by locale, so that the same data gives the same words
 * on any host).
 */
import { truncate } from "./outcome-text.js";

/** "a", "a and b", "a, b and c". */
export function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  return `${items.slice(0, -1).join(", ")} and ${items[items.length - 1] ?? ""}`;
}

/** Texts in code-unit order: a tie-break that depends on nothing but the texts. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A text as one line (every run of whitespace a space), cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  return truncate(text.replace(/\s+/g, " ").trim(), max);
}
