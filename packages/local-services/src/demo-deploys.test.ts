import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoDeploy, startDemoDeploys } from "./demo-deploys.js";
import type { TestHttpServer } from "./test-http-server.js";

describe("the demo deploy API", () => {
  const incidentAt = new Date("2026-11-20T14:05:00Z");
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await startDemoDeploys({ checkout: demoDeploy(incidentAt) });
  });
  afterAll(() => server.close());

  it("answers a service's last deploy, 4 minutes before the incident", async () => {
    const response = await fetch(`${server.url}/services/checkout/deploys/latest`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ service: "checkout", version: "v1.42", deployedAt: "2026-11-20T14:01:00.000Z" });
  });

  it("answers 404 for a service it does not know, and for any other path", async () => {
    expect((await fetch(`${server.url}/services/search/deploys/latest`)).status).toBe(404);
    expect((await fetch(`${server.url}/services/toString/deploys/latest`)).status).toBe(404);
    expect((await fetch(`${server.url}/deploys`)).status).toBe(404);
  });
});
