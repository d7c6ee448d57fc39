import type { TimeWindow } from "@pes/connectors";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/**
 * Milliseconds of a playbook duration such as "90s", "15m", "1h", "2d" (or "500ms").
 * @throws Error naming the text when it is not such a duration.
 */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text);
  const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
  if (match === null || unit === undefined) {
    throw new Error(`invalid duration ${JSON.stringify(text)}: expected a number and one of ms, s, m, h, d`);
  }
  return Number(match[1]) * UNIT_MS[unit];
}

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
