import { readFileSync } from "node:fs";
import { FeedbackEntry, type ConfirmedExecutions, type ExecutionFeedback } from "@pes/contracts";
import {
  closeConnection,
  createProducerConnection,
  evidenceKey,
  executionKey,
  feedbackIndexKey,
  feedbackKey,
  keySpace,
  type KeySpace,
  type RedisConnection,
} from "@pes/jobs";
import type { Logger } from "pino";
import { QueueUnavailableError } from "./execution-client.js";
import { SCRIPT_CODES, scriptConstants } from "./script-codes.js";

/** Answers kept per execution: a few people changing their minds, not an unbounded list. */
export const FEEDBACK_HISTORY_MAX = 50;

/** What `confirmationsOf` gives for one execution: its current answer. */
export type Confirmation = FeedbackEntry;

/**
 * Answers on executions' verdicts, by the people who fixed the incidents: one current answer per
 * execution and its history, under the organization's keys, kept as long as the execution's record or
 * evidence bundle (scripts/record-feedback.lua).
 */
export interface FeedbackStore {
  /**
   * Records an answer as the execution's current one. False, recording nothing, when the organization
   * has no such execution (unknown, another organization's, or gone).
   */
  record(orgId: string, executionId: string, entry: FeedbackEntry): Promise<boolean>;
  /** The execution's current answer and its history (oldest first), or undefined when it has none. */
  read(orgId: string, executionId: string): Promise<ExecutionFeedback | undefined>;
  /**
   * The current answers of those of the organization's executions that have one, in one round trip:
   * what recalling past executions reads beside their verdicts.
   */
  confirmationsOf(orgId: string, executionIds: readonly string[]): Promise<Map<string, Confirmation>>;
  /** The organization's executions with an answer given at or after `since`, oldest answer first, a page at a time. */
  list(orgId: string, page: { since?: Date; offset: number; limit: number }): Promise<ConfirmedExecutions>;
}

type FeedbackConnection = RedisConnection & {
  recordFeedback(
    record: string,
    evidence: string,
    feedback: string,
    index: string,
    executionId: string,
    entry: string,
    at: number,
    max: number,
  ): Promise<number>;
};

const RECORD_FEEDBACK = scriptConstants() + readFileSync(new URL("../scripts/record-feedback.lua", import.meta.url), "utf8");

/** Gives a connection the `recordFeedback` command (once per connection). */
function withCommand(connection: RedisConnection): FeedbackConnection {
  if (!("recordFeedback" in connection)) connection.defineCommand("recordFeedback", { numberOfKeys: 4, lua: RECORD_FEEDBACK });
  return connection as FeedbackConnection;
}

/** The store on a connection its caller owns. */
export function createFeedbackStore(connection: () => RedisConnection, keys: KeySpace): FeedbackStore {
  const redis = () => withCommand(connection());
  return {
    async record(orgId, executionId, entry) {
      const answered = await unavailableAs("could not record the feedback", () =>
        redis().recordFeedback(
          executionKey(keys, orgId, executionId),
          evidenceKey(keys, orgId, executionId),
          feedbackKey(keys, orgId, executionId),
          feedbackIndexKey(keys, orgId),
          executionId,
          JSON.stringify(entry),
          Date.parse(entry.at),
          FEEDBACK_HISTORY_MAX,
        ),
      );
      return answered !== SCRIPT_CODES.noSuchExecution;
    },

    async read(orgId, executionId) {
      const texts = await unavailableAs("could not read the feedback", () => redis().lrange(feedbackKey(keys, orgId, executionId), 0, -1));
      const history = texts.flatMap((text) => entryOf(text) ?? []);
      const current = history[history.length - 1];
      return current === undefined ? undefined : { executionId, current, history };
    },

    async confirmationsOf(orgId, executionIds) {
      const found = new Map<string, Confirmation>();
      if (executionIds.length === 0) return found;
      const answers = await unavailableAs("could not read the feedback", () => {
        const pipeline = redis().pipeline();
        for (const id of executionIds) pipeline.lindex(feedbackKey(keys, orgId, id), -1);
        return pipeline.exec();
      });
      executionIds.forEach((id, i) => {
        const [error, text] = answers?.[i] ?? [null, null];
        const entry = error === null && typeof text === "string" ? entryOf(text) : undefined;
        if (entry !== undefined) found.set(id, entry);
      });
      return found;
    },

    async list(orgId, { since, offset, limit }) {
      const index = feedbackIndexKey(keys, orgId);
      const ids = await unavailableAs("could not read the feedback", () =>
        redis().zrangebyscore(index, since === undefined ? "-inf" : since.getTime(), "+inf", "LIMIT", offset, limit + 1),
      );
      const page = ids.slice(0, limit);
      const current = await this.confirmationsOf(orgId, page);
      const gone = page.filter((id) => !current.has(id));
      // Their feedback expired with their execution: drop them from the index.
      if (gone.length > 0) await unavailableAs("could not read the feedback", () => redis().zrem(index, ...gone));
      return {
        items: page.flatMap((executionId) => {
          const feedback = current.get(executionId);
          return feedback === undefined ? [] : [{ executionId, feedback }];
        }),
        ...(ids.length > limit ? { nextOffset: offset + limit - gone.length } : {}),
      };
    },
  };
}

/** An entry as stored, read tolerantly; anything else (written by no version of this service) is skipped. */
function entryOf(text: string): FeedbackEntry | undefined {
  try {
    const parsed = FeedbackEntry.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function unavailableAs<T>(message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new QueueUnavailableError(message, { cause: error });
  }
}

/** A feedback store on a connection of its own (the API's): nothing connects before start(). */
export interface OpenedFeedbackStore extends FeedbackStore {
  /** Its connection, for the API's other small records (a Slack request signature seen). */
  readonly connection: RedisConnection;
  start(): void;
  close(): Promise<void>;
}

export function openFeedbackStore(options: { redisUrl: string; prefix: string; logger: Logger }): OpenedFeedbackStore {
  const connection = createProducerConnection(options.redisUrl, options.logger, "pes:feedback");
  const store = createFeedbackStore(() => connection, keySpace(options.prefix, options.redisUrl));
  return {
    ...store,
    connection,
    start() {
      // Fails fast until Redis answers (a request is then a 503), and reconnects by itself.
      connection.connect().catch(() => {});
    },
    close: () => closeConnection(connection),
  };
}
