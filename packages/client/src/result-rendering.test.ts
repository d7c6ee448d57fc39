import { describe, expect, it } from "vitest";
import { renderPlaybooks, renderResult } from "./result-rendering.js";

describe("renderResult", () => {
  it("shows the summary, gadgets, actions with links, mitigations and the thread, in that order", () => {
    const text = renderResult({
      highlights: "p99 latency of checkout rose 4× at 14:05 UTC.\nThe request rate stayed flat.",
      gadgetsHighlights: [{ title: "Latency of checkout", highlights: "p99 at 1.95 s (was 0.49 s)" }, { title: "Deploys" }],
      actionResults: [
        { title: "p99 latency", shortAnswer: "4.0× at 14:05", mostImportantLink: "http://prometheus/graph?g0.expr=x" },
        { title: "Request rate" },
      ],
      actionableMitigations: [
        { toolName: "Grafana", customName: "Checkout dashboard", url: "http://grafana/d/checkout" },
        { toolName: "Alertmanager", action: { silence: { service: "checkout" } } },
      ],
      enrichmentLink: "https://acme.slack.com/archives/C1/p1",
    });
    expect(text).toBe(
      [
        "p99 latency of checkout rose 4× at 14:05 UTC.",
        "The request rate stayed flat.",
        "",
        "Gadgets",
        "  - Latency of checkout",
        "    p99 at 1.95 s (was 0.49 s)",
        "  - Deploys",
        "",
        "Actions",
        "  - p99 latency: 4.0× at 14:05",
        "    http://prometheus/graph?g0.expr=x",
        "  - Request rate",
        "",
        "Mitigations",
        "  - Checkout dashboard (Grafana)",
        "    http://grafana/d/checkout",
        "  - Alertmanager",
        '    action: {"silence":{"service":"checkout"}}',
        "",
        "Thread: https://acme.slack.com/archives/C1/p1",
        "",
      ].join("\n"),
    );
  });

  it("puts the error first", () => {
    expect(renderResult({ error: "Execution timed out after 120000 ms" })).toBe("Error: Execution timed out after 120000 ms\n");
    expect(renderResult({})).toBe("(empty result)\n");
  });

  it("strips terminal escapes and bidi overrides that alert text could carry", () => {
    const text = renderResult({
      highlights: "CPU high\u001b]0;pwned\u0007 on \u001b[2Aweb-1\u202e",
      actionResults: [{ title: "t\u009bx", shortAnswer: "tab\tkept" }],
    });
    expect(text).toBe("CPU high]0;pwned on [2Aweb-1\n\nActions\n  - tx: tab\tkept\n");
  });
});

describe("renderPlaybooks", () => {
  it("says when the organization has none", () => {
    expect(renderPlaybooks([])).toBe("No playbooks for this organization.\n");
  });
});
