import { createHash } from "node:crypto";
import type { ExecutionRequest, MessageExecutionRequest } from "@pes/contracts";

/**
 * What makes two executions identical, hashed: the organization, the playbook, the attributes and the
 * issue time's bucket of `bucketMs` (floored: 10:00:59 and 10:01:00 are two buckets), and what the
 * worker does with the result besides returning it: `liveRun` (a note to the incident) and `channelId`
 * (a post), so that two callers asking for different posts each get theirs, and a batch item's place
 * in its batch's thread. The caller's own text (`title`, `details`) is not part of it: it changes no
 * finding, and the first caller's title labels a shared post.
 *
 * A message link's execution is resolved by the worker (the message supplies playbook, attributes and
 * time): the link stands for the issue, bucketed by the request's time (`now`).
 */
export function executionFingerprint(request: ExecutionRequest | MessageExecutionRequest, bucketMs: number, now: number): string {
  const effects = [request.liveRun, request.channelId ?? null, request.batch === undefined ? null : [request.batch.id, request.batch.index]];
  const identity =
    "kind" in request
      ? ["message", request.orgId, request.messageLink, request.bookName ?? null, Math.floor(now / bucketMs), ...effects]
      : [
          "execute",
          request.orgId,
          request.bookName,
          Object.entries(request.attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          Math.floor(Date.parse(request.time) / bucketMs),
          ...effects,
        ];
  // Two teams' executions are never one: each reads only its own (an API before teams gives none).
  const owned = request.teams === undefined ? identity : [...identity, ["teams", ...request.teams]];
  return createHash("sha256").update(JSON.stringify(owned)).digest("hex");
}
