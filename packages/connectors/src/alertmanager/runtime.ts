import type { AlertmanagerObservation, FailedObservation } from "@pes/contracts";
import type { z } from "zod";
import type { ConnectorRuntime, FetchRequest } from "../connector.js";
import { answeredError } from "../error-answer.js";
import { describeFetchFailure } from "../fetch-failure.js";
import { authorizationHeader } from "../http-auth.js";
import { answerText, MAX_RESPONSE_BYTES } from "../http-client.js";
import { baseUrlOf } from "../url-text.js";
import { matcherText } from "./alertmanager-matchers.js";
import { GettableAlerts, GettableSilences } from "./alertmanager-response.js";
import type { AlertmanagerAction, AlertmanagerDataSource } from "./schema.js";
import { errorMessage } from "@pes/contracts";

const TARGET = "Alertmanager";

type Request = FetchRequest<AlertmanagerDataSource, AlertmanagerAction>;

/**
 * Asks Alertmanager (API v2) for the alerts matching the action's matchers (the API has no time filter:
 * it answers what it holds now, which includes alerts that started long ago; the analysis keeps those
 * firing in the window) and, with `silences`, the silences with the same matchers. Any failure is a
 * `failed` in plain words.
 */
export const alertmanagerRuntime: ConnectorRuntime<AlertmanagerDataSource, AlertmanagerAction, AlertmanagerObservation> = {
  async fetch(request) {
    const { query: action } = request;
    const failed = (reason: string): FailedObservation => ({ kind: "failed", reason });

    let headers: Record<string, string>;
    try {
      headers = { accept: "application/json", ...authorizationHeader(request.dataSource.auth, request.secrets) };
    } catch (error) {
      return failed(`cannot authenticate to ${TARGET}: ${errorMessage(error)}`);
    }
    const filter = action.matchers.map((matcher): [string, string] => ["filter", matcherText(matcher)]);
    const alertParams: Array<[string, string]> = [
      ...filter,
      ["active", "true"],
      ["silenced", String(action.includeSilenced)],
      ["inhibited", String(action.includeInhibited)],
    ];
    const [alerts, silences] = await Promise.all([
      get(request, headers, "alerts", alertParams, GettableAlerts),
      action.silences ? get(request, headers, "silences", filter, GettableSilences) : [],
    ]);
    if (typeof alerts === "string") return failed(alerts);
    if (typeof silences === "string") return failed(silences);

    return { kind: "alertmanager", alerts, ...(action.silences ? { silences } : {}) };
  },
};

/** One GET of the API v2; its parsed answer, or why not in plain words. */
async function get<T>(
  request: Request,
  headers: Record<string, string>,
  resource: string,
  params: Array<[string, string]>,
  schema: z.ZodType<T>,
): Promise<T | string> {
  const { signal, http } = request;
  const url = `${baseUrlOf(request.dataSource)}/api/v2/${resource}?${new URLSearchParams(params).toString()}`;
  try {
    const answer = await http.request(url, { method: "GET", headers, signal });
    if (answer.status < 200 || answer.status > 299) return answeredError(TARGET, answer);
    let json: unknown;
    try {
      json = JSON.parse(answerText(answer.body));
    } catch {
      return `${TARGET} answered with something that is not JSON`;
    }
    const parsed = schema.safeParse(json);
    return parsed.success ? parsed.data : `${TARGET} answered ${resource} in a shape this connector does not know`;
  } catch (error) {
    return describeFetchFailure(error, signal, TARGET, MAX_RESPONSE_BYTES);
  }
}
