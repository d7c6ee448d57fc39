import type { TimeWindow } from "@pes/connectors";
import { parseDuration } from "@pes/playbooks";

/**
 * The window the actions look at: `before` the issue time (the baseline) to `after` it, with the end
 * capped at `now` since nothing after now can be queried yet. An issue time in the future (clock skew)
 * keeps its own time as the end so the window never ends before the issue.
 */
export function issueWindow(time: Date, window: { before: string; after: string }, now: Date): TimeWindow {
  const start = new Date(time.getTime() - parseDuration(window.before));
  const end = new Date(Math.min(time.getTime() + parseDuration(window.after), Math.max(now.getTime(), time.getTime())));
  return { start, time, end };
}
