import { z } from "zod";

/** The first and last instants `toISOString()` writes with a four-digit year, as every date-time schema reads it. */
const EARLIEST = Date.parse("0000-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * An issue time, the one definition the API (an execution's `time`, an alert's `startsAt`) and the
 * worker (a job's `time`) share: an ISO 8601 date-time with `Z` or an offset whose instant, in UTC, falls
 * within the years 0000–9999. The API hands the worker the time in UTC (utcIssueTime), and an offset can
 * carry a valid date-time outside those years (`0000-01-01T00:00:00+23:59` is in 1 BC in UTC), where
 * `toISOString()` writes a signed six-digit year that no date-time schema reads: the worker would fail
 * the job the API accepted. `field` names the field in the messages.
 */
export function issueTime(field: string) {
  return (
    z.iso
      // Aborts: a text that is no date-time has no years to speak of.
      .datetime({ offset: true, abort: true, error: `${field} must be an ISO 8601 date-time with a Z or an offset` })
      .refine(
        (time) => {
          const instant = Date.parse(time);
          return instant >= EARLIEST && instant <= LATEST;
        },
        { error: `${field} must fall within the years 0000 to 9999 once converted to UTC` },
      )
  );
}

/** An issue time that issueTime accepted, in UTC (`2024-04-30T08:00:00.000Z`), as a job carries it. */
export function utcIssueTime(time: string): string {
  return new Date(time).toISOString();
}
