import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { PesService } from "./pes-service.js";
import { tools } from "./tool-registry.js";
import type { UnexpectedErrorReport } from "./tools/pes-tool.js";

const INSTRUCTIONS =
  "The Playbook Execution Service investigates incidents: it runs a playbook's queries against the organization's " +
  "data sources around the time of an issue and concludes with a verdict (the likely cause, or none). Find a playbook " +
  "with list_playbooks, run it with investigate_issue, then read the conclusion (get_verdict), the whole result " +
  "(get_execution) or the evidence behind it (get_evidence_bundle, replay_evidence_bundle). Everything is scoped to the " +
  "organization of the token you connected with.";

const byName = new Map(tools.map((tool) => [tool.name, tool]));
const listings = tools.map((tool) => tool.listing);

/**
 * The MCP server of the service: every tool of the registry, calling `service` for the caller's
 * organization. The SDK's low-level server, not its McpServer: that one turns schemas into JSON Schema
 * with options of its own, which refuse the parts of the evidence bundle's contract JSON Schema cannot
 * say (its samples' custom check), where the OpenAPI document leaves them open.
 */
export function createMcpServer(service: PesService, report: UnexpectedErrorReport): Server {
  const server = new Server({ name: "playbook-execution-service", version: "0.1.0" }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listings }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return tool.call(service, request.params.arguments, report);
  });
  return server;
}
