import type { TimeWindow } from "@pes/contracts";

/** What an observation is read with, besides itself: the action it came from, its window and its link. */
export interface ReadingContext {
  /** The action's title: the evidence cites it. */
  action: string;
  window: TimeWindow;
  /** The action's most important link, carried into the evidence (absent in a replay: bundles keep no URL). */
  link?: string;
  /**
   * The attributes, for an action about the paged service (not an upstream's): they tell its log
   * streams from the others a wider query returns.
   */
  attributes?: Readonly<Record<string, string>>;
}
