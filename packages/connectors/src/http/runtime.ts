import { describeFetchFailure, type Evidence } from "@pes/analysis";
import type { ActionRequest, ConnectorRuntime } from "../connector.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import type { DataSourceSecrets } from "../data-source-secrets.js";
import { runConnectorAction } from "../run-action.js";
import { httpConnector, httpRequestUrl, type HttpAction, type HttpChange, type HttpDataSource } from "./schema.js";

const TARGET = "the data source";
/** Epoch numbers above this are milliseconds (1e11 s is in the year 5138; 1e11 ms is in 1973). */
const EPOCH_MS_ABOVE = 1e11;
/** A date-time with its offset: without one, the time would depend on the worker's time zone. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * Sends one HTTP action's request and reads the value at `answerField`: an `answer` evidence, or with
 * `change` a `change` evidence at the time its answer gives; an empty list or null on the way is `none`
 * ("no entries"). HTTP actions have no notion of abnormal: an answer is context, never "normal".
 * Any failure is a `failed` evidence with the reason in plain words (never a header value).
 */
export const httpRuntime: ConnectorRuntime<HttpDataSource, HttpAction, Evidence> = {
  async fetch(request) {
    const { title, dataSource, query: action, signal, secrets, link } = request;
    const cited = { action: title, ...(link === undefined ? {} : { link }) };
    const failed = (reason: string): Evidence => ({ kind: "failed", ...cited, reason });
    const url = httpRequestUrl(dataSource, action);
    const body = action.body === undefined ? undefined : JSON.stringify(action.body);

    let headers: Record<string, string>;
    try {
      headers = resolveHeaders(dataSource, secrets);
    } catch (error) {
      return failed(`cannot build the request headers: ${messageOf(error)}`);
    }
    // An API that echoes its request (as some debug endpoints do) may put a secret into its answer: the
    // runner redacts the data source's secrets from whatever this returns.
    if (body !== undefined && action.method === "GET") return failed("a GET request cannot carry a body (use method POST)");

    let status: number;
    let statusText: string;
    let contentType: string;
    let bytes: Buffer;
    try {
      const answer = await request.http.request(url, {
        method: action.method,
        headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body }),
        signal,
      });
      ({ status, statusText, body: bytes } = answer);
      contentType = answer.contentType ?? "no content type";
    } catch (error) {
      return failed(describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES));
    }
    // The body of an error answer is not shown: it may echo the request, headers included.
    if (status < 200 || status > 299) return failed(`${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}`);

    let json: unknown;
    try {
      json = JSON.parse(answerText(bytes));
    } catch {
      return failed(`${TARGET} answered with something that is not JSON (${contentType.split(";")[0] ?? contentType})`);
    }
    const value = valueAt(json, action.answerField);
    // An empty list (or null) where the answer should be is an answer: the API has no entries. It is not
    // a broken answer, and "Could not check" would hide what was checked.
    if (isEmpty(value) || (value === undefined && emptyOnTheWay(json, action.answerField))) return { kind: "none", ...cited, what: "entries" };
    if (value === undefined) return failed(`the answer has no field ${action.answerField}`);
    if (action.change === undefined) return { kind: "answer", ...cited, text: render(value) };
    const at = timeAt(json, action.change);
    if (typeof at === "string") return failed(at);
    return { kind: "change", ...cited, change: action.change.kind, subject: action.change.subject, detail: render(value), at };
  },
};

/**
 * When a change happened, from the answer's `timeField`: an ISO 8601 date-time with an offset or Z, or a
 * number of seconds (or milliseconds, when above 1e11) since the epoch. A string says why not.
 */
function timeAt(json: unknown, change: HttpChange): Date | string {
  const value = valueAt(json, change.timeField);
  if (value === undefined) return `the answer has no field ${change.timeField}`;
  let at: Date | undefined;
  if (typeof value === "number" && Number.isFinite(value)) at = new Date(value > EPOCH_MS_ABOVE ? value : value * 1000);
  else if (typeof value === "string" && ISO_DATE_TIME.test(value)) at = new Date(value);
  if (at === undefined || Number.isNaN(at.getTime())) return `the answer's ${change.timeField} is not a time (an ISO 8601 date-time or seconds since the epoch)`;
  return at;
}

/**
 * Runs one HTTP action: fills path, link and body (a dot-segment value is refused: the request cannot
 * leave the data source's path), then fetches. The worker runs actions through the registry; this is the
 * same path, for this connector's own tests.
 */
export function runHttpAction(request: ActionRequest<HttpDataSource, HttpAction>): Promise<Evidence> {
  return runConnectorAction(httpConnector.definition, httpRuntime, request);
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

function resolveHeaders(dataSource: HttpDataSource, secrets: DataSourceSecrets): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(dataSource.headers ?? {})) {
    headers[name] = typeof value === "string" ? value : secrets.value(value);
  }
  return headers;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
