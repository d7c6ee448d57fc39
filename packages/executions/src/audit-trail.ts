import { readFileSync } from "node:fs";
import { AuditRecord, type AuditEntry, type AuditListQuery, type AuditPage } from "@pes/contracts";
import { auditRecordedKey, auditStreamKey, closeConnection, createProducerConnection, keySpace, type KeySpace, type RedisConnection } from "@pes/jobs";
import type { Logger } from "pino";
import { QueueUnavailableError } from "./execution-client.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Stream entries one read looks at, at most, for the records a filtered page wants: a page may come back short, with `next`. */
const MAX_SCANNED_PER_READ = 5_000;
/** Entries read from Redis at a time while scanning. */
const SCAN_CHUNK = 500;

/** scripts/append-audit-record.lua, read once. */
const APPEND_SCRIPT = readFileSync(new URL("../scripts/append-audit-record.lua", import.meta.url), "utf8");

/** What `read` filters on besides the page: `GET /audit`'s query without its defaults applied. */
export type AuditFilters = Omit<AuditListQuery, "limit"> & {
  limit: number;
  /** Which records the reader may see, by the teams their executions ran for; absent: every one (an admin). */
  visible?: (teams: readonly string[]) => boolean;
};

/**
 * Each organization's audit trail: a Redis stream of one record per finished execution, appended by the
 * worker that ran it, read back by the organization's admins (`GET /audit`). The service only appends;
 * entries leave by retention (trimmed by age as records are appended, and the whole stream expires when
 * nothing was appended for the retention).
 */
export interface AuditTrail {
  /**
   * Appends an execution's record, once per execution (a second append for it is dropped: false).
   * `retentionDays` is how long records are kept.
   */
  append(record: AuditRecord, options: { retentionDays: number }): Promise<boolean>;
  /**
   * A page of an organization's records, newest first, filtered. The stream is the organization's own:
   * another organization's records are never read. Throws QueueUnavailableError when Redis is away.
   */
  read(orgId: string, filters: AuditFilters): Promise<AuditPage>;
}

/** The trail on a connection its caller owns (the worker's producer connection). */
export function createAuditTrail(connection: () => RedisConnection, keys: KeySpace): AuditTrail {
  return {
    async append(record, { retentionDays }) {
      const retentionMs = Math.max(1, Math.round(retentionDays * DAY_MS));
      const id = await connection().eval(
        APPEND_SCRIPT,
        2,
        auditStreamKey(keys, record.orgId),
        auditRecordedKey(keys, record.orgId, record.executionId),
        JSON.stringify(record),
        String(retentionMs),
      );
      return typeof id === "string";
    },
    async read(orgId, filters) {
      try {
        return await readPage(connection(), auditStreamKey(keys, orgId), filters);
      } catch (error) {
        throw new QueueUnavailableError("could not read the audit trail", { cause: error });
      }
    },
  };
}

/**
 * Reads newest first from the cursor (exclusive) or the `to` bound, down to the `from` bound, keeping
 * the entries the filters match until the page is full; at most MAX_SCANNED_PER_READ entries are looked
 * at, so that a rare subject does not hold Redis: `next` then lets the caller go on.
 */
async function readPage(redis: RedisConnection, key: string, filters: AuditFilters): Promise<AuditPage> {
  const lowest = filters.from === undefined ? "-" : `${Date.parse(filters.from)}-0`;
  let highest = filters.to === undefined ? "+" : `${Date.parse(filters.to)}-${Number.MAX_SAFE_INTEGER}`;
  if (filters.cursor !== undefined && (highest === "+" || compareIds(filters.cursor, highest) < 0)) highest = `(${filters.cursor}`;
  const records: AuditEntry[] = [];
  let scanned = 0;
  let lastId: string | undefined;
  for (;;) {
    const chunk = await redis.xrevrange(key, highest, lowest, "COUNT", SCAN_CHUNK);
    for (const [id, fields] of chunk) {
      scanned += 1;
      lastId = id;
      const record = recordOf(fields);
      if (record !== undefined && matches(record, filters)) {
        records.push({ id, ...record });
        if (records.length === filters.limit) return { records, next: id };
      }
      if (scanned >= MAX_SCANNED_PER_READ) return { records, next: id };
    }
    if (chunk.length < SCAN_CHUNK || lastId === undefined) return { records };
    highest = `(${lastId}`;
  }
}

function recordOf(fields: readonly string[]): AuditRecord | undefined {
  const index = fields.indexOf("record");
  const text = index >= 0 && index % 2 === 0 ? fields[index + 1] : undefined;
  if (text === undefined) return undefined;
  try {
    // Read tolerantly: a later version's fields are dropped; anything else is no record of this build.
    const parsed = AuditRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function matches(record: AuditRecord, filters: AuditFilters): boolean {
  if (filters.subject !== undefined && record.requestedBy?.subject !== filters.subject) return false;
  if (filters.playbook !== undefined && record.playbook.name !== filters.playbook) return false;
  if (filters.execution !== undefined && record.executionId !== filters.execution) return false;
  return filters.visible === undefined || filters.visible(record.teams ?? []);
}

/** Orders two stream ids (`<ms>-<n>`). */
function compareIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split("-").map(Number);
  const [bMs = 0, bSeq = 0] = b.split("-").map(Number);
  return aMs - bMs || aSeq - bSeq;
}

/** An audit trail on a connection of its own (the API's): nothing connects before start(). */
export interface OpenedAuditTrail extends AuditTrail {
  start(): void;
  close(): Promise<void>;
}

export function openAuditTrail(options: { redisUrl: string; prefix: string; logger: Logger }): OpenedAuditTrail {
  const connection = createProducerConnection(options.redisUrl, options.logger, "pes:audit");
  const trail = createAuditTrail(() => connection, keySpace(options.prefix, options.redisUrl));
  return {
    ...trail,
    start() {
      // Fails fast until Redis answers (a read is then a 503), and reconnects by itself.
      connection.connect().catch(() => {});
    },
    close: () => closeConnection(connection),
  };
}
