/** A link found in a Slack message: its URL, and the text shown for it when the message gave one. */
export interface SlackLink {
  url: string;
  label?: string;
}

/** Slack text read back as plain text, with the links it held. */
export interface PlainSlackText {
  text: string;
  links: SlackLink[];
}

/**
 * Slack's control sequences (docs.slack.dev "Formatting text for app surfaces"): `<url>`, `<url|label>`,
 * `<mailto:…|…>`, `<@U123>`, `<#C123|name>`, `<!here>`, `<!subteam^S1|@team>`, `<!date^…^…|fallback>`.
 * Only a `<` followed by one of these openings starts one: a literal `<` arrives as `&lt;`, and a raw
 * `<` from a sender that did not escape (`latency < 5s`) stays text.
 */
const CONTROL_SEQUENCE = /<((?:https?|mailto):[^<>|\s]*|[@#][A-Z0-9][^<>|\s]*|![^<>|]*)(?:\|([^<>]*))?>/g;
/** A URL in plain text (Slack turns most into `<url>`, but attachment titles and fields keep them bare). */
const BARE_URL = /\bhttps?:\/\/[^\s<>|"'`)\]]+/g;
const ENTITY = /&(amp|lt|gt);/g;
const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">" };

/**
 * Undoes Slack's escaping of `&`, `<` and `>` (`&amp;`, `&lt;`, `&gt;`), in one pass, so that `&amp;lt;`
 * reads `&lt;` and not `<`.
 */
export function unescapeSlackEntities(text: string): string {
  return text.replace(ENTITY, (_, name: string) => ENTITIES[name] ?? "");
}

/**
 * Reads Slack message text (mrkdwn as stored: entities escaped, links and mentions as control
 * sequences) as plain text: `<url|label>` becomes `label`, `<url>` the URL, `<@U1|ann>` `@ann`,
 * `<#C1|ops>` `#ops`, `<!here>` `@here`, `<!date^…|fallback>` the fallback; then `&amp;`, `&lt;` and
 * `&gt;` are unescaped. Links (control sequences and bare http(s) URLs) are collected, unescaped too.
 * Emphasis markers (`*bold*`) are kept: they are part of what people read.
 */
export function slackToPlainText(mrkdwn: string): PlainSlackText {
  const links: SlackLink[] = [];
  // Sequences are replaced before entities are unescaped, so an escaped `&lt;x&gt;` never becomes one.
  const replaced = mrkdwn.replace(CONTROL_SEQUENCE, (_, target: string, label: string | undefined) => {
    const shown = label === undefined ? undefined : unescapeSlackEntities(label);
    if (target.startsWith("@")) return `@${shown ?? target.slice(1)}`;
    if (target.startsWith("#")) return `#${shown ?? target.slice(1)}`;
    if (target.startsWith("!")) {
      if (shown !== undefined) return shown;
      const [special = ""] = target.slice(1).split("^");
      return `@${special}`;
    }
    const url = unescapeSlackEntities(target);
    if (url.startsWith("http")) links.push(shown === undefined ? { url } : { url, label: shown });
    return shown ?? url;
  });
  const text = unescapeSlackEntities(replaced);
  // Bare URLs are looked for outside the sequences, which were collected above.
  for (const url of unescapeSlackEntities(withoutSequences(mrkdwn)).match(BARE_URL) ?? []) {
    links.push({ url });
  }
  return { text, links };
}

/** The text outside control sequences: where bare URLs may stand. */
function withoutSequences(mrkdwn: string): string {
  return mrkdwn.replace(CONTROL_SEQUENCE, " ");
}

/** The bare http(s) URLs in plain text (already unescaped). */
export function bareUrls(text: string): string[] {
  return text.match(BARE_URL) ?? [];
}
