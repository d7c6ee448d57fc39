import type { BatchView } from "@pes/executions";

/** What a watcher of a batch learns: its progress (a view without items), that it is gone, or that reading it failed. */
export type BatchProgress = { kind: "view"; view: BatchView } | { kind: "missing" } | { kind: "error"; error: unknown };

export type BatchProgressListener = (progress: BatchProgress) => void;

export interface BatchProgressHubDeps {
  /** Reads the batch's progress (no items); undefined when the organization has no batch of that id. */
  read(orgId: string, batchId: string): Promise<BatchView | undefined>;
  /** The time between two reads of one batch. */
  intervalMs: number;
}

/** One reader per batch for every event stream of this process that watches it. */
export interface BatchProgressHub {
  /**
   * Tells `listener` the batch's progress: the latest known at once (read first if nobody watches the
   * batch yet), then each change. `missing`, `error` and a completed view are the last it hears. Never
   * calls it before returning. Returns the function that stops listening; any moment is fine.
   */
  watch(orgId: string, batchId: string, listener: BatchProgressListener): () => void;
  /** How many batches are being read now: 0 once every watcher left. */
  readonly watched: number;
}

interface Watch {
  readonly listeners: Set<BatchProgressListener>;
  /** The last view told, so that a later watcher hears it at once and unchanged reads are not told. */
  latest?: BatchView;
  timer?: NodeJS.Timeout;
}

/**
 * Every open stream of a batch used to read the batch itself once a second, and on for as long as the
 * batch ran, even after its client had gone. Here a batch is read once per interval while at least one
 * stream watches it, and not at all once the last one left.
 */
export function createBatchProgressHub(deps: BatchProgressHubDeps): BatchProgressHub {
  const watches = new Map<string, Watch>();

  async function poll(key: string, watch: Watch, orgId: string, batchId: string): Promise<void> {
    let progress: BatchProgress;
    try {
      const view = await deps.read(orgId, batchId);
      progress = view === undefined ? { kind: "missing" } : { kind: "view", view };
    } catch (error) {
      progress = { kind: "error", error };
    }
    // Everyone left while it read: nobody to tell, nothing to schedule.
    if (watches.get(key) !== watch) return;
    const last = progress.kind !== "view" || progress.view.status === "completed";
    if (last) watches.delete(key);
    if (progress.kind !== "view" || changed(watch.latest, progress.view)) {
      if (progress.kind === "view") watch.latest = progress.view;
      for (const listener of [...watch.listeners]) listener(progress);
    }
    if (!last) watch.timer = setTimeout(() => void poll(key, watch, orgId, batchId), deps.intervalMs);
  }

  return {
    watch(orgId, batchId, listener) {
      // Organization-scoped: another organization's watcher reads for itself, and learns the batch is missing.
      const key = JSON.stringify([orgId, batchId]);
      let watch = watches.get(key);
      if (watch === undefined) {
        watch = { listeners: new Set() };
        watches.set(key, watch);
        void poll(key, watch, orgId, batchId);
      } else if (watch.latest !== undefined) {
        const { latest } = watch;
        const listeners = watch.listeners;
        queueMicrotask(() => {
          if (listeners.has(listener)) listener({ kind: "view", view: latest });
        });
      }
      watch.listeners.add(listener);
      const joined = watch;
      return () => {
        joined.listeners.delete(listener);
        if (joined.listeners.size > 0 || watches.get(key) !== joined) return;
        clearTimeout(joined.timer);
        watches.delete(key);
      };
    },
    get watched() {
      return watches.size;
    },
  };
}

function changed(before: BatchView | undefined, after: BatchView): boolean {
  return before === undefined || before.status !== after.status || JSON.stringify(before.progress) !== JSON.stringify(after.progress);
}
