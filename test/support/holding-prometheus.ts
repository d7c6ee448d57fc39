import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";

/**
 * A Prometheus query API on 127.0.0.1 that can hold requests open (`hold()` … `release()`), so a test
 * can stop or kill a worker while it is mid-execution. Answers `/api/v1/query_range` and `/api/v1/query`
 * with a flat series.
 */
export function startHoldingPrometheus(): Promise<TestHttpServer> {
  return startTestHttpServer((_request, response) => {
    const now = Math.floor(Date.now() / 1000);
    const values = Array.from({ length: 10 }, (_, i) => [now - 600 + i * 60, "1"]);
    sendJson(response, 200, { status: "success", data: { resultType: "matrix", result: [{ metric: {}, values }] } });
  });
}
