import { JsonText } from "@pes/contracts";
import type { ExecutionClient } from "@pes/queue";
import { AppError } from "../errors.js";
import { publicRoute, type Route } from "./route.js";

const OK = JsonText.of({ status: "ok" });

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the configuration is loaded, which
 * holds once the app exists, and the queue can take a job; false while shutting down so a load balancer
 * drains this instance first).
 */
export function healthRoutes(deps: {
  executionClient: Pick<ExecutionClient, "isReady">;
  isShuttingDown: () => boolean;
}): Route[] {
  return [
    publicRoute({ method: "get", path: "/healthz", auth: "none", handle: () => OK }),
    publicRoute({
      method: "get",
      path: "/readyz",
      auth: "none",
      handle: async () => {
        if (deps.isShuttingDown()) throw new AppError("service_unavailable", "Not ready: shutting down");
        const queueReady = await deps.executionClient.isReady().catch(() => false);
        if (!queueReady) throw new AppError("service_unavailable", "Not ready: the job queue cannot be reached");
        return OK;
      },
    }),
  ];
}
