import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "./mcp-server.js";
import type { PesService } from "./pes-service.js";
import type { UnexpectedErrorReport } from "./tools/pes-tool.js";

/**
 * Serves the tools over this process's stdin and stdout (JSON-RPC, one message a line) until the client
 * closes stdin. Nothing else may write to stdout meanwhile.
 */
export async function serveStdio(service: PesService, report: UnexpectedErrorReport): Promise<void> {
  const server = createMcpServer(service, report);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  // The transport reads stdin but does not watch its end: the client closing it is the end of the session.
  process.stdin.once("end", () => void server.close());
  await server.connect(transport);
  await closed;
}
