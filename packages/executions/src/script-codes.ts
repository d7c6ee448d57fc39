/**
 * What the lifecycle's scripts (scripts/*.lua) answer besides their data, named once: the loader puts
 * these in front of each script as the Lua table `CODE` (scriptConstants), and the TypeScript that calls
 * them reads their answers with the same names.
 */
export const SCRIPT_CODES = {
  /** accept-batch: the batch is accepted. */
  accepted: 1,
  /** accept-batch: the batch existed (a retry); nothing changed. */
  existed: 0,
  /** Over the organization's limit, followed by what Retry-After is derived from; nothing changed. */
  overLimit: "limit",
  /** extend-batch: the chunk was recorded already. */
  recordedAlready: -1,
  /** finish-execution: the execution had finished already, or has no record. */
  finishedAlready: -1,
  /** record-feedback: the organization has no such execution (no record, no evidence bundle); nothing changed. */
  noSuchExecution: 0,
} as const;

/** How far back an organization's finished executions are counted for its pace (the `finished` key). */
export const PACE_WINDOW_MS = 60_000;

/** The Lua that gives every script `CODE` and `PACE_WINDOW_MS`, from the values above. */
export function scriptConstants(): string {
  const codes = Object.entries(SCRIPT_CODES).map(([name, value]) => `${name} = ${typeof value === "string" ? `'${value}'` : value}`);
  return `local CODE = { ${codes.join(", ")} }\nlocal PACE_WINDOW_MS = ${PACE_WINDOW_MS}\n`;
}
