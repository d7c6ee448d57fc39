import { ExecutionStatus } from "@pes/contracts";
import { ExecutionReference } from "./execution-reference.js";
import { defineTool } from "./pes-tool.js";

export const getExecution = defineTool({
  name: "get_execution",
  title: "Get an execution",
  description:
    "Read back an investigation by its execution id: its status (queued, running, completed or failed) and, once " +
    "completed, its full result (verdict, highlights, findings per action, mitigations, links). Use it for an execution " +
    "started earlier, by you or by anyone of your organization (an alert webhook, a batch, the CLI), while it is kept. " +
    "For the conclusion alone, get_verdict is shorter.",
  input: ExecutionReference,
  output: ExecutionStatus,
  readOnly: true,
  run: (service, { executionId }) => service.readExecution(executionId),
});
