import { sendJson, startTestHttpServer, type TestHttpServer } from "@pes/local-services";

/**
 * A Prometheus query API whose one series is flat, then four times higher over the last quarter of the
 * range asked (where the issue time falls): an investigation finds a symptom to cite, and to draw.
 */
export function startRisingPrometheus(): Promise<TestHttpServer> {
  return startTestHttpServer((request, response) => {
    const query = new URLSearchParams(request.method === "POST" ? request.body : new URL(request.url, "http://prometheus").search);
    // Prometheus takes a time as Unix seconds or RFC 3339, a step as seconds or a duration.
    const seconds = (value: string | null, fallback: number) =>
      value === null ? fallback : Number.isNaN(Number(value)) ? Date.parse(value) / 1000 : Number(value);
    const start = seconds(query.get("start"), Date.now() / 1000 - 3600);
    const end = seconds(query.get("end"), Date.now() / 1000);
    const step = Math.max(1, Number.parseFloat(query.get("step") ?? "60") || 60);
    const values: [number, string][] = [];
    for (let at = start; at <= end; at += step) values.push([at, at < end - (end - start) / 4 ? "0.21" : "0.86"]);
    sendJson(response, 200, { status: "success", data: { resultType: "matrix", result: [{ metric: { service: "checkout" }, values }] } });
  });
}
