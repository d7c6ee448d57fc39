import type { Evidence } from "@pes/analysis";

/** What running an action gave: its evidence, and whatever else rides along with it. */
interface Ran {
  readonly evidence: readonly Evidence[];
}

/**
 * What an action asks, as far as one execution can tell: its data source, its connector and its query as
 * configured. Within one execution the attributes and the window are the same for every action, so two
 * actions with the same key fill the same query over the same window.
 */
export function sameQueryKey(dataSource: string, connector: string, query: unknown): string {
  return JSON.stringify([dataSource, connector, query]);
}

/**
 * Runs each key once within one execution, however the actions are scheduled (they may not overlap, so
 * sharing in-flight fetches is not enough): a later action of the same key gets the first one's evidence,
 * citing its own title.
 */
export function createOncePerQuery<R extends Ran>(): (key: string | undefined, title: string, run: () => Promise<R>) => Promise<R> {
  const runs = new Map<string, Promise<R>>();
  return (key, title, run) => {
    if (key === undefined) return run();
    const first = runs.get(key);
    if (first !== undefined) return first.then((ran) => ({ ...ran, evidence: ran.evidence.map((item) => ({ ...item, action: title })) }));
    const running = run();
    runs.set(key, running);
    return running;
  };
}
