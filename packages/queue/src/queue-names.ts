/**
 * The one queue every execution goes through. Renaming it strands the jobs already in Redis under the
 * old name (nothing would ever process them): drain the old queue with a worker first.
 */
export const EXECUTION_QUEUE = "playbook-executions";

/**
 * Executions whose issue is a chat message the worker reads (a job without bookName): a queue of their
 * own, so that a worker of the version before, whose execute job requires bookName, never takes one.
 */
export const MESSAGE_EXECUTION_QUEUE = "playbook-message-executions";

/** Posts to chat that nobody waits for (a batch item's reply in its batch's thread). */
export const CHAT_POST_QUEUE = "playbook-chat-posts";

/** Where a worker stores a finished job's reply, for a caller that missed the published one. */
export function resultKey(prefix: string, jobId: string): string {
  return `${prefix}:result:${jobId}`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's jobs there. */
export function replyChannel(prefix: string, instanceId: string): string {
  return `${prefix}:reply:${instanceId}`;
}
