import type { FetchRequest } from "../connector.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { answerText, MAX_RESPONSE_BYTES, type HttpAnswer } from "../http-client.js";
import { baseUrlOf } from "../url-text.js";
import { DatadogErrors } from "./datadog-response.js";
import type { DatadogDataSource } from "./schema.js";
import { errorMessage } from "@pes/contracts";

export const TARGET = "Datadog";

/**
 * Sends one request with the data source's keys and reads its JSON answer, or says why there is none
 * (no answer, an error answer, not JSON). With `post`, a JSON body, it is a POST to a query API (the logs
 * search and aggregate only read, so it is marked idempotent: sent again on 429/5xx within the deadline,
 * like a GET). Datadog's error answers are `{"errors": [...]}`.
 */
export async function askDatadog(
  request: FetchRequest<DatadogDataSource, unknown>,
  path: string,
  post?: object,
): Promise<{ body: unknown } | { problem: string }> {
  const { dataSource, secrets, signal } = request;
  let headers: Record<string, string>;
  try {
    headers = { accept: "application/json", "dd-api-key": secrets.value(dataSource.apiKey), "dd-application-key": secrets.value(dataSource.appKey) };
  } catch (error) {
    return { problem: `cannot authenticate to ${TARGET}: ${errorMessage(error)}` };
  }
  let answer: HttpAnswer;
  try {
    const url = `${baseUrlOf(dataSource)}${path}`;
    answer = await request.http.request(
      url,
      post === undefined
        ? { method: "GET", headers, signal }
        : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(post), signal, idempotent: true },
    );
  } catch (error) {
    return { problem: describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES) };
  }
  let body: unknown;
  try {
    body = JSON.parse(answerText(answer.body));
  } catch {
    return { problem: answer.status >= 400 ? `${TARGET} answered ${statusText(answer)}` : `${TARGET} answered with something that is not JSON` };
  }
  if (answer.status < 400) return { body };
  const errors = DatadogErrors.safeParse(body);
  return { problem: `${TARGET} answered ${errors.success ? `${answer.status}: ${errors.data.errors.join("; ")}` : statusText(answer)}` };
}

function statusText(answer: HttpAnswer): string {
  return `${answer.status}${answer.statusText === "" ? "" : ` ${answer.statusText}`}`;
}
