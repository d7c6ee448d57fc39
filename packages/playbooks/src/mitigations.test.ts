import { describe, expect, it } from "vitest";
import { renderMitigations } from "./mitigations.js";

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
