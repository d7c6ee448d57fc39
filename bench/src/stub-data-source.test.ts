import { afterEach, describe, expect, it } from "vitest";
import { createStubDataSource, type StubDataSource } from "./stub-data-source.js";

let stub: StubDataSource | undefined;
afterEach(async () => {
  await stub?.stop();
  stub = undefined;
});

describe("stub data source", () => {
  it("answers a form-encoded POST query_range with a matrix inside the asked window", async () => {
    stub = createStubDataSource({ delayMs: 0 });
    const port = await stub.start(0);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/query_range`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ query: "up", start: "1700000000", end: "2023-11-14T23:13:20Z", step: "60" }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      status: string;
      data: { resultType: string; result: { values: [number, string][] }[] };
    };
    expect(body.status).toBe("success");
    expect(body.data.resultType).toBe("matrix");
    const values = body.data.result[0]?.values ?? [];
    expect(values.length).toBeGreaterThan(1);
    expect(values[0]?.[0]).toBe(1_700_000_000);
    expect(values.every(([t]) => t <= 1_700_003_600)).toBe(true);
    expect(stub.requestCount()).toBe(1);
  });

  it("answers a GET instant query with a vector", async () => {
    stub = createStubDataSource({ delayMs: 0 });
    const port = await stub.start(0);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=up&time=1700000000`);
    const body = (await response.json()) as { data: { resultType: string; result: { value: [number, string] }[] } };
    expect(body.data.resultType).toBe("vector");
    expect(body.data.result[0]?.value).toEqual([1_700_000_000, "1"]);
  });

  it("answers 404 on other paths", async () => {
    stub = createStubDataSource({ delayMs: 0 });
    const port = await stub.start(0);
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/labels`);
    expect(response.status).toBe(404);
  });
});
