export { addIncidentNote, type IncidentNoteContext, type IncidentNoteOutcome, type IncidentNoteRequest } from "./add-incident-note.js";
export {
  OPSGENIE_API_URL,
  OPSGENIE_EU_API_URL,
  PAGERDUTY_API_URL,
  type IncidentToolConfig,
  type OpsgenieConfig,
  type PagerDutyConfig,
} from "./incident-note-targets.js";
export { executionMark, INCIDENT_NOTE_MAX_CHARS, renderIncidentNote, type IncidentNoteView } from "./incident-note-text.js";
export {
  describeReference,
  findIncidentReference,
  INCIDENT_ATTRIBUTES,
  type IncidentReference,
  type IncidentToolKind,
} from "./incident-reference.js";
