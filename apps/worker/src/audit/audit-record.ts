import { createHash } from "node:crypto";
import {
  AUDIT_RECORD_VERSION,
  type AuditRecord,
  canonicalJson,
  RequestRefusal,
  type AuditQuery,
  type AuditSentRequest,
  type ExecutionJob,
  type MessageExecutionJob,
  type PlaybookExecutionResult,
} from "@pes/contracts";

/** How an execution's run ended, as its audit record tells it. */
export type RunEnding =
  | { kind: "returned"; value: PlaybookExecutionResult | RequestRefusal }
  | { kind: "threw"; error: string }
  /** Its caller's deadline or its attempt's timeout stopped it (what it found by then is `value`). */
  | { kind: "stopped"; value?: PlaybookExecutionResult | RequestRefusal; error?: string };

/** What an execution's audit record is made of. */
export interface AuditInput {
  executionId: string;
  /** The job as queued. */
  job: ExecutionJob | MessageExecutionJob;
  /** The execution the engine ran (for a message link, as the worker resolved it); absent when none ran. */
  ran?: ExecutionJob;
  /** The definition of the playbook it ran, as the worker loaded it. */
  playbook?: unknown;
  ending: RunEnding;
  queries: readonly AuditQuery[];
  sent: readonly AuditSentRequest[];
  evidenceSha256?: string;
  finishedAt: Date;
}

/**
 * The audit record of a finished execution. Its outcome: `refused` for a request the worker refused,
 * `deadline` when its deadline or timeout stopped it, `error` when it threw or its result has `error`,
 * else `success`.
 */
export function auditRecordOf(input: AuditInput): AuditRecord {
  const { job, ran, ending } = input;
  const value = ending.kind === "threw" ? undefined : ending.value;
  const result = value instanceof RequestRefusal ? undefined : value;
  const error =
    ending.kind === "threw"
      ? ending.error
      : value instanceof RequestRefusal
        ? value.describe()
        : (result?.error ?? (ending.kind === "stopped" ? ending.error : undefined));
  const outcome =
    value instanceof RequestRefusal ? "refused" : ending.kind === "stopped" ? "deadline" : ending.kind === "threw" || error !== undefined ? "error" : "success";
  const bookName = ran?.bookName ?? job.bookName;
  const conclusion = result?.verdict?.conclusion;
  return {
    v: AUDIT_RECORD_VERSION,
    executionId: input.executionId,
    requestId: job.requestId,
    orgId: job.orgId,
    finishedAt: input.finishedAt.toISOString(),
    ...(job.requestedBy === undefined ? {} : { requestedBy: job.requestedBy }),
    playbook: {
      // A chat link's playbook the worker could not resolve has no name: the link stands for it.
      name: bookName ?? "",
      ...(input.playbook === undefined ? {} : { version: playbookVersion(input.playbook) }),
    },
    ...(ran === undefined ? {} : { issue: { time: ran.time, attributes: ran.attributes, ...(ran.title === undefined ? {} : { title: ran.title }) } }),
    outcome,
    ...(error === undefined ? {} : { error }),
    ...(conclusion === undefined ? {} : { conclusion }),
    queries: [...input.queries],
    sent: [...input.sent],
    ...(input.evidenceSha256 === undefined ? {} : { evidenceSha256: input.evidenceSha256 }),
    ...(result?.budget === undefined ? {} : { budget: result.budget }),
    ...(job.teams === undefined || job.teams.length === 0 ? {} : { teams: [...job.teams] }),
  };
}

const versions = new WeakMap<object, string>();

/**
 * A playbook's version: `sha256:` and the hex SHA-256 of the canonical JSON of its definition as loaded
 * (the catalog has no version numbers). The same definition gives the same version, whatever the order
 * of its keys in its file; any change to it gives another.
 */
export function playbookVersion(definition: unknown): string {
  const cached = typeof definition === "object" && definition !== null ? versions.get(definition) : undefined;
  if (cached !== undefined) return cached;
  const version = `sha256:${createHash("sha256").update(canonicalJson(definition)).digest("hex")}`;
  if (typeof definition === "object" && definition !== null) versions.set(definition, version);
  return version;
}
