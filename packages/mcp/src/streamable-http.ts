import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpServer } from "./mcp-server.js";
import type { PesService } from "./pes-service.js";
import type { UnexpectedErrorReport } from "./tools/pes-tool.js";

/**
 * Answers one MCP POST (a JSON-RPC message or batch, already read and parsed) statelessly: a server and a
 * transport of its own for this request alone, no session id, the answer as one JSON body. Any instance
 * behind a load balancer can take any request, and nothing is left in memory after it.
 */
export async function answerMcpPost(
  service: PesService,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  report: UnexpectedErrorReport,
): Promise<void> {
  const server = createMcpServer(service, report);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
