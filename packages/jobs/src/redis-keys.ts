import { parseRedisClusterUrl } from "./redis-url.js";

/*
 * Every key and channel the service uses in Redis. The builders below are the only code that names one:
 * the Lua scripts of @pes/executions are given their organization's prefix and build the names of its
 * keys with the functions of a Lua table `KEY` generated from these builders (organizationKeysLua), so
 * they name none themselves. A key's name is its data: renaming one strands what is stored under the old
 * name, and keys that one script or MULTI touches must keep sharing a hash tag on a cluster.
 *
 * BullMQ's, under `bullPrefix` (`<prefix>`, on a cluster `{<prefix>}`: every queue in one slot):
 *   <bullPrefix>:<queue>:…      BullMQ's own layout (jobs, lists, locks, events); the queue names are
 *                               @pes/executions' execution-jobs.ts
 *
 * An organization's executions and batches, under `organizationPrefix` (`<prefix>:org:<org>:`, on a
 * cluster `<prefix>:org:{<org>}:`: each transition is one script over one slot, and organizations
 * spread over the nodes):
 *   execution:<id>              hash: status, createdAt, completedAt, queue, coalesce, reuseMs, retainMs,
 *                               result; until its deadline, then EXECUTION_RETENTION_SECONDS once finished
 *   execution:<id>:waiters      set: reply channels of the API instances waiting for it; as its record
 *   execution:<id>:batches      set: "<batch id> <index>" of the batch items counting on it; as its record
 *   coalesce:<fingerprint>      string: the execution identical requests join; until its deadline, then
 *                               its reuse window
 *   lane:interactive, lane:batch  sorted sets: the executions in flight in each lane, scored by deadline
 *   finished                    sorted set: executions finished in the last minute (the pace, for Retry-After)
 *   batch:<id>                  hash: createdAt, deadline, total, begun, done, failed, lastDoneAt; until
 *                               the batch's deadline, then the retention
 *   batch:<id>:items            list: the items' execution ids (or an invalid input's `{ error }`) in order
 *   batch:<id>:counted          set: the indexes of the items counted as done
 *   batch:<id>:invalid          hash: an invalid input's index → its `{ error }` JSON
 *   batch:<id>:lost-check       string: held by the one reader looking for a quiet batch's lost items
 *   idempotency:<key hash>      string: an Idempotency-Key's request hash and the id it stands for;
 *                               the execution timeout plus the retention
 *   evidence:<execution id>     string: the execution's evidence bundle (JSON), for the organization's retention
 *   charts:<execution id>       string: the data of the execution's charts (JSON), as long as its record
 *   feedback:<execution id>     list: the answers given on the execution's verdict (JSON), oldest first,
 *                               the last the current one; as long as the execution's record or its
 *                               evidence bundle, whichever lives longer
 *   feedback-index              sorted set: the executions with an answer, scored by its time (ms);
 *                               members whose feedback is gone are dropped when read
 *   memory:<execution id>       string: a finished execution's fingerprint (JSON, @pes/memory), for the
 *                               organization's memory retention from its issue time
 *   memory:index:<scope>:<part>  sorted set: the contents (`<group>:<content>`, hashes) of one team
 *                               scope's fingerprints that have one part (a hash of it), each scored by its
 *                               latest execution's issue time; the most recent few thousand, trimmed to the
 *                               retention on each write, gone a retention after the last
 *   memory:content:<scope>:<content>  sorted set: the ids of the executions of one team scope whose
 *                               fingerprints have that content, scored by issue time, every one within the retention
 *   memory:group:<scope>:<group>  sorted set: the same for the fingerprints of one cause (or, without
 *                               one, one set of symptoms), every one within the retention: how often
 *   memory:scope-tags           hash: the team scopes the organization's fingerprints were kept under →
 *                               their tags in the names above
 *   audit                       stream: the organization's audit records, one per finished execution
 *                               (field `record`, JSON), trimmed to AUDIT_RETENTION_DAYS by id (MINID ~)
 *   audit:recorded:<execution id>  string: that the execution's record was appended (once per
 *                               execution, however often its job runs); for the retention
 *
 * The workers' side effects and shared limits, under `<prefix>:`, untagged (single-key commands and
 * scripts only, so any slot will do):
 *   reply:<instance id>         Pub/Sub channel: the replies of one API instance's executions
 *   query-slots:<org>/<data source>  sorted set: the holders of a data source's query slots, scored by
 *                               the end of their lease; expires a second after the last lease
 *   query-minute:<org>/<data source>  sorted set: the queries of the organization's last minute on the
 *                               data source (its per-minute budget), scored by a minute after each began;
 *                               expires a second after the last one's minute
 *   slack-pace:<channel>, teams-pace:<team id>/<channel id>  string: the channel's next free posting
 *                               time (ms, Redis' clock); expires a second after it
 *   slack-post:<post id>        string: a Slack message's once-only record (once-per-key.ts of
 *                               @pes/integrations): its `ts` once posted; 7 days
 *   teams-post:<post id>        string: the same for a Teams message: its id and webUrl; 7 days
 *   incident-note:<execution id>  string: the once-only record of an execution's incident note; 7 days
 *   batch-root:<batch id>:<channel>  string: `{ ts, permalink }` of a batch thread's root; 24 hours
 *   batch-root:<batch id>:<channel>:lock  string: held by the item posting that root, until its deadline
 *   slack-signature:<signature>  string: a Slack request signature already accepted (replays are
 *                               refused); as long as the timestamp window
 *
 * A post id says which message of which execution or batch went to which channel (Slack `<channel>`,
 * Teams `<team id>/<channel id>`): `<execution id>:<channel>:<n>` the n-th message of a result (0 its
 * root, then replies in its thread), `<execution id>:<channel>:charts` a result's charts (Slack),
 * `<batch id>:<channel>:0` a batch thread's root, `<batch id>:item:<index>:<channel>:0` (Slack) and
 * `<batch id>:item:<index>:<channel>` (Teams) an item's reply in it.
 */

/**
 * Where the service's data goes in Redis, for one Redis or a Redis Cluster. On a cluster every script
 * and MULTI must touch keys of one hash slot, so keys carry hash tags (the part in braces decides the
 * slot): BullMQ's prefix is one (`{pes}`), which puts every queue in one slot, as BullMQ needs for a
 * flow whose parent and children are in different queues; an organization's executions and batches
 * share its id's tag.
 * On one Redis nothing is tagged: the key names stay as they were, so that a rolling deploy's two
 * versions share their queues. Moving to a cluster is a move to another Redis, which starts with empty
 * queues either way (drain the old one first).
 */
export interface KeySpace {
  /** The configured prefix (QUEUE_PREFIX), of the keys and channels that are not tagged. */
  readonly prefix: string;
  /** BullMQ's `prefix` option for every Queue, Worker and FlowProducer. */
  readonly bullPrefix: string;
  /** On a cluster, `{id}`: the hash tag of everything that belongs to that id; else the id. */
  tag(id: string): string;
}

/** The key space of `prefix` on the Redis that `redisUrl` names (a cluster for `redis+cluster://`). */
export function keySpace(prefix: string, redisUrl: string): KeySpace {
  return parseRedisClusterUrl(redisUrl) !== undefined
    ? { prefix, bullPrefix: `{${prefix}}`, tag: (id) => `{${id}}` }
    : { prefix, bullPrefix: prefix, tag: (id) => id };
}

/** The prefix of every key of an organization's executions and batches: its hash tag is their slot on a cluster. */
export function organizationPrefix(keys: KeySpace, orgId: string): string {
  return `${keys.prefix}:org:${keys.tag(orgId)}:`;
}

/** An execution's record. */
export function executionKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}execution:${executionId}`;
}

/** The reply channels of the API instances waiting for an execution. */
export function executionWaitersKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${executionKey(keys, orgId, executionId)}:waiters`;
}

/** The "<batch id> <index>" of the batch items counting on an execution. */
export function executionBatchesKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${executionKey(keys, orgId, executionId)}:batches`;
}

/** The execution that identical requests (of one fingerprint, executionFingerprint) join. */
export function coalesceKey(keys: KeySpace, orgId: string, fingerprint: string): string {
  return `${organizationPrefix(keys, orgId)}coalesce:${fingerprint}`;
}

/** An organization's executions finished in the last minute, scored by when: its pace, for Retry-After. */
export function finishedKey(keys: KeySpace, orgId: string): string {
  return `${organizationPrefix(keys, orgId)}finished`;
}

/** An organization's executions in flight in a lane, scored by when they stop counting. */
export function laneKey(keys: KeySpace, orgId: string, lane: "interactive" | "batch"): string {
  return `${organizationPrefix(keys, orgId)}lane:${lane}`;
}

/** A batch's record: its size, deadline and progress counters. */
export function batchKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${organizationPrefix(keys, orgId)}batch:${batchId}`;
}

/** A batch's items in input order. */
export function batchItemsKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:items`;
}

/** The indexes of a batch's items counted as done (each counts once, whoever sees it done first). */
export function batchCountedKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:counted`;
}

/** A batch's invalid inputs, readable before a worker records them in its item list. */
export function batchInvalidKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:invalid`;
}

/** Held for a while by the one reader that looks for a quiet batch's lost items. */
export function batchLostCheckKey(keys: KeySpace, orgId: string, batchId: string): string {
  return `${batchKey(keys, orgId, batchId)}:lost-check`;
}

/**
 * The keys of an organization that the Lua scripts of @pes/executions name, by the name of their function
 * in the scripts' `KEY` table: `KEY.<name>(prefix, id)` is `<builder>(keys, orgId, id)` for the prefix
 * `organizationPrefix(keys, orgId)` (the scripts' KEYS[1]) and the id the builder takes after the
 * organization (an execution's, a batch's, a fingerprint, a lane; none for `finished`).
 */
export const SCRIPT_KEYS = {
  execution: executionKey,
  executionWaiters: executionWaitersKey,
  executionBatches: executionBatchesKey,
  coalesce: coalesceKey,
  finished: finishedKey,
  lane: laneKey,
  batch: batchKey,
  batchItems: batchItemsKey,
  batchCounted: batchCountedKey,
  batchInvalid: batchInvalidKey,
} satisfies Record<string, (keys: KeySpace, orgId: string, id: never) => string>;

/** Stands for the id in a builder's name, to find where it goes. */
const ID_PLACE = "\u0000id\u0000";

/**
 * The Lua that defines the table `KEY` of SCRIPT_KEYS, put in front of each script: each function is its
 * builder's name with the organization's prefix and the id as parameters, e.g.
 * `KEY.execution = function(prefix, id) return prefix .. 'execution:' .. id end`. What follows the
 * prefix is the same on one Redis and on a cluster (only the prefix carries the hash tag).
 */
export function organizationKeysLua(): string {
  const keys: KeySpace = { prefix: "pes", bullPrefix: "pes", tag: (id) => id };
  const prefix = organizationPrefix(keys, "org");
  const lines = ["local KEY = {}"];
  for (const [name, build] of Object.entries<(keys: KeySpace, orgId: string, id: never) => string>(SCRIPT_KEYS)) {
    const built = build(keys, "org", ID_PLACE as never);
    if (!built.startsWith(prefix)) throw new Error(`the key ${name} is not below its organization's prefix`);
    const parts = built.slice(prefix.length).split(ID_PLACE);
    const literal = parts.find((part) => !/^[\w:.-]*$/.test(part));
    if (literal !== undefined) throw new Error(`the key ${name} has a name Lua cannot quote as is: ${JSON.stringify(literal)}`);
    const terms = ["prefix", ...parts.flatMap((part, i) => [...(i > 0 ? ["id"] : []), ...(part === "" ? [] : [`'${part}'`])])];
    lines.push(`KEY.${name} = function(${parts.length > 1 ? "prefix, id" : "prefix"}) return ${terms.join(" .. ")} end`);
  }
  return `${lines.join("\n")}\n`;
}

/** An organization's Idempotency-Key (a SHA-256 in hex of the key as sent) → the body's hash and an id. */
export function idempotencyKey(keys: KeySpace, orgId: string, keyHash: string): string {
  return `${organizationPrefix(keys, orgId)}idempotency:${keyHash}`;
}

/** An execution's evidence bundle, kept when the organization asks. */
export function evidenceKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}evidence:${executionId}`;
}

/** The data of an execution's charts, kept as long as its record. */
export function chartsKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}charts:${executionId}`;
}

/** The answers given on an execution's verdict, oldest first (packages/executions' feedback-store.ts). */
export function feedbackKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${organizationPrefix(keys, orgId)}feedback:${executionId}`;
}

/** An organization's executions with feedback, scored by when their current answer was given. */
export function feedbackIndexKey(keys: KeySpace, orgId: string): string {
  return `${organizationPrefix(keys, orgId)}feedback-index`;
}

/** A Slack request signature already accepted: a second request with it is a replay. */
export function slackSignatureKey(keys: KeySpace, signature: string): string {
  return `${keys.prefix}:slack-signature:${signature}`;
}

/** An organization's audit trail: a stream of one record per finished execution. */
export function auditStreamKey(keys: KeySpace, orgId: string): string {
  return `${organizationPrefix(keys, orgId)}audit`;
}

/** That an execution's audit record was appended: it is appended once, however often its job runs. */
export function auditRecordedKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${auditStreamKey(keys, orgId)}:recorded:${executionId}`;
}

/** The Pub/Sub channel of one API instance: workers publish the replies of that instance's executions there. */
export function replyChannel(keys: KeySpace, instanceId: string): string {
  return `${keys.prefix}:reply:${instanceId}`;
}

/** The holders of a data source's query slots; `slotsKey` is the engine's `<org>/<data source>`. */
export function querySlotsKey(keys: KeySpace, slotsKey: string): string {
  return `${keys.prefix}:query-slots:${slotsKey}`;
}

/** The queries of an organization's last minute on a data source (its per-minute budget); `slotsKey` as querySlotsKey's. */
export function queryMinuteKey(keys: KeySpace, slotsKey: string): string {
  return `${keys.prefix}:query-minute:${slotsKey}`;
}

/** A chat channel's next free posting time; `channel` as the service names it (Teams: `<team id>/<channel id>`). */
export function channelPaceKey(keys: KeySpace, service: "slack" | "teams", channel: string): string {
  return `${keys.prefix}:${service}-pace:${channel}`;
}

/** The once-only record of a Slack message (a post id, see above). */
export function slackPostKey(keys: KeySpace, postId: string): string {
  return `${keys.prefix}:slack-post:${postId}`;
}

/** The once-only record of a Teams message (a post id, see above). */
export function teamsPostKey(keys: KeySpace, postId: string): string {
  return `${keys.prefix}:teams-post:${postId}`;
}

/** The once-only record of an execution's note in its incident tool. */
export function incidentNoteKey(keys: KeySpace, executionId: string): string {
  return `${keys.prefix}:incident-note:${executionId}`;
}

/** The root of a batch's thread in a chat channel, for the batch's other items. */
export function batchRootKey(keys: KeySpace, batchId: string, channel: string): string {
  return `${keys.prefix}:batch-root:${batchId}:${channel}`;
}

/** Held by the one item posting a batch's root in a channel. */
export function batchRootLockKey(keys: KeySpace, batchId: string, channel: string): string {
  return `${batchRootKey(keys, batchId, channel)}:lock`;
}

/**
 * Where an organization's memory keys begin. The memory's recall script is given it and builds the names
 * of the index, content and group sets of the scopes it reads below it, as the builders here do: a test of
 * @pes/memory reads what the remember script wrote under the builders' names back through the recall.
 */
export function memoryPrefix(keys: KeySpace, orgId: string): string {
  return `${organizationPrefix(keys, orgId)}memory:`;
}

/** A finished execution's fingerprint, recalled by later executions like it (@pes/memory). */
export function memoryRecordKey(keys: KeySpace, orgId: string, executionId: string): string {
  return `${memoryPrefix(keys, orgId)}${executionId}`;
}

/**
 * The fingerprint contents of one team scope (`scope`: its tag) having one part (`part`: a hash of it),
 * each scored by the issue time of its latest execution. Members are `<group>:<content>` (hashes), not
 * execution ids.
 */
export function memoryPartKey(keys: KeySpace, orgId: string, scope: string, part: string): string {
  return `${memoryPrefix(keys, orgId)}index:${scope}:${part}`;
}

/** The executions of one team scope whose fingerprints have one content (`content`: a hash of their parts), scored by issue time. */
export function memoryContentKey(keys: KeySpace, orgId: string, scope: string, content: string): string {
  return `${memoryPrefix(keys, orgId)}content:${scope}:${content}`;
}

/** The fingerprints of one team scope of one cause (or one set of symptoms: `group`, a hash of it), scored by issue time. */
export function memoryGroupKey(keys: KeySpace, orgId: string, scope: string, group: string): string {
  return `${memoryPrefix(keys, orgId)}group:${scope}:${group}`;
}

/** The team scopes an organization's fingerprints were kept under: a hash, scope → its tag in key names. */
export function memoryScopesKey(keys: KeySpace, orgId: string): string {
  return `${memoryPrefix(keys, orgId)}scope-tags`;
}
