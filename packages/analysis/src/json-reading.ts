import type { JsonObservation } from "@pes/contracts";
import type { Evidence } from "./evidence.js";
import type { ReadingContext } from "./reading-context.js";

/** Epoch numbers above this are milliseconds (1e11 s is in the year 5138; 1e11 ms is in 1973). */
const EPOCH_MS_ABOVE = 1e11;
/** A date-time with its offset: without one, the time would depend on the worker's time zone. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * A JSON answer read at `answerField`: an `answer` evidence, or with `change` a `change` evidence at the
 * time the answer gives; an empty list or null on the way is `none` ("no entries"). An answer has no
 * notion of abnormal: it is context, never "normal".
 */
export function readJson(observation: JsonObservation, reading: ReadingContext): Evidence {
  const cited = { action: reading.action, ...(reading.link === undefined ? {} : { link: reading.link }) };
  const failed = (reason: string): Evidence => ({ kind: "failed", ...cited, reason });
  const { answer: json, answerField, change } = observation;
  const value = valueAt(json, answerField);
  // An empty list (or null) where the answer should be is an answer: the API has no entries. It is not
  // a broken answer, and "Could not check" would hide what was checked.
  if (isEmpty(value) || (value === undefined && emptyOnTheWay(json, answerField))) return { kind: "none", ...cited, what: "entries" };
  if (value === undefined) return failed(`the answer has no field ${answerField}`);
  if (change === undefined) return { kind: "answer", ...cited, text: render(value) };
  const at = timeAt(json, change.timeField);
  if (typeof at === "string") return failed(at);
  return { kind: "change", ...cited, change: change.kind, subject: change.subject, detail: render(value), at };
}

/**
 * When a change happened, from the answer's `timeField`: an ISO 8601 date-time with an offset or Z, or a
 * number of seconds (or milliseconds, when above 1e11) since the epoch. A string says why not.
 */
function timeAt(json: unknown, timeField: string): Date | string {
  const value = valueAt(json, timeField);
  if (value === undefined) return `the answer has no field ${timeField}`;
  let at: Date | undefined;
  if (typeof value === "number" && Number.isFinite(value)) at = new Date(value > EPOCH_MS_ABOVE ? value : value * 1000);
  else if (typeof value === "string" && ISO_DATE_TIME.test(value)) at = new Date(value);
  if (at === undefined || Number.isNaN(at.getTime())) return `the answer's ${timeField} is not a time (an ISO 8601 date-time or seconds since the epoch)`;
  return at;
}

/**
 * The value at a dotted path such as `a.b.0.c`: object keys by name (own properties only), array items
 * by index. Undefined when any step is missing.
 */
export function valueAt(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const step of path.split(".")) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(step)) return undefined;
      current = current[Number(step)];
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, step)) {
      current = (current as Record<string, unknown>)[step];
    } else {
      return undefined;
    }
  }
  return current;
}

/** Whether a step of a dotted path meets an empty list or null before the path ends (`items.0.version` in `{"items":[]}`). */
function emptyOnTheWay(root: unknown, path: string): boolean {
  const steps = path.split(".");
  return steps.some((_, index) => isEmpty(index === 0 ? root : valueAt(root, steps.slice(0, index).join("."))));
}

function isEmpty(value: unknown): boolean {
  return value === null || (Array.isArray(value) && value.length === 0);
}

function render(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
