/**
 * The one queue every execution goes through. Renaming it strands the jobs already in Redis under the
 * old name (nothing would ever process them): drain the old queue with a worker first.
 */
export const EXECUTION_QUEUE = "playbook-executions";

/** Where a worker stores a finished job's reply, for a caller that missed the published one. */
export function resultKey(prefix: string, jobId: string): string {
  return `${prefix}:result:${jobId}`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's jobs there. */
export function replyChannel(prefix: string, instanceId: string): string {
  return `${prefix}:reply:${instanceId}`;
}
