// A worker process for the black-box tests: the real execution worker (built dist) with an execute job
// that announces itself with a file and finishes only once the test creates `<SIGNAL_DIR>/release`.
// Env: REDIS_URL, QUEUE_PREFIX, SIGNAL_DIR, WORKER_LOCK_DURATION_MS, WORKER_STALLED_INTERVAL_MS,
// SHUTDOWN_TIMEOUT_MS.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createExecutionWorker, EXECUTE_JOB } from "@pes/executions";
import { handleJob } from "@pes/jobs";
import { pino } from "pino";

const env = process.env;
const logger = pino({ name: `test-worker-${process.pid}` });
const signalDir = env.SIGNAL_DIR;

function released(signal) {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (existsSync(join(signalDir, "release"))) done(true);
    }, 20);
    const done = (value) => {
      clearInterval(timer);
      resolve(value);
    };
    signal.addEventListener("abort", () => done(false), { once: true });
  });
}

const worker = createExecutionWorker({
  redisUrl: env.REDIS_URL,
  prefix: env.QUEUE_PREFIX,
  logger,
  concurrency: 1,
  lockDurationMs: Number(env.WORKER_LOCK_DURATION_MS),
  stalledIntervalMs: Number(env.WORKER_STALLED_INTERVAL_MS),
  handlers: [
    handleJob(EXECUTE_JOB, async (job, { signal }) => {
      writeFileSync(join(signalDir, `started-${process.pid}`), job.requestId);
      const finished = await released(signal);
      return finished ? { highlights: `done by ${process.pid}` } : { error: `aborted in ${process.pid}` };
    }),
  ],
});

let stopping = false;
for (const name of ["SIGTERM", "SIGINT"]) {
  process.on(name, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal: name }, "shutting down");
    worker.close(Number(env.SHUTDOWN_TIMEOUT_MS)).then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "close failed");
        process.exit(1);
      },
    );
  });
}

await worker.start();
logger.info("test worker ready");
