// The worker's catalog is the whole list of its jobs: a handler for each, or the worker does not compile.
import { BATCH_EXECUTION_QUEUE, EXECUTION_JOBS, SERVICE_QUEUES } from "@pes/executions";
import { handleCatalog } from "@pes/jobs";
import { describe, expect, it } from "vitest";

describe("the worker's job catalog", () => {
  it("lists every job the worker runs, under its own name, the executions also from the batch lane", () => {
    expect(
      Object.entries(EXECUTION_JOBS).map(([name, job]) => ({
        name,
        job: job.name,
        queue: job.queue,
        batchLane: "batchLane" in job ? job.batchLane : undefined,
      })),
    ).toEqual([
      { name: "execute", job: "execute", queue: "playbook-executions", batchLane: BATCH_EXECUTION_QUEUE },
      { name: "execute-message", job: "execute-message", queue: "playbook-message-executions", batchLane: BATCH_EXECUTION_QUEUE },
      { name: "start-batch", job: "start-batch", queue: "playbook-batch-starts", batchLane: undefined },
      { name: "post-batch-item", job: "post-batch-item", queue: "playbook-chat-posts", batchLane: undefined },
    ]);
    expect(SERVICE_QUEUES).toEqual([
      "playbook-executions",
      "playbook-message-executions",
      BATCH_EXECUTION_QUEUE,
      "playbook-batch-starts",
      "playbook-chat-posts",
    ]);
  });

  it("does not compile without a handler for each of its jobs", () => {
    // @ts-expect-error: a worker whose catalog has no handler for execute, execute-message and start-batch
    expect(() => handleCatalog(EXECUTION_JOBS, { "post-batch-item": async () => undefined })).toThrow('no handler for job "execute" of the catalog');
  });
});
