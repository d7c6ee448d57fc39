import type { FakeSlackMessage } from "@pes/local-services";

/**
 * Alert messages as Slack's conversations.history returns them, built from each tool's default
 * templates (see the parsers for the sources): text as Slack stores it, `&`, `<` and `>` escaped, URLs
 * in text turned into `<url>`. Every message was posted at 2024-05-02T12:00:00Z.
 */
export const MESSAGE_TS = "1714651200.000100";

const PROMQL_SOURCE =
  "http://prometheus.example:9090/graph?g0.expr=100+-+avg+by%28instance%29%28rate%28node_cpu_seconds_total%7Bmode%3D%22idle%22%7D%5B5m%5D%29%29+%2A+100+%3E+90&amp;g0.tab=1";

/**
 * Alertmanager's Slack notifier with its default templates: `slack.default.text` is empty, so the
 * labels show only as values in the subject (group by alertname and instance; job and severity are the
 * other common labels).
 */
export const alertmanagerDefault: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: MESSAGE_TS,
  bot_id: "B0ALERTMGR",
  username: "AlertManager",
  text: "",
  attachments: [
    {
      id: 1,
      color: "danger",
      fallback: "[FIRING:1] HighCPU web-1:9100 (node critical) | http://alertmanager.example:9093/#/alerts",
      title: "[FIRING:1] HighCPU web-1:9100 (node critical)",
      title_link: "http://alertmanager.example:9093/#/alerts",
      text: "",
      mrkdwn_in: ["fallback", "pretext", "text"],
    },
  ],
};

/** The same notifier with `text: '{{ template "__text_alert_list" .Alerts }}'`: two alerts grouped by alertname. */
export const alertmanagerAlertList: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: MESSAGE_TS,
  bot_id: "B0ALERTMGR",
  username: "AlertManager",
  text: "",
  attachments: [
    {
      id: 1,
      color: "danger",
      fallback: "[FIRING:2] HighCPU (node critical) | http://alertmanager.example:9093/#/alerts",
      title: "[FIRING:2] HighCPU (node critical)",
      title_link: "http://alertmanager.example:9093/#/alerts",
      text: [
        "Labels:",
        " - alertname = HighCPU",
        " - instance = web-1:9100",
        " - job = node",
        " - severity = critical",
        "Annotations:",
        " - description = CPU usage is above 90% (current value: 97.3%)",
        "for 5 minutes &amp; rising",
        " - summary = High CPU on web-1:9100",
        `Source: <${PROMQL_SOURCE}>`,
        "Labels:",
        " - alertname = HighCPU",
        " - instance = web-2:9100",
        " - job = node",
        " - severity = critical",
        "Annotations:",
        " - description = CPU usage is above 90% (current value: 93.1%)",
        " - summary = High CPU on web-2:9100",
        `Source: <${PROMQL_SOURCE}>`,
        "",
      ].join("\n"),
      mrkdwn_in: ["fallback", "pretext", "text"],
    },
  ],
};

/**
 * Grafana's Slack notifier with its default title and `default.message` text (one firing alert), footer
 * `Grafana v<version>` and `ts` the time it sent the notification.
 */
export const grafanaDefault: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: MESSAGE_TS,
  bot_id: "B0GRAFANA",
  username: "Grafana",
  text: "",
  attachments: [
    {
      id: 1,
      color: "D63232",
      ts: 1714651199,
      footer: "Grafana v11.2.0",
      footer_icon: "https://grafana.com/static/assets/img/fav32.png",
      fallback: "[FIRING:1] High CPU usage Infrastructure (checkout web-1)",
      title: "[FIRING:1] High CPU usage Infrastructure (checkout web-1)",
      title_link: "https://grafana.example/alerting/grafana/cdk2z0x/view?orgId=1",
      text: [
        "**Firing**",
        "",
        "Value: A=97.3",
        "Labels:",
        " - alertname = High CPU usage",
        " - grafana_folder = Infrastructure",
        " - instance = web-1",
        " - service = checkout",
        "Annotations:",
        " - summary = High CPU on web-1",
        "Source: <https://grafana.example/alerting/grafana/cdk2z0x/view?orgId=1>",
        "Silence: <https://grafana.example/alerting/silence/new?alertmanager=grafana&amp;matcher=alertname%3DHigh+CPU+usage&amp;matcher=instance%3Dweb-1&amp;orgId=1>",
        "Dashboard: <https://grafana.example/d/node01?orgId=1>",
        "Panel: <https://grafana.example/d/node01?orgId=1&amp;viewPanel=2>",
        "",
      ].join("\n"),
    },
  ],
};

/**
 * A Datadog monitor notification: the event title (priority, transition and scope), the monitor's
 * message, Datadog's "last triggered" line and its links (markdown links rendered as Slack links).
 */
export const datadogMonitor: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: MESSAGE_TS,
  bot_id: "B0DATADOG",
  text: "",
  attachments: [
    {
      id: 1,
      color: "d00000",
      fallback: "[P2] [Triggered on {host:web-1,env:prod}] High CPU on web-1",
      title: "[P2] [Triggered on {host:web-1,env:prod}] High CPU on web-1",
      title_link: "https://app.datadoghq.com/monitors/1234567?group=host%3Aweb-1%2Cenv%3Aprod",
      text: [
        "CPU on web-1 is above 90%. Runbook: <https://wiki.example/runbooks/cpu|CPU runbook> @slack-ops",
        "",
        "*system.cpu.user* over *env:prod,host:web-1* was *&gt; 90.0* on average during the *last 5m*.",
        "",
        "The monitor was last triggered at Thu May 02 2024 11:55:00 UTC.",
        "",
        "- - -",
        "",
        "[<https://app.datadoghq.com/monitors/1234567?group=host%3Aweb-1%2Cenv%3Aprod&amp;from_ts=1714650600000|Monitor Status>] · [<https://app.datadoghq.com/monitors/1234567/edit|Edit Monitor>] · [<https://app.datadoghq.com/infrastructure?filter=web-1|View web-1>]",
      ].join("\n"),
      mrkdwn_in: ["text"],
    },
  ],
};

/** PagerDuty's Slack app, attachments layout: the incident's number and title linked to it, detail fields, buttons. */
export const pagerDutyAttachment: FakeSlackMessage = {
  type: "message",
  subtype: "bot_message",
  ts: MESSAGE_TS,
  bot_id: "B0PAGERDUTY",
  bot_profile: { name: "PagerDuty" },
  text: "",
  attachments: [
    {
      id: 1,
      color: "a30200",
      fallback: "Triggered: [#1234] High CPU on web-1",
      title: "[#1234] High CPU on web-1",
      title_link: "https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8",
      fields: [
        { title: "Status", value: "Triggered", short: true },
        { title: "Urgency", value: "High", short: true },
        { title: "Service", value: "<https://acme.pagerduty.com/service-directory/PSVC123|checkout>", short: true },
        { title: "Assigned", value: "<@U0ONCALL>", short: true },
      ],
      actions: [
        { id: "1", type: "button", text: "Acknowledge", name: "acknowledge" },
        { id: "2", type: "button", text: "Resolve", name: "resolve" },
      ],
    },
  ],
};

/** PagerDuty's Slack app, blocks layout: the linked title in a section, details as section fields. */
export const pagerDutyBlocks: FakeSlackMessage = {
  type: "message",
  ts: MESSAGE_TS,
  bot_id: "B0PAGERDUTY",
  bot_profile: { name: "PagerDuty" },
  text: "Triggered: [#1235] Checkout latency above SLO",
  blocks: [
    { type: "section", text: { type: "mrkdwn", text: "*<https://acme.eu.pagerduty.com/incidents/Q9Z8X7C6V5B4N3|[#1235] Checkout latency above SLO>*" } },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: "*Service:*\ncheckout" },
        { type: "mrkdwn", text: "*Urgency:*\nHigh" },
        { type: "mrkdwn", text: "*Status:*\nTriggered" },
      ],
    },
    {
      type: "actions",
      elements: [
        { type: "button", text: { type: "plain_text", text: "Acknowledge" }, action_id: "ack" },
        { type: "button", text: { type: "plain_text", text: "View in PagerDuty" }, url: "https://acme.eu.pagerduty.com/incidents/Q9Z8X7C6V5B4N3" },
      ],
    },
  ],
};

/** Another tool's bot: a header block, section fields, a context line with its start time, an Opsgenie link. */
export const genericBlocks: FakeSlackMessage = {
  type: "message",
  ts: MESSAGE_TS,
  bot_id: "B0OTHER",
  text: "Disk almost full on db-3",
  blocks: [
    { type: "header", text: { type: "plain_text", text: "Disk almost full on db-3" } },
    {
      type: "section",
      text: { type: "mrkdwn", text: "Free space on `/var/lib/postgresql` is below 5% &amp; falling." },
      fields: [
        { type: "mrkdwn", text: "*Host:*\ndb-3" },
        { type: "mrkdwn", text: "*Severity:*\nwarning" },
        { type: "mrkdwn", text: "*Alert Name:*\nDiskFull" },
      ],
    },
    { type: "context", elements: [{ type: "mrkdwn", text: "Started at: 2024-05-02T11:40:00Z" }] },
    {
      type: "actions",
      elements: [
        {
          type: "button",
          text: { type: "plain_text", text: "Open in Opsgenie" },
          url: "https://acme.app.opsgenie.com/alert/detail/22a1d1f7-8a77-4e3a-8050-8c51405541c1-1714651100000/details",
        },
      ],
    },
  ],
};

/** A person's message, as the Slack client posts it (rich text blocks repeating `text`). */
export const personMessage: FakeSlackMessage = {
  type: "message",
  ts: MESSAGE_TS,
  user: "U0PERSON",
  text: "checkout is slow for EU customers &lt;!channel&gt; — see <https://grafana.example/d/checkout|the dashboard>\nservice = checkout\nregion = eu-west-1",
  blocks: [
    {
      type: "rich_text",
      block_id: "x1",
      elements: [
        {
          type: "rich_text_section",
          elements: [
            { type: "text", text: "checkout is slow for EU customers <!channel> — see " },
            { type: "link", url: "https://grafana.example/d/checkout", text: "the dashboard" },
            { type: "text", text: "\nservice = checkout\nregion = eu-west-1" },
          ],
        },
      ],
    },
  ],
};
