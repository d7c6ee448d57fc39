import type { PlaybookExecutionResult, PlaybookList } from "@pes/contracts";

/**
 * Control characters (ESC starts terminal escape sequences) and bidirectional overrides, except tab and
 * newline. Results carry text that came from alerts and data sources: printed raw, a crafted value
 * could move the cursor, rewrite earlier lines or retitle the terminal.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE_FOR_TERMINAL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/** Text safe to print on a terminal. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE_FOR_TERMINAL, "");
}

function indent(text: string, spaces: number): string {
  const pad = " ".repeat(spaces);
  return terminalSafe(text)
    .split("\n")
    .map((line) => (line === "" ? line : pad + line))
    .join("\n");
}

function section(title: string, lines: readonly string[]): string[] {
  return lines.length === 0 ? [] : ["", title, ...lines];
}

/**
 * A result for a person at a terminal: the error first when there is one, then the summary, the
 * gadgets' findings, each action's answer with its link, the mitigations and the chat thread.
 */
export function renderResult(result: PlaybookExecutionResult): string {
  const lines: string[] = [];
  if (result.error !== undefined) lines.push(`Error: ${terminalSafe(result.error)}`);
  if (result.highlights !== undefined) {
    if (lines.length > 0) lines.push("");
    lines.push(terminalSafe(result.highlights));
  }
  lines.push(
    ...section(
      "Gadgets",
      (result.gadgetsHighlights ?? []).flatMap((gadget) => [
        `  - ${terminalSafe(gadget.title)}`,
        ...(gadget.highlights === undefined ? [] : [indent(gadget.highlights, 4)]),
      ]),
    ),
  );
  lines.push(
    ...section(
      "Actions",
      (result.actionResults ?? []).flatMap((action) => [
        `  - ${terminalSafe(action.title ?? "(untitled)")}${action.shortAnswer === undefined ? "" : `: ${terminalSafe(action.shortAnswer)}`}`,
        ...(action.mostImportantLink === undefined ? [] : [indent(action.mostImportantLink, 4)]),
      ]),
    ),
  );
  lines.push(
    ...section(
      "Mitigations",
      (result.actionableMitigations ?? []).flatMap((mitigation) => [
        `  - ${terminalSafe(mitigation.customName ?? mitigation.toolName)}${mitigation.customName === undefined ? "" : ` (${terminalSafe(mitigation.toolName)})`}`,
        ...(mitigation.url === undefined ? [] : [indent(mitigation.url, 4)]),
        ...(mitigation.action === undefined ? [] : [indent(`action: ${JSON.stringify(mitigation.action)}`, 4)]),
      ]),
    ),
  );
  if (result.enrichmentLink !== undefined) lines.push("", `Thread: ${terminalSafe(result.enrichmentLink)}`);
  if (lines.length === 0) lines.push("(empty result)");
  return `${lines.join("\n")}\n`;
}

/** The playbook list for a person: each name, the monitor names that trigger it, what it requires. */
export function renderPlaybooks(playbooks: PlaybookList): string {
  if (playbooks.length === 0) return "No playbooks for this organization.\n";
  const lines = playbooks.flatMap((playbook) => [
    terminalSafe(playbook.name),
    ...playbook.monitorNames.map((name) => `  monitor: ${terminalSafe(name)}`),
    ...(playbook.requiredAttributes === undefined || playbook.requiredAttributes.length === 0
      ? []
      : [`  requires: ${playbook.requiredAttributes.map(terminalSafe).join(", ")}`]),
  ]);
  return `${lines.join("\n")}\n`;
}
