// RE2's metacharacters, as Go's regexp.QuoteMeta escapes them (Prometheus and Alertmanager use Go's RE2).
const REGEX_META = /[\\.+*?()|[\]{}^$]/g;

/** `value` as an RE2 regular expression that matches exactly it: every metacharacter escaped. */
export function quoteRegexMeta(value: string): string {
  return value.replace(REGEX_META, "\\$&");
}

// In a `u` regex a well-formed surrogate pair is one code point, so only lone halves match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Whether text holds a lone UTF-16 surrogate, which no UTF-8 query (Go's parsers) can carry. */
export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}
