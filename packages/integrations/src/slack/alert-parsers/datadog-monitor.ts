import { parseAlertTime } from "../alert-time.js";
import { allText, distinctTitles, firstLine, labelsFromFields, type AlertParser, type ParsedAlertMessage } from "./alert-parser.js";

/**
 * A Datadog monitor notification's title (the event title, `$EVENT_TITLE` of Datadog's webhooks):
 * `[P2] [Triggered on {host:web-1,env:prod}] High CPU on web-1`, `[Recovered] …`, `[Triggered] [TEST] …`.
 * The priority is present when the monitor has one, the scope (`on {…}`) for a multi-alert monitor.
 * Transitions are Datadog's `$ALERT_TRANSITION` values.
 */
const EVENT_TITLE =
  /^(?:\[P[1-5]\]\s*)?\[(?:Re-)?(?:Triggered|Recovered|Warn|Warn Recovered|No Data|No Data Recovered|Renotify)(?: on \{([^}]*)\})?\]\s*(?:\[TEST\]\s*)?(.+)$/;
/** The line Datadog appends to every monitor notification's message. */
const LAST_TRIGGERED = /The monitor was last triggered at ([A-Za-z]{3},? [A-Za-z]{3} \d{1,2},? \d{4},? \d{2}:\d{2}:\d{2} UTC)/;
/** A link into a Datadog site's monitors (app.datadoghq.com, *.datadoghq.eu, *.ddog-gov.com, us3/us5/ap1…). */
const MONITOR_LINK = /^https:\/\/[a-z0-9.-]*(?:datadoghq\.com|datadoghq\.eu|ddog-gov\.com)\/monitors\b/;

/**
 * Datadog monitor notifications in Slack (Datadog's Slack integration, which is not open source). The
 * shapes read here are Datadog's own, as its webhooks and event stream carry them and its Slack
 * messages show them (public samples: `$EVENT_TITLE`/`$EVENT_MSG` payloads in webhook consumers):
 * - the title is the event title (EVENT_TITLE above), shown as the attachment title or the message's
 *   first line; the monitor's name is what follows the brackets, its scope tags are inside `{…}`;
 * - the body is the monitor's message, then `The monitor was last triggered at Thu Aug 26 2021
 *   19:05:52 UTC.`, then links `[Monitor Status] · [Edit Monitor] · …` into `…datadoghq.com/monitors/<id>`.
 * Recognized by the title, the "last triggered" line, or a link to a monitor.
 */
export const datadogParser: AlertParser = {
  source: "datadog",
  parse(content) {
    const titled = [...content.attachments.map((attachment) => attachment.title), ...content.headers, firstLine(content.text) ?? ""];
    const rawTitle = titled.find((title) => EVENT_TITLE.test(title));
    const text = allText(content);
    const lastTriggered = LAST_TRIGGERED.exec(text);
    if (rawTitle === undefined && lastTriggered === null && !content.links.some((link) => MONITOR_LINK.test(link.url))) return undefined;

    const title = rawTitle ?? titled.find((candidate) => candidate.trim() !== "") ?? "";
    const match = EVENT_TITLE.exec(title);
    const labels = new Map<string, string>();
    for (const tag of (match?.[1] ?? "").split(",")) {
      // Tags are `key:value` (the value may hold colons); a bare tag names no attribute.
      const colon = tag.indexOf(":");
      if (colon > 0) labels.set(tag.slice(0, colon).trim(), tag.slice(colon + 1).trim());
    }
    const monitorName = match?.[2]?.trim();
    const titleCandidates = distinctTitles([monitorName, title]);

    const parsed: ParsedAlertMessage = {
      source: "datadog",
      title: titleCandidates[0] ?? "",
      titleCandidates,
      labels: Object.fromEntries(labels),
      fields: Object.fromEntries(labelsFromFields(content.fields)),
      details: text,
      links: content.links,
    };
    const startsAt = lastTriggered?.[1] === undefined ? undefined : parseAlertTime(lastTriggered[1]);
    if (startsAt !== undefined) parsed.startsAt = startsAt;
    return parsed;
  },
};
