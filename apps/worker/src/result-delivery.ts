import { setTimeout as sleep } from "node:timers/promises";
import type { BatchItemPostJob, BatchPosition, ChartData, PlaybookExecutionResult } from "@pes/contracts";
import { addIncidentNote, findIncidentReference, INCIDENT_ATTRIBUTES, takeLeaseLock, type IncidentRef, type IncidentToolConfig } from "@pes/integrations";
import { batchRootKey, batchRootLockKey } from "@pes/jobs";
import type { Logger } from "@pes/logger";
import type { Cluster, Redis } from "ioredis";
import { channelPoster, type ChannelPoster, type ChannelPostOutcome, type PostingDeps } from "./channel-posters.js";
import { citedCharts, signedLinkSettings, type ChartSettings } from "./execution-charts.js";
import { absolute, executionLinks, feedbackReference } from "@pes/signed-links";
import type { OrganizationIntegrations } from "./organization-integrations.js";
import { errorMessage } from "@pes/contracts";

/** What delivering a result needs: each organization's integrations and where side effects are recorded. */
export interface DeliveryDeps extends PostingDeps {
  integrations: ReadonlyMap<string, OrganizationIntegrations>;
  /** Holds the records that make each post and note happen once, and the channels' pacing. */
  /** One Redis or a Redis Cluster: single-key commands and scripts only. */
  redis: Redis | Cluster;
  /** Queues a batch item's thread reply (POST_BATCH_ITEM_JOB), once per item and channel. */
  enqueueBatchItemPost(job: BatchItemPostJob, jobId: string): Promise<void>;
  /** Where executions' charts are kept and how results link them; none: no charts. */
  charts?: ChartSettings;
  logger: Logger;
}

/** The execution whose result is delivered, and what the caller asked for. */
export interface Delivery {
  /** The job id: one post per channel and one note per execution, however often the job runs. */
  jobId: string;
  orgId: string;
  requestId: string;
  channelId?: string;
  liveRun: boolean;
  batch?: BatchPosition;
  /** The title, shown above the findings. */
  title?: string;
  attributes: Readonly<Record<string, string>>;
  /** The message the issue came from: its thread (the post replies there when in the same channel) and the incidents it names. */
  source?: { channelId: string; threadTs: string; incidentRefs: readonly IncidentRef[] };
  /** The data of the execution's charts by action index: those the bottom line cites go with the post. */
  charts?: ReadonlyMap<number, ChartData>;
}

/** Time kept between the side effects and the caller's deadline, for the reply to get there. */
const REPLY_MARGIN_MS = 1_000;
/** How long a batch thread's root is remembered for the batch's other items. */
const BATCH_ROOT_RETAIN_MS = 24 * 3_600_000;
/** How often an item waiting for another item to post its batch's root looks again. */
const BATCH_ROOT_POLL_MS = 50;

/**
 * Sends a finished execution's result where the caller asked, before the caller's deadline:
 * - `channelId`: posts it to the Slack or Teams channel (in the linked message's thread when the issue
 *   came from a Slack message in that channel) with the charts of the findings the bottom line cites (in
 *   the post's thread on Slack, in the card on Teams), and sets `enrichmentLink` to the post's permalink;
 *   a batch item goes in its batch's thread (see postToBatchThread), without charts;
 * - `liveRun`: adds it as a note to the incident the issue names, in the organization's incident tool.
 * Each happens once per execution, also when the job runs again. What fails is said in `error`, after
 * any error of the execution; the investigation is returned either way. A result without findings (the
 * execution itself failed) is sent nowhere.
 */
export async function deliverResult(
  deps: DeliveryDeps,
  delivery: Delivery,
  result: PlaybookExecutionResult,
  bounds: { deadline: number; signal: AbortSignal },
): Promise<PlaybookExecutionResult> {
  if (delivery.channelId === undefined && !delivery.liveRun) return result;
  if (result.error !== undefined && result.highlights === undefined) return result;
  const deadline = bounds.deadline - REPLY_MARGIN_MS;
  // Every call ends by the deadline, its request included: a late answer would cost the whole result.
  const signal = AbortSignal.any([bounds.signal, AbortSignal.timeout(Math.max(0, deadline - Date.now()))]);
  const integrations = deps.integrations.get(delivery.orgId) ?? { incidentTools: [] };
  const errors: string[] = result.error === undefined ? [] : [result.error];
  const delivered: PlaybookExecutionResult = { ...result };

  if (delivery.channelId !== undefined) {
    const posted = await post(deps, integrations, delivery, delivery.channelId, result, { deadline, signal });
    if (posted.status === "posted") {
      delivered.enrichmentLink = posted.permalink;
    } else {
      errors.push(capitalized(posted.reason));
    }
  }

  if (delivery.liveRun) {
    const noted = await note(deps, integrations.incidentTools, delivery, delivered, { deadline, signal });
    if (noted !== undefined) errors.push(noted);
  }

  if (errors.length > 0) delivered.error = errors.join("; ");
  return delivered;
}

async function post(
  deps: DeliveryDeps,
  integrations: OrganizationIntegrations,
  delivery: Delivery,
  channel: string,
  result: PlaybookExecutionResult,
  bounds: { deadline: number; signal: AbortSignal },
): Promise<ChannelPostOutcome> {
  const poster = channelPoster(deps, integrations, channel, delivery.source);
  if (typeof poster === "string") return { status: "failed", reason: poster };
  if (delivery.batch !== undefined) return postToBatchThread(deps, poster, delivery, delivery.batch, channel, result, bounds);

  const title = delivery.title;
  const charts = citedCharts(result, delivery.charts ?? new Map(), poster.maxCharts);
  const links = signedLinkSettings(deps.charts);
  const signedCharts =
    links === undefined || charts.length === 0 ? [] : executionLinks(links, { executionId: delivery.jobId, orgId: delivery.orgId, result }).charts;
  // Buttons to answer whether the cause was right: a reference signed with LINK_SIGNING_SECRET (Slack),
  // and under PUBLIC_URL the feedback page it names (Teams cards can only open links).
  const signing = deps.charts?.signing;
  const reference = signing === undefined ? undefined : feedbackReference(signing, { orgId: delivery.orgId, executionId: delivery.jobId });
  const feedback = reference === undefined ? undefined : { reference, ...(links === undefined ? {} : { url: absolute(links.publicUrl, reference) }) };
  const view = {
    result,
    ...(title === undefined ? {} : { title }),
    ...(feedback === undefined ? {} : { feedback }),
    charts: charts.map(([index, chart]) => ({ index, chart, pngUrl: signedCharts.find((signed) => signed.action === index)?.pngUrl })),
  };
  const outcome = await poster.postResult(delivery.jobId, view, bounds);
  if (outcome.status === "posted" && outcome.incomplete !== undefined) {
    deps.logger.warn(
      { jobId: delivery.jobId, requestId: delivery.requestId, channel, reason: outcome.incomplete },
      `posted to ${poster.service}, but not all of it`,
    );
  }
  if (outcome.status === "posted" && outcome.chartsLeftOut !== undefined) {
    deps.logger.warn(
      { jobId: delivery.jobId, requestId: delivery.requestId, channel, reason: outcome.chartsLeftOut },
      `posted to ${poster.service}, but not the charts`,
    );
  }
  return outcome;
}

/**
 * A batch item's post. Slack and Teams take about one message per second per channel, so a batch of 100
 * cannot post a message per item at once. Instead the batch has one thread per channel: its root is
 * posted once, by whichever item gets there first (the others wait for it), and each item's result is a
 * reply in it. When the batch's caller waits for its items (`callerWaits`), an item posts its thread
 * reply at the channel's pace before it is answered, and its `enrichmentLink` opens that thread reply; one
 * the pace leaves no room for before the caller's deadline (or that fails) is queued instead. Otherwise
 * (an async batch, whose items would hold their workers for the pace) the thread reply is a job of its
 * own (POST_BATCH_ITEM_JOB) that nobody waits for, paced per channel and retried. An item whose thread
 * reply is queued links the thread's root.
 */
async function postToBatchThread(
  deps: DeliveryDeps,
  poster: ChannelPoster,
  delivery: Delivery,
  batch: BatchPosition,
  channel: string,
  result: PlaybookExecutionResult,
  bounds: { deadline: number; signal: AbortSignal },
): Promise<ChannelPostOutcome> {
  const root = await batchRoot(deps, poster, batch, channel, bounds);
  if (root.status === "failed") return root;
  const title = delivery.title === undefined ? {} : { title: delivery.title };
  if (batch.callerWaits === true) {
    const posted = await poster.postItemReply(
      { batchKey: batch.id, rootId: root.rootId, index: batch.index, total: batch.total, view: { result, ...title } },
      bounds,
    );
    if (posted.status === "posted") return posted;
    deps.logger.info(
      { jobId: delivery.jobId, requestId: delivery.requestId, channel, reason: posted.reason },
      "a batch item's thread reply was not posted while its caller waited; queued",
    );
  }
  try {
    await deps.enqueueBatchItemPost(
      { orgId: delivery.orgId, channelId: channel, rootTs: root.rootId, batch, result, ...title },
      // BullMQ refuses a job id with `:`, which a Teams channel has; a Slack channel ID encodes to itself.
      `${batch.id}.${batch.index}.${encodeURIComponent(channel)}`,
    );
  } catch (error) {
    return { status: "failed", reason: `posting to ${poster.service} failed: this item's reply could not be queued (${errorMessage(error)})` };
  }
  return root;
}

/** The batch's root in `channel`: read from Redis once an item posted it, else posted under a short lock. */
async function batchRoot(
  deps: DeliveryDeps,
  poster: ChannelPoster,
  batch: BatchPosition,
  channel: string,
  bounds: { deadline: number; signal: AbortSignal },
): Promise<ChannelPostOutcome> {
  const key = batchRootKey(deps.keys, batch.id, channel);
  const lockKey = batchRootLockKey(deps.keys, batch.id, channel);
  try {
    for (;;) {
      const known = parseRoot(await deps.redis.get(key));
      if (known !== undefined) return { status: "posted", rootId: known.ts, permalink: known.permalink };
      if (Date.now() >= bounds.deadline || bounds.signal.aborted) {
        return { status: "failed", reason: `posting to ${poster.service} failed: the batch thread's root was not posted before the deadline` };
      }
      const leaseMs = Math.max(1_000, bounds.deadline - Date.now());
      const lock = await takeLeaseLock(deps.redis, lockKey, leaseMs);
      if (lock !== undefined) {
        try {
          const outcome = await poster.postBatchRoot(batch.id, batch.total, bounds);
          if (outcome.status === "posted") {
            // `ts` whatever the service: the field name an earlier version wrote, which it still reads.
            await deps.redis.set(key, JSON.stringify({ ts: outcome.rootId, permalink: outcome.permalink }), "PX", BATCH_ROOT_RETAIN_MS);
          }
          return outcome;
        } finally {
          await lock.release();
        }
      }
      await sleep(BATCH_ROOT_POLL_MS, undefined, { signal: bounds.signal });
    }
  } catch (error) {
    return { status: "failed", reason: `posting to ${poster.service} failed: the batch thread's root: ${errorMessage(error)}` };
  }
}

/**
 * Posts a batch item's result as a reply in its batch's thread (POST_BATCH_ITEM_JOB), waiting for the
 * channel's pace for up to `windowMs`. Once per item and channel, however often the job runs.
 * @throws Error saying why it was not posted: the job is retried with backoff.
 */
export async function postBatchItemReply(deps: DeliveryDeps, job: BatchItemPostJob, bounds: { windowMs: number; signal: AbortSignal }): Promise<void> {
  const integrations = deps.integrations.get(job.orgId);
  const poster = integrations === undefined ? "the organization is unknown" : channelPoster(deps, integrations, job.channelId);
  if (typeof poster === "string") {
    deps.logger.error({ orgId: job.orgId, channel: job.channelId, reason: poster }, "a batch item's thread reply cannot be posted; dropped");
    return;
  }
  const { batch } = job;
  const outcome = await poster.postItemReply(
    {
      batchKey: batch.id,
      rootId: job.rootTs,
      index: batch.index,
      total: batch.total,
      view: { result: job.result, ...(job.title === undefined ? {} : { title: job.title }) },
    },
    { deadline: Date.now() + bounds.windowMs, signal: bounds.signal },
  );
  if (outcome.status === "failed") throw new Error(`reply ${batch.index + 1} of ${batch.total} in ${job.channelId}: ${outcome.reason}`);
}

function parseRoot(text: string | null): { ts: string; permalink: string } | undefined {
  if (text === null) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || !("ts" in value) || !("permalink" in value)) return undefined;
    return typeof value.ts === "string" && typeof value.permalink === "string" ? { ts: value.ts, permalink: value.permalink } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Adds the result as a note to the incident the issue names, in the first configured tool it names one
 * of; undefined when added (now or by an earlier run of the job), else why not.
 */
async function note(
  deps: DeliveryDeps,
  tools: readonly IncidentToolConfig[],
  delivery: Delivery,
  result: PlaybookExecutionResult,
  bounds: { deadline: number; signal: AbortSignal },
): Promise<string | undefined> {
  // The API refuses liveRun without an incident tool: this is configuration drift between API and worker.
  const [first] = tools;
  if (first === undefined) return "liveRun: the organization has no incident tool configured";
  const attributes = incidentAttributes(delivery.attributes, delivery.source?.incidentRefs ?? []);
  const tool = tools.find((candidate) => findIncidentReference(candidate.tool, { attributes }) !== undefined) ?? first;
  const { enrichmentLink } = result;
  const outcome = await addIncidentNote(
    { redis: deps.redis, keys: deps.keys, ...bounds },
    {
      executionId: delivery.jobId,
      tool,
      attributes,
      result,
      ...(delivery.title === undefined ? {} : { title: delivery.title }),
      ...(enrichmentLink === undefined ? {} : { enrichmentLink }),
    },
  );
  switch (outcome.status) {
    case "added":
      deps.logger.info(
        { jobId: delivery.jobId, requestId: delivery.requestId, incident: outcome.incident, byThisRun: outcome.byThisCall },
        "incident note added",
      );
      return undefined;
    case "no_reference":
      return `liveRun: ${outcome.reason}`;
    case "failed":
      return `liveRun: ${outcome.reason}`;
  }
}

/**
 * The attributes that name an incident, as the note library reads them: the issue's own, then what the
 * linked message refers to (its incident links and labels) where the attributes name none (a message's
 * attributes carry them already, unless the attribute caps left one out).
 */
export function incidentAttributes(attributes: Readonly<Record<string, string>>, refs: readonly IncidentRef[]): Record<string, string> {
  const named: Record<string, string> = { ...attributes };
  const setIfAbsent = (name: string, value: string | undefined) => {
    if (value !== undefined && value.trim() !== "" && !Object.hasOwn(named, name)) named[name] = value;
  };
  for (const ref of refs) {
    if (ref.tool === "pagerduty") setIfAbsent(INCIDENT_ATTRIBUTES.pagerduty, ref.incidentId);
    else if ("alertId" in ref) setIfAbsent(INCIDENT_ATTRIBUTES.opsgenieId, ref.alertId);
    else setIfAbsent(INCIDENT_ATTRIBUTES.opsgenieAlias, ref.alias);
  }
  return named;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
