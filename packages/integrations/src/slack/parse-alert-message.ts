import type { AlertParser, ParsedAlertMessage } from "./alert-parsers/alert-parser.js";
import { datadogParser } from "./alert-parsers/datadog-monitor.js";
import { parseGenericMessage } from "./alert-parsers/generic-message.js";
import { pagerDutyParser } from "./alert-parsers/pagerduty-incident.js";
import { alertmanagerParser, grafanaParser } from "./alert-parsers/prometheus-alerts.js";
import { readMessageContent } from "./message-content.js";
import type { SlackMessage } from "./slack-message.js";

/**
 * The alerting tools whose Slack messages are read for what they are, tried in order; a message none
 * recognizes is read by the generic parser. Grafana comes before Alertmanager (its subject is the same,
 * its footer and `Value:` lines tell it apart); PagerDuty after both, since their alerts may link to a
 * PagerDuty incident without being PagerDuty's message.
 */
export const ALERT_PARSERS: readonly AlertParser[] = [datadogParser, grafanaParser, alertmanagerParser, pagerDutyParser];

/** Reads what a Slack message says about its alert: title, labels, details, start time, links. */
export function parseAlertMessage(message: SlackMessage): ParsedAlertMessage {
  const content = readMessageContent(message);
  for (const parser of ALERT_PARSERS) {
    const parsed = parser.parse(content);
    if (parsed !== undefined) return parsed;
  }
  return parseGenericMessage(content);
}
