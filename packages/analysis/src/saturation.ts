import type { Labels } from "./evidence.js";
import { compareText, labelKey, type Series } from "./series.js";

/** At or above this share of its limit a resource is saturated (`up`); at or below 1 − it, exhausted (`down`). */
export const SATURATION_SHARE = 0.95;

/** Which way a resource saturates: `up` towards its limit (connections), `down` towards nothing (free bytes). */
export type SaturationDirection = "up" | "down";

/**
 * A limit series as the analysis keeps it: its labels and the values it took, one entry per change, so
 * that a limit that never moves costs one entry however long the window.
 */
export interface LimitSeries {
  labels: Labels;
  /** `[from ms, value]`, in time order, an entry only where the value changed. */
  steps: ReadonlyArray<readonly [number, number]>;
}

/**
 * What a metric is saturated against (the playbook's `threshold` or `limit`):
 * - a threshold: saturated at or above it (`up`), at or below it (`down`);
 * - limit series: saturated at ≥ 95 % of the matching one (`up`), at ≤ 5 % of it (`down`). A series
 *   matches the limit series whose shared labels (`__name__` aside) all agree with its own, the one sharing
 *   most; a series without a match is compared with its baseline only.
 */
export type SaturationRule =
  | { direction: SaturationDirection; threshold: number }
  | {
      direction: SaturationDirection;
      limits: readonly LimitSeries[];
      /**
       * The limit's name when its series have no `__name__` (an aggregation drops it): the metric the
       * limit query reads, else the query.
       */
      name: string;
    };

/** The saturation check of one series: the limit at an instant and whether a value reaches it. */
export interface SaturationCheck {
  direction: SaturationDirection;
  /** The limit's metric name (e.g. `max_connections`); undefined for a threshold. */
  of?: string;
  /** The limit at `at` (the last value at or before it, else the first); undefined where there is none. */
  limitAt(at: number): number | undefined;
  saturated(value: number, limit: number): boolean;
  /** How close to saturation: larger is closer. */
  degree(value: number, limit: number): number;
}

/** A limit series reduced to its changes (non-finite samples dropped). */
export function compactLimit(series: Series): LimitSeries {
  const steps: Array<readonly [number, number]> = [];
  const points = series.points.filter((point) => Number.isFinite(point.value)).sort((a, b) => a.at - b.at);
  for (const { at, value } of points) {
    if (steps[steps.length - 1]?.[1] !== value) steps.push([at, value]);
  }
  return { labels: series.labels, steps };
}

/** The check of a series with these labels under `rule`; undefined when no limit series matches it. */
export function saturationCheck(rule: SaturationRule, labels: Labels): SaturationCheck | undefined {
  const up = rule.direction === "up";
  if ("threshold" in rule) {
    const { threshold } = rule;
    return {
      direction: rule.direction,
      limitAt: () => threshold,
      saturated: (value, limit) => (up ? value >= limit : value <= limit),
      degree: (value) => (up ? value : -value),
    };
  }
  const limit = matchingLimit(labels, rule.limits);
  if (limit === undefined) return undefined;
  return {
    direction: rule.direction,
    of: limit.labels.__name__ ?? rule.name,
    limitAt: (at) => valueAt(limit, at),
    saturated: (value, limitValue) => limitValue > 0 && (up ? value >= SATURATION_SHARE * limitValue : value <= (1 - SATURATION_SHARE) * limitValue),
    degree: (value, limitValue) => (up ? value / limitValue : -value / limitValue),
  };
}

function matchingLimit(labels: Labels, limits: readonly LimitSeries[]): LimitSeries | undefined {
  let best: { limit: LimitSeries; shared: number; key: string } | undefined;
  for (const limit of limits) {
    if (limit.steps.length === 0) continue;
    let shared = 0;
    let agrees = true;
    for (const [name, value] of Object.entries(limit.labels)) {
      if (name === "__name__" || labels[name] === undefined) continue;
      if (labels[name] !== value) agrees = false;
      shared += 1;
    }
    if (!agrees) continue;
    const key = labelKey(limit.labels);
    if (best === undefined || shared > best.shared || (shared === best.shared && compareText(key, best.key) < 0)) best = { limit, shared, key };
  }
  return best?.limit;
}

function valueAt(limit: LimitSeries, at: number): number | undefined {
  const { steps } = limit;
  // Binary search for the last change at or before `at`.
  let low = 0;
  let high = steps.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((steps[middle]?.[0] ?? Infinity) <= at) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return steps[Math.max(found, 0)]?.[1];
}
