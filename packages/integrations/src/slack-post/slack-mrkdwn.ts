/**
 * Text for Slack's mrkdwn, where `<…>` is control syntax: `<!channel>` notifies a whole channel and
 * `<https://x|y>` is a link whose label hides its target. Every value that came from an alert, a data
 * source or a playbook goes through `escapeSlackText`, so that it shows as the characters it holds; links
 * are only ever made here, from URLs we checked (Slack: "Formatting text for app surfaces", escaping).
 */

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
const ELLIPSIS = "…";

/** `&`, `<` and `>` as Slack's entities: the text shows as written and can never mention or link. */
export function escapeSlackText(text: string): string {
  return text.replace(/[&<>]/g, (char) => ESCAPES[char] ?? char);
}

/**
 * `text` escaped and cut to at most `max` characters (an ellipsis marking the cut): the cut falls
 * between characters of the original text, so it never splits an entity (`&am`) or a surrogate pair.
 */
export function escapeAndClip(text: string, max: number): string {
  const escaped = escapeSlackText(text);
  if (escaped.length <= max) return escaped;
  let out = "";
  for (const char of text) {
    const piece = ESCAPES[char] ?? char;
    if (out.length + piece.length > max - ELLIPSIS.length) break;
    out += piece;
  }
  return out + ELLIPSIS;
}

/**
 * A URL as Slack's link syntax takes it, or undefined when it is no http(s) URL (a `javascript:` or
 * `slack://` target is never made clickable). `|` would end the URL part of `<url|label>` early, so it is
 * percent-encoded; `&`, `<`, `>` are escaped as everywhere in mrkdwn.
 */
export function safeLinkTarget(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  return escapeSlackText(parsed.href.replaceAll("|", "%7C"));
}

/**
 * `<url|label>` with the label escaped, when `url` is an http(s) URL no longer than `maxUrlChars` once
 * escaped; otherwise the label alone (as text). `label` is plain text, not mrkdwn.
 */
export function slackLink(url: string, label: string, maxUrlChars = 2_000): string {
  const target = safeLinkTarget(url);
  const text = escapeSlackText(label);
  if (target === undefined || target.length > maxUrlChars) return text;
  return `<${target}|${text}>`;
}
