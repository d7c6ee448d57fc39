export { ToolError, type PesService } from "./pes-service.js";
export { INTERNAL_ERROR, type PesTool, type UnexpectedErrorReport } from "./tools/pes-tool.js";
export { tools } from "./tool-registry.js";
export { createMcpServer } from "./mcp-server.js";
export { answerMcpPost } from "./streamable-http.js";
export { serveStdio } from "./stdio.js";
