import type { FailedObservation, JsonObservation } from "@pes/contracts";
import type { ConnectorRuntime } from "../connector.js";
import type { DataSourceSecrets } from "../data-source-secrets.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import { httpRequestUrl } from "./http-request-url.js";
import type { HttpAction, HttpDataSource } from "./schema.js";
import { errorMessage } from "@pes/contracts";

const TARGET = "the data source";

/**
 * Sends one HTTP action's request and returns its JSON answer, with where the action reads it
 * (`answerField`, and `change`). Any failure is a `failed` observation with the reason in plain words
 * (never a header value).
 */
export const httpRuntime: ConnectorRuntime<HttpDataSource, HttpAction, JsonObservation> = {
  async fetch(request) {
    const { dataSource, query: action, signal, secrets } = request;
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });
    const url = httpRequestUrl(dataSource, action);
    const body = action.body === undefined ? undefined : JSON.stringify(action.body);

    let headers: Record<string, string>;
    try {
      headers = resolveHeaders(dataSource, secrets);
    } catch (error) {
      return failed(`cannot build the request headers: ${errorMessage(error)}`);
    }
    // An API that echoes its request (as some debug endpoints do) may put a secret into its answer: the
    // engine redacts the data source's secrets from whatever is read from it.
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
    return { kind: "json", answer: json, answerField: action.answerField, ...(action.change === undefined ? {} : { change: action.change }) };
  },
};

function resolveHeaders(dataSource: HttpDataSource, secrets: DataSourceSecrets): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(dataSource.headers ?? {})) {
    headers[name] = typeof value === "string" ? value : secrets.value(value);
  }
  return headers;
}
