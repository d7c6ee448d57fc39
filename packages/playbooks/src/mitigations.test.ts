import { rankFindings, type Finding } from "@pes/analysis";
import { connectorRegistry, mitigationLinksOf, type DataSourceMitigationLinks } from "@pes/connectors/schemas";
import { describe, expect, it } from "vitest";
import { renderMitigations, type MitigationContext } from "./mitigations.js";
import type { MitigationTemplate } from "./playbook-definition.js";

const time = new Date("2026-11-20T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-20T${clock}:00Z`);
/** The organization's data sources: `alerts`, an Alertmanager, and `metrics`, a Prometheus (which offers no silence form). */
const dataSources = new Map(
  Object.entries({
    alerts: { type: "alertmanager", url: "http://alertmanager.example:9093/am/" },
    metrics: { type: "prometheus", url: "http://prometheus.example:9090" },
  }),
);

function mitigationLinks(name: string): DataSourceMitigationLinks | undefined {
  const dataSource = dataSources.get(name);
  const connector = dataSource === undefined ? undefined : connectorRegistry.get(dataSource.type);
  return connector === undefined ? undefined : mitigationLinksOf(connector, dataSource);
}

/** The context of an execution whose analysis found `findings`. */
function contextOf(findings: readonly Finding[]): MitigationContext {
  return { ranking: rankFindings(findings, { time }), time, mitigationLinks };
}

const errors: Finding = {
  gadget: "Checkout",
  evidence: {
    kind: "metric",
    action: "Errors of checkout",
    labels: {},
    seriesCount: 1,
    value: 7,
    baseline: 1,
    low: 1,
    high: 1,
    ratio: 7,
    severity: 7,
    abnormal: true,
    onset: at("14:03"),
    baselineMs: 3_600_000,
  },
};
const calm: Finding = {
  gadget: "Checkout",
  evidence: {
    kind: "metric",
    action: "Errors of checkout",
    labels: {},
    seriesCount: 1,
    value: 1,
    baseline: 1,
    low: 1,
    high: 1,
    ratio: 1,
    severity: 1,
    abnormal: false,
    baselineMs: 3_600_000,
  },
};
const rollout = (clock: string): Finding => ({
  gadget: "Changes",
  evidence: { kind: "change", action: "Rollouts", change: "deploy", subject: "checkout", at: at(clock) },
});
/** Nothing found, nothing changed. */
const quiet = contextOf([]);
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";

describe("renderMitigations", () => {
  it("renders a mitigation with upstreams once per upstream of the issue, naming it, offered for the one at fault", () => {
    const connections: Finding = {
      gadget: "Database orders-db of orders",
      upstream: "orders-db",
      evidence: {
        ...(errors.evidence as Extract<Finding["evidence"], { kind: "metric" }>),
        action: "Connections in use on orders-db",
        onset: at("13:50"),
        severity: 10_001,
        saturation: { limit: 100, direction: "up" },
      },
    };
    const template: MitigationTemplate = {
      toolName: "Runbook",
      customName: "Raise max_connections on {{upstream}}",
      upstreams: { by: "service", lists: { orders: ["orders-db", "ledger-db"] } },
      when: { likelyCause: "upstream", action: "Connections in use on {{upstream}}" },
    };
    const context = { ranking: rankFindings([connections, errors], { time, upstreams: ["orders-db", "ledger-db"] }), time, mitigationLinks };
    expect(renderMitigations([template], { service: "orders" }, context).map(({ customName }) => customName)).toEqual(["Raise max_connections on orders-db"]);
    expect(renderMitigations([template], { service: "checkout" }, context)).toEqual([]);
  });

  it("fills text, URL components and action string leaves", () => {
    const mitigations = renderMitigations(
      [
        { toolName: "Grafana", customName: "Dashboard of {{service}}", url: "https://grafana.example/d/abc?var-service={{service}}&var-env={{env}}" },
        {
          toolName: "kubectl",
          action: { kind: "kubernetes.rollout-undo", deployment: "{{service}}", namespace: "{{env}}", replicas: 3, dryRun: false, labels: ["app={{service}}"] },
        },
      ],
      { service: "check out&x=1", env: "prod/eu" },
      quiet,
    );
    expect(mitigations).toEqual([
      {
        toolName: "Grafana",
        customName: "Dashboard of check out&x=1",
        url: "https://grafana.example/d/abc?var-service=check%20out%26x%3D1&var-env=prod%2Feu",
      },
      {
        toolName: "kubectl",
        action: {
          kind: "kubernetes.rollout-undo",
          deployment: "check out&x=1",
          namespace: "prod/eu",
          replicas: 3,
          dryRun: false,
          labels: ["app=check out&x=1"],
        },
      },
    ]);
  });

  it("keeps a shell-looking value as data inside one JSON string", () => {
    const [mitigation] = renderMitigations([{ toolName: "kubectl", action: { deployment: "{{service}}" } }], { service: 'x"; rm -rf / #' }, quiet);
    expect(mitigation?.action).toEqual({ deployment: 'x"; rm -rf / #' });
  });

  it("leaves out a mitigation that needs a missing attribute and keeps the others", () => {
    const mitigations = renderMitigations(
      [
        { toolName: "Grafana", url: "https://grafana.example/d/abc?var-service={{service}}" },
        { toolName: "kubectl", action: { namespace: "{{env}}" } },
        { toolName: "Runbook {{team}}" },
        { toolName: "Alertmanager", url: "https://am.example/#/silences/new" },
      ],
      { service: "checkout" },
      quiet,
    );
    expect(mitigations).toEqual([
      { toolName: "Grafana", url: "https://grafana.example/d/abc?var-service=checkout" },
      { toolName: "Alertmanager", url: "https://am.example/#/silences/new" },
    ]);
  });

  it("does not add absent optional fields", () => {
    expect(renderMitigations([{ toolName: "Pager" }], {}, quiet)).toEqual([{ toolName: "Pager" }]);
    expect(Object.keys(renderMitigations([{ toolName: "Pager" }], {}, quiet)[0] ?? {})).toEqual(["toolName"]);
  });
});

/** Every injection family, as whole attribute values; the dot segments are refused and listed apart. */
const HOSTILE_VALUES = [
  '"',
  "'",
  "`",
  "{",
  "}",
  "}}",
  "{{x}}",
  "{{service}}",
  "|",
  "\\",
  "..\\..\\admin",
  "a\nb",
  "a\r\nb",
  "a\u0000b",
  "...",
  ".hidden",
  "/",
  "../admin",
  "a/../../admin",
  "..%2Fadmin",
  "%2e%2e%2fadmin",
  "?",
  "?admin=1",
  "&var-x=1",
  "#",
  "#frag",
  "@",
  "user@evil.example",
  "//evil.example/x",
  "javascript:alert(1)",
  "ünïcödé ✓ 😀 中文",
  "\u202Eevil",
  " ",
  "",
];
const DOT_SEGMENTS = [".", "..", "%2e%2e", "%2E", ".%2e", "%252e%252e", "．．"];

describe("renderMitigations with hostile attribute values", () => {
  const runbook = { toolName: "Runbook", url: "https://runbooks.example/services/{{service}}/restart" };
  const templates = [
    runbook,
    { toolName: "Grafana", url: "https://grafana.example/d/abc?var-service={{service}}&orgId=1" },
    { toolName: "Alertmanager", url: "https://am.example/#/silences/new?filter={{service}}" },
  ];

  it.each(HOSTILE_VALUES)("%j: one URL component, origin and path as the playbook wrote them", (value) => {
    const [runbook, grafana, silence] = renderMitigations(templates, { service: value }, quiet).map(({ url }) => new URL(url ?? ""));
    expect(runbook?.origin).toBe("https://runbooks.example");
    expect(runbook?.pathname.split("/").map(decodeURIComponent)).toEqual(["", "services", value, "restart"]);
    expect(runbook?.search).toBe("");
    expect(runbook?.hash).toBe("");
    expect(grafana?.origin).toBe("https://grafana.example");
    expect(grafana?.pathname).toBe("/d/abc");
    expect([...(grafana?.searchParams ?? [])]).toEqual([
      ["var-service", value],
      ["orgId", "1"],
    ]);
    expect(grafana?.hash).toBe("");
    expect(silence?.origin).toBe("https://am.example");
    expect(silence?.pathname).toBe("/");
    expect(decodeURIComponent(silence?.hash ?? "")).toBe(`#/silences/new?filter=${value}`);
  });

  it.each(DOT_SEGMENTS)("%j: the mitigations whose URL takes it are left out, the others kept", (value) => {
    expect(renderMitigations([...templates, { toolName: "Pager {{service}}" }], { service: value }, quiet)).toEqual([{ toolName: `Pager ${value}` }]);
  });

  it("leaves out a mitigation whose URL value is not valid Unicode, instead of failing the execution", () => {
    expect(renderMitigations([runbook, { toolName: "Pager" }], { service: "a\uD800" }, quiet)).toEqual([{ toolName: "Pager" }]);
  });

  it("refuses a dot segment captured from the title by a monitor name", () => {
    const matcher = createMonitorNameMatcher([{ name: "restart", monitorNames: ["Service {{service}} is down"] }]);
    const attributes = matcher.match("Service .. is down")?.attributes ?? {};
    expect(attributes).toEqual({ service: ".." });
    expect(renderMitigations(templates, attributes, quiet)).toEqual([]);
  });
});

describe("renderMitigations when the findings fit", () => {
  const templates: MitigationTemplate[] = [
    { toolName: "Argo CD", customName: "Roll back {{service}}", when: { likelyCause: "deploy" } },
    { toolName: "Deploys", customName: "Deploy history", when: { change: "deploy" } },
    { toolName: "Pager", customName: "Page the team", when: { abnormal: true } },
    { toolName: "Blog", customName: "All clear", when: { abnormal: false } },
    { toolName: "Runbook", customName: "Error runbook", when: { action: "Errors of {{service}}" } },
    { toolName: "Grafana", customName: "Dashboard" },
  ];
  const names = (context: MitigationContext) => renderMitigations(templates, { service: "checkout" }, context).map((mitigation) => mitigation.customName);

  it("offers a roll back only when a deploy before the first symptom is the likely cause", () => {
    expect(names(contextOf([errors, rollout("14:01")]))).toEqual(["Roll back checkout", "Deploy history", "Page the team", "Error runbook", "Dashboard"]);
    // Two hours before the errors, or after they began: a deploy happened, it is not the cause.
    expect(names(contextOf([errors, rollout("12:01")]))).toEqual(["Deploy history", "Page the team", "Error runbook", "Dashboard"]);
    expect(names(contextOf([errors, rollout("14:05")]))).toEqual(["Deploy history", "Page the team", "Error runbook", "Dashboard"]);
    // After the issue time, not even a deploy before it.
    expect(names(contextOf([errors, rollout("14:09")]))).toEqual(["Page the team", "Error runbook", "Dashboard"]);
  });

  it("offers nothing conditional on trouble when nothing abnormal was found, even after a rollout", () => {
    expect(names(contextOf([calm, rollout("14:01")]))).toEqual(["Deploy history", "All clear", "Dashboard"]);
    expect(names(quiet)).toEqual(["All clear", "Dashboard"]);
  });

  it("offers a mitigation for a cause of a symptom's kind only when that is the likely cause, not when a release came before it", () => {
    const raise: MitigationTemplate[] = [{ toolName: "kubectl", customName: "Raise the memory limit", when: { likelyCause: "saturation" } }];
    const memory: Finding = {
      gadget: "Memory",
      evidence: {
        kind: "metric",
        action: "Memory",
        labels: {},
        seriesCount: 1,
        value: 0.99,
        baseline: 0.5,
        low: 0.4,
        high: 0.6,
        ratio: 2,
        severity: 10_002,
        abnormal: true,
        onset: at("14:02"),
        saturation: { limit: 0.95, direction: "up" },
        baselineMs: 3_600_000,
      },
    };
    const offered = (findings: readonly Finding[]) => renderMitigations(raise, {}, contextOf(findings)).map((mitigation) => mitigation.customName);
    expect(offered([memory, errors])).toEqual(["Raise the memory limit"]);
    expect(offered([memory, errors, rollout("13:58")])).toEqual([]);
  });

  it("offers a mitigation for an upstream cause by `upstream`, never by the kind of the upstream's own symptom", () => {
    const templates: MitigationTemplate[] = [
      { toolName: "kubectl", customName: "Raise the memory limit", when: { likelyCause: "saturation" } },
      { toolName: "Pager", customName: "Page the upstream's team", when: { likelyCause: "upstream" } },
    ];
    const upstreamMemory: Finding = {
      gadget: "Upstream orders",
      upstream: "orders",
      evidence: {
        kind: "metric",
        action: "Memory of orders",
        labels: {},
        seriesCount: 1,
        value: 0.99,
        baseline: 0.5,
        low: 0.4,
        high: 0.6,
        ratio: 2,
        severity: 10_002,
        abnormal: true,
        onset: at("14:01"),
        saturation: { limit: 0.95, direction: "up" },
        baselineMs: 3_600_000,
      },
    };
    const context: MitigationContext = {
      ...contextOf([]),
      ranking: rankFindings([upstreamMemory, errors], { time, attributes: { service: "checkout" }, upstreams: ["orders"] }),
    };
    expect(renderMitigations(templates, {}, context).map((mitigation) => mitigation.customName)).toEqual(["Page the upstream's team"]);
  });

  it("offers a mitigation tied to an action only when that action found something abnormal", () => {
    expect(names(contextOf([{ ...errors, evidence: { ...errors.evidence, action: "Errors of payments" } }]))).toEqual(["Page the team", "Dashboard"]);
  });
});

describe("an Alertmanager silence mitigation", () => {
  const silence: MitigationTemplate = {
    toolName: "Alertmanager",
    customName: "Silence {{service}} for 2 h",
    when: { abnormal: true },
    silence: {
      dataSource: "alerts",
      matchers: [
        { name: "service", value: "{{service}}" },
        { name: "severity", value: "page" },
      ],
      duration: "2h",
    },
  };

  it("is an API v2 silence with exact matchers, from the issue time for its duration, and a link to the filled-in silence form", () => {
    const [mitigation] = renderMitigations([silence], { service: "checkout" }, contextOf([errors]));
    expect(mitigation).toEqual({
      toolName: "Alertmanager",
      customName: "Silence checkout for 2 h",
      url: `http://alertmanager.example:9093/am/#/silences/new?filter=${encodeURIComponent('{service="checkout", severity="page"}')}`,
      action: {
        matchers: [
          { name: "service", value: "checkout", isRegex: false, isEqual: true },
          { name: "severity", value: "page", isRegex: false, isEqual: true },
        ],
        startsAt: "2026-11-20T14:08:00.000Z",
        endsAt: "2026-11-20T16:08:00.000Z",
        createdBy: "playbook-execution-service",
        comment: "Silence checkout for 2 h",
      },
    });
    expect(renderMitigations([silence], { service: "checkout" }, quiet)).toEqual([]);
    const own = renderMitigations(
      [{ ...silence, silence: { matchers: [{ name: "service", value: "{{service}}" }], duration: "30m", comment: "Deploy of {{service}}", createdBy: "sre" } }],
      { service: "x" },
      contextOf([errors]),
    );
    expect(own[0]?.url).toBeUndefined();
    expect(own[0]?.action).toMatchObject({ comment: "Deploy of x", createdBy: "sre", endsAt: "2026-11-20T14:38:00.000Z" });
  });

  it("has no link when its data source's connector offers no silence form", () => {
    const onPrometheus: MitigationTemplate = {
      ...silence,
      silence: { dataSource: "metrics", matchers: [{ name: "service", value: "{{service}}" }], duration: "2h" },
    };
    const [mitigation] = renderMitigations([onPrometheus], { service: "checkout" }, contextOf([errors]));
    expect(mitigation?.url).toBeUndefined();
    expect(mitigation?.action?.matchers).toEqual([{ name: "service", value: "checkout", isRegex: false, isEqual: true }]);
  });

  it.each(HOSTILE_VALUES)("%j: one exact matcher value, and one matcher in the form's filter", (value) => {
    const [mitigation] = renderMitigations([silence], { service: value }, contextOf([errors]));
    expect(mitigation?.action?.matchers).toEqual([
      { name: "service", value, isRegex: false, isEqual: true },
      { name: "severity", value: "page", isRegex: false, isEqual: true },
    ]);
    const url = new URL(mitigation?.url ?? "");
    expect(url.origin + url.pathname).toBe("http://alertmanager.example:9093/am/");
    const filter = decodeURIComponent(url.hash.slice("#/silences/new?filter=".length));
    // The filter's grammar: name="quoted value" pairs; the value comes back whole from its quotes.
    const match = /^\{service="((?:[^"\\]|\\.)*)", severity="page"\}$/s.exec(filter);
    expect(match?.[1]?.replace(/\\n/g, "\n").replace(/\\(.)/g, "$1")).toBe(value);
  });

  it("is left out when a value is not valid Unicode text", () => {
    expect(renderMitigations([silence, { toolName: "Pager" }], { service: "a\uD800" }, contextOf([errors]))).toEqual([{ toolName: "Pager" }]);
  });
});
