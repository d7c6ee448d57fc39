import type { ActionResult, PlaybookExecutionResult } from "@pes/contracts";

/**
 * Reading an investigation's answer the way a person does: the bottom line's sentences, the action a
 * claim cites, the link behind it.
 */

/** The action result with exactly this title; throws listing the titles there are. */
export function actionResult(result: PlaybookExecutionResult, title: string): ActionResult {
  const found = result.actionResults?.find((action) => action.title === title);
  if (found === undefined) {
    throw new Error(`no action result titled ${JSON.stringify(title)}; there are: ${JSON.stringify(result.actionResults?.map((action) => action.title))}`);
  }
  return found;
}

/** The highlights' sentences (split after a period, a question or exclamation mark followed by a space). */
export function sentences(text: string | undefined): string[] {
  return (text ?? "").split(/(?<=[.!?])\s+(?=[A-Z])/).filter((sentence) => sentence.trim() !== "");
}

/** The sentence of the highlights that states the likely cause; undefined when none does. */
export function causeSentence(result: PlaybookExecutionResult): string | undefined {
  return sentences(result.highlights).find((sentence) => /likely cause/i.test(sentence));
}

/** The names of the mitigations offered (customName, else toolName). */
export function mitigationNames(result: PlaybookExecutionResult): string[] {
  return (result.actionableMitigations ?? []).map((mitigation) => mitigation.customName ?? mitigation.toolName);
}
