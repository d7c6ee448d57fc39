import { parseTeamsChannelId } from "@pes/contracts";
import {
  postBatchRoot,
  postEnrichment,
  postItemReply,
  postTeamsBatchRoot,
  postTeamsEnrichment,
  postTeamsItemReply,
  type ChannelPacer,
  type EnrichmentView,
  type SlackPostOutcome,
  type TeamsPostOutcome,
} from "@pes/integrations";
import type { Cluster, Redis } from "ioredis";
import type { OrganizationIntegrations } from "./organization-integrations.js";

/** `posted`: the message is in the channel; `rootId` its thread's root (Slack `ts`, Teams message id). */
export type ChannelPostOutcome =
  | { status: "posted"; rootId: string; permalink: string; incomplete?: string }
  | { status: "failed"; reason: string };

/** What the posts of every organization share: where their records live, and the channels' pacing. */
export interface PostingDeps {
  redis: Redis | Cluster;
  keyPrefix: string;
  /** Paces Slack channels. */
  pacer: ChannelPacer;
  /** Paces Teams channels (`service: "teams"`). */
  teamsPacer: ChannelPacer;
}

/**
 * Posting to one channel with the organization's app for it: a result, a batch's root, or a batch item's
 * reply in that root's thread. Each is once per key, however often the job runs.
 */
export interface ChannelPoster {
  /** The service's name, as reasons say it. */
  service: "Slack" | "Microsoft Teams";
  postResult(key: string, view: EnrichmentView, bounds: Bounds): Promise<ChannelPostOutcome>;
  postBatchRoot(key: string, itemCount: number, bounds: Bounds): Promise<ChannelPostOutcome>;
  postItemReply(item: { batchKey: string; rootId: string; index: number; total: number; view: EnrichmentView }, bounds: Bounds): Promise<ChannelPostOutcome>;
}

interface Bounds {
  deadline: number;
  signal?: AbortSignal;
}

/**
 * The poster for `channelId`: a Teams channel (`<team-id>/<channel-id>`) with the organization's Teams
 * account, anything else a Slack channel with its Slack app. `thread` is the Slack message the issue came
 * from: a result posted to its channel goes in its thread. A string says why there is none.
 */
export function channelPoster(
  deps: PostingDeps,
  integrations: OrganizationIntegrations,
  channelId: string,
  thread?: { channelId: string; threadTs: string },
): ChannelPoster | string {
  const teamsChannel = parseTeamsChannelId(channelId);
  if (teamsChannel !== undefined) {
    const { teams } = integrations;
    // The API refuses a Teams channel without `teams:`: this is configuration drift between API and worker.
    if (teams === undefined) return "posting to Microsoft Teams failed: the organization has no Teams account configured";
    const context = (bounds: Bounds) => ({ client: teams.postClient, redis: deps.redis, keyPrefix: deps.keyPrefix, pacer: deps.teamsPacer, ...bounds });
    return {
      service: "Microsoft Teams",
      postResult: async (key, view, bounds) => fromTeams(await postTeamsEnrichment(context(bounds), { key, channel: teamsChannel, view })),
      postBatchRoot: async (key, itemCount, bounds) => fromTeams(await postTeamsBatchRoot(context(bounds), { key, channel: teamsChannel, itemCount })),
      postItemReply: async (item, bounds) => fromTeams(await postTeamsItemReply(context(bounds), { ...item, channel: teamsChannel })),
    };
  }

  const { slack } = integrations;
  // The API refuses channelId without Slack: this is configuration drift between API and worker.
  if (slack === undefined) return "posting to Slack failed: the organization has no Slack app configured";
  const context = (bounds: Bounds) => ({ client: slack.postClient, redis: deps.redis, keyPrefix: deps.keyPrefix, pacer: deps.pacer, ...bounds });
  // Slack threads are one level deep: a reply to the linked message goes in its thread, whatever it is.
  const threadTs = thread?.channelId === channelId ? thread.threadTs : undefined;
  return {
    service: "Slack",
    postResult: async (key, view, bounds) =>
      fromSlack(await postEnrichment(context(bounds), { key, channel: channelId, ...(threadTs === undefined ? {} : { threadTs }), view })),
    postBatchRoot: async (key, itemCount, bounds) => fromSlack(await postBatchRoot(context(bounds), { key, channel: channelId, itemCount })),
    postItemReply: async ({ batchKey, rootId, index, total, view }, bounds) =>
      fromSlack(await postItemReply(context(bounds), { batchKey, channel: channelId, rootTs: rootId, index, total, view })),
  };
}

function fromSlack(outcome: SlackPostOutcome): ChannelPostOutcome {
  if (outcome.status === "failed") return outcome;
  return { status: "posted", rootId: outcome.ts, permalink: outcome.permalink, ...(outcome.incomplete === undefined ? {} : { incomplete: outcome.incomplete }) };
}

function fromTeams(outcome: TeamsPostOutcome): ChannelPostOutcome {
  return outcome.status === "failed" ? outcome : { status: "posted", rootId: outcome.messageId, permalink: outcome.permalink };
}
