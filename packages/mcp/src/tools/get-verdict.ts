import { Verdict } from "@pes/contracts";
import { ToolError } from "../pes-service.js";
import { ExecutionReference } from "./execution-reference.js";
import { defineTool } from "./pes-tool.js";

export const getVerdict = defineTool({
  name: "get_verdict",
  title: "Get an execution's verdict",
  description:
    "The conclusion of a completed investigation, by its execution id: `conclusion` (cause, no-cause or ambiguous), the " +
    "likely `cause` (kind, subject, the action that showed it, confidence, quoted evidence), an `alternative` when " +
    'ambiguous, and the symptoms seen. Use it to answer "what caused it?" without the whole result; an error when the ' +
    "execution has not completed or reached no verdict.",
  input: ExecutionReference,
  output: Verdict,
  readOnly: true,
  run: async (service, { executionId }) => {
    const execution = await service.readExecution(executionId);
    if (execution.status === "queued" || execution.status === "running") {
      throw new ToolError(`The execution is ${execution.status}: its verdict comes once it completed`);
    }
    const verdict = execution.result?.verdict;
    if (verdict === undefined) throw new ToolError(`The execution reached no verdict: ${execution.result?.error ?? "its result has none"}`);
    return verdict;
  },
});
