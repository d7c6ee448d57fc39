import { parseTeamsChannelId, type ChartData } from "@pes/contracts";
import {
  MAX_CHART_FILES,
  postBatchRoot,
  postChartFiles,
  postEnrichment,
  postItemReply,
  postTeamsBatchRoot,
  postTeamsEnrichment,
  postTeamsItemReply,
  TEAMS_LIMITS,
  type ChannelPacer,
  type EnrichmentView,
  type SlackPostOutcome,
  type TeamsPostOutcome,
} from "@pes/integrations";
import type { KeySpace } from "@pes/jobs";
import type { Cluster, Redis } from "ioredis";
import type { OrganizationIntegrations } from "./organization-integrations.js";

/** `posted`: the message is in the channel; `rootId` its thread's root (Slack `ts`, Teams message id). */
export type ChannelPostOutcome =
  | { status: "posted"; rootId: string; permalink: string; incomplete?: string; chartsLeftOut?: string }
  | { status: "failed"; reason: string };

/**
 * A result as a channel shows it: the post, and the charts of the findings its bottom line cites, each
 * with its data (Slack uploads it drawn as PNG) and its signed image URL when links are signed (a Teams
 * card shows the image from there).
 */
export interface ResultView extends EnrichmentView {
  charts: readonly { index: number; chart: ChartData; pngUrl?: string | undefined }[];
}

/** What the posts of every organization share: where their records live, and the channels' pacing. */
export interface PostingDeps {
  redis: Redis | Cluster;
  /** Where those records and schedules are kept. */
  keys: KeySpace;
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
  /** At most this many charts go with a result. */
  maxCharts: number;
  postResult(key: string, view: ResultView, bounds: Bounds): Promise<ChannelPostOutcome>;
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
    const context = (bounds: Bounds) => ({ client: teams.postClient, redis: deps.redis, keys: deps.keys, pacer: deps.teamsPacer, ...bounds });
    return {
      service: "Microsoft Teams",
      maxCharts: TEAMS_LIMITS.charts,
      postResult: async (key, { charts, ...view }, bounds) => {
        // Teams shows an image from its URL only: charts without a signed link stay out of the card.
        const images = charts.flatMap(({ chart, pngUrl }) => (pngUrl === undefined ? [] : [{ title: chart.title, url: pngUrl }]));
        const pageUrl = view.result.pageUrl;
        const card = { ...view, charts: images, ...(pageUrl === undefined ? {} : { pageUrl }) };
        const outcome = fromTeams(await postTeamsEnrichment(context(bounds), { key, channel: teamsChannel, view: card }));
        if (outcome.status === "posted" && images.length < charts.length) {
          return { ...outcome, chartsLeftOut: "charts are shown on Teams from signed links: set LINK_SIGNING_SECRET and PUBLIC_URL" };
        }
        return outcome;
      },
      postBatchRoot: async (key, itemCount, bounds) => fromTeams(await postTeamsBatchRoot(context(bounds), { key, channel: teamsChannel, itemCount })),
      postItemReply: async (item, bounds) => fromTeams(await postTeamsItemReply(context(bounds), { ...item, channel: teamsChannel })),
    };
  }

  const { slack } = integrations;
  // The API refuses channelId without Slack: this is configuration drift between API and worker.
  if (slack === undefined) return "posting to Slack failed: the organization has no Slack app configured";
  const context = (bounds: Bounds) => ({ client: slack.postClient, redis: deps.redis, keys: deps.keys, pacer: deps.pacer, ...bounds });
  // Slack threads are one level deep: a reply to the linked message goes in its thread, whatever it is.
  const threadTs = thread?.channelId === channelId ? thread.threadTs : undefined;
  return {
    service: "Slack",
    maxCharts: MAX_CHART_FILES,
    postResult: async (key, { charts, ...view }, bounds) => {
      const outcome = fromSlack(await postEnrichment(context(bounds), { key, channel: channelId, ...(threadTs === undefined ? {} : { threadTs }), view }));
      if (outcome.status === "failed" || charts.length === 0) return outcome;
      // Drawn here, only for a post: the stored charts are data, drawn when someone asks. The renderers
      // (ECharts, resvg's native module) load on the first post with charts, not with every worker.
      const { chartCaption, chartPng } = await import("@pes/charts");
      const files = charts.map(({ index, chart }) => ({
        filename: `chart-${index + 1}.png`,
        title: chart.title,
        altText: chartCaption(chart),
        png: chartPng(chart),
      }));
      const shared = await postChartFiles(context(bounds), { key, channel: channelId, threadTs: threadTs ?? outcome.rootId, files });
      return shared.status === "failed" ? { ...outcome, chartsLeftOut: shared.reason } : outcome;
    },
    postBatchRoot: async (key, itemCount, bounds) => fromSlack(await postBatchRoot(context(bounds), { key, channel: channelId, itemCount })),
    postItemReply: async ({ batchKey, rootId, index, total, view }, bounds) =>
      fromSlack(await postItemReply(context(bounds), { batchKey, channel: channelId, rootTs: rootId, index, total, view })),
  };
}

function fromSlack(outcome: SlackPostOutcome): ChannelPostOutcome {
  if (outcome.status === "failed") return outcome;
  return {
    status: "posted",
    rootId: outcome.ts,
    permalink: outcome.permalink,
    ...(outcome.incomplete === undefined ? {} : { incomplete: outcome.incomplete }),
  };
}

function fromTeams(outcome: TeamsPostOutcome): ChannelPostOutcome {
  return outcome.status === "failed" ? outcome : { status: "posted", rootId: outcome.messageId, permalink: outcome.permalink };
}
