/** String literals (Go's syntax: `"…"` and `'…'` with escapes, `` `…` `` raw) and comments. */
const LITERALS_AND_COMMENTS = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|#[^\n]*/g;
/** Label matchers and range or subquery durations: `{db="a"}`, `[5m]`, `[1h:1m]`. */
const MATCHERS_AND_RANGES = /\{[^}]*\}|\[[^\]]*\]/g;
/** Label lists of aggregations and vector matching: `by (db)`, `on (instance) group_left (node)`. */
const LABEL_LISTS = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi;
/** A name that is neither part of a number (`1e3`, `0x1f`) nor followed by `(` (a function, an aggregation). */
const NAME = /(?<![\w.:])[A-Za-z_:][\w:]*(?![\w:]|\s*\()/g;
const KEYWORDS: ReadonlySet<string> = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "atan2",
  "inf",
  "nan",
]);

/**
 * The first metric a PromQL query reads: `pg_settings_max_connections` for
 * `max by (db) (pg_settings_max_connections{db="orders-db"})`; undefined when it reads none
 * (`vector(100)`). An aggregation drops its series' `__name__`, so this is how a limit query's series are
 * named by what they are rather than by the whole query.
 */
export function promqlMetricName(query: string): string | undefined {
  const bare = query.replace(LITERALS_AND_COMMENTS, " ").replace(MATCHERS_AND_RANGES, " ").replace(LABEL_LISTS, " ");
  for (const [name] of bare.matchAll(NAME)) {
    if (!KEYWORDS.has(name.toLowerCase())) return name;
  }
  return undefined;
}
