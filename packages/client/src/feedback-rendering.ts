import type { ExecutionFeedback, FeedbackEntry } from "@pes/contracts";
import { terminalSafe } from "./result-rendering.js";

/** An execution's feedback for a person: the current answer, then the history, oldest first. */
export function renderFeedback(feedback: ExecutionFeedback): string {
  const lines = [`${terminalSafe(feedback.executionId)}: ${entryLine(feedback.current)}`];
  if (feedback.history.length > 1) {
    lines.push("history:", ...feedback.history.map((entry) => `  ${entryLine(entry)}`));
  }
  return `${lines.join("\n")}\n`;
}

function entryLine(entry: FeedbackEntry): string {
  const parts = [entry.verdict === "right" ? "right cause" : "wrong cause"];
  const { cause } = entry;
  if (cause !== undefined) {
    const named = [cause.kind, cause.subject].filter((part) => part !== undefined).join(" of ");
    parts.push(`the cause: ${[named, cause.text].filter((part) => part !== undefined && part !== "").join(": ")}`);
  }
  if (entry.resolution !== undefined) parts.push(`fixed by: ${entry.resolution}`);
  const by = entry.by === undefined ? "" : ` by ${entry.by.name ?? entry.by.subject ?? entry.by.via}`;
  return terminalSafe(`${parts.join("; ")} (${entry.at}${by})`);
}
