import { decodeReply, type DecodedReply } from "@pes/contracts";
import type { KeySpace, RedisConnection } from "@pes/jobs";
import { Cluster } from "ioredis";
import type { Logger } from "pino";
import { readRecords, type ExecutionOutcome } from "./execution-lifecycle.js";

/** How long a reply that came before its waiter was registered is kept for it. */
const EARLY_REPLY_MS = 10_000;

/** A caller waiting on this instance for an execution's reply. */
interface Waiter {
  resolve(outcome: ExecutionOutcome): void;
  timer: NodeJS.Timeout;
  /** The execution's organization: its records are below the organization's keys. */
  orgId: string;
}

export interface ReplyListenerOptions {
  /** The Pub/Sub connection of this instance (createSubscriberConnection), not yet connected. */
  subscriber: RedisConnection;
  /** Where the executions' records are read when a reply may have been missed. */
  records: RedisConnection;
  keys: KeySpace;
  /** This instance's reply channel (replyChannel). */
  channel: string;
  logger: Logger;
  /** Told each time the channel is subscribed again (readiness may have changed). */
  onSubscribed(): void;
}

/**
 * This instance's reply channel and the callers waiting on it. Workers store each reply in the
 * execution's record and publish it to every waiting instance; the listener answers the callers of the
 * execution it names, and reads their records when a reply may have been missed (after a resubscription,
 * or when told to sweep). At a caller's deadline it stops waiting and leaves the answer to the caller's
 * `atDeadline`.
 */
export class ReplyListener {
  /** The callers waiting on this instance, by execution: several when they joined one execution. */
  private readonly waiters = new Map<string, Set<Waiter>>();
  /**
   * Replies that arrived before their waiter was registered: the reply channel is registered in the
   * same script that begins the execution, and its reply may beat the script's answer here.
   */
  private readonly early = new Map<string, { outcome: ExecutionOutcome; at: number }>();
  private subscriptionEpoch = 0;
  private live = false;

  constructor(private readonly options: ReplyListenerOptions) {}

  /** Subscribes on every `ready` of the subscriber from now on; call before it connects. */
  listen(): void {
    const { subscriber } = this.options;
    subscriber.on("message", (channel: string, message: string) => this.onMessage(channel, message));
    subscriber.on("ready", () => void this.onSubscriberReady());
    subscriber.on("close", () => {
      this.live = false;
    });
    // On a cluster, ioredis moves the subscription to another node by itself when its node goes, and
    // says nothing: the replies published in between are swept once the client sees a node gone.
    if (subscriber instanceof Cluster) subscriber.on("-node", () => void this.sweep());
  }

  /** True while the channel is subscribed: replies published now reach this instance. */
  get subscribed(): boolean {
    return this.live;
  }

  /**
   * Waits for an execution's reply (or takes the one that came first) until `timeoutMs`; from then on
   * `atDeadline` answers the caller, and a reply that comes meanwhile does not.
   */
  waitFor(orgId: string, executionId: string, timeoutMs: number, atDeadline: () => Promise<ExecutionOutcome>): Promise<ExecutionOutcome> {
    const first = this.early.get(executionId);
    if (first !== undefined) {
      this.early.delete(executionId);
      return Promise.resolve(first.outcome);
    }
    return new Promise<ExecutionOutcome>((resolve) => {
      const waiter: Waiter = {
        resolve,
        orgId,
        timer: setTimeout(() => {
          // A reply it publishes itself (withdrawing a job still queued tells the joiners) must not answer
          // it before the look-up at its deadline has reported.
          if (this.stopWaiting(executionId, waiter)) void atDeadline().then(resolve);
        }, timeoutMs),
      };
      const waiting = this.waiters.get(executionId) ?? new Set<Waiter>();
      waiting.add(waiter);
      this.waiters.set(executionId, waiting);
    });
  }

  /** Answers every caller waiting for the execution; a reply nobody waits for yet is kept a while for them. */
  settle(executionId: string, outcome: ExecutionOutcome): void {
    const waiting = this.waiters.get(executionId);
    if (waiting === undefined) {
      this.keepEarly(executionId, outcome);
      return;
    }
    this.waiters.delete(executionId);
    for (const waiter of waiting) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcome);
    }
  }

  /** Answers every waiting caller with `outcome` (the client closes) and forgets early replies. */
  settleAll(outcome: ExecutionOutcome): void {
    for (const executionId of [...this.waiters.keys()]) this.settle(executionId, outcome);
    this.early.clear();
  }

  /** Reads the records of the executions waited for here and answers those that finished. */
  async sweep(): Promise<void> {
    if (this.waiters.size === 0) return;
    let found = 0;
    let unreadable: unknown;
    // Each organization on its own: on a cluster, the records on a node being replaced cannot be read yet, the others can.
    await Promise.all(
      [...this.waitedByOrganization()].map(async ([orgId, executionIds]) => {
        try {
          const stored = await readRecords(this.options.records, this.options.keys, orgId, executionIds);
          stored.forEach((record, index) => {
            const reply = record?.reply === undefined ? undefined : this.parseReply(record.reply);
            const executionId = executionIds[index];
            if (reply === undefined || executionId === undefined) return;
            found += 1;
            this.settle(executionId, reply.result);
          });
        } catch (error) {
          unreadable ??= error;
        }
      }),
    );
    if (found > 0) this.options.logger.info({ found }, "collected replies published while the reply channel was down");
    if (unreadable !== undefined) this.options.logger.warn({ err: unreadable }, "could not sweep every stored reply after resubscribing");
  }

  private keepEarly(executionId: string, outcome: ExecutionOutcome): void {
    const now = Date.now();
    // Oldest first (a Map keeps insertion order): drop those nobody came for.
    for (const [id, reply] of this.early) {
      if (now - reply.at < EARLY_REPLY_MS) break;
      this.early.delete(id);
    }
    this.early.set(executionId, { outcome, at: now });
  }

  /** Takes one caller off its execution's waiters; false when it was answered already. */
  private stopWaiting(executionId: string, waiter: Waiter): boolean {
    const waiting = this.waiters.get(executionId);
    if (waiting === undefined || !waiting.delete(waiter)) return false;
    if (waiting.size === 0) this.waiters.delete(executionId);
    return true;
  }

  /**
   * Reply text (published or stored) → the result it carries, for the job it names. Only the framing is
   * checked: the JSON comes from our own workers, through our own Redis, and goes to the caller as is.
   */
  private parseReply(text: string): DecodedReply | undefined {
    const reply = decodeReply(text);
    if (reply === undefined) this.options.logger.error({ reply: text.slice(0, 200) }, "malformed reply on the reply channel or in a record");
    return reply;
  }

  private onMessage(channel: string, message: string): void {
    if (channel !== this.options.channel) return;
    const reply = this.parseReply(message);
    if (reply !== undefined) this.settle(reply.jobId, reply.result);
  }

  /** (Re)subscribes on every `ready`, then collects the replies published while the channel was down. */
  private async onSubscriberReady(): Promise<void> {
    const epoch = ++this.subscriptionEpoch;
    const { subscriber, channel, logger } = this.options;
    try {
      await subscriber.subscribe(channel);
    } catch (error) {
      logger.warn({ err: error }, "could not subscribe to the reply channel; retrying on reconnect");
      return;
    }
    if (epoch !== this.subscriptionEpoch || subscriber.status !== "ready") return;
    this.live = true;
    this.options.onSubscribed();
    await this.sweep();
  }

  /** The executions waited for here, by organization (whose keys share a slot: one read each). */
  private waitedByOrganization(): Map<string, string[]> {
    const byOrg = new Map<string, string[]>();
    for (const [executionId, waiting] of this.waiters) {
      const [first] = waiting;
      if (first === undefined) continue;
      const ids = byOrg.get(first.orgId) ?? [];
      ids.push(executionId);
      byOrg.set(first.orgId, ids);
    }
    return byOrg;
  }
}
