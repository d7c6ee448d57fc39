import { EvidenceBundle } from "@pes/contracts";
import { closeConnection, createProducerConnection, evidenceKey, keySpace, type KeySpace, type RedisConnection } from "@pes/jobs";
import type { Logger } from "pino";
import { QueueUnavailableError } from "./execution-client.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The evidence bundles of executions, one Redis string per execution under its organization's keys, gone
 * at the end of the organization's retention (a TTL): what `GET /playbook/execution/{id}/evidence` reads.
 */
export interface EvidenceStore {
  /**
   * Keeps a bundle for `retentionDays` (a second one for the same execution replaces it).
   * @throws EvidenceTooLargeError when its JSON is larger than `maxBytes` (nothing is kept): the worker
   * cuts a bundle to its organization's cap before, so this is the last guard of Redis' memory.
   */
  keep(orgId: string, bundle: EvidenceBundle, limits: { retentionDays: number; maxBytes: number }): Promise<void>;
  /**
   * The organization's bundle of that execution, or undefined: none kept, another organization's, past
   * its retention, or not a bundle this build can read. Throws QueueUnavailableError when Redis is away.
   */
  read(orgId: string, executionId: string): Promise<EvidenceBundle | undefined>;
}

/** A bundle over its organization's cap reached the store: it is not kept. */
export class EvidenceTooLargeError extends Error {
  override name = "EvidenceTooLargeError";
}

/** The store on a connection its caller owns (the worker's producer connection). */
export function createEvidenceStore(connection: () => RedisConnection, keys: KeySpace): EvidenceStore {
  return {
    async keep(orgId, bundle, { retentionDays, maxBytes }) {
      // The worker's bundles always name their execution; only a hand-written one may not.
      const { executionId } = bundle;
      if (executionId === undefined) throw new TypeError("an evidence bundle to keep must name its execution");
      const text = JSON.stringify(bundle);
      const bytes = Buffer.byteLength(text);
      if (bytes > maxBytes) throw new EvidenceTooLargeError(`the evidence bundle of ${executionId} takes ${bytes} bytes, over its cap of ${maxBytes}`);
      await connection().set(evidenceKey(keys, orgId, executionId), text, "PX", Math.round(retentionDays * DAY_MS));
    },
    async read(orgId, executionId) {
      let text: string | null;
      try {
        text = await connection().get(evidenceKey(keys, orgId, executionId));
      } catch (error) {
        throw new QueueUnavailableError("could not read the evidence bundle", { cause: error });
      }
      if (text === null) return undefined;
      // Read tolerantly (the schema drops fields a later version adds); anything else is not a bundle.
      const parsed = EvidenceBundle.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    },
  };
}

/** An evidence store on a connection of its own (the API's): nothing connects before start(). */
export interface OpenedEvidenceStore extends EvidenceStore {
  start(): void;
  close(): Promise<void>;
}

export function openEvidenceStore(options: { redisUrl: string; prefix: string; logger: Logger }): OpenedEvidenceStore {
  const connection = createProducerConnection(options.redisUrl, options.logger, "pes:evidence");
  const store = createEvidenceStore(() => connection, keySpace(options.prefix, options.redisUrl));
  return {
    ...store,
    start() {
      // Fails fast until Redis answers (a read is then a 503), and reconnects by itself.
      connection.connect().catch(() => {});
    },
    close: () => closeConnection(connection),
  };
}
