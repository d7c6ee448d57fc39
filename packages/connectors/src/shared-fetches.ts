import type { Observation } from "@pes/contracts";

/**
 * One data source's fetches in flight, by what they ask (connector, filled query, window): a second action
 * asking the same while the first is in flight shares its answer instead of asking again. Per data source
 * connection, so per worker: identical queries of concurrent executions (the items of a batch) on one
 * worker are fetched once. Only while in flight: an entry is dropped when its fetch ends, so nothing stale
 * is ever served, and a query asked after the first answered is asked again.
 */
export interface SharedFetches {
  /**
   * The answer of the fetch of `key` in flight, or of `fetch` started now. The fetch runs on its own
   * signal, aborted once every caller sharing it has aborted; a caller whose `signal` aborts stops
   * waiting at once (rejecting with its reason) while the others keep theirs.
   */
  run(key: string, signal: AbortSignal, fetch: (signal: AbortSignal) => Promise<Observation>): Promise<Observation>;
}

interface InFlight {
  answer: Promise<Observation>;
  join(signal: AbortSignal): void;
}

/** A data source's fetches in flight, empty. */
export function createSharedFetches(): SharedFetches {
  const inFlight = new Map<string, InFlight>();
  return {
    run(key, signal, fetch) {
      let entry = inFlight.get(key);
      if (entry === undefined) {
        entry = start(fetch, () => inFlight.delete(key));
        inFlight.set(key, entry);
      }
      entry.join(signal);
      return untilAborted(entry.answer, signal);
    },
  };
}

function start(fetch: (signal: AbortSignal) => Promise<Observation>, ended: () => void): InFlight {
  const controller = new AbortController();
  let waiting = 0;
  const answer = fetch(controller.signal).finally(ended);
  return {
    answer,
    join(signal) {
      waiting += 1;
      const leave = () => {
        waiting -= 1;
        if (waiting === 0) controller.abort(signal.reason);
      };
      if (signal.aborted) leave();
      else signal.addEventListener("abort", leave, { once: true });
    },
  };
}

/** `answer`, or a rejection with the signal's reason as soon as it aborts. */
function untilAborted(answer: Promise<Observation>, signal: AbortSignal): Promise<Observation> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    answer.then(
      (observation) => {
        signal.removeEventListener("abort", abort);
        resolve(observation);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
