import { describe, expect, it } from "vitest";
import { renderMitigations } from "./mitigations.js";
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";

describe("renderMitigations", () => {
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
    );
    expect(mitigations).toEqual([
      {
        toolName: "Grafana",
        customName: "Dashboard of check out&x=1",
        url: "https://grafana.example/d/abc?var-service=check%20out%26x%3D1&var-env=prod%2Feu",
      },
      {
        toolName: "kubectl",
        action: { kind: "kubernetes.rollout-undo", deployment: "check out&x=1", namespace: "prod/eu", replicas: 3, dryRun: false, labels: ["app=check out&x=1"] },
      },
    ]);
  });

  it("keeps a shell-looking value as data inside one JSON string", () => {
    const [mitigation] = renderMitigations([{ toolName: "kubectl", action: { deployment: "{{service}}" } }], {
      service: 'x"; rm -rf / #',
    });
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
    );
    expect(mitigations).toEqual([
      { toolName: "Grafana", url: "https://grafana.example/d/abc?var-service=checkout" },
      { toolName: "Alertmanager", url: "https://am.example/#/silences/new" },
    ]);
  });

  it("does not add absent optional fields", () => {
    expect(renderMitigations([{ toolName: "Pager" }], {})).toEqual([{ toolName: "Pager" }]);
    expect(Object.keys(renderMitigations([{ toolName: "Pager" }], {})[0] ?? {})).toEqual(["toolName"]);
  });
});

/** Every injection family, as whole attribute values; the dot segments are refused and listed apart. */
const HOSTILE_VALUES = [
  '"', "'", "`", "{", "}", "}}", "{{x}}", "{{service}}", "|", "\\", "..\\..\\admin", "a\nb", "a\r\nb", "a\u0000b", "...",
  ".hidden", "/", "../admin", "a/../../admin", "..%2Fadmin", "%2e%2e%2fadmin", "?", "?admin=1", "&var-x=1", "#", "#frag", "@",
  "user@evil.example", "//evil.example/x", "javascript:alert(1)", "ünïcödé ✓ 😀 中文", "\u202Eevil", " ", "",
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
    const [runbook, grafana, silence] = renderMitigations(templates, { service: value }).map(({ url }) => new URL(url ?? ""));
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
    expect(renderMitigations([...templates, { toolName: "Pager {{service}}" }], { service: value })).toEqual([{ toolName: `Pager ${value}` }]);
  });

  it("leaves out a mitigation whose URL value is not valid Unicode, instead of failing the execution", () => {
    expect(renderMitigations([runbook, { toolName: "Pager" }], { service: "a\uD800" })).toEqual([{ toolName: "Pager" }]);
  });

  it("refuses a dot segment captured from the title by a monitor name", () => {
    const matcher = createMonitorNameMatcher([{ name: "restart", monitorNames: ["Service {{service}} is down"] }]);
    const attributes = matcher.match("Service .. is down")?.attributes ?? {};
    expect(attributes).toEqual({ service: ".." });
    expect(renderMitigations(templates, attributes)).toEqual([]);
  });
});
