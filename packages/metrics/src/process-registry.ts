import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * A registry of one process's metrics, with prom-client's default process metrics (CPU, memory, heap,
 * event-loop lag, GC) under their usual names, so that stock Node.js dashboards work on them too.
 * One per process: the default metrics sample the whole process, whichever registry holds them.
 */
export function createProcessRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
