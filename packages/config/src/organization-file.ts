import { connectorRegistry, type ConnectorRegistry } from "@pes/connectors/schemas";
import { BudgetLimits } from "@pes/contracts";
import { z } from "zod";
import { IncidentToolSettings, SlackSettings, TeamsSettings } from "./integration-settings.js";
import { RedactionSettings } from "./redaction-settings.js";

/** Organization IDs are file names and token claims: letters, digits, `.`, `_`, `-`. */
export const ORGANIZATION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Data-source names are what playbook actions refer to. */
export const DATA_SOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * How much of the service one organization may hold at once, counted across every API replica: beyond
 * either, its requests are answered 429 with a Retry-After.
 */
export const OrganizationLimits = z.strictObject({
  /** Its executions in flight: synchronous and `respond-async` executions, and synchronous batches' items. */
  executionsInFlight: z.int().min(1).max(1_000_000).optional(),
  /** Its async batches' items queued or running. */
  itemsQueued: z.int().min(1).max(10_000_000).optional(),
});
export type OrganizationLimits = z.infer<typeof OrganizationLimits>;

/**
 * What each of an organization's executions may spend (its playbooks may set less: the smaller wins per
 * kind), and how many queries per minute all of its executions together may start on any one of its
 * data sources, counted across every worker. Each one unset is unlimited (docs/investigations.md).
 */
export const OrganizationBudget = BudgetLimits.extend({
  dataSourceQueriesPerMinute: z.int().min(1).max(1_000_000).optional(),
});
export type OrganizationBudget = z.infer<typeof OrganizationBudget>;

/** A bundle's cap when its organization sets none: 2 MiB of JSON. */
export const DEFAULT_EVIDENCE_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Whether an organization's executions keep what their actions observed (an evidence bundle, replayable
 * offline with `pes replay`), and for how long. Off unless asked: a bundle holds the data sources' answers.
 */
export const EvidenceSettings = z.strictObject({
  keep: z.boolean(),
  /** Days a bundle is kept, from its execution (at most a year). */
  retentionDays: z.int().min(1).max(366).default(7),
  /**
   * The most a bundle's JSON may take, in bytes: a larger one has its observations cut to fit (series
   * thinned, long texts shortened, each cut marked; fitBundle in the analysis). 64 KiB to 64 MiB.
   */
  maxBytes: z
    .int()
    .min(64 * 1024)
    .max(64 * 1024 * 1024)
    .default(DEFAULT_EVIDENCE_MAX_BYTES),
});
export type EvidenceSettings = z.infer<typeof EvidenceSettings>;

/** How long an organization's executions are remembered when it says nothing. */
export const DEFAULT_MEMORY_RETENTION_DAYS = 90;

/**
 * Whether later executions of an organization recall its earlier ones (`history` in a result), and how
 * long an execution's fingerprint is kept (from its issue time). On unless turned off (its cost on every
 * execution is measured in BENCHMARKS.md, "Same-run A/B: memory on by default"): a fingerprint is what the
 * verdict concluded, normalised (kinds, subjects, masked details, alert names, attributes), never the data
 * sources' answers.
 */
export const MemorySettings = z.strictObject({
  recall: z.boolean().default(true),
  /** Days a fingerprint is kept and recalled, from its execution's issue time (at most two years). */
  retentionDays: z.int().min(1).max(731).default(DEFAULT_MEMORY_RETENTION_DAYS),
});
export type MemorySettings = z.infer<typeof MemorySettings>;

/** An organization's memory as every reader applies it: whether it recalls, and its retention in ms. */
export interface MemoryPolicy {
  recall: boolean;
  retentionMs: number;
}

const DAY_MS = 86_400_000;

/**
 * The memory of an organization (its `memory` settings, absent: the defaults): the one reading of them,
 * for the worker that recalls and remembers and for the API that recalls on request.
 */
export function memoryPolicyOf(organization: { memory?: MemorySettings } | undefined): MemoryPolicy {
  const settings = organization?.memory ?? DEFAULT_MEMORY_SETTINGS;
  return { recall: settings.recall, retentionMs: settings.retentionDays * DAY_MS };
}

const DEFAULT_MEMORY_SETTINGS = MemorySettings.parse({});

/**
 * `organizations/<id>.yaml`: who may call the API for the organization, what its playbooks can query
 * (each data source checked by the schema of its connector in `connectors`), and the chat and incident
 * tools it works with.
 */
export function organizationFileSchema(connectors: ConnectorRegistry) {
  return z.strictObject({
    /** Must equal the file name without `.yaml`. */
    id: z.string().regex(ORGANIZATION_ID, "id must be letters, digits, '.', '_' or '-' (at most 128)"),
    /** OAuth client IDs allowed to call the API for this organization; `[]` leaves the API disabled (403). */
    clientIds: z.array(z.string().min(1)),
    dataSources: z.record(z.string().regex(DATA_SOURCE_NAME, "a data source name is letters, digits, '.', '_' or '-'"), connectors.dataSource).default({}),
    /** The Slack app that reads message links (`messageLink`) and posts results (`channelId`). */
    slack: SlackSettings.optional(),
    /** The Microsoft Teams service account that posts results to Teams channels (`channelId` as `<team-id>/<channel-id>`). */
    teams: TeamsSettings.optional(),
    /** Where `liveRun: true` adds the result as a note: PagerDuty and/or Opsgenie. */
    incidentTools: IncidentToolSettings.optional(),
    /** Its own limits; each one unset takes the service's default (ORG_EXECUTIONS_IN_FLIGHT, ORG_ITEMS_QUEUED). */
    limits: OrganizationLimits.optional(),
    /** Whether its executions keep their evidence bundles, and how long. */
    evidence: EvidenceSettings.optional(),
    /** What is redacted from data sources' answers before anything leaves the worker (absent: every built-in kind). */
    redaction: RedactionSettings.optional(),
    /** Whether its executions recall similar past ones, and how long they are remembered (default: on, 90 days). */
    memory: MemorySettings.optional(),
    /** What its executions may spend: queries, bytes read, wall time, model tokens; queries per minute per data source. */
    budget: OrganizationBudget.optional(),
  });
}

/** An organization file, with the stock connectors. */
export const OrganizationFile = organizationFileSchema(connectorRegistry);
export type OrganizationFile = z.infer<typeof OrganizationFile>;
