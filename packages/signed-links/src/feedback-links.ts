import { checkSignedPath, pagePath, signPath, type LinkCheck, type LinkSigning } from "./signed-links.js";

/**
 * Feedback on an execution from surfaces that carry no token. A chat message's buttons carry a signed
 * reference to their execution (a Slack button's `value`, a modal's `private_metadata`): when Slack sends
 * a click back, the reference says which organization and execution it is about, and nobody can make one
 * for an execution of another organization without the service's secret. A Teams card, which cannot send
 * anything back to the service (docs/microsoft-teams.md), opens the same reference as a link to the
 * execution's feedback page.
 */

/** The feedback page of an execution: `/view/execution/{id}/feedback`. */
export function feedbackPath(executionId: string): string {
  return `${pagePath(executionId)}/feedback`;
}

/** A signed reference to an execution's feedback: its feedback path, signed for the organization until `expiresAt`. */
export function feedbackReference(signing: LinkSigning, target: { orgId: string; executionId: string }, now: Date = new Date()): string {
  const expiresAt = new Date(now.getTime() + signing.lifetimeSeconds * 1_000);
  return signPath(signing.secret, { path: feedbackPath(target.executionId), orgId: target.orgId, executionId: target.executionId }, expiresAt);
}

/** What a reference names, or why it is refused. */
export type FeedbackReferenceCheck = { status: "valid"; orgId: string; executionId: string } | { status: Exclude<LinkCheck, "valid"> | "malformed" };

/** The longest reference read: a path, an organization id, an expiry and a signature. */
const REFERENCE_MAX_CHARS = 1_000;
const EXECUTION_IN_PATH = /^\/view\/execution\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/feedback$/;

/** Checks a reference as it came back (a button's value): its signature (constant time), then its expiry. */
export function checkFeedbackReference(secret: string, reference: unknown, now: Date): FeedbackReferenceCheck {
  if (typeof reference !== "string" || reference.length > REFERENCE_MAX_CHARS) return { status: "malformed" };
  const at = reference.indexOf("?");
  const path = at === -1 ? reference : reference.slice(0, at);
  const executionId = EXECUTION_IN_PATH.exec(path)?.[1];
  if (executionId === undefined) return { status: "malformed" };
  const query = Object.fromEntries(new URLSearchParams(at === -1 ? "" : reference.slice(at + 1)));
  const checked = checkSignedPath(secret, path, executionId, query, now);
  if (checked !== "valid") return { status: checked };
  return { status: "valid", orgId: query.org ?? "", executionId };
}
