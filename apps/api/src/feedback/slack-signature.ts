import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Slack signs every request it sends an app (api.slack.com, "Verifying requests from Slack"):
 * `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<raw body>" with the app's
 * signing secret>`. A request older or newer than the window is refused, whatever its signature, so that a
 * captured request cannot be sent again later; within the window, the caller refuses a signature seen
 * before (a replay).
 */

/** Slack's advice: refuse a request whose timestamp is more than five minutes from the local clock. */
export const SLACK_TIMESTAMP_WINDOW_SECONDS = 5 * 60;

export type SlackSignatureCheck = "valid" | "unsigned" | "stale" | "mismatch";

/** Checks a request's signature (constant time) and timestamp against `now`. */
export function checkSlackSignature(
  signingSecret: string,
  request: { timestamp: string | undefined; signature: string | undefined; body: Buffer },
  now: Date,
): SlackSignatureCheck {
  const { timestamp, signature, body } = request;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp) || !signature.startsWith("v0=")) return "unsigned";
  if (Math.abs(now.getTime() / 1_000 - Number(timestamp)) > SLACK_TIMESTAMP_WINDOW_SECONDS) return "stale";
  const hmac = createHmac("sha256", signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(body);
  const expected = Buffer.from(`v0=${hmac.digest("hex")}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? "valid" : "mismatch";
}
