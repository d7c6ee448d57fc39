import type { Logger } from "@pes/logger";
import type { Express } from "express";
import { z } from "zod";
import { ANSWERED, HttpReply, organizationRoute, type RouteRuntime } from "../routes/route.js";
import { organizationService, type OrganizationServiceDeps } from "./organization-service.js";

/** Where MCP clients connect (Streamable HTTP). */
export const MCP_PATH = "/mcp";

export interface McpEndpointDeps extends OrganizationServiceDeps {
  logger: Logger;
}

type McpModule = typeof import("@pes/mcp");
let loading: Promise<McpModule> | undefined;

/**
 * The MCP SDK (and the JSON Schema and validation libraries it brings) is loaded on the first MCP request,
 * not at start-up: most instances never serve one (BENCHMARKS.md has the resident memory it costs).
 */
function loadMcp(): Promise<McpModule> {
  loading ??= import("@pes/mcp");
  return loading;
}

/**
 * Mounts the MCP endpoint: `POST /mcp` answers one JSON-RPC message statelessly (no session: any instance
 * behind a load balancer takes any request), authenticated and limited like every organization route
 * (401, 403, 413, 415); `GET` and `DELETE`, which only a session would serve (its event stream, its end),
 * answer 405 once authenticated. docs/mcp.md.
 */
export function mountMcp(app: Express, runtime: RouteRuntime, deps: McpEndpointDeps): void {
  const post = organizationRoute({
    method: "post",
    path: MCP_PATH,
    auth: "organization",
    body: z.unknown(),
    operation: null,
    handle: async ({ req, res, caller, body, requestId }) => {
      const mcp = await loadMcp();
      const service = organizationService(deps, caller, requestId, (message) => new mcp.ToolError(message));
      await mcp.answerMcpPost(service, req, res, body, (error, tool) => deps.logger.error({ err: error, requestId, tool }, "MCP tool failed"));
      return ANSWERED;
    },
  });
  const sessionless = organizationRoute({
    method: "get",
    path: MCP_PATH,
    auth: "organization",
    operation: null,
    handle: () => new HttpReply(405, { error: "This MCP endpoint is stateless: POST each message; it keeps no session or event stream" }, { Allow: "POST" }),
  });
  app.post(MCP_PATH, post.toHandler(runtime));
  app.get(MCP_PATH, sessionless.toHandler(runtime));
  app.delete(MCP_PATH, sessionless.toHandler(runtime));
}
