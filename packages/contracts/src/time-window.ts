/**
 * The time an action looks at: `time` is the issue, `start`..`end` the window around it. Connectors ask
 * their sources for it and the analysis reads what came back against it, so both take it from here.
 */
export interface TimeWindow {
  start: Date;
  time: Date;
  end: Date;
}

/** The incident phase starts this long before the issue time: alerts fire after the change began. */
export const INCIDENT_LEAD_MS = 5 * 60_000;
/** Log counts are asked in at most this many steps over the window. */
const MAX_LOG_COUNT_STEPS = 500;

/**
 * When the incident phase starts: 5 minutes before the issue time (at most half of the baseline). A log
 * source reads its lines per phase around it, and the analysis compares the phases at the same instant.
 */
export function incidentPhaseStart(window: TimeWindow): Date {
  const time = window.time.getTime();
  return new Date(time - Math.min(INCIDENT_LEAD_MS, (time - window.start.getTime()) / 2));
}

/**
 * The step a source counts matching lines in: the window in at most 500 counts, whole minutes, at least
 * one (finer counts cost the source more and only add noise to a rate).
 */
export function logCountStepSeconds(window: TimeWindow): number {
  const seconds = Math.max(0, (window.end.getTime() - window.start.getTime()) / 1000);
  return Math.max(60, Math.ceil(seconds / MAX_LOG_COUNT_STEPS / 60) * 60);
}
