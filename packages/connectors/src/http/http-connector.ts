import { asText, fillTemplates, fillUrlTemplate, MissingAttributesError } from "@pes/templates";
import { actionOutcomes } from "../action-outcomes.js";
import type { ActionOutcome, Connector } from "../connector.js";
import { sendHttpRequest } from "../http-client.js";
import { describeFetchFailure } from "../outcome-text.js";
import { readSecret } from "../secret-ref.js";
import { withoutCredentials } from "../url-text.js";
import type { HttpDataSource } from "./http-schemas.js";

const TARGET = "the data source";

/**
 * Runs one HTTP action against a JSON API: the path gets URL-encoded attribute values (a dot segment is
 * refused: the request cannot leave the data source's path), the body gets them as JSON strings (the
 * body is serialized after filling, so a value cannot break its structure), and the value at
 * `answerField` becomes the short answer. HTTP actions have no notion of abnormal:
 * the outcome is `normal`, or `failed` with the reason in plain words (never a header value).
 */
export const runHttpAction: Connector<"http"> = async (request) => {
  const { dataSource, spec, attributes, signal } = request;
  const outcomes = actionOutcomes(request);
  let url: string;
  let mostImportantLink: string;
  let body: string | undefined;
  try {
    // Both refuse a value that would move the URL (a dot segment), and check the built URL: the request
    // stays under the data source's path, the link at the origin and path its template fixes.
    url = fillUrlTemplate(spec.path, attributes, dataSource.url.replace(/\/+$/, ""));
    mostImportantLink = spec.link === undefined ? withoutCredentials(url) : fillUrlTemplate(spec.link, attributes);
    body = spec.body === undefined ? undefined : JSON.stringify(fillTemplates(spec.body, attributes, asText));
  } catch (error) {
    if (error instanceof MissingAttributesError) return outcomes.skipped(error);
    return outcomes.failed(`could not build the request: ${messageOf(error)}`);
  }

  let headers: Record<string, string>;
  try {
    headers = resolveHeaders(dataSource);
  } catch (error) {
    return outcomes.failed(`cannot build the request headers: ${messageOf(error)}`, mostImportantLink);
  }
  // An API that echoes its request (as some debug endpoints do) must not carry a secret into an answer:
  // every outcome below goes through actionOutcomes, which redacts the data source's secrets.
  const failed = (reason: string): ActionOutcome => outcomes.failed(reason, mostImportantLink);
  if (body !== undefined && spec.method === "GET") return failed("a GET request cannot carry a body (use method POST)");

  let status: number;
  let statusText: string;
  let contentType: string;
  let text: string;
  try {
    const answer = await sendHttpRequest(url, {
      method: spec.method,
      headers: { accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body }),
      signal,
    });
    ({ status, statusText, text } = answer);
    contentType = answer.contentType ?? "no content type";
  } catch (error) {
    return failed(describeFetchFailure(error, signal, TARGET));
  }
  // The body of an error answer is not shown: it may echo the request, headers included.
  if (status < 200 || status > 299) return failed(`${TARGET} answered HTTP ${status}${statusText ? ` ${statusText}` : ""}`);

  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return failed(`${TARGET} answered with something that is not JSON (${contentType.split(";")[0] ?? contentType})`);
  }
  const value = valueAt(json, spec.answerField);
  if (value === undefined) return failed(`the answer has no field ${spec.answerField}`);
  return outcomes.answered({ status: "normal", shortAnswer: `${request.title}: ${render(value)}`, mostImportantLink });
};

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

function render(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function resolveHeaders(dataSource: HttpDataSource): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(dataSource.headers ?? {})) {
    headers[name] = typeof value === "string" ? value : readSecret(value);
  }
  return headers;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
