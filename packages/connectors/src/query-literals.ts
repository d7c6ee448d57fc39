// A placeholder as @pes/templates reads one, anchored where the scan is.
const PLACEHOLDER_AT = /\{\{\s*[A-Za-z_][A-Za-z0-9_.-]*\s*(?:\|\s*[A-Za-z_][A-Za-z0-9_]*\s*)?\}\}/y;

/**
 * Why a PromQL or LogQL template cannot be filled safely, if it cannot: a placeholder written inside a
 * string literal (`"{{service}}"`, `` `{{service}}` ``). Each value is written as a string literal of its
 * own, quotes included; inside the author's quotes it would close theirs, and the value's text would be
 * read as query (`} or vector(1) #` turns the rest into a comment). Both languages take Go's literal
 * syntax: `"…"` and `'…'` with backslash escapes, `` `…` `` raw. A language with other quotes names
 * them in `quotes` (Datadog's search: only `"`); a backtick is always raw.
 */
export function placeholderInLiteralProblem(template: string, quotes = "\"'`"): string | undefined {
  let quote: string | undefined;
  for (let index = 0; index < template.length; index += 1) {
    const char = template[index];
    if (quote === undefined) {
      if (char !== undefined && quotes.includes(char)) quote = char;
      else if (char === "{") {
        PLACEHOLDER_AT.lastIndex = index;
        const match = PLACEHOLDER_AT.exec(template);
        if (match !== null) index += match[0].length - 1;
      }
    } else if (char === "\\" && quote !== "`") {
      index += 1;
    } else if (char === quote) {
      quote = undefined;
    } else if (char === "{") {
      PLACEHOLDER_AT.lastIndex = index;
      const match = PLACEHOLDER_AT.exec(template);
      if (match !== null) {
        return `placeholder ${match[0]} is inside a string literal: write it without quotes (each value becomes a string literal of its own)`;
      }
    }
  }
  return undefined;
}
