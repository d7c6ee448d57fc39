import type { SimilarExecutions } from "@pes/contracts";
import { HISTORY_HEADING, historyEntryText } from "@pes/memory/text";
import { terminalSafe } from "./result-rendering.js";

/** The past executions like one, for a person: the heading every surface shows, then one line per execution with its id. */
export function renderSimilar(similar: SimilarExecutions): string {
  if (similar.history.length === 0) return `${terminalSafe(similar.executionId)}: no similar past execution.\n`;
  const lines = [
    `${terminalSafe(similar.executionId)}: ${HISTORY_HEADING}`,
    ...similar.history.map((entry) => terminalSafe(`  ${entry.executionId}  ${historyEntryText(entry)}`)),
  ];
  return `${lines.join("\n")}\n`;
}
