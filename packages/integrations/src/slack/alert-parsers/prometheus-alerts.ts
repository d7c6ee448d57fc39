import { findStartTime } from "../alert-time.js";
import type { AttachmentContent, MessageContent } from "../message-content.js";
import { allText, distinctTitles, firstLine, labelsFromFields, type AlertParser, type AlertSource, type ParsedAlertMessage } from "./alert-parser.js";

/**
 * The `__subject` template, the attachment title of both tools: `[FIRING:2] <group label values>
 * (<other common label values>)`, `[RESOLVED] …`, and Grafana's `[FIRING:1, RESOLVED:1] …`.
 * Sources: prometheus/alertmanager `template/default.tmpl` (`__subject`, `slack.default.title`);
 * grafana/alerting `templates/default_template.go` (`__subject`, `default.title`).
 */
const SUBJECT = /^\[(?:FIRING|RESOLVED)(?::\d+)?(?:, RESOLVED:\d+)?\]\s*([\s\S]*)$/;
/** Grafana's `default.message` heads each group of alerts with `**Firing**` or `**Resolved**`. */
const SECTION = /^\*{1,2}(Firing|Resolved)\*{1,2}\s*$/i;
/** ` - name = value`, one label or annotation of `__text_alert_list`. */
const PAIR = /^\s*- ([^\s=]+) = ([\s\S]*)$/;
/** The lines that close an alert's annotations in `__text_alert_list`. */
const LINK_LINE = /^(?:Source|Silence|Dashboard|Panel): /;

/** One alert of a `__text_alert_list`. */
interface ListedAlert {
  status: "firing" | "resolved" | undefined;
  labels: Map<string, string>;
  annotations: Map<string, string>;
}

/**
 * Alertmanager's Slack notifier (prometheus/alertmanager `notify/slack/slack.go`) posts one attachment:
 * `title` from `slack.default.title` (the subject), `title_link` the Alertmanager's `/#/alerts`,
 * `fallback` `<subject> | <title link>`, `color`, username `AlertManager`. Its default `text`
 * (`slack.default.text`) is EMPTY: the labels then appear only as values in the subject, without names,
 * so such a message gives a title and no labels. Many configurations set
 * `text: '{{ template "__text_alert_list" .Alerts }}'`, whose lines this parser reads:
 * `Labels:` / ` - name = value` / `Annotations:` / ` - name = value` / `Source: <generator URL>`, per alert.
 */
export const alertmanagerParser: AlertParser = {
  source: "alertmanager",
  parse(content) {
    const attachment = content.attachments.find((candidate) => SUBJECT.test(candidate.title));
    const sentByAlertmanager = /^alertmanager$/i.test(content.sender);
    if (attachment === undefined && !sentByAlertmanager && !SUBJECT.test(firstLine(content.text) ?? "")) return undefined;
    return fromAlertList("alertmanager", content, attachment);
  },
};

/**
 * Grafana's Slack notifier (grafana/alerting `receivers/slack/v1/slack.go`, settings in `config.go`)
 * posts one attachment: `title` from `default.title` (the same subject as Alertmanager's, with
 * `, RESOLVED:n`), `title_link` the rule's URL, `footer` `Grafana v<version>`, `ts` the time of sending,
 * and `text` from `default.message`: `**Firing**`, then per alert `Value: A=…`, `Labels:` /
 * ` - name = value`, `Annotations:` / ` - name = value`, `Source:`, `Silence:`, `Dashboard:`, `Panel:`
 * lines (`__text_alert_list` in `templates/default_template.go`); `**Resolved**` heads resolved alerts.
 */
export const grafanaParser: AlertParser = {
  source: "grafana",
  parse(content) {
    const attachment = content.attachments.find(
      (candidate) =>
        /^Grafana\b/.test(candidate.footer) || (SUBJECT.test(candidate.title) && /^\s*(?:\*{1,2}(?:Firing|Resolved)\*{1,2}|Value: )/im.test(candidate.text)),
    );
    if (attachment === undefined) return undefined;
    return fromAlertList("grafana", content, attachment);
  },
};

function fromAlertList(source: AlertSource, content: MessageContent, attachment: AttachmentContent | undefined): ParsedAlertMessage {
  const subject = attachment?.title ?? firstLine(content.text);
  const body = [attachment?.text ?? "", content.text].join("\n");
  const alerts = readAlertList(body);
  // What the message is about: its firing alerts; a resolved-only message is about the resolved ones.
  const firing = alerts.filter((alert) => alert.status !== "resolved");
  const about = firing.length > 0 ? firing : alerts;
  const labels = commonValues(about.map((alert) => alert.labels));
  const annotations = commonValues(about.map((alert) => alert.annotations));
  const stripped = subject === undefined ? undefined : SUBJECT.exec(subject)?.[1]?.trim();
  const titleCandidates = distinctTitles([annotations.get("summary"), labels.get("alertname"), stripped, subject]);

  const parsed: ParsedAlertMessage = {
    source,
    title: titleCandidates[0] ?? "",
    titleCandidates,
    labels: Object.fromEntries(labels),
    fields: Object.fromEntries(labelsFromFields(content.fields)),
    details: allText(content),
    links: content.links,
  };
  // Neither default template prints StartsAt; custom ones often add `Started: {{ .StartsAt }}`.
  const startsAt = findStartTime(body);
  if (startsAt !== undefined) parsed.startsAt = startsAt;
  return parsed;
}

/** Reads the alerts of `__text_alert_list` (Alertmanager's, or Grafana's with its `Value:` lines). */
function readAlertList(text: string): ListedAlert[] {
  const alerts: ListedAlert[] = [];
  let status: ListedAlert["status"];
  let current: ListedAlert | undefined;
  let mode: "labels" | "annotations" | undefined;
  let lastAnnotation: string | undefined;
  const start = (): ListedAlert => {
    const alert: ListedAlert = { status, labels: new Map(), annotations: new Map() };
    alerts.push(alert);
    return alert;
  };

  for (const line of text.split("\n")) {
    const section = SECTION.exec(line.trim());
    if (section !== null) {
      status = section[1]?.toLowerCase() === "resolved" ? "resolved" : "firing";
      current = undefined;
      mode = undefined;
    } else if (line.startsWith("Value: ")) {
      // Grafana opens each alert with its value.
      current = start();
      mode = undefined;
    } else if (line.trim() === "Labels:") {
      if (current === undefined || current.labels.size > 0 || current.annotations.size > 0) current = start();
      mode = "labels";
    } else if (line.trim() === "Annotations:") {
      current ??= start();
      mode = "annotations";
      lastAnnotation = undefined;
    } else if (LINK_LINE.test(line)) {
      mode = undefined;
    } else if (current !== undefined && mode !== undefined) {
      const pair = PAIR.exec(line);
      const target = mode === "labels" ? current.labels : current.annotations;
      if (pair !== null) {
        const [, name = "", value = ""] = pair;
        if (!target.has(name)) target.set(name, value.trim());
        if (mode === "annotations") lastAnnotation = name;
      } else if (mode === "annotations" && lastAnnotation !== undefined) {
        // An annotation's value may run over several lines (a description with line breaks).
        current.annotations.set(lastAnnotation, `${current.annotations.get(lastAnnotation) ?? ""}\n${line}`.trim());
      }
    }
  }
  return alerts;
}

/** The names whose value is the same in every map: Alertmanager's CommonLabels, over the listed alerts. */
function commonValues(maps: ReadonlyArray<ReadonlyMap<string, string>>): Map<string, string> {
  const [first, ...rest] = maps;
  const common = new Map<string, string>();
  for (const [name, value] of first ?? []) {
    if (rest.every((map) => map.get(name) === value)) common.set(name, value);
  }
  return common;
}
