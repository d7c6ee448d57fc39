import { z } from "zod";

/** A playbook duration: a whole number and a unit, e.g. "90s", "15m", "1h", "2d". */
export const PlaybookDuration = z.string().regex(/^\d+(ms|s|m|h|d)$/, 'a duration such as "90s", "15m", "1h" or "2d"');

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
