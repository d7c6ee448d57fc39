import type { WebClient } from "@slack/web-api";
import { slackPostKey, type KeySpace } from "@pes/jobs";
import type { Cluster, Redis } from "ioredis";
import type { CallBounds } from "../delivery/call-bounds.js";
import type { ChannelPacer } from "../delivery/channel-pacer.js";
import type { EnrichmentView } from "../delivery/enrichment-view.js";
import { runOncePerKey, type AttemptOutcome } from "../delivery/once-per-key.js";
import { renderBatchRoot, renderEnrichment, type SlackPostMessage } from "./enrichment-blocks.js";
import { callSlack, SlackCallError } from "./slack-calls.js";
import { errorMessage } from "@pes/contracts";

/** What every post needs: where, how, and until when. */
export interface SlackPostContext extends CallBounds {
  /** A client from `createSlackPostClient` (no retries of its own; rate-limited calls rejected). */
  client: WebClient;
  /** Where each post's record lives, so that a retried job never posts it again. */
  /** One Redis or a Redis Cluster: single-key commands and scripts only. */
  redis: Redis | Cluster;
  /** Where the records are kept (slackPostKey). */
  keys: KeySpace;
  /** Spaces the posts to a channel (one per process or shared; state is in Redis). Recommended always. */
  pacer?: ChannelPacer;
  /** How long a record is kept: longer than a job can still be retried. Default 7 days. */
  retainMs?: number;
}

/**
 * `posted`: the root message (or the reply) is in the channel, by this call or an earlier try, and
 * `permalink` opens it. `incomplete` says why some continuation of a long result is missing.
 * `failed`: no link to give; `reason` names Slack's error or the transport problem (never the token).
 */
export type SlackPostOutcome = { status: "posted"; channel: string; ts: string; permalink: string; incomplete?: string } | { status: "failed"; reason: string };

/** The `event_type` of the metadata marking our messages, by which a retry finds a post it is unsure of. */
export const POST_MARK_EVENT = "pes_enrichment_post";
const DEFAULT_RETAIN_MS = 7 * 24 * 3_600_000;
/**
 * A try is presumed dead this long after its deadline: it waits for nothing past the deadline, and its
 * last request ends at the client's timeout (10 s by default; keep it well under this).
 */
const LEASE_AFTER_DEADLINE_MS = 60_000;

/**
 * Posts an execution's result to a channel, once per `key` (the execution id) and channel however often
 * the job runs: the root message, then what did not fit in it as replies in its thread. With `threadTs`
 * (a thread's root `ts`: for a link to a reply, its `thread_ts`), the root is itself a reply in that thread
 * (the message the issue came from), and so are the rest. `key` must be unique per execution.
 * @returns `posted` with the root's permalink (the result's `enrichmentLink`), or `failed` with why.
 */
export async function postEnrichment(
  context: SlackPostContext,
  post: { key: string; channel: string; threadTs?: string; view: EnrichmentView; maxMessages?: number },
): Promise<SlackPostOutcome> {
  const messages = renderEnrichment(post.view, post.maxMessages === undefined ? {} : { maxMessages: post.maxMessages });
  return postMessages(context, `${post.key}:${post.channel}`, post.channel, post.threadTs, messages);
}

/**
 * Posts the root of a batch's thread, once per `key` (the batch id) and channel. Each item's result then
 * goes in its thread with `postItemReply`.
 */
export async function postBatchRoot(
  context: SlackPostContext,
  post: { key: string; channel: string; title?: string; itemCount: number; threadTs?: string },
): Promise<SlackPostOutcome> {
  const root = renderBatchRoot({ itemCount: post.itemCount, ...(post.title === undefined ? {} : { title: post.title }) });
  return postMessages(context, `${post.key}:${post.channel}`, post.channel, post.threadTs, [root]);
}

/**
 * Posts one item's result of a batch as a single reply in the batch root's thread (`rootTs`), once per
 * batch key, channel and index. Headed "Issue <index+1> of <total>"; a result larger than one message
 * is shortened, saying so.
 */
export async function postItemReply(
  context: SlackPostContext,
  post: { batchKey: string; channel: string; rootTs: string; index: number; total: number; view: EnrichmentView },
): Promise<SlackPostOutcome> {
  const view: EnrichmentView = { ...post.view, heading: `Issue ${post.index + 1} of ${post.total}` };
  const [message] = renderEnrichment(view, { maxMessages: 1 });
  if (message === undefined) return { status: "failed", reason: "nothing to post" };
  return postMessages(context, `${post.batchKey}:item:${post.index}:${post.channel}`, post.channel, post.rootTs, [message]);
}

async function postMessages(
  context: SlackPostContext,
  key: string,
  channel: string,
  threadTs: string | undefined,
  messages: readonly SlackPostMessage[],
): Promise<SlackPostOutcome> {
  const [first, ...rest] = messages;
  if (first === undefined) return { status: "failed", reason: "nothing to post" };
  const root = await postOnce(context, `${key}:0`, channel, threadTs, first);
  if (root.status === "failed") return { status: "failed", reason: `posting to Slack failed: ${root.reason}` };
  const ts = root.value;

  let permalink: string;
  try {
    const answer = await callSlack(() => context.client.chat.getPermalink({ channel, message_ts: ts }), context);
    if (answer.permalink === undefined) throw new SlackCallError("Slack answered without a permalink", true);
    permalink = answer.permalink;
  } catch (error) {
    return { status: "failed", reason: `the message was posted, but reading its permalink failed: ${reasonOf(error)}` };
  }

  // Slack threads are one level deep: continuations of a reply go in the same thread.
  const thread = threadTs ?? ts;
  for (const [index, message] of rest.entries()) {
    const part = await postOnce(context, `${key}:${index + 1}`, channel, thread, message);
    if (part.status === "failed") {
      return { status: "posted", channel, ts, permalink, incomplete: `part ${index + 2} of ${messages.length} was not posted: ${part.reason}` };
    }
  }
  return { status: "posted", channel, ts, permalink };
}

/** One message, posted at most once per `partKey` (record in Redis, mark in the message's metadata). */
async function postOnce(context: SlackPostContext, partKey: string, channel: string, threadTs: string | undefined, message: SlackPostMessage) {
  const { client, pacer } = context;
  const onRateLimited = pacer === undefined ? undefined : (ms: number) => pacer.holdOff(channel, ms);
  return runOncePerKey<string>({
    redis: context.redis,
    key: slackPostKey(context.keys, partKey),
    leaseMs: Math.max(0, context.deadline - Date.now()) + LEASE_AFTER_DEADLINE_MS,
    retainMs: context.retainMs ?? DEFAULT_RETAIN_MS,
    encode: (ts) => ts,
    decode: (text) => (text === "" ? undefined : text),
    async perform(): Promise<AttemptOutcome<string>> {
      try {
        if (pacer !== undefined && !(await pacer.waitForSlot(channel, context))) {
          return { notDone: "the channel's next free posting slot is past the deadline (Slack allows about one message per second per channel)" };
        }
      } catch (error) {
        return {
          notDone:
            context.signal?.aborted === true
              ? "stopped while waiting for the channel's posting slot"
              : `cannot reserve the channel's posting slot: ${reasonOf(error)}`,
        };
      }
      try {
        const answer = await callSlack(
          () =>
            client.chat.postMessage({
              channel,
              text: message.text,
              blocks: message.blocks,
              ...(threadTs === undefined ? {} : { thread_ts: threadTs }),
              unfurl_links: false,
              unfurl_media: false,
              metadata: { event_type: POST_MARK_EVENT, event_payload: { key: partKey } },
            }),
          context,
          onRateLimited,
        );
        if (answer.ts === undefined) return { unsure: "Slack answered without the message's ts" };
        return { done: answer.ts };
      } catch (error) {
        if (error instanceof SlackCallError && error.certain) return { notDone: error.message };
        return { unsure: reasonOf(error) };
      }
    },
    async find(sinceMs) {
      const oldest = (sinceMs / 1000).toFixed(6);
      const answer = await callSlack(
        () =>
          threadTs === undefined
            ? client.conversations.history({ channel, oldest, include_all_metadata: true, limit: 200 })
            : client.conversations.replies({ channel, ts: threadTs, oldest, include_all_metadata: true, limit: 200 }),
        context,
      );
      const mine = answer.messages?.find(
        (candidate) => candidate.metadata?.event_type === POST_MARK_EVENT && markedWith(candidate.metadata.event_payload, partKey),
      );
      return mine?.ts;
    },
  });
}

function markedWith(payload: unknown, partKey: string): boolean {
  return typeof payload === "object" && payload !== null && "key" in payload && payload.key === partKey;
}

function reasonOf(error: unknown): string {
  return errorMessage(error);
}
