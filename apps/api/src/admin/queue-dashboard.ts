import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { DashboardQueues } from "@pes/jobs";
import { Router } from "express";
import type { TokenVerifier } from "../auth/token-verifier.js";
import { type AdminAccess, requireAdmin } from "./admin-access.js";

/** Where the dashboard is served: its pages, its static files and its JSON API. */
const QUEUE_DASHBOARD_PATH = "/admin/queues";

/** ADMIN_DASHBOARD and the settings beside it. */
export interface QueueDashboardSettings extends AdminAccess {
  /** Bull Board's readOnlyMode: look, never retry, remove, pause or empty (ADMIN_DASHBOARD_READ_ONLY). */
  readOnly: boolean;
}

/**
 * Bull Board over the declared queues at QUEUE_DASHBOARD_PATH, every page, file and API call of it
 * behind requireAdmin. Read-only mode is enforced by Bull Board's API as well as hidden in its UI.
 * main.ts imports this module only when ADMIN_DASHBOARD is on: an API without it never loads Bull Board.
 */
export function queueDashboard(options: { queues: DashboardQueues["queues"]; settings: QueueDashboardSettings; verifier: TokenVerifier }): Router {
  const serverAdapter = new ExpressAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: options.settings.readOnly })),
    serverAdapter,
    options: { uiConfig: { boardTitle: "Playbook Execution Service" } },
  });
  const board: Router = serverAdapter.getRouter();
  return Router().use(QUEUE_DASHBOARD_PATH, requireAdmin(options.settings, options.verifier), board);
}
