import { pagerDutyIncidentId } from "../incident-refs.js";
import { allText, distinctTitles, labelsFromFields, stripEmphasis, type AlertParser, type ParsedAlertMessage } from "./alert-parser.js";

/** The incident number PagerDuty puts before a title: `[#1234] …`, `#1234: …`, `#1234 …`. */
const INCIDENT_NUMBER = /^(?:\[#\d+\]|#\d+:?)\s*/;
/** The status words PagerDuty's messages lead with: `Triggered: …`, `Resolved: …`. */
const STATUS_PREFIX = /^(?:Triggered|Acknowledged|Resolved|Escalated|Reassigned|Unacknowledged|Reopened)\s*:\s*/i;

/**
 * PagerDuty's Slack app (V2 integration; closed source, its layout changed across versions from
 * attachments to blocks). What every version carries, and what this parser keys on: a link to the
 * incident, `https://<subdomain>.pagerduty.com/incidents/<ID>` (the REST API's `incident.html_url`),
 * whose text is the incident's title, often after its number (`[#1234] High CPU on web-1`), and labelled
 * values for the incident's details (Service, Urgency, Status, Assigned…; support.pagerduty.com
 * "Slack V2 Integration Guide": "a message with the incident's details"). Recognized when the message
 * comes from the PagerDuty app or its title links to an incident.
 */
export const pagerDutyParser: AlertParser = {
  source: "pagerduty",
  parse(content) {
    const incidentLink = content.links.find((link) => pagerDutyIncidentId(link.url) !== undefined);
    const titledAttachment = content.attachments.find(
      (attachment) => attachment.titleLink !== undefined && pagerDutyIncidentId(attachment.titleLink) !== undefined,
    );
    const fromPagerDuty = /pagerduty/i.test(content.sender);
    if (titledAttachment === undefined && !(fromPagerDuty && incidentLink !== undefined)) return undefined;

    const rawTitle = stripEmphasis(titledAttachment?.title || incidentLink?.label || "");
    const title = rawTitle.replace(STATUS_PREFIX, "").replace(INCIDENT_NUMBER, "").trim();
    const titleCandidates = distinctTitles([title, rawTitle]);
    const parsed: ParsedAlertMessage = {
      source: "pagerduty",
      title: titleCandidates[0] ?? "",
      titleCandidates,
      // Every labelled value is the app's (Service, Urgency, Status, Assigned): none is the alert's label.
      labels: {},
      fields: Object.fromEntries(labelsFromFields(content.fields)),
      details: allText(content),
      links: content.links,
    };
    return parsed;
  },
};
