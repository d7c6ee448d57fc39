const METRIC_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*$/;
/** Words a metric name ends with that say its unit or type (Prometheus' naming conventions), not what it is. */
const UNIT_WORDS: ReadonlySet<string> = new Set(["bytes", "seconds", "total", "ratio", "percent", "count", "info"]);
/** Words that make a name a limit when words follow them: `max` in `pg_settings_max_connections`. */
const LIMIT_BEFORE: ReadonlySet<string> = new Set(["max", "maximum"]);
/** Words that make a name a limit when they follow a word: `limit` in `container_spec_memory_limit_bytes`. */
const LIMIT_AFTER: ReadonlySet<string> = new Set(["limit", "limits", "size", "capacity", "quota", "allocatable"]);

/**
 * What a saturated metric's limit is, for a sentence: "its memory limit" for
 * `container_spec_memory_limit_bytes`, "its max connections" for `pg_settings_max_connections`, the
 * name as it is when no word of it says limit (`machine_memory_bytes`), "its limit" when `of` is not a
 * metric name (a limit query that reads none): never the PromQL, which no one reads in a sentence.
 */
export function limitName(of: string): string {
  if (!METRIC_NAME.test(of)) return "its limit";
  const words = of.split(/[_:]+/).filter((word) => word !== "");
  while (words.length > 1 && UNIT_WORDS.has((words[words.length - 1] ?? "").toLowerCase())) words.pop();
  const lower = words.map((word) => word.toLowerCase());
  const after = lower.findLastIndex((word, index) => index > 0 && LIMIT_AFTER.has(word));
  if (after !== -1) return `its ${words.slice(after - 1, after + 1).join(" ")}`;
  const before = lower.findIndex((word, index) => index < lower.length - 1 && LIMIT_BEFORE.has(word));
  if (before !== -1) return `its ${words.slice(before).join(" ")}`;
  return of;
}
