export { ToolError, type PesService } from "./pes-service.js";
export type { UnexpectedErrorReport } from "./tools/pes-tool.js";
export { answerMcpPost } from "./streamable-http.js";
export { serveStdio } from "./stdio.js";
