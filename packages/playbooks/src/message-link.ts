/** A chat message link that cannot be used: the message says why, naming the offending part. */
export class MessageLinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MessageLinkError";
  }
}

/** Where a Slack permalink points: the channel, the message, its thread, and the issue time. */
export interface MessageLink {
  channelId: string;
  /** The message's Slack timestamp, e.g. `1700000000.123456`. */
  ts: string;
  /** The parent message's timestamp when the link is a thread reply (`?thread_ts=`). */
  threadTs?: string;
  /** The message time: the issue time of an execution started from this link. */
  time: Date;
}

const SLACK_HOST_SUFFIX = ".slack.com";
/** No Slack message is older: Slack began in 2013. An earlier permalink time is not a real message's. */
const EARLIEST_MESSAGE_TIME = Date.UTC(2013, 0, 1);
/** How far past the request a message time may be: generous for clock skew, short of any real message. */
const MAX_FUTURE_MS = 24 * 60 * 60 * 1000;
const PERMALINK_PATH = /^\/archives\/([A-Z0-9]{2,64})\/p(\d{10})(\d{6})\/?$/;
const SLACK_TS = /^\d{10}\.\d{6}$/;

/**
 * Reads a Slack permalink: `https://<workspace>.slack.com/archives/<channelId>/p<16 digits>`, optionally
 * with `?thread_ts=<ts>&cid=<channelId>` for a thread reply. The digits are the message `ts` with the
 * dot before the last six removed.
 *
 * Only https links on a host that ends in `.slack.com`, or equals one of `allowedHosts` (compared
 * lower-cased), are accepted, without user info, without a port and without empty host labels
 * (`a..slack.com`): the service later fetches the message with its own chat token, so any other host is
 * refused before anything is fetched. So is a message time before 2013 (Slack did not exist) or more than
 * a day after `now` (the time of the request).
 * @throws MessageLinkError saying what is wrong with the link.
 */
export function parseMessageLink(link: string, allowedHosts: readonly string[], now: Date): MessageLink {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new MessageLinkError("messageLink is not a valid URL");
  }
  if (url.protocol !== "https:") throw new MessageLinkError("messageLink must be an https URL");
  // `https://x.slack.com@evil.com/` is a link to evil.com: user info is refused outright, not just the host.
  if (url.username !== "" || url.password !== "") throw new MessageLinkError("messageLink must not contain user info");
  if (url.port !== "") throw new MessageLinkError("messageLink must not name a port");

  const host = url.hostname.toLowerCase();
  const allowed =
    (host.endsWith(SLACK_HOST_SUFFIX) && host.length > SLACK_HOST_SUFFIX.length) || allowedHosts.some((allowedHost) => allowedHost.toLowerCase() === host);
  if (!allowed) throw new MessageLinkError(`messageLink host ${host} is not an allowed chat host`);
  // The URL parser keeps `..slack.com` (also spelled `%2e.slack.com` or with an ideographic full stop).
  if (host.split(".").includes("")) throw new MessageLinkError(`messageLink host ${host} has an empty label`);

  const path = PERMALINK_PATH.exec(url.pathname);
  if (path === null) {
    throw new MessageLinkError("messageLink must be a message permalink: /archives/<channel ID>/p<16 digits>");
  }
  const [, channelId = "", seconds = "", micros = ""] = path;
  const time = new Date(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
  if (time.getTime() < EARLIEST_MESSAGE_TIME) {
    throw new MessageLinkError(`messageLink time ${time.toISOString()} is before 2013, when Slack began`);
  }
  if (time.getTime() > now.getTime() + MAX_FUTURE_MS) {
    throw new MessageLinkError(`messageLink time ${time.toISOString()} is more than a day in the future`);
  }
  const result: MessageLink = { channelId, ts: `${seconds}.${micros}`, time };

  const threadTs = url.searchParams.get("thread_ts");
  if (threadTs !== null) {
    if (!SLACK_TS.test(threadTs)) {
      throw new MessageLinkError("messageLink thread_ts must be a Slack timestamp such as 1700000000.123456");
    }
    result.threadTs = threadTs;
  }
  return result;
}
