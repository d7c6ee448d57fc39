import type { DataSource, RedactionPolicy } from "@pes/connectors/schemas";
import type { Playbook } from "@pes/contracts";
import type { MonitorNameMatcher, PlaybookDefinition } from "@pes/playbooks";
import type { IncidentToolSettings, SlackSettings, TeamsSettings } from "./integration-settings.js";
import type { EvidenceSettings, MemorySettings, OrganizationBudget, OrganizationLimits } from "./organization-file.js";

/** One organization as loaded from CONFIG_DIR: who may call, what it can query, which playbooks it has. */
export interface OrganizationCatalog {
  id: string;
  /** OAuth client IDs allowed to call the API for this organization; empty means the API is not enabled. */
  clientIds: ReadonlySet<string>;
  dataSources: ReadonlyMap<string, DataSource>;
  playbooks: ReadonlyMap<string, PlaybookDefinition>;
  /** `GET /playbook`'s answer, computed once at load. */
  playbookList: readonly Playbook[];
  matcher: MonitorNameMatcher;
  /** Its Slack app, when configured: message links and channel posts need it. */
  slack?: SlackSettings;
  /** Its Microsoft Teams posting account, when configured: posts to Teams channels need it. */
  teams?: TeamsSettings;
  /** Its incident tools, when configured: `liveRun: true` needs one. */
  incidentTools?: IncidentToolSettings;
  /** Its own limits, where it sets them (the service's defaults otherwise). */
  limits?: OrganizationLimits;
  /** Whether its executions keep their evidence bundles (absent: they do not). */
  evidence?: EvidenceSettings;
  /** What the redaction boundary takes out of its data sources' answers (absent: every built-in kind). */
  redaction?: RedactionPolicy;
  /** How its executions are remembered and recalled (absent: the defaults; memoryPolicyOf reads it). */
  memory?: MemorySettings;
  /** What its executions may spend (absent: no limit but the deadlines). */
  budget?: OrganizationBudget;
}

/** Everything CONFIG_DIR holds, validated; immutable after load. */
export interface Catalog {
  organizations: ReadonlyMap<string, OrganizationCatalog>;
}
