/**
 * Text for an Adaptive Card in Teams. A TextBlock reads its text as Markdown (`[label](url)` makes a link
 * whose label hides its target, `**` bolds, `- ` starts a list) and expands `{{DATE(…)}}`/`{{TIME(…)}}`;
 * a TextRun (inside a RichTextBlock) does not read Markdown (Adaptive Cards schema, TextRun: "Markdown is
 * not supported"). So every value that came from an alert, a data source or a playbook goes into a
 * TextRun, an action's title or an image's alt text, through `cardText`, and never into a TextBlock;
 * links are only made as Action.OpenUrl from URLs checked by `cardLink`.
 */

const ELLIPSIS = "…";
/** Word joiner: invisible, and keeps `{{` from opening a date or time function. */
const WORD_JOINER = "\u2060";

/**
 * `text` as it should show: line breaks kept (`\r\n` as `\n`), other control characters dropped, `{{`
 * broken so that no date or time function runs, and cut to at most `max` characters with an ellipsis
 * (between code points, never inside a surrogate pair).
 */
export function cardText(text: string, max: number): string {
  const cleaned = text
    .replace(/\r\n?/g, "\n")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f]/g, "")
    .replaceAll("{{", `{${WORD_JOINER}{`);
  if (cleaned.length <= max) return cleaned;
  let out = "";
  for (const char of cleaned) {
    if (out.length + char.length > max - ELLIPSIS.length) break;
    out += char;
  }
  return out + ELLIPSIS;
}

/** As `cardText`, on one line: line breaks become spaces (a title, a label, an argument). */
export function cardLine(text: string, max: number): string {
  return cardText(text.replace(/\s*[\r\n]+\s*/g, " "), max);
}

/**
 * `url` when it is an http(s) URL of at most `maxChars` (https only with `httpsOnly`: Teams loads
 * images over https only), else undefined: a `javascript:` or `file:` target is never made clickable.
 */
export function cardLink(url: string, options: { httpsOnly?: boolean; maxChars?: number } = {}): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && (options.httpsOnly === true || parsed.protocol !== "http:")) return undefined;
  return parsed.href.length <= (options.maxChars ?? 2_000) ? parsed.href : undefined;
}
