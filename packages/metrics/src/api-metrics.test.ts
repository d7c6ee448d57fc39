import { describe, expect, it } from "vitest";
import { createApiMetrics, type QueueReading } from "./api-metrics.js";

const reading: QueueReading = {
  queue: "playbook-executions",
  counts: { waiting: 3, active: 2, delayed: 0, failed: 1 },
  oldestWaitingAgeSeconds: 4.5,
};

describe("createApiMetrics", () => {
  it("records requests by method, route pattern and status, with their latency", async () => {
    const metrics = createApiMetrics();
    metrics.observeHttpRequest("POST", "/playbook/execution", 200, 0.3);
    metrics.observeHttpRequest("POST", "/playbook/execution", 200, 0.7);
    metrics.observeHttpRequest("GET", "unmatched", 404, 0.001);

    const text = await metrics.registry.metrics();
    expect(text).toContain('pes_http_request_duration_seconds_count{method="POST",route="/playbook/execution",status="200"} 2');
    expect(text).toContain('pes_http_request_duration_seconds_sum{method="POST",route="/playbook/execution",status="200"} 1');
    expect(text).toContain('pes_http_request_duration_seconds_bucket{le="0.5",method="POST",route="/playbook/execution",status="200"} 1');
    expect(text).toContain('pes_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1');
  });

  it("counts reply-path timeouts by job state, every state from zero", async () => {
    const metrics = createApiMetrics();
    metrics.countReplyTimeout("queued");

    const text = await metrics.registry.metrics();
    expect(text).toContain('pes_reply_timeouts_total{job_state="queued"} 1');
    expect(text).toContain('pes_reply_timeouts_total{job_state="completed"} 0');
  });

  it("counts coalesced execution requests, from zero", async () => {
    const metrics = createApiMetrics();
    expect(await metrics.registry.metrics()).toContain("pes_executions_coalesced_total 0");
    metrics.countCoalesced();
    metrics.countCoalesced();
    expect(await metrics.registry.metrics()).toContain("pes_executions_coalesced_total 2");
  });

  it("has the process metrics", async () => {
    const text = await createApiMetrics().registry.metrics();
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it("reads the queues on a scrape, once for every scrape within the cache time", async () => {
    let reads = 0;
    const metrics = createApiMetrics({
      queueCacheMs: 60_000,
      readQueues: async () => {
        reads += 1;
        return [reading];
      },
    });
    expect(reads).toBe(0);

    const texts = await Promise.all([metrics.registry.metrics(), metrics.registry.metrics(), metrics.registry.metrics()]);
    await metrics.registry.metrics();

    expect(reads).toBe(1);
    for (const text of texts) {
      expect(text).toContain('pes_queue_jobs{queue="playbook-executions",state="waiting"} 3');
      expect(text).toContain('pes_queue_jobs{queue="playbook-executions",state="failed"} 1');
      expect(text).toContain('pes_queue_oldest_waiting_job_age_seconds{queue="playbook-executions"} 4.5');
    }
  });

  it("reads again once the cache time has passed", async () => {
    let reads = 0;
    const metrics = createApiMetrics({
      queueCacheMs: 0,
      readQueues: async () => {
        reads += 1;
        return [{ ...reading, counts: { waiting: reads } }];
      },
    });
    const waiting = async () => Number(/pes_queue_jobs\{queue="playbook-executions",state="waiting"\} (\d+)/.exec(await metrics.registry.metrics())?.[1]);
    const first = await waiting();
    expect(await waiting()).toBeGreaterThan(first);
  });

  it("leaves the queue gauges out of a scrape whose reading failed, and says why", async () => {
    let fail = false;
    const errors: unknown[] = [];
    const metrics = createApiMetrics({
      queueCacheMs: 0,
      readQueues: async () => {
        if (fail) throw new Error("Redis is unreachable");
        return [reading];
      },
      onQueueReadError: (error) => errors.push(error),
    });
    expect(await metrics.registry.metrics()).toContain("pes_queue_jobs{");

    fail = true;
    const text = await metrics.registry.metrics();

    expect(text).not.toContain("pes_queue_jobs{");
    expect(text).not.toContain("pes_queue_oldest_waiting_job_age_seconds{");
    expect(text).toContain("pes_http_request_duration_seconds");
    expect(errors.length).toBeGreaterThan(0);
  });
});
