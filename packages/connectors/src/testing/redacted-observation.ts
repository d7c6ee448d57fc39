import type { Observation } from "@pes/contracts";
import type { Observed } from "../run-action.js";

/**
 * What an action observed with the data source's secrets taken out of every text, keys included: what
 * the engine reads and what an evidence bundle keeps. For tests that check a secret a source echoed
 * never goes further.
 */
export function redactedObservation(observed: Observed): Observation {
  return JSON.parse(JSON.stringify(observed.observation), (_key, value: unknown) => {
    if (typeof value === "string") return observed.redact(value);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value).map(([key, field]) => [observed.redact(key), field]));
    }
    return value;
  }) as Observation;
}
