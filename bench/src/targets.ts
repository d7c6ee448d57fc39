/** One performance target (BENCHMARKS.md, "Scenarios and targets") checked against one measurement. */
export interface TargetCheck {
  scenario: string;
  target: string;
  /** The measured value in the target's own unit (a ratio, ms, executions/s, MB). */
  measured: number;
  unit: string;
  limit: number;
  direction: "at most" | "at least";
  /** measured / limit: ≤ 1 meets an "at most" target, ≥ 1 meets an "at least" one. */
  ratioToLimit: number;
  met: boolean;
}

/** Checks `measured` against `limit`; a missing measurement (NaN) is a miss, never a pass. */
export function checkTarget(scenario: string, target: string, measured: number, unit: string, direction: "at most" | "at least", limit: number): TargetCheck {
  const met = Number.isFinite(measured) && (direction === "at most" ? measured <= limit : measured >= limit);
  return { scenario, target, measured, unit, limit, direction, ratioToLimit: measured / limit, met };
}
