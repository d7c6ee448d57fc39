import { describe, expect, it } from "vitest";
import { auditedQuery } from "./sent-queries.js";

describe("auditedQuery", () => {
  it("keeps the query as sent but for the data source's secrets, a URL's credentials and credential-named keys", () => {
    // As a data source's run redacts its secrets (redaction.ts of @pes/connectors).
    const redact = (text: string) => text.split("s3cr3t-token").join("[redacted]");
    const query = {
      method: "POST",
      path: "/search?key=s3cr3t-token",
      body: { query: "service:checkout", callback: "https://user:hunter22@hooks.example.com/x?y=1", nested: [{ Authorization: "Bearer abc" }] },
      headers: { "X-Api-Key": "plain-key", accept: "application/json" },
      limit: 100,
    };

    expect(auditedQuery(query, redact)).toEqual({
      method: "POST",
      path: "/search?key=[redacted]",
      body: { query: "service:checkout", callback: "https://[redacted]@hooks.example.com/x?y=1", nested: [{ Authorization: "[redacted]" }] },
      headers: { "X-Api-Key": "[redacted]", accept: "application/json" },
      limit: 100,
    });
  });

  it("leaves a query without secrets as it is", () => {
    const query = { promql: 'sum(rate(http_requests_total{service="checkout"}[5m]))', step: 30 };
    expect(auditedQuery(query, (text) => text)).toEqual(query);
  });
});
