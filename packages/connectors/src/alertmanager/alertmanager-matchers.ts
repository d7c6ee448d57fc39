import { hasLoneSurrogate } from "../regex-escape.js";
import type { AlertmanagerMatcher } from "./schema.js";

/**
 * One matcher as Alertmanager's `filter` parameter and UI take it: `name="value"` (or `!=`, `=~`,
 * `!~`), the value always quoted, with `\\`, `\"` and `\n` its only escapes. Those three mean the same
 * to both of Alertmanager's parsers (the classic one, pkg/labels/parse.go, and the UTF-8 one of 0.27+,
 * matcher/parse, which unquotes as Go does), and nothing else in a quoted value is special to either, so
 * a value can neither end the string nor add a matcher.
 * @throws Error on a lone UTF-16 surrogate, which UTF-8 cannot hold.
 */
export function matcherText(matcher: AlertmanagerMatcher): string {
  if (hasLoneSurrogate(matcher.value)) throw new Error(`the value of matcher ${matcher.name} is not valid Unicode text (it holds a lone surrogate)`);
  const operator = matcher.isRegex ? (matcher.isEqual ? "=~" : "!~") : matcher.isEqual ? "=" : "!=";
  const quoted = matcher.value.replace(/[\\"]/g, "\\$&").replace(/\n/g, "\\n");
  return `${matcher.name}${operator}"${quoted}"`;
}
