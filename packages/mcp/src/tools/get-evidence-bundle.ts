import { EvidenceBundle } from "@pes/contracts";
import { ExecutionReference } from "./execution-reference.js";
import { defineTool } from "./pes-tool.js";

export const getEvidenceBundle = defineTool({
  name: "get_evidence_bundle",
  title: "Get an execution's evidence bundle",
  description:
    "The evidence behind an investigation, by its execution id: for each of the playbook's actions, the query it ran " +
    "(rendered), over which time window, and the observation its data source answered (metric series, log lines, " +
    "alerts, Kubernetes objects), with the verdict recorded. Use it to check or explain a verdict from the raw data. " +
    "Kept only when the organization's configuration keeps evidence, for its retention; never holds a data source's " +
    "address or credentials. Can be large.",
  input: ExecutionReference,
  output: EvidenceBundle,
  readOnly: true,
  run: (service, { executionId }) => service.readEvidence(executionId),
});
