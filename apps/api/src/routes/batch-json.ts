import type { BatchItemStatus, BatchStatus } from "@pes/contracts";
import { JsonText } from "@pes/contracts";
import type { BatchItemView, BatchView } from "@pes/executions";
import { withOutcome } from "./execution-routes.js";

/**
 * A batch as `GET /playbook/execution/batch/{id}` shows it (BatchStatus), split where its items go:
 * `open` ends with `"items":[`, `close` is `]}`, so that a long page can be written between them a slice at a time.
 */
export function batchEnvelope(view: BatchView, offset: number): { open: string; close: string } {
  const head = JSON.stringify({
    id: view.id,
    status: view.status,
    createdAt: view.createdAt.toISOString(),
    progress: view.progress,
    offset,
    items: [],
  } satisfies BatchStatus);
  return { open: head.slice(0, -2), close: "]}" };
}

/** One item of a batch (BatchItemStatus); its result goes in as it is. */
export function batchItemJson(item: BatchItemView): string {
  const status = JSON.stringify({
    index: item.index,
    ...(item.executionId === undefined ? {} : { executionId: item.executionId }),
    status: item.status,
  } satisfies BatchItemStatus);
  return withOutcome(status, item.outcome).text;
}

/** A batch as `GET /playbook/execution/batch/{id}` shows it, in one piece: for short answers (no items, or few). */
export function batchJson(view: BatchView, offset: number): JsonText {
  const { open, close } = batchEnvelope(view, offset);
  return new JsonText(`${open}${view.items.map(batchItemJson).join(",")}${close}`);
}
