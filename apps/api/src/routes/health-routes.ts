import { JsonText } from "@pes/contracts";
import type { ExecutionClient } from "@pes/executions";
import { z } from "zod";
import { AppError } from "../errors.js";
import { failures } from "./responses.js";
import { publicRoute, type Route } from "./route.js";

const HealthStatus = z.object({ status: z.literal("ok") });
const OK = JsonText.of(HealthStatus.parse({ status: "ok" }));

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the configuration is loaded, which
 * holds once the app exists, and the queue can take a job; false while shutting down so a load balancer
 * drains this instance first).
 */
export function healthRoutes(deps: { executionClient: Pick<ExecutionClient, "isReady">; isShuttingDown: () => boolean }): Route[] {
  return [
    publicRoute({
      method: "get",
      path: "/healthz",
      auth: "none",
      operation: { operationId: "health", summary: "Liveness", responses: { 200: { description: "The process is up.", body: HealthStatus } } },
      handle: () => OK,
    }),
    publicRoute({
      method: "get",
      path: "/readyz",
      auth: "none",
      operation: {
        operationId: "ready",
        summary: "Readiness: configuration loaded and the job queue reachable",
        responses: { 200: { description: "Ready to take executions.", body: HealthStatus }, ...failures("service_unavailable") },
      },
      handle: async () => {
        if (deps.isShuttingDown()) throw new AppError("service_unavailable", "Not ready: shutting down");
        const queueReady = await deps.executionClient.isReady().catch(() => false);
        if (!queueReady) throw new AppError("service_unavailable", "Not ready: the job queue cannot be reached");
        return OK;
      },
    }),
  ];
}
