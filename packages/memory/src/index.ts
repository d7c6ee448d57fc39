export { Fingerprint, fingerprintOf, groupOf, type RememberedExecution } from "./fingerprint.js";
export { normaliseDetail, normaliseSubject } from "./normalisation.js";
export { compare, partsOf, WEIGHTS, type Comparison, type Part } from "./similarity.js";
export { visibleTo } from "./team-scope.js";
export {
  createExecutionMemory,
  MAX_PART_MEMBERS,
  MIN_SIMILARITY,
  type ConfirmationLookup,
  type ExecutionMemory,
  type RecallQuery,
} from "./execution-memory.js";
export { confirmationsFrom } from "./confirmations.js";
export { HISTORY_HEADING, historyEntryText, historyLines } from "./history-text.js";
