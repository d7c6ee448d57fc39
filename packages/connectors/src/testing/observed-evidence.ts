import { mapEvidenceText, readObservation, type Evidence } from "@pes/analysis";
import type { ActionContext } from "../connector.js";
import type { Observed } from "../run-action.js";

type Cited = Pick<ActionContext, "title" | "window">;

/**
 * What an execution makes of an observed action, as the engine does: the analysis reads the observation
 * (citing the action's title, with its link), then the data source's secrets are redacted from every
 * text. Connector tests assert on it, so that they check the whole way from the wire to the evidence.
 */
export function evidenceOf(observed: Observed, { title, window }: Cited): readonly Evidence[] {
  return readObservation(observed.observation, { action: title, window, ...(observed.link === undefined ? {} : { link: observed.link }) }).map((evidence) =>
    mapEvidenceText(evidence, observed.redact),
  );
}

/** A connector's run followed by the analysis: every evidence it gives. */
export function reading<R extends Cited>(run: (request: R) => Promise<Observed>): (request: R) => Promise<readonly Evidence[]> {
  return async (request) => evidenceOf(await run(request), request);
}

/** A connector's run followed by the analysis, for a connector whose actions give one evidence. */
export function readingOne<R extends Cited>(run: (request: R) => Promise<Observed>): (request: R) => Promise<Evidence> {
  return async (request) => {
    const [only, ...more] = evidenceOf(await run(request), request);
    if (only === undefined || more.length > 0) throw new Error(`expected one evidence, got ${more.length + (only === undefined ? 0 : 1)}`);
    return only;
  };
}

/** The evidence as a list (one is a list of one). */
export function evidenceList(found: Evidence | readonly Evidence[]): readonly Evidence[] {
  return Array.isArray(found) ? found : [found as Evidence];
}
