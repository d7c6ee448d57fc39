import { SimilarExecutions } from "@pes/contracts";
import { ExecutionReference } from "./execution-reference.js";
import { defineTool } from "./pes-tool.js";

export const findSimilarIncidents = defineTool({
  name: "find_similar_incidents",
  title: "Find past incidents like an execution",
  description:
    "Past incidents like this execution, by its execution id: the organization's earlier executions most similar to its " +
    "verdict (at most 3, most similar first, each of another cause), each with what matched and what differed field by " +
    "field (cause, symptoms, log templates, alerts, playbook, attributes), how often such incidents happened and when first " +
    "and last, and any confirmed cause and fix someone recorded (`confirmed`: right or wrong, the actual cause, the " +
    'resolution). Use it to ask "has this happened before, and what fixed it?". Seen before — verify: a past incident is ' +
    "a lead to check against this execution's evidence, never proof; it does not change the verdict. Empty when nothing " +
    "is similar enough. Refused when the execution has no verdict yet, or the organization's memory is off.",
  input: ExecutionReference,
  output: SimilarExecutions,
  readOnly: true,
  run: (service, { executionId }) => service.findSimilar(executionId),
});
