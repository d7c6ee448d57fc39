import { createHash } from "node:crypto";
import { canonicalJson } from "@pes/contracts";
import type { BatchRequest } from "./pes-client.js";

/**
 * An Idempotency-Key derived from a batch request itself: the same inputs (whatever the order of their
 * keys, whatever the file's blank lines) give the same key, so that submitting them again finds the
 * batch already running instead of starting a second one. Within the API's retention time only; after
 * it, the same inputs start a new batch.
 */
export function batchIdempotencyKey(request: BatchRequest): string {
  return `pes-batch-${createHash("sha256").update(canonicalJson(request)).digest("hex")}`;
}
