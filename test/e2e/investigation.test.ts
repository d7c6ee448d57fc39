import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookExecutionResult } from "@pes/contracts";
import { demoIncidentOpenMetrics, startPrometheus } from "@pes/local-services";
import { exampleConfig, postJson, startStack, type Stack } from "../support/stack.js";

// A known incident: checkout's p99 latency jumps from ≈0.49 s to ≈1.95 s (≈4×) at 14:05 UTC.
const incidentAt = new Date("2026-11-20T14:05:00Z");

let prometheus: Awaited<ReturnType<typeof startPrometheus>>;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack;

beforeAll(async () => {
  prometheus = await startPrometheus({ openMetrics: demoIncidentOpenMetrics({ incidentAt }) });
  config = await exampleConfig({ metrics: prometheus.url });
  stack = await startStack({ name: "investigation", configDir: config.dir });
});

afterAll(async () => {
  await stack?.stop();
  await prometheus?.stop();
  await config?.remove();
});

function actionResult(result: PlaybookExecutionResult, title: RegExp) {
  const found = result.actionResults?.find((action) => title.test(action.title ?? ""));
  if (found === undefined) throw new Error(`no action result titled ${title}: ${JSON.stringify(result.actionResults)}`);
  return found;
}

describe("an investigation against a real Prometheus, through the API, the queue and a worker process", () => {
  it("identifies the playbook from the title, names the 4× latency jump and links to the expression and range", async () => {
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), {
      title: "High latency on checkout in production",
      time: incidentAt.toISOString(),
    });
    expect(status).toBe(200);
    const result = body as PlaybookExecutionResult;
    expect(result.error).toBeUndefined();

    const latency = actionResult(result, /p99 latency/i);
    const ratio = Number(/(\d+(?:\.\d+)?)\s*×/.exec(latency.shortAnswer ?? "")?.[1]);
    expect(ratio).toBeGreaterThan(3.5);
    expect(ratio).toBeLessThan(4.5);
    expect(latency.shortAnswer).toMatch(/14:0[56]/);

    const link = new URL(latency.mostImportantLink ?? "");
    expect(link.origin).toBe(prometheus.url);
    expect(link.pathname).toBe("/graph");
    expect(link.searchParams.get("g0.expr")).toContain('http_request_duration_seconds_bucket{service="checkout"}');
    expect(link.searchParams.get("g0.expr")).toContain("histogram_quantile(0.99");
    // The window is 1 h before to 15 min after the issue: 75 minutes ending 14:20 UTC.
    expect(link.searchParams.get("g0.end_input")).toBe("2026-11-20 14:20:00");
    expect(link.searchParams.get("g0.range_input")).toBe("75m");

    expect(result.highlights).toMatch(/p99 latency/i);
    expect(result.highlights).toMatch(/14:0[56]/);
    const latencyGadget = result.gadgetsHighlights?.find((gadget) => /latency/i.test(gadget.title));
    expect(latencyGadget?.title).toMatch(/checkout/);
    expect(latencyGadget?.highlights).toMatch(/p99 latency/i);

    // The flat request rate is reported as normal, not as part of the incident.
    expect(actionResult(result, /request rate/i).shortAnswer).not.toMatch(/×/);

    const mitigationTools = result.actionableMitigations?.map((mitigation) => mitigation.toolName) ?? [];
    expect(mitigationTools.length).toBeGreaterThan(0);
    expect(JSON.stringify(result.actionableMitigations)).toContain("checkout");
  });

  it("gives the same text for the same data", async () => {
    const input = { bookName: "checkout-latency", time: incidentAt.toISOString(), attributes: { service: "checkout", env: "production" } };
    const first = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    const second = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), input);
    expect(first.status).toBe(200);
    // All but the wall time its budget says it took (when the second is not served the first's result).
    const withoutWallTime = (body: unknown) =>
      JSON.parse(JSON.stringify(body), (key, value: unknown) => (key === "wallTimeMs" && typeof value === "number" ? 0 : value));
    expect(withoutWallTime(second.body)).toEqual(withoutWallTime(first.body));
  });

  it("keeps an attribute value from changing the query: an injection attempt matches no series", async () => {
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), {
      bookName: "checkout-latency",
      time: incidentAt.toISOString(),
      attributes: { service: 'checkout"} or vector(1) #', env: "production" },
    });
    expect(status).toBe(200);
    const latency = actionResult(body as PlaybookExecutionResult, /p99 latency/i);
    expect(latency.shortAnswer).not.toMatch(/×/);
    expect(latency.shortAnswer).toMatch(/no data/i);
    expect(new URL(latency.mostImportantLink ?? "").searchParams.get("g0.expr")).toContain('service="checkout\\"} or vector(1) #"');
  });

  it("lists the caller's organization's playbooks only", async () => {
    const response = await fetch(`${stack.baseUrl}/playbook`, { headers: { authorization: `Bearer ${stack.token()}` } });
    expect(response.status).toBe(200);
    const playbooks = (await response.json()) as { name: string; monitorNames: string[]; requiredAttributes?: string[] }[];
    const checkout = playbooks.find((playbook) => playbook.name === "checkout-latency");
    expect(checkout?.monitorNames).toContain("High latency on {{service}} in {{env}}");
    expect(checkout?.requiredAttributes).toEqual(["service"]);
  });

  it("answers 403 for an organization whose API is not enabled", async () => {
    const response = await fetch(`${stack.baseUrl}/playbook`, {
      headers: { authorization: `Bearer ${stack.token({ org: "globex" })}` },
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: "Client ID is not configured for the organization" });
  });

  it("keeps organizations apart: acme cannot run globex's playbook, even by its exact name", async () => {
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), { bookName: "disk-full" });
    expect(status).toBe(400);
    expect(body).toEqual({ error: [{ path: ["body", "bookName"], message: expect.stringMatching(/Unknown playbook "disk-full"/) }] });
  });

  it("answers 400 naming the field for a title no monitor name of the caller's organization matches (globex has one)", async () => {
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution`, stack.token(), {
      title: "Disk almost full on db-1",
      time: incidentAt.toISOString(),
    });
    expect(status).toBe(400);
    expect(body).toEqual({ error: [expect.objectContaining({ path: ["body", "title"] })] });
  });

  it("runs a batch on the same workers: one element per input, in order, bad items as their own errors", async () => {
    const { status, body } = await postJson(`${stack.baseUrl}/playbook/execution/batch`, stack.token(), {
      inputList: [
        { title: "High latency on checkout in production", time: incidentAt.toISOString() },
        { title: "Disk almost full on db-1", time: incidentAt.toISOString() },
        { bookName: "checkout-latency", time: "yesterday" },
        { bookName: "checkout-latency", time: incidentAt.toISOString(), attributes: { service: "search" } },
      ],
    });
    expect(status).toBe(200);
    const results = body as PlaybookExecutionResult[];
    expect(results).toHaveLength(4);
    expect(actionResult(results[0] ?? {}, /p99 latency/i).shortAnswer).toMatch(/×/);
    expect(results[1]).toEqual({ error: expect.stringMatching(/title/) });
    expect(results[2]).toEqual({ error: expect.stringMatching(/time/) });
    // search stayed flat: its latency is within the usual range.
    expect(actionResult(results[3] ?? {}, /p99 latency/i).shortAnswer).not.toMatch(/×/);
  });
});
