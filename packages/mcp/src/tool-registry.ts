import { findSimilarIncidents } from "./tools/find-similar-incidents.js";
import { getEvidenceBundle } from "./tools/get-evidence-bundle.js";
import { getExecution } from "./tools/get-execution.js";
import { getVerdict } from "./tools/get-verdict.js";
import { investigateIssue } from "./tools/investigate-issue.js";
import { listPlaybooks } from "./tools/list-playbooks.js";
import type { PesTool } from "./tools/pes-tool.js";
import { replayEvidenceBundle } from "./tools/replay-evidence-bundle.js";

/** Every tool the server offers, in the order a client lists them: a new tool is one module and one line here. */
export const tools: readonly PesTool[] = [
  listPlaybooks,
  investigateIssue,
  getExecution,
  getVerdict,
  getEvidenceBundle,
  replayEvidenceBundle,
  findSimilarIncidents,
];
