const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** RFC 3339, as `{{ .StartsAt.Format "2006-01-02T15:04:05Z07:00" }}` or JSON render it. */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i;
/**
 * Go's `time.Time.String()`, which is what `{{ .StartsAt }}` renders in an Alertmanager or Grafana
 * template: `2024-05-02 11:58:00.123456789 +0000 UTC` (the zone name after the offset is ignored).
 */
const GO_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d{1,9})? ([+-])(\d{2})(\d{2})(?: [A-Za-z0-9+-]+)?$/;
/** Datadog's `{{last_triggered_at}}` and notification footer: `Thu Aug 26 2021 19:05:52 UTC`. */
const DATADOG_TIME = /^(?:[A-Z][a-z]{2},? )?([A-Z][a-z]{2}) (\d{1,2}),? (\d{4}),? (\d{2}):(\d{2}):(\d{2}) UTC$/;

/**
 * Reads a time as alerting tools print it: RFC 3339, Go's default `time.Time` format, or Datadog's
 * `Thu Aug 26 2021 19:05:52 UTC`. Fractions finer than a millisecond are dropped.
 * @returns undefined for any other text, or a date that does not exist.
 */
export function parseAlertTime(text: string): Date | undefined {
  const value = text.trim();
  if (RFC_3339.test(value)) return valid(new Date(value.replace(" ", "T").replace(/(\.\d{3})\d+/, "$1")));
  const go = GO_TIME.exec(value);
  if (go !== null) {
    const [, day = "", time = "", fraction = "", sign = "+", hours = "00", minutes = "00"] = go;
    return valid(new Date(`${day}T${time}${fraction.slice(0, 4)}${sign}${hours}:${minutes}`));
  }
  const datadog = DATADOG_TIME.exec(value);
  if (datadog !== null) {
    const [, month = "", day = "", year = "", hours = "", minutes = "", seconds = ""] = datadog;
    const index = MONTHS.indexOf(month);
    if (index < 0) return undefined;
    const date = new Date(Date.UTC(Number(year), index, Number(day), Number(hours), Number(minutes), Number(seconds)));
    // Date.UTC rolls 31 Feb over into March: such a date was never printed by a tool.
    return date.getUTCDate() === Number(day) ? date : undefined;
  }
  return undefined;
}

/**
 * A line that states when the alert started, as custom Alertmanager and Grafana templates commonly add
 * (`Started: {{ .StartsAt }}`, `*Starts at:* …`, `startsAt = …`): the label, then `:` or `=`.
 */
const START_LINE = /^[\s\-•*_>]*(?:starts?(?:ed)?(?:[ _]?at)?|start(?:ed)?[ _]time|fired(?: at)?|triggered(?: at)?|since)[*_]*\s*[:=]\s*[*_`]*(.+?)[*_`]*\s*$/i;

/** The first start time stated on a line of `text` (see START_LINE), if any. */
export function findStartTime(text: string): Date | undefined {
  for (const line of text.split("\n")) {
    const match = START_LINE.exec(line);
    const time = match?.[1] === undefined ? undefined : parseAlertTime(match[1]);
    if (time !== undefined) return time;
  }
  return undefined;
}

function valid(date: Date): Date | undefined {
  return Number.isNaN(date.getTime()) ? undefined : date;
}
