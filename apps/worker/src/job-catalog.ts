import type { Engine } from "@pes/engine";
import { EXECUTE_JOB, handleJob, type JobCatalog } from "@pes/queue";

/**
 * Every job this worker runs: each declaration (name, payload schema, options; shared with the producers
 * in @pes/queue) with its handler. A handler only calls plain functions; the runtime parses the payload,
 * applies the job's timeout and deadline to its signal, retries as declared and replies to a waiting caller.
 */
export function createJobCatalog(deps: { engine: Engine }): JobCatalog {
  return [handleJob(EXECUTE_JOB, (job, { signal }) => deps.engine.execute(job, signal))];
}
