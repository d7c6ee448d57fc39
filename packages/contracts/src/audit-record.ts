import { z } from "zod";
import { ExecutionBudget } from "./execution-budget.js";

/** The version of the audit record format this build writes. A reader takes any version: later ones only add. */
export const AUDIT_RECORD_VERSION = 1;

const Instant = z.iso.datetime({ offset: true });

/**
 * How a request reached the service: a route of the API (`POST /playbook/execution`, a batch), a firing
 * alert of an alert webhook (which sender, which receiver, which alert), or a route given a chat message
 * link (the link). A later version's kind reads as its kind.
 */
export const AuditEntryPoint = z.union([
  z.object({
    kind: z.literal("route"),
    /** `<METHOD> <path>` of the route, e.g. `POST /playbook/execution`. */
    route: z.string().min(1),
  }),
  z.object({
    kind: z.literal("alert-webhook"),
    route: z.string().min(1),
    /** `alertmanager` (payload version 4) or `grafana` (Grafana Alerting's, version 1); another version as `other`. */
    sender: z.enum(["alertmanager", "grafana", "other"]),
    /** The notification's `receiver` and `groupKey`, as the sender named them. */
    receiver: z.string(),
    groupKey: z.string().optional(),
    /** The sender's `externalURL`, its credentials and query left out. */
    externalUrl: z.string().optional(),
    /** The alert's position in the notification, its `fingerprint` and `alertname`. */
    alert: z.object({ index: z.int().nonnegative(), fingerprint: z.string().optional(), alertname: z.string().optional() }),
  }),
  z.object({
    kind: z.literal("chat-link"),
    route: z.string().min(1),
    /** The chat message the issue was read from. */
    messageLink: z.string().min(1),
  }),
  z.looseObject({ kind: z.string() }),
]);
export type AuditEntryPoint = z.infer<typeof AuditEntryPoint>;

/**
 * Who asked for an execution, as the API authenticated them, and how the request came in: carried in
 * the job (`requestedBy`) so that the worker's audit record names them. Never a token or a secret.
 */
export const RequestedBy = z.object({
  /** The token's `sub`, when it has one. */
  subject: z.string().optional(),
  /** The calling client (the token's client id claim). */
  clientId: z.string().min(1),
  /** The teams the token names (AUTH_TEAMS_CLAIM). */
  teams: z.array(z.string()).optional(),
  entry: AuditEntryPoint,
});
export type RequestedBy = z.infer<typeof RequestedBy>;

/**
 * One query an execution sent to a data source: after templating, exactly as sent, with the data
 * source's secrets and any credentials in a URL replaced by `[redacted]`. A query that could not be
 * filled (the issue lacked an attribute) was never sent and is not listed.
 */
export const AuditQuery = z.object({
  /** The action's title, and its gadget's. */
  action: z.string(),
  gadget: z.string().optional(),
  /** The data source by its configured name, and its connector type (`prometheus`, `loki`…). */
  dataSource: z.string().optional(),
  connector: z.string().optional(),
  query: z.unknown(),
  window: z.object({ start: Instant, end: Instant }),
  /** What came of it: the kind of its observation (`failed` when the source answered an error or nothing usable). */
  observation: z.string().optional(),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

/** Where the service sends what an execution found, besides the data sources. */
export const AUDIT_SERVICES = ["slack", "teams", "pagerduty", "opsgenie", "language-model"] as const;

/**
 * One HTTP request an execution made to a chat, incident or language-model service: the service, the
 * request's method and URL (origin and path; never its query string or credentials), the bytes of its
 * body, and the status answered (absent when no answer came).
 */
export const AuditSentRequest = z.object({
  service: z.union([z.enum(AUDIT_SERVICES), z.string()]),
  method: z.string(),
  url: z.string(),
  bytes: z.int().nonnegative(),
  status: z.int().optional(),
});
export type AuditSentRequest = z.infer<typeof AuditSentRequest>;

/**
 * How an execution ended: `success` (a result without error), `error` (a result with `error`, or the
 * worker failed), `deadline` (its caller's deadline or timeout stopped it: what it found by then is its
 * result), `refused` (the worker refused the request: a chat link it could not use).
 */
export const AuditOutcome = z.union([z.enum(["success", "error", "deadline", "refused"]), z.string()]);
export type AuditOutcome = z.infer<typeof AuditOutcome>;

/**
 * The audit record of one execution, appended once by the worker that ran it when it finished: who
 * asked and how, which playbook (and which version of it), every query as sent, what was sent to which
 * service, the evidence bundle's hash, the conclusion and the budget spent. Read tolerantly: fields a
 * later version adds are dropped.
 */
export const AuditRecord = z
  .object({
    v: z.number().int().positive(),
    executionId: z.string(),
    requestId: z.string(),
    orgId: z.string(),
    finishedAt: Instant,
    /** Absent for a job sent by an API that predates the audit trail. */
    requestedBy: RequestedBy.optional(),
    playbook: z.object({
      name: z.string(),
      /**
       * The playbook's version: `sha256:<hex>` of the canonical JSON of its definition as the worker
       * loaded it (the catalog has no version numbers), so that a changed playbook reads as another version.
       */
      version: z.string().optional(),
    }),
    /** The issue time and attributes the playbook ran for. */
    issue: z.object({ time: Instant.optional(), attributes: z.record(z.string(), z.string()).optional(), title: z.string().optional() }).optional(),
    outcome: AuditOutcome,
    error: z.string().optional(),
    /** The verdict's conclusion, when the execution reached one. */
    conclusion: z.string().optional(),
    queries: z.array(AuditQuery),
    sent: z.array(AuditSentRequest),
    /** sha256 (hex) of the canonical JSON of the evidence bundle kept (organizations with `evidence.keep`). */
    evidenceSha256: z.string().optional(),
    /** The budget the execution spent, as its result says it (`result.budget`). */
    budget: ExecutionBudget.optional(),
    /** The teams the execution ran for (its job's): who of the organization, besides its admins, may read the record. */
    teams: z.array(z.string()).optional(),
  })
  .meta({ id: "AuditRecord" });
export type AuditRecord = z.infer<typeof AuditRecord>;

/** An audit record as `GET /audit` lists it: with its stream id, the cursor to page from. */
export const AuditEntry = AuditRecord.extend({ id: z.string() }).meta({ id: "AuditEntry" });
export type AuditEntry = z.infer<typeof AuditEntry>;

const streamId = z.string().regex(/^\d{1,16}-\d{1,16}$/, "must be a stream id as `next` gives it (`<ms>-<n>`)");

/** The query of `GET /audit`. */
export const AuditListQuery = z.strictObject({
  cursor: streamId.optional().meta({ description: "`next` of the page before: the records older than it." }),
  limit: z.coerce.number().int().min(1).max(500).default(50).meta({ description: "Records per page, 1 to 500 (default 50)." }),
  from: Instant.optional().meta({ description: "Records of executions finished at or after this instant." }),
  to: Instant.optional().meta({ description: "Records of executions finished at or before this instant." }),
  subject: z.string().min(1).optional().meta({ description: "Only those asked for by this subject (the token's `sub`)." }),
  playbook: z.string().min(1).optional().meta({ description: "Only those of this playbook." }),
  execution: z.string().min(1).optional().meta({ description: "Only the record of this execution." }),
});
export type AuditListQuery = z.infer<typeof AuditListQuery>;

/** A page of `GET /audit`: newest first; `next`, when present, is the cursor of the next (older) page. */
export const AuditPage = z
  .object({
    records: z.array(AuditEntry),
    next: z.string().optional(),
  })
  .meta({ id: "AuditPage" });
export type AuditPage = z.infer<typeof AuditPage>;
