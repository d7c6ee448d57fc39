import { ExecutionStatus, PlaybookExecutionInput } from "@pes/contracts";
import { defineTool } from "./pes-tool.js";

export const investigateIssue = defineTool({
  name: "investigate_issue",
  title: "Investigate an issue",
  description:
    "Run a playbook investigation of an incident or alert: the service queries the playbook's data sources (metrics, " +
    "logs, alerts, Kubernetes) around the issue's time, analyzes them and concludes. Identify the issue by `bookName` " +
    "(see list_playbooks), by the alert's `title` (the playbook is found by its monitor names; then `time` is required, " +
    "ISO 8601), or by a chat `messageLink`; `attributes` scope it (e.g. host, service, env). It waits for the result " +
    "(usually seconds, at most the service's execution timeout) and returns the execution: its `id` (for " +
    "get_execution, get_verdict, get_evidence_bundle and replay_evidence_bundle), its `status`, and its `result` with " +
    "the `verdict` (cause, no-cause or ambiguous, with confidence and evidence), highlights, findings per action and " +
    "mitigations. Identical concurrent investigations share one execution. Counts against the organization's limits; " +
    "`liveRun: true` also posts the result to the incident tool and `channelId` to a chat channel, so leave them out " +
    "unless the user asks.",
  input: PlaybookExecutionInput,
  output: ExecutionStatus,
  readOnly: false,
  run: (service, input) => service.investigate(input),
});
