import type { PlaybookExecutionResult } from "@pes/contracts";

/** What a chat message of one execution shows, in Slack or in Teams: its result and what frames it. */
export interface EnrichmentView {
  result: PlaybookExecutionResult;
  /** The title (alert-derived: shown escaped). */
  title?: string;
  /**
   * For each entry of `result.actionResults`, the index of its gadget in `result.gadgetsHighlights`: the
   * result does not say which gadget an action belongs to. With it, actions are listed under their gadget;
   * without it, after the gadgets.
   */
  actionGadgets?: readonly number[];
  /** A line above the title, e.g. "Issue 3 of 100" in a batch. */
  heading?: string;
  /**
   * Buttons to say whether the verdict named the right cause: `reference` the execution's signed
   * reference (Slack buttons carry it), `url` its feedback page (a Teams card opens it). None: no buttons.
   */
  feedback?: { reference: string; url?: string };
}
