import type { TeamsChannelRef } from "@pes/contracts";
import { teamsPostKey, type KeySpace } from "@pes/jobs";
import type { Cluster, Redis } from "ioredis";
import type { ChannelPacer } from "../delivery/channel-pacer.js";
import { runOncePerKey, type AttemptOutcome } from "../delivery/once-per-key.js";
import type { CallBounds } from "../delivery/call-bounds.js";
import { callTeams, TeamsCallError, type TeamsPostClient } from "./teams-calls.js";
import { markOf, renderTeamsBatchRoot, renderTeamsMessage, type TeamsChatMessage, type TeamsView } from "./teams-card.js";
import { errorMessage } from "@pes/contracts";

/** What every post needs: where, how, and until when. */
export interface TeamsPostContext extends CallBounds {
  /** A client from `createTeamsPostClient` (no retries of its own; throttled calls left to the caller). */
  client: TeamsPostClient;
  /** Where each post's record lives, so that a retried job never posts it again. One Redis or a Redis Cluster. */
  redis: Redis | Cluster;
  /** Where the records are kept (teamsPostKey). */
  keys: KeySpace;
  /** Spaces the posts to a channel (state in Redis, shared by every worker). Recommended always. */
  pacer?: ChannelPacer;
  /** How long a record is kept: longer than a job can still be retried. Default 7 days. */
  retainMs?: number;
}

/**
 * `posted`: the message is in the channel, by this call or an earlier try; `permalink` is its `webUrl`
 * (the result's `enrichmentLink`) and `messageId` its id (a thread's root, for replies). `failed`: no link
 * to give; `reason` names Graph's error code or the transport problem (never a secret).
 */
export type TeamsPostOutcome = { status: "posted"; channel: string; messageId: string; permalink: string } | { status: "failed"; reason: string };

const DEFAULT_RETAIN_MS = 7 * 24 * 3_600_000;
/** As for Slack: a try is presumed dead this long after its deadline (its last request ends well before). */
const LEASE_AFTER_DEADLINE_MS = 60_000;
/** Graph pages channel messages newest first, at most 50 a page; a lost post is looked for this far back. */
const FIND_PAGE_SIZE = 50;
const FIND_MAX_PAGES = 4;

/**
 * Posts an execution's result to a Teams channel as one Adaptive Card, once per `key` (the execution id)
 * and channel however often the job runs. A result larger than a Teams message is shortened, saying so.
 * @returns `posted` with the message's `webUrl`, or `failed` with why.
 */
export async function postTeamsEnrichment(
  context: TeamsPostContext,
  post: { key: string; channel: TeamsChannelRef; view: TeamsView },
): Promise<TeamsPostOutcome> {
  const partKey = `${post.key}:${channelKey(post.channel)}:0`;
  return postOnce(context, partKey, post.channel, undefined, renderTeamsMessage(post.view, markOf(partKey)));
}

/** Posts the root of a batch's thread, once per `key` (the batch id) and channel. */
export async function postTeamsBatchRoot(
  context: TeamsPostContext,
  post: { key: string; channel: TeamsChannelRef; title?: string; itemCount: number },
): Promise<TeamsPostOutcome> {
  const partKey = `${post.key}:${channelKey(post.channel)}:0`;
  const root = renderTeamsBatchRoot({ itemCount: post.itemCount, ...(post.title === undefined ? {} : { title: post.title }) }, markOf(partKey));
  return postOnce(context, partKey, post.channel, undefined, root);
}

/**
 * Posts one item's result of a batch as a reply in the thread of the batch's root (`rootId`), once per
 * batch key, channel and index. Headed "Issue <index+1> of <total>".
 */
export async function postTeamsItemReply(
  context: TeamsPostContext,
  post: { batchKey: string; channel: TeamsChannelRef; rootId: string; index: number; total: number; view: TeamsView },
): Promise<TeamsPostOutcome> {
  const partKey = `${post.batchKey}:item:${post.index}:${channelKey(post.channel)}`;
  const view: TeamsView = { ...post.view, heading: `Issue ${post.index + 1} of ${post.total}` };
  return postOnce(context, partKey, post.channel, post.rootId, renderTeamsMessage(view, markOf(partKey)));
}

/** The channel as `channelId` names it, and as the pacer and the records key it. */
export function channelKey(channel: TeamsChannelRef): string {
  return `${channel.teamId}/${channel.channelId}`;
}

interface Posted {
  id: string;
  webUrl: string;
}

/** One message, posted at most once per `partKey` (record in Redis, mark as the card's attachment id). */
async function postOnce(
  context: TeamsPostContext,
  partKey: string,
  channel: TeamsChannelRef,
  replyTo: string | undefined,
  message: TeamsChatMessage,
): Promise<TeamsPostOutcome> {
  const { client, pacer } = context;
  const pace = channelKey(channel);
  const base = `/teams/${encodeURIComponent(channel.teamId)}/channels/${encodeURIComponent(channel.channelId)}/messages`;
  const path = replyTo === undefined ? base : `${base}/${encodeURIComponent(replyTo)}/replies`;
  const mark = message.attachments[0].id;
  const onRateLimited = pacer === undefined ? undefined : (ms: number) => pacer.holdOff(pace, ms);

  const outcome = await runOncePerKey<Posted>({
    redis: context.redis,
    key: teamsPostKey(context.keys, partKey),
    leaseMs: Math.max(0, context.deadline - Date.now()) + LEASE_AFTER_DEADLINE_MS,
    retainMs: context.retainMs ?? DEFAULT_RETAIN_MS,
    encode: (posted) => JSON.stringify(posted),
    decode: parsePosted,
    async perform(): Promise<AttemptOutcome<Posted>> {
      try {
        if (pacer !== undefined && !(await pacer.waitForSlot(pace, context))) {
          return { notDone: "the channel's next free posting slot is past the deadline (Teams takes about one message per second per channel)" };
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
        const answer: unknown = await callTeams(client, (graph, probe) => graph.api(path).middlewareOptions([probe]).post(message), context, onRateLimited);
        const posted = postedOf(answer);
        return posted === undefined ? { unsure: "Microsoft Graph answered without the message's id and webUrl" } : { done: posted };
      } catch (error) {
        if (error instanceof TeamsCallError && error.certain) return { notDone: error.message };
        return { unsure: reasonOf(error) };
      }
    },
    async find(sinceMs) {
      let next: string | undefined = `${path}?$top=${FIND_PAGE_SIZE}`;
      for (let page = 0; page < FIND_MAX_PAGES && next !== undefined; page += 1) {
        const current: string = next;
        const answer: unknown = await callTeams(client, (graph, probe) => graph.api(current).middlewareOptions([probe]).get(), context);
        const messages = valuesOf(answer);
        for (const candidate of messages) {
          if (markedWith(candidate, mark)) return postedOf(candidate);
        }
        const oldest = Math.min(...messages.map(createdAt));
        next = oldest < sinceMs ? undefined : nextPath(answer, client);
      }
      return undefined;
    },
  });
  if (outcome.status === "failed") return { status: "failed", reason: `posting to Microsoft Teams failed: ${outcome.reason}` };
  return { status: "posted", channel: pace, messageId: outcome.value.id, permalink: outcome.value.webUrl };
}

function postedOf(value: unknown): Posted | undefined {
  if (typeof value !== "object" || value === null || !("id" in value) || !("webUrl" in value)) return undefined;
  return typeof value.id === "string" && typeof value.webUrl === "string" ? { id: value.id, webUrl: value.webUrl } : undefined;
}

function parsePosted(text: string): Posted | undefined {
  try {
    return postedOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function valuesOf(answer: unknown): unknown[] {
  return typeof answer === "object" && answer !== null && "value" in answer && Array.isArray(answer.value) ? answer.value : [];
}

function markedWith(message: unknown, mark: string): boolean {
  if (typeof message !== "object" || message === null || !("attachments" in message) || !Array.isArray(message.attachments)) return false;
  return message.attachments.some(
    (attachment: unknown) => typeof attachment === "object" && attachment !== null && "id" in attachment && attachment.id === mark,
  );
}

function createdAt(message: unknown): number {
  const value = typeof message === "object" && message !== null && "createdDateTime" in message ? message.createdDateTime : undefined;
  return typeof value === "string" ? Date.parse(value) : Number.NaN;
}

/**
 * The next page's path under the Graph base URL, from `@odata.nextLink`; undefined when there is none or
 * it points elsewhere (the bearer token is only ever sent to the configured Graph).
 */
function nextPath(answer: unknown, client: TeamsPostClient): string | undefined {
  const link = typeof answer === "object" && answer !== null && "@odata.nextLink" in answer ? answer["@odata.nextLink"] : undefined;
  if (typeof link !== "string" || !link.startsWith(client.baseUrl)) return undefined;
  return link.slice(client.baseUrl.length);
}

function reasonOf(error: unknown): string {
  return errorMessage(error);
}
