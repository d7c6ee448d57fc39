import { slackPostKey } from "@pes/jobs";
import { runOncePerKey, type AttemptOutcome } from "../delivery/once-per-key.js";
import type { SlackPostContext } from "./post-enrichment.js";
import { callSlack, SlackCallError } from "./slack-calls.js";
import { errorMessage } from "@pes/contracts";

/** One chart to share: its PNG and the words that stand for it (title, screen-reader text). */
export interface ChartFile {
  /** e.g. `chart-2.png`. */
  filename: string;
  /** Shown above the image (alert- and data-derived: Slack shows it as plain text). */
  title: string;
  /** For screen readers; cut to Slack's 1000 characters. */
  altText: string;
  png: Buffer;
}

/**
 * What we share at most in one message: a thread's charts are the few findings the bottom line cites.
 * Slack shows a handful of images in a message well; more would bury the thread.
 */
export const MAX_CHART_FILES = 4;
/** Slack's limit on a file's alt text (`alt_txt_too_large` past it). */
const ALT_TEXT_CHARS = 1_000;
/** Slack's limit on a file title we keep to (longer ones are cut). */
const TITLE_CHARS = 250;
const DEFAULT_RETAIN_MS = 7 * 24 * 3_600_000;
const LEASE_AFTER_DEADLINE_MS = 60_000;

export type ChartPostOutcome = { status: "posted"; count: number } | { status: "failed"; reason: string };

/**
 * Shares charts in a thread (`threadTs`: the root of the thread the result was posted in), as one message
 * holding up to MAX_CHART_FILES images, with Slack's external upload flow (`filesUploadV2`:
 * files.getUploadURLExternal, the upload, files.completeUploadExternal; the app needs `files:write`). Once
 * per `key` and channel however often the job runs, and at most once: a try that may have shared them
 * (its answer lost) is not repeated. It takes a slot of the channel's pacer, like any message.
 */
export async function postChartFiles(
  context: SlackPostContext,
  post: { key: string; channel: string; threadTs: string; files: readonly ChartFile[] },
): Promise<ChartPostOutcome> {
  const files = post.files.slice(0, MAX_CHART_FILES);
  if (files.length === 0) return { status: "posted", count: 0 };
  const { client, pacer } = context;
  const onRateLimited = pacer === undefined ? undefined : (ms: number) => pacer.holdOff(post.channel, ms);
  const outcome = await runOncePerKey<number>({
    redis: context.redis,
    key: slackPostKey(context.keys, `${post.key}:${post.channel}:charts`),
    leaseMs: Math.max(0, context.deadline - Date.now()) + LEASE_AFTER_DEADLINE_MS,
    retainMs: context.retainMs ?? DEFAULT_RETAIN_MS,
    encode: (count) => String(count),
    decode: (text) => (/^\d+$/.test(text) ? Number(text) : undefined),
    async perform(): Promise<AttemptOutcome<number>> {
      try {
        if (pacer !== undefined && !(await pacer.waitForSlot(post.channel, context))) {
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
        await callSlack(
          () =>
            client.filesUploadV2({
              channel_id: post.channel,
              thread_ts: post.threadTs,
              file_uploads: files.map((file) => ({
                file: file.png,
                filename: file.filename,
                title: cut(file.title, TITLE_CHARS),
                alt_text: cut(file.altText, ALT_TEXT_CHARS),
              })),
            }),
          context,
          onRateLimited,
        );
        return { done: files.length };
      } catch (error) {
        if (error instanceof SlackCallError && error.certain) return { notDone: error.message };
        return { unsure: reasonOf(error) };
      }
    },
  });
  return outcome.status === "done"
    ? { status: "posted", count: outcome.value }
    : { status: "failed", reason: `sharing the charts in Slack failed: ${outcome.reason}` };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function reasonOf(error: unknown): string {
  return errorMessage(error);
}
